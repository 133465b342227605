"""Smoke runs of the benchmark scripts in bench/: each `--quick` run works end to end and prints its table.

Exit code 0 of a script means what it checked held (bench_ik: every IK answer it checked was correct;
bench_teleop: both subjects, the real controller_node and the relay baseline, answered at least 90% of
the deflected Joys; bench_trajectory: both subjects ran throughout and answered >= 90% of the goals;
bench_placement: at least one can was measured; operator_floor: every wait ended in a confirm). The
performance targets are reported by the scripts, never asserted here. The trajectory and placement
benchmarks' metric definitions are unit-tested in test_bench_trajectory_metrics.py and
test_bench_placement_metrics.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from salamander_testing import REPO
from salamander_testing.ros_helpers import next_domain_id


def run_bench(script: str, *args: str, timeout: float) -> str:
    """Run bench/<script> with `args` from the repository root; its stdout, once it exited with 0."""
    env = dict(os.environ)
    pkg = str(REPO / "salamander_control")
    env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def row(stdout: str, metric: str) -> list[str]:
    """The cells of the results table's row for `metric`."""
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == metric:
            return cells
    raise AssertionError(f"no row {metric!r} in:\n{stdout}")


def test_bench_ik_quick_runs_and_prints_table() -> None:
    """The quick run exits 0 and prints the table title and header within the time budget."""
    pytest.importorskip("numpy")
    pytest.importorskip("scipy")
    out = run_bench("bench_ik.py", "--quick", timeout=60)
    assert "Salamander IK benchmark results" in out
    assert "| metric" in out and "| verdict" in out


@pytest.mark.ros
def test_bench_teleop_quick_runs_and_prints_table() -> None:
    first = next_domain_id()
    next_domain_id()  # the script uses `first` and `first + 1`
    out = run_bench("bench_teleop.py", "--quick", "--domain", str(first), timeout=120)
    assert "Salamander teleop latency benchmark" in out
    assert "| controller_node |" in out and "| relay (baseline) |" in out
    assert "target p99 <= 10 ms:" in out


@pytest.mark.ros
def test_bench_trajectory_quick_runs_and_prints_table() -> None:
    domain = str(next_domain_id())
    out = run_bench("bench_trajectory.py", "--quick", "--lines", "--domain", domain, timeout=120)
    assert "Salamander trajectory generator benchmark" in out, out
    assert row(out, "metric") == ["metric", "generator", "baseline", "ratio", "target", "verdict"]
    lines = next(r for r in out.splitlines() if r.startswith("| lines (")).split("(")[1].split(")")[0]
    assert int(lines) >= 1, out  # the Cartesian node's linear goals ran to their ends
    for phase in ("idle", "moving", f"lines ({lines})"):
        rate = row(out, f"{phase}: command rate [Hz]")
        generator, baseline = float(rate[1]), float(rate[2])
        # The 500 Hz streams, judged against the bare publisher of the same run, not the clock: a loaded
        # machine slows both (seen at load 4.75: 294 and 330 Hz, which failed a fixed 400 Hz floor).
        # Above the 50 Hz keep-alive of a generator at rest; not above 500 Hz (+ the count window's slack).
        # While lines stream, the generator does more per cycle than the bare publisher and a saturated
        # machine starves it more (a fresh clone's suite run: 145 against 262 Hz, CPU pressure 100 %):
        # there only the keep-alive bound holds whatever the load.
        floor = 50.0 if phase.startswith("lines") else 0.6 * baseline
        assert baseline > 100.0 and floor < generator < 600.0 and baseline < 600.0, out
        cpu = row(out, f"{phase}: CPU [% of one core]")
        assert float(cpu[1]) > 1.0 and float(cpu[2]) > 1.0, out  # the nodes' own processes were measured
    p99 = row(out, "moving: goal publish -> command received p99 [ms]")
    assert 0.0 < float(p99[1]) < 500.0 and p99[4] == "<= 3 ms" and p99[5] in ("PASS", "MISS"), out
    assert row(out, "Ruckig.update(), new plan from rest (A -> B) [us]")[3].endswith("x"), out


def test_bench_tree_quick_runs_and_prints_its_table() -> None:
    out = run_bench("bench_tree.py", "--quick", timeout=120)
    assert "Salamander behaviour tree benchmark results" in out
    assert "| full tree (" in out and "target: full tree p99 <= 1.0 ms:" in out


@pytest.mark.ros
@pytest.mark.timeout(420)
def test_operator_floor_runs_and_prints_its_table() -> None:
    out = run_bench("operator_floor.py", "--waits", "20", timeout=60)
    assert "| 0.00 mm |" in out and "| 1.66 mm |" in out, out


def test_bench_placement_quick_runs_and_prints_its_table(tmp_path) -> None:
    """One stack start (the shipped mode, one can, level 1; `--quick` runs every mode by hand)."""
    args = ("--quick", "--modes", "shipped", "--domain", str(next_domain_id()), "--logs", str(tmp_path))
    out = run_bench("bench_placement.py", *args, timeout=300)
    assert "Salamander placement benchmark" in out, out
    heads = row(out, "metric")
    assert len(heads) == 2 and heads[1].endswith("sigma x1") and heads[1].startswith("shipped"), out
    tried = row(out, "cans tried (a placement tried)")[1:]
    skipped = row(out, "cans the tree skipped untouched (not counted)")[1:]
    assert [int(a) + int(b) for a, b in zip(tried, skipped, strict=True)] == [1], out


def test_guarded_pass_survey_quick_runs_and_prints_a_row_per_variant() -> None:
    """Two draws for the shipped settings and one variant: a row each; an unknown setting is refused."""
    out = run_bench("guarded_pass_survey.py", "--draws", "2", "--set", "guard_force_n=4", timeout=120)
    assert row(out, "shipped")[1] == "2" and row(out, "guard_force_n=4.0")[1] == "2"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "guarded_pass_survey.py"), "--set", "no_such_setting=1"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "'no_such_setting' is no behaviour setting" in proc.stderr
