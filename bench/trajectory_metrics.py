"""The numbers of bench/bench_trajectory.py, computed from recorded messages (no ROS here).

Kept apart from the script so that the definitions are plain functions a unit test can hold to
(test/test_bench_trajectory_metrics.py): what counts as a missed cycle, as the answer to a goal, as a
percentile.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

AT_REST = 10
"""A generator goal counts only if this many commands before it were identical (the arm was at rest)."""
ANSWER_TIMEOUT_NS = 500_000_000
"""A goal not reflected within this is unanswered, and infinitely late in the percentiles."""


@dataclass
class Stream:
    """Every message of one 500 Hz topic: receive time (monotonic ns), header stamp (ns), positions."""

    recv: list[int] = field(default_factory=list)
    stamp: list[int] = field(default_factory=list)
    pos: list[tuple[float, ...]] = field(default_factory=list)

    def on_msg(self, msg) -> None:
        """Subscription callback for a sensor_msgs/JointState: record it, nothing else."""
        self.recv.append(time.monotonic_ns())  # first: the callback's own work is not latency
        self.stamp.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
        self.pos.append(tuple(msg.position))

    def stamps_between(self, start: int, end: int) -> list[int]:
        """Header stamps of the messages received in [start, end] (monotonic ns)."""
        return self.stamp[bisect.bisect_left(self.recv, start) : bisect.bisect_right(self.recv, end)]


@dataclass(frozen=True)
class Goal:
    """One published goal."""

    pub_ns: int
    """time.monotonic_ns() just before publish()."""
    stamp_ns: int
    """Its header stamp (ROS clock = system clock, as the command stamps)."""
    target: tuple[float, ...]


@dataclass(frozen=True)
class Periods:
    """Timer period statistics of one stream over one phase."""

    rate_hz: float
    p50_ms: float
    """|dt - period| between consecutive stamps, median."""
    p99_ms: float
    max_ms: float
    missed: int
    """Timer ticks that published nothing: periods spanned minus messages (a late tick that the next
    one catches up on is jitter, not a miss; rcl skips a period only when a tick is a whole period late)."""
    expected: int
    """Periods spanned by the phase's first and last stamps."""


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank q-quantile (0..1) of a non-empty sequence; inf values count as the largest."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def period_stats(stamps: Sequence[int], period_ns: int) -> Periods:
    """Rate, period error and missed ticks from consecutive header stamps (at least two)."""
    dts = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    err = [abs(dt - period_ns) / 1e6 for dt in dts]
    span = stamps[-1] - stamps[0]
    expected = round(span / period_ns)
    rate = len(dts) / span * 1e9 if span > 0 else 0.0
    return Periods(
        rate, percentile(err, 0.5), percentile(err, 0.99), max(err), max(0, expected - len(dts)), expected
    )


def generator_answer(stream: Stream, goal: Goal) -> int | None:
    """Index of the first command reflecting `goal`; -1 if the arm was not at rest; None if unanswered.

    Reflecting: received after the publish, and moved away from the rest position towards the goal on
    the joint with the longest way to go. Ruckig starts every joint of a phase-synchronised move from
    rest in the first cycle of a new plan, so that is the first command computed from the goal.
    """
    i = bisect.bisect_left(stream.recv, goal.pub_ns)
    if i < AT_REST or len(set(stream.pos[i - AT_REST : i])) != 1:
        return -1
    rest = stream.pos[i - 1]
    j = max(range(len(rest)), key=lambda k: abs(goal.target[k] - rest[k]))
    way = goal.target[j] - rest[j]
    for k in range(i, len(stream.recv)):
        if stream.recv[k] - goal.pub_ns > ANSWER_TIMEOUT_NS:
            break
        if (stream.pos[k][j] - rest[j]) * way > 0.0:
            return k
    return None


def baseline_answer(stream: Stream, goal: Goal) -> int | None:
    """Index of the first baseline message received after the publish that carries the target."""
    for k in range(bisect.bisect_left(stream.recv, goal.pub_ns), len(stream.recv)):
        if stream.recv[k] - goal.pub_ns > ANSWER_TIMEOUT_NS:
            break
        if stream.pos[k] == goal.target:
            return k
    return None


@dataclass(frozen=True)
class Latency:
    """Goal-to-command latencies of one subject."""

    recv_ms: list[float]
    """Goal publish -> receipt of the answer, ms; an unanswered goal is inf."""
    stamp_ms: list[float]
    """Goal header stamp -> answer's header stamp, ms (answered goals only)."""
    answered: int
    goals: int
    not_at_rest: int
    """Goals that found the arm still moving (not measured, counted as unanswered)."""


def latencies(stream: Stream, goals: Sequence[Goal], answer: Callable[[Stream, Goal], int | None]) -> Latency:
    """Latency of every goal, found by `answer` (generator_answer or baseline_answer)."""
    recv: list[float] = []
    stamp: list[float] = []
    not_at_rest = 0
    for goal in goals:
        k = answer(stream, goal)
        if k is None or k < 0:
            not_at_rest += k == -1
            recv.append(math.inf)
            continue
        recv.append((stream.recv[k] - goal.pub_ns) / 1e6)
        stamp.append((stream.stamp[k] - goal.stamp_ns) / 1e6)
    answered = sum(1 for v in recv if v != math.inf)
    return Latency(recv, stamp, answered, len(goals), not_at_rest)
