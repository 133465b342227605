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
- `REANCHOR`: the measurement is back after a hold, or it lies outside the range of the commands of the
  last `COMMAND_WINDOW` widened by `tolerance` on some joint: restart the core at rest at `anchor`
  before commanding again, so the next commands stay within every motion limit from there.
  - It disagrees (a restarted driver elsewhere, a pushed arm): `anchor` is the measured position and the
    goal is dropped (`keep_goal` false): the arm holds where it is measured until a new goal comes.
  - It came back where the arm was commanded (the measurement only paused, e.g. a loaded machine):
    `anchor` is the last command sent, which the driver holds and the arm is settling on (the newest
    measurement is older than the pause and trails it by the motors' lag: re-anchoring there would
    command the arm back by up to 0.05 rad in one cycle). The goal still stands (`keep_goal`) and the
    motion resumes from rest; the window keeps its commands.

Invariants: no `RUN` while the newest measurement is older than `timeout`; after a `HOLD` the next
command-producing verdict is a `REANCHOR`. The silence is counted in the generator's own running time
(each cycle adds at most `MAX_SILENCE_STEP`, or the `max_step` of a call that stands for several
cycles: the generator's loop at rest), so a stall of the generator itself (a loaded machine) is not
taken for a silent driver. Cost per cycle: a few comparisons; the window is kept as per-bucket
ranges (`BUCKET_CYCLES` commands each), not as a list of commands.

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
"""s; the measurement must lie within the range of the commands of this long ago until now (plus the
tolerance): five time constants of the simulated motors' lag (0.05 s), plus its delivery."""
BUCKET_CYCLES = 25
"""commands per bucket of the window (50 ms at 500 Hz); the window spans whole buckets, so it covers
between COMMAND_WINDOW and COMMAND_WINDOW + one bucket."""
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


class MeasurementWatch:
    """The per-cycle watch over the measured joint state (module docstring).

    Args:
        start: the command the generator starts with (its first measurement).
        period: the control period, s (sets how many cycles the window holds).
        topic: the measurement's topic name, for the log lines.

    Raises:
        ValueError: `start` not five finite numbers, or `period` not a positive number.
    """

    def __init__(self, start: Sequence[float], period: float, topic: str = "/joint_states") -> None:
        if not (math.isfinite(period) and period > 0.0):
            raise ValueError(f"period must be a positive number of seconds, got {period}")
        self._topic = topic
        self._buckets_kept = max(1, math.ceil(COMMAND_WINDOW / (period * BUCKET_CYCLES)))
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
            elapsed: s since the previous cycle (clipped to [0, max_step]).
            measured: a measurement that arrived since the previous cycle (the newest), or None.
            timeout: s without a measurement before holding (`joint_state_timeout_s`).
            tolerance: rad a measurement may lie outside the recent commands' range
                (`joint_state_tolerance`).
            max_step: the most this call adds to the silence (`MAX_SILENCE_STEP`; a caller whose cycle
                is longer on purpose, the generator's loop at rest, passes a little more than it).
        """
        if measured is None:
            step = min(max(elapsed, 0.0), max_step) if math.isfinite(elapsed) else max_step
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
        gap, joint = self._outside(q, tolerance)
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
        """Record a command sent this cycle (call once per command published, after `cycle`)."""
        self._last = tuple(q)
        lo, hi = self._lo, self._hi
        for i in range(NUM_JOINTS):
            v = q[i]
            if v < lo[i]:
                lo[i] = v
            if v > hi[i]:
                hi[i] = v
        self._count += 1
        if self._count >= BUCKET_CYCLES:
            self._buckets.append((tuple(lo), tuple(hi)))  # the deque drops the oldest bucket
            self._lo, self._hi = [math.inf] * NUM_JOINTS, [-math.inf] * NUM_JOINTS
            self._count = 0
            # the completed buckets' range, once per bucket (50 Hz), not per measurement
            self._win_lo = tuple(min(b[0][i] for b in self._buckets) for i in range(NUM_JOINTS))
            self._win_hi = tuple(max(b[1][i] for b in self._buckets) for i in range(NUM_JOINTS))

    def _outside(self, q: Sequence[float], tolerance: float) -> tuple[float, int]:
        """(how far `q` lies beyond the window's range widened by `tolerance`, joint), or (0, -1)."""
        worst, joint = 0.0, -1
        lo, hi, win_lo, win_hi = self._lo, self._hi, self._win_lo, self._win_hi
        for i in range(NUM_JOINTS):
            x = q[i]
            low = lo[i] if lo[i] < win_lo[i] else win_lo[i]
            high = hi[i] if hi[i] > win_hi[i] else win_hi[i]
            gap = low - tolerance - x if x < low else x - high - tolerance
            if gap > worst:
                worst, joint = gap, i
        return worst, joint

    def _reanchor(self, q: tuple[float, ...], keep_goal: bool, warning: str, why: str) -> WatchDecision:
        self._restart(q)
        info = f"re-anchored at the measured state {joints_text(q)} {why}"
        return WatchDecision(Verdict.REANCHOR, q, keep_goal, warning, info)

    def _restart(self, q: tuple[float, ...]) -> None:
        """Forget the commands so far: the window holds `q` only (the command the core restarts from)."""
        self._buckets: deque[tuple[tuple[float, ...], tuple[float, ...]]] = deque(maxlen=self._buckets_kept)
        self._lo, self._hi = list(q), list(q)
        self._win_lo, self._win_hi = q, q  # the completed buckets' range (none yet: `q` itself)
        self._count = 0
        self._last = q  # the last command sent (the core's state after a re-anchor)
