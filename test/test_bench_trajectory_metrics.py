"""The trajectory generator benchmark's metric definitions (bench/trajectory_metrics.py).

These hold the metrics to the definitions in bench/README.md (a jittery tick is not a missed cycle, a
goal's answer is the first command moving towards it, an unanswered goal is infinitely late). The smoke
run of `bench/bench_trajectory.py --quick` against the real nodes is in test_bench_smoke.py.
"""

from __future__ import annotations

import math
import sys

import pytest

from salamander_testing import REPO as REPO_ROOT

REPO = REPO_ROOT
sys.path.insert(0, str(REPO / "bench"))

import trajectory_metrics as tm  # noqa: E402

P = 2_000_000  # 500 Hz, ns
REST = (0.0, -0.5, 0.5, 0.0, 0.0)
TARGET = (0.0, -0.5, 0.5, 0.0, 1.0)  # wrist_yaw has the longest way to go (+1 rad)


def test_period_stats_counts_skipped_ticks_but_not_jitter() -> None:
    stamps = [k * P for k in range(1001)]
    stamps[100] += 1_200_000  # a tick 1.2 ms late; the next one is on time again
    del stamps[500]  # a tick that published nothing
    s = tm.period_stats(stamps, P)
    assert s.missed == 1 and s.expected == 1000
    assert s.max_ms == pytest.approx(2.0)  # the 4 ms gap around the skipped tick
    assert s.p50_ms == 0.0  # 3 of 999 periods are off: the p99 of the errors is 0 too
    assert s.p99_ms == 0.0
    assert s.rate_hz == pytest.approx(999 / 2.0)


def _stream(positions: list[tuple[float, ...]], pub_index: int) -> tuple[tm.Stream, int]:
    """Commands received every 2 ms; the goal is published 0.5 ms before command `pub_index` arrives."""
    st = tm.Stream()
    for k, pos in enumerate(positions):
        st.recv.append(k * P)
        st.stamp.append(k * P - 100_000)
        st.pos.append(pos)
    return st, pub_index * P - 500_000


def test_generator_answer_is_the_first_command_moving_towards_the_goal() -> None:
    away = (0.0, -0.5, 0.5, 0.0, -1e-6)  # moves, but away from the goal
    towards = (0.0, -0.5, 0.5, 0.0, 4e-8)
    st, pub = _stream([REST] * 12 + [REST, away, towards, TARGET], 12)
    goal = tm.Goal(pub, pub + 1000, TARGET)
    assert tm.generator_answer(st, goal) == 14
    lat = tm.latencies(st, [goal], tm.generator_answer)
    assert lat.recv_ms == [pytest.approx((14 * P - pub) / 1e6)]
    assert lat.stamp_ms == [pytest.approx((14 * P - 100_000 - pub - 1000) / 1e6)]


def test_generator_goal_while_moving_or_never_answered() -> None:
    moving = [(0.0, -0.5, 0.5, 0.0, 0.01 * k) for k in range(tm.AT_REST + 2)]
    st, pub = _stream(moving + [TARGET], tm.AT_REST + 2)
    assert tm.generator_answer(st, tm.Goal(pub, pub, TARGET)) == -1
    st, pub = _stream([REST] * 300, 20)  # held still for 0.56 s after the goal
    lat = tm.latencies(st, [tm.Goal(pub, pub, TARGET)], tm.generator_answer)
    assert lat.answered == 0 and lat.recv_ms == [math.inf] and lat.not_at_rest == 0
    assert tm.percentile([1.0, 2.0, math.inf], 1.0) == math.inf


def test_baseline_answer_is_the_first_message_carrying_the_target() -> None:
    st, pub = _stream([REST] * 5 + [TARGET] * 3, 5)
    st.recv[5] = pub - 1  # a message already carrying the target but received before the publish
    assert tm.baseline_answer(st, tm.Goal(pub, pub, TARGET)) == 6
