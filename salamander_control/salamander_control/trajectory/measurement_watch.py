"""Watching the measured joint state: hold while it is missing, re-anchor when it disagrees or returns.

The trajectory generator runs open loop on its own commands (docs/design/trajectory_generator.md). A
position-controlled driver holds its last command, so the command alone says nothing about a driver
that died and came back at rest elsewhere, an arm pushed by hand or a brake released: driving on from
the stale command would take the arm back at the motors' own (higher) speed. `MeasurementWatch` decides,
once per control cycle, whether the generator may command the arm:

- `RUN`: fresh measurements agree with the recent commands; step the core and publish.
- `HOLD`: no measurement for `timeout` of the generator's own running time: publish nothing (the
  driver holds its last command; a restarted driver must not receive a command computed before it came
  back). Said once, as `warning`. The node keeps a goal at rest that arrives meanwhile pending (a
  refused goal on a topic would be lost without a word to its sender: a loaded machine pauses the
  measurement for 0.2 s now and then) and drops streamed samples.
- `REANCHOR`: the measurement is back after a hold, or it lies outside the range of the recent commands
  widened by `tolerance` on some joint: restart the core at rest at `anchor` before commanding again, so
  the next commands stay within every motion limit from there.
  - It disagrees (a restarted driver elsewhere, a pushed arm): `anchor` is the measured position and the
    goal is dropped (`keep_goal` false): the arm holds where it is measured until a new goal comes.
  - It came back where the arm was commanded (the measurement only paused, e.g. a loaded machine):
    `anchor` is the last command sent, which the driver holds and the arm is settling on (the newest
    measurement is older than the pause and trails it by the motors' lag: re-anchoring there would
    command the arm back by up to 0.05 rad in one cycle). The goal still stands (`keep_goal`) and the
    motion resumes from rest; the window keeps its commands.

"Recent" is counted in wall time (the sum of the `elapsed` the caller passes), not in commands: a late
call that catches up many cycles at once records them all at its own time, and the driver saw none of
them before. While the measurement flows, a measurement must lie within the commands of the last
`timeout + COMMAND_WINDOW` (and the one command before them, which the driver held): a driver (or its
publisher) that stalls for less than `timeout`, which the watch tolerates without holding, reports the
arm where it was commanded before the stall, and that must not pass for a pushed arm (seen on a loaded
machine: a 0.3 s stall of the simulated driver at the first motion, base_yaw "0.0692 rad from the recent
commands", the goal dropped, a joint goal waited its whole timeout). After a hold the driver has had
`timeout` to settle on the last command, so the returning measurement is judged against the commands of
the last `COMMAND_WINDOW` before the hold only.

Invariants: no `RUN` while the newest measurement is older than `timeout`; after a `HOLD` the next
command-producing verdict is a `REANCHOR`. The silence is counted in the generator's own running time
(each cycle adds at most `MAX_SILENCE_STEP`, or the `max_step` of a call that stands for several
cycles: the generator's loop at rest), so a stall of the generator itself (a loaded machine) is not
taken for a silent driver. Cost per cycle: a few comparisons; the window is kept as per-bucket
ranges (`BUCKET_S` of commands each), not as a list of commands, and its range is recomputed once per
bucket.

Pure: no rclpy, no clock (the caller passes the elapsed time). Tests:
salamander_control/test/trajectory/test_measurement_watch.py.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

from salamander_control.joint_state import joints_text
from salamander_control.kinematics import JOINT_NAMES, NUM_JOINTS
from salamander_control.kinematics._validate import finite_vector

COMMAND_WINDOW = 0.25
"""s; how far a measurement may trail the commands (plus the tolerance): five time constants of the
simulated motors' lag (0.05 s), plus its delivery. While measurements flow the window is longer by the
silence the watch tolerates (module docstring)."""
BUCKET_S = 0.05
"""s of commands per bucket of the window; the window spans whole buckets (up to one bucket more)."""
MAX_SILENCE_STEP = 0.01
"""s; the most one cycle adds to the silence: a late timer call (a stalled generator) counts as this."""


class Verdict(enum.Enum):
    """What the generator does this cycle (module docstring)."""

    RUN = "run"
    HOLD = "hold"
    REANCHOR = "reanchor"


class WatchDecision(NamedTuple):
    """One cycle's verdict.

    Attributes:
        verdict: RUN, HOLD or REANCHOR.
        anchor: the position to re-anchor at (REANCHOR only: the measured position, or the last command
            when the measurement agrees with it), else None.
        keep_goal: (REANCHOR) the measurement agrees with the command: the goal still stands.
        warning: "" or a WARN line (the hold began, or the measurement disagrees), said once per event.
        info: "" or an INFO line (re-anchored at the measured state).
    """

    verdict: Verdict
    anchor: tuple[float, ...] | None = None
    keep_goal: bool = False
    warning: str = ""
    info: str = ""


class _Bucket(NamedTuple):
    """The commands recorded over `BUCKET_S`: per-joint lowest and highest, and when the last came."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    end: float


