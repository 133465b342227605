#!/usr/bin/env bash
# Start the arm stack from launch/arm_control.launch.xml with the project's runner (no ros2 needed).
# Arguments go to the runner, e.g. `./scripts/run.sh use_sim:=false`, `--dry-run`, `--duration 10`.
# Stop with Ctrl-C. Needs a built tree (scripts/setup.sh, or ./scripts/up.sh which does both).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -f $ROOT/scripts/env.sh || ! -f $ROOT/.venv/bin/activate || ! -f $ROOT/install/setup.bash ]]; then
  echo "run: not set up yet; run scripts/setup.sh (or ./scripts/up.sh, which sets up and runs)" >&2
  exit 2
fi
# shellcheck disable=SC1091
source "$ROOT/scripts/env.sh"
exec python -m salamander_control.bringup.runner "$ROOT/launch/arm_control.launch.xml" "$@"
