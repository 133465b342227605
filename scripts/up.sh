#!/usr/bin/env bash
# Fresh machine to running arm stack: set up (venv + colcon build; quick when already done), then run.
# Arguments go to scripts/run.sh, e.g. `./scripts/up.sh use_sim:=false`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
exec "$ROOT/scripts/run.sh" "$@"