class MeasurementWatch:
    """The per-cycle watch over the measured joint state (module docstring).

    Args:
        start: the command the generator starts with (its first measurement).
        topic: the measurement's topic name, for the log lines.

    Raises:
        ValueError: `start` not five finite numbers.
    """

    def __init__(self, start: Sequence[float], topic: str = "/joint_states") -> None:
        self._topic = topic
        self._clock = 0.0  # s of wall time: the sum of the callers' `elapsed`
        self._span = COMMAND_WINDOW  # s of commands the window keeps (set from `timeout` each cycle)
        self._silence = 0.0
        self._holding = False
        self._restart(finite_vector(start, NUM_JOINTS, "start"))

    @property
    def holding(self) -> bool:
        """Whether the measurement is missing (no command may be sent; goals wait for the re-anchor)."""
        return self._holding

    @property
    def silence(self) -> float:
        """Seconds of the generator's running time since the newest measurement."""
        return self._silence

    def hold_reason(self, timeout: float) -> str:
        """Why the arm is held (for the generator's log of a goal that arrives meanwhile)."""
        return (
            f"holding: no {self._topic} for {self._silence:.2f} s (joint_state_timeout_s {timeout} s); "
            "the arm is not commanded until the measurement is back"
        )

    def cycle(
        self,
        elapsed: float,
        measured: Sequence[float] | None,
        timeout: float,
        tolerance: float,
        max_step: float = MAX_SILENCE_STEP,
    ) -> WatchDecision:
        """Decide this cycle.

        Args:
            elapsed: s of wall time since the previous cycle (for the silence clipped to
                [0, max_step]).
            measured: a measurement that arrived since the previous cycle (the newest), or None.
            timeout: s without a measurement before holding (`joint_state_timeout_s`).
            tolerance: rad a measurement may lie outside the recent commands' range
                (`joint_state_tolerance`).
            max_step: the most this call adds to the silence (`MAX_SILENCE_STEP`; a caller whose cycle
                is longer on purpose, the generator's loop at rest, passes a little more than it).
        """
        finite = math.isfinite(elapsed)
        if finite and elapsed > 0.0:
            self._clock += elapsed
        self._span = COMMAND_WINDOW + max(timeout, 0.0)
        if measured is None:
            step = min(max(elapsed, 0.0), max_step) if finite else max_step
            self._silence += step
            if self._holding:
                return WatchDecision(Verdict.HOLD)
            if self._silence > timeout:
                self._holding = True
                return WatchDecision(
                    Verdict.HOLD,
                    warning=f"no {self._topic} for {self._silence:.2f} s: holding; the arm is not "
                    "commanded until the measurement is back",
                )
            return WatchDecision(Verdict.RUN)
        q = tuple(measured)
        silence, self._silence = self._silence, 0.0
        held, self._holding = self._holding, False
        if held:  # the driver had `timeout` to settle: only the commands just before the hold count
            lo, hi = self._range(self._last_at - COMMAND_WINDOW)
        else:
            lo, hi = self._window()
        gap, joint = _outside(q, lo, hi, tolerance)
        if gap > 0.0:
            warning = (
                f"measured {JOINT_NAMES[joint]} is {gap + tolerance:.4f} rad from the recent commands "
                f"(joint_state_tolerance {tolerance} rad): the arm is not where it was commanded "
                "(driver restarted? arm pushed?); holding it where it is, the goal is dropped"
            )
            why = "after the measurement disagreed"
            if held:
                why = f"after {silence:.2f} s without {self._topic}"
            return self._reanchor(q, False, warning, f"{why}; holding there")
        if held:
            info = (
                f"re-anchored at the last command {joints_text(self._last)} after {silence:.2f} s without "
                f"{self._topic}: the measurement {joints_text(q)} agrees with it; resuming towards the goal "
                "from rest"
            )
            return WatchDecision(Verdict.REANCHOR, self._last, True, "", info)
        return WatchDecision(Verdict.RUN)

    def commanded(self, q: Sequence[float]) -> None:
        """Record a command sent this cycle (call once per command computed, after `cycle`)."""
        self._last, self._last_at = tuple(q), self._clock
        lo, hi = self._lo, self._hi
        for i in range(NUM_JOINTS):
            v = q[i]
            if v < lo[i]:
                lo[i] = v
            if v > hi[i]:
                hi[i] = v
        if self._clock - self._open_since >= BUCKET_S:
            self._close_bucket()

    def _close_bucket(self) -> None:
        """Keep the open bucket, drop the ones the window no longer needs, update the window's range."""
        buckets = self._buckets
        buckets.append(_Bucket(tuple(self._lo), tuple(self._hi), self._last_at))
        self._lo, self._hi = [math.inf] * NUM_JOINTS, [-math.inf] * NUM_JOINTS
        self._open_since = self._clock
        cutoff = self._clock - self._span
        while len(buckets) > 1 and buckets[1].end < cutoff:  # buckets[1] holds a command held at cutoff
            buckets.popleft()
        # the closed buckets' range, once per bucket (20 Hz), not per measurement
        self._win_lo = tuple(min(b.lo[i] for b in buckets) for i in range(NUM_JOINTS))
        self._win_hi = tuple(max(b.hi[i] for b in buckets) for i in range(NUM_JOINTS))

    def _window(self) -> tuple[list[float], list[float]]:
        """Per-joint (lowest, highest) of the kept commands: the closed buckets' range and the open one."""
        lo = [min(a, b) for a, b in zip(self._lo, self._win_lo, strict=True)]
        hi = [max(a, b) for a, b in zip(self._hi, self._win_hi, strict=True)]
        return lo, hi

    def _range(self, since: float) -> tuple[list[float], list[float]]:
        """Per-joint (lowest, highest) of the commands from `since` on, and the one held at `since`."""
        lo, hi = list(self._lo), list(self._hi)
        older = [b for b in self._buckets if b.end < since]
        kept = [b for b in self._buckets if b.end >= since] + older[-1:]
        for b in kept:
            for i in range(NUM_JOINTS):
                lo[i], hi[i] = min(lo[i], b.lo[i]), max(hi[i], b.hi[i])
        return lo, hi

    def _reanchor(self, q: tuple[float, ...], keep_goal: bool, warning: str, why: str) -> WatchDecision:
        self._restart(q)
        info = f"re-anchored at the measured state {joints_text(q)} {why}"
        return WatchDecision(Verdict.REANCHOR, q, keep_goal, warning, info)

    def _restart(self, q: tuple[float, ...]) -> None:
        """Forget the commands so far: the window holds `q` only (the command the core restarts from)."""
        self._buckets: deque[_Bucket] = deque()
        self._lo, self._hi = list(q), list(q)  # the open bucket's range
        self._open_since = self._clock
        self._win_lo, self._win_hi = q, q  # the closed buckets' range (none yet: `q` itself)
        self._last, self._last_at = q, self._clock  # the last command (the core's state after a re-anchor)


def _outside(
    q: Sequence[float], lo: Sequence[float], hi: Sequence[float], tolerance: float
) -> tuple[float, int]:
    """(how far `q` lies beyond [lo, hi] widened by `tolerance`, joint), or (0, -1)."""
    worst, joint = 0.0, -1
    for i in range(NUM_JOINTS):
        x = q[i]
        gap = lo[i] - tolerance - x if x < lo[i] else x - hi[i] - tolerance
        if gap > worst:
            worst, joint = gap, i
    return worst, joint
