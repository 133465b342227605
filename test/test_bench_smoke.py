"""Smoke test of the IK benchmark script: `bench/bench_ik.py --quick` runs and prints its results table.

Only checks that the script works end to end (exit code 0 means every IK answer it checked was correct);
the performance targets are reported by the script, never asserted here.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from salamander_control.testing import REPO as REPO_ROOT

REPO = REPO_ROOT
SCRIPT = REPO / "bench" / "bench_ik.py"


def test_bench_ik_quick_runs_and_prints_table() -> None:
    """The quick run exits 0 and prints the table title and header within the time budget."""
    pytest.importorskip("numpy")
    pytest.importorskip("scipy")
    env = dict(os.environ)
    pkg = str(REPO / "salamander_control")
    env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Salamander IK benchmark results" in proc.stdout
    assert "| metric" in proc.stdout and "| verdict" in proc.stdout
