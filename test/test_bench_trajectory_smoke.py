"""The trajectory generator benchmark: its metric definitions, and a smoke run of the script.

The unit tests hold bench/trajectory_metrics.py to the definitions in bench/README.md (a jittery tick is
not a missed cycle, a goal's answer is the first command moving towards it, an unanswered goal is
infinitely late). The smoke test runs `bench/bench_trajectory.py --quick` against the real nodes and
checks that it measured what it claims (the 500 Hz streams, the processes' CPU, every goal answered);
the performance targets are reported by the script, never asserted here.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from salamander_control.testing import REPO as REPO_ROOT

REPO = REPO_ROOT
sys.path.insert(0, str(REPO / "bench"))

from trajectory_metrics import (  # noqa: E402
    AT_REST,
    Goal,
    Stream,
    baseline_answer,
    generator_answer,
    latencies,
    percentile,
    period_stats,
)

P = 2_000_000  # 500 Hz, ns
REST = (0.0, -0.5, 0.5, 0.0, 0.0)
TARGET = (0.0, -0.5, 0.5, 0.0, 1.0)  # wrist_yaw has the longest way to go (+1 rad)


def test_period_stats_counts_skipped_ticks_but_not_jitter() -> None:
    stamps = [k * P for k in range(1001)]
    stamps[100] += 1_200_000  # a tick 1.2 ms late; the next one is on time again
    del stamps[500]  # a tick that published nothing
    s = period_stats(stamps, P)
    assert s.missed == 1 and s.expected == 1000
    assert s.max_ms == pytest.approx(2.0)  # the 4 ms gap around the skipped tick
    assert s.p50_ms == 0.0  # 3 of 999 periods are off: the p99 of the errors is 0 too
    assert s.p99_ms == 0.0
    assert s.rate_hz == pytest.approx(999 / 2.0)


def _stream(positions: list[tuple[float, ...]], pub_index: int) -> tuple[Stream, int]:
    """Commands received every 2 ms; the goal is published 0.5 ms before command `pub_index` arrives."""
    st = Stream()
    for k, pos in enumerate(positions):
        st.recv.append(k * P)
        st.stamp.append(k * P - 100_000)
        st.pos.append(pos)
    return st, pub_index * P - 500_000


def test_generator_answer_is_the_first_command_moving_towards_the_goal() -> None:
    away = (0.0, -0.5, 0.5, 0.0, -1e-6)  # moves, but away from the goal
    towards = (0.0, -0.5, 0.5, 0.0, 4e-8)
    st, pub = _stream([REST] * 12 + [REST, away, towards, TARGET], 12)
    goal = Goal(pub, pub + 1000, TARGET)
    assert generator_answer(st, goal) == 14
    lat = latencies(st, [goal], generator_answer)
    assert lat.recv_ms == [pytest.approx((14 * P - pub) / 1e6)]
    assert lat.stamp_ms == [pytest.approx((14 * P - 100_000 - pub - 1000) / 1e6)]


def test_generator_goal_while_moving_or_never_answered() -> None:
    moving = [(0.0, -0.5, 0.5, 0.0, 0.01 * k) for k in range(AT_REST + 2)]
    st, pub = _stream(moving + [TARGET], AT_REST + 2)
    assert generator_answer(st, Goal(pub, pub, TARGET)) == -1
    st, pub = _stream([REST] * 300, 20)  # held still for 0.56 s after the goal
    lat = latencies(st, [Goal(pub, pub, TARGET)], generator_answer)
    assert lat.answered == 0 and lat.recv_ms == [math.inf] and lat.not_at_rest == 0
    assert percentile([1.0, 2.0, math.inf], 1.0) == math.inf


def test_baseline_answer_is_the_first_message_carrying_the_target() -> None:
    st, pub = _stream([REST] * 5 + [TARGET] * 3, 5)
    st.recv[5] = pub - 1  # a message already carrying the target but received before the publish
    assert baseline_answer(st, Goal(pub, pub, TARGET)) == 6


def _row(stdout: str, metric: str) -> list[str]:
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == metric:
            return cells
    raise AssertionError(f"no row {metric!r} in:\n{stdout}")


@pytest.mark.ros
def test_bench_trajectory_quick_runs_and_prints_table() -> None:
    from salamander_control.testing.ros_helpers import next_domain_id

    proc = subprocess.run(
        [sys.executable, "bench/bench_trajectory.py", "--quick", "--domain", str(next_domain_id())],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, out  # 0: both subjects ran throughout and answered >= 90% of the goals
    assert "Salamander trajectory generator benchmark" in proc.stdout, out
    assert _row(proc.stdout, "metric") == ["metric", "generator", "baseline", "ratio", "target", "verdict"]
    for phase in ("idle", "moving"):
        rate = _row(proc.stdout, f"{phase}: command rate [Hz]")
        assert 400.0 < float(rate[1]) < 600.0 and 400.0 < float(rate[2]) < 600.0, out  # the 500 Hz streams
        cpu = _row(proc.stdout, f"{phase}: CPU [% of one core]")
        assert float(cpu[1]) > 1.0 and float(cpu[2]) > 1.0, out  # the nodes' own processes were measured
    p99 = _row(proc.stdout, "moving: goal publish -> command received p99 [ms]")
    assert 0.0 < float(p99[1]) < 500.0 and p99[4] == "<= 3 ms" and p99[5] in ("PASS", "MISS"), out
    assert _row(proc.stdout, "Ruckig.update(), new plan from rest (A -> B) [us]")[3].endswith("x"), out
