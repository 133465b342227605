#!/usr/bin/env bash
# The project's test command: set up (quick when already done), lint, then pytest.
# Extra arguments go to pytest, e.g. `./scripts/test.sh -k kinematics -x`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
# shellcheck disable=SC1091
source "$ROOT/scripts/env.sh"  # relaxes `set -u` around the colcon scripts itself
cd "$ROOT"

# A ROS_DOMAIN_ID base of this run (1..69) so parallel runs on one machine rarely meet;
# salamander_testing/ros_helpers.py hands out IDs from base up to base+31 (<= 100, inside the
# range ROS recommends). Two runs at once that must never meet: give each its own base, e.g. 1 and 40.
export SALAMANDER_TEST_DOMAIN_BASE=${SALAMANDER_TEST_DOMAIN_BASE:-$((1 + $$ % 69))}
echo "test: ROS domain IDs from SALAMANDER_TEST_DOMAIN_BASE=$SALAMANDER_TEST_DOMAIN_BASE"

# Run both lint and tests, so one report shows everything; fail if either failed.
lint_rc=0
ruff check . || lint_rc=$?
# pytest's own exit code counts as is: 5 ("no tests collected") is a failure too.
# Two workers (pytest-xdist), a test file at a time each: the files are isolated (every test has its own
# ROS_DOMAIN_ID and ROS_HOME) and much of a ROS test is waiting on a running stack. SALAMANDER_TEST_WORKERS=0
# runs them in this one process. --no-loadscope-reorder keeps the files in pytest.ini's order (the long
# end-to-end files of test/ first): by default pytest-xdist sends the files with the most tests first, so
# the one- and two-test end-to-end files came last and one worker ran the last of them alone (549 s
# against 569 s for the same tree, 2026-12-07).
workers=${SALAMANDER_TEST_WORKERS:-2}
xdist=()
((workers > 0)) && xdist=(-n "$workers" --dist loadfile --no-loadscope-reorder)
test_rc=0
python -m pytest "${xdist[@]}" "$@" || test_rc=$?
if ((test_rc)); then exit "$test_rc"; fi
exit "$lint_rc"
