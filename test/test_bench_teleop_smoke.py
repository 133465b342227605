"""Smoke test of the teleop latency benchmark: `bench/bench_teleop.py --quick` runs and prints its table.

Exit code 0 means both subjects (the real controller_node and the relay baseline) answered at least 90%
of the deflected Joys; the 10 ms target is reported by the script, never asserted here.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from salamander_control.testing import REPO as REPO_ROOT
from salamander_control.testing.ros_helpers import next_domain_id

pytestmark = pytest.mark.ros

REPO = REPO_ROOT


def test_bench_teleop_quick_runs_and_prints_table() -> None:
    first = next_domain_id()
    next_domain_id()  # the script uses `first` and `first + 1`
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_teleop.py"), "--quick", "--domain", str(first)],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Salamander teleop latency benchmark" in proc.stdout
    assert "| controller_node |" in proc.stdout and "| relay (baseline) |" in proc.stdout
    assert "target p99 <= 10 ms:" in proc.stdout
