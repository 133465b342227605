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
# In simulation every start is a new world (cell_sim puts every can back on its spot), so the run's
# progress starts fresh too: in a folder of this start, which a respawned behaviour server still reads.
# On the robot (use_sim:=false) it stays in $ROS_HOME/salamander and outlives the stack (progress.py).
if [[ -z ${SALAMANDER_PROGRESS_DIR:-} && ! " $* " =~ \ use_sim:=(false|False|0)\  ]]; then
  if [[ " $* " =~ \ --dry-run\  ]]; then
    echo "run: simulation: the run's progress would start fresh in a new folder" >&2
  else
    SALAMANDER_PROGRESS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/salamander-sim-progress.XXXXXX")"
    export SALAMANDER_PROGRESS_DIR
    echo "run: simulation: the run's progress starts fresh in $SALAMANDER_PROGRESS_DIR" >&2
  fi
fi
exec python -m salamander_bringup.runner "$ROOT/launch/arm_control.launch.xml" "$@"
