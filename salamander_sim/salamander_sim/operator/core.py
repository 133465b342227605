"""The simulated operator's behaviour: a person nudging a held can over its compartment and confirming.

Pure and clock-agnostic (times in seconds of one monotonic clock, passed in); every random draw comes
from one seeded `random.Random`, so a run is reproducible up to the timing of the messages it sees.

Inputs: `see_wait` (the ManualAdjust wait from the tree snapshot, or None), `see_scene` (the true
offset from the held can to its compartment's centre, from the cell's ground truth), and `tick` (the
node's timer at `jog_rate_hz`), which returns what to publish. The person, per wait:

1. **Settle.** Waits until the can is at rest: two cell states in a row, both seen after the wait began
   (or after the last stroke), within `still_tolerance_xy` of each other; after `settle_timeout_s` looks
   anyway (a can that keeps swinging).
2. **React.** Acts a reaction time later, drawn uniformly in [`reaction_time_min_s`, `reaction_time_max_s`].
3. **Look.** Sees the offset with noise (`look_sigma_xy` per axis). Looks centred (within
   `confirm_tolerance_xy`): presses confirm. Otherwise strokes the stick toward the centre:
   length = what it saw times (1 + N(0, `stroke_error`)), speed = length / `stroke_time_s` up to
   `jog_speed` (<= 50 mm/s, the stick's full deflection), twists every tick (`jog_rate_hz` >= 10 Hz, so
   never a 0.3 s gap while jogging), then a zero twist on every tick for 0.3 s (a lost zero cannot
   prolong the stroke). The stroke is ended on the tick nearest its planned end. Back to 1.
4. **The 30 mm bound.** The wait shows ManualAdjust's offset; a stroke is shortened so the offset stays
   within 30 mm of the plan, and when the centre lies beyond that (by more than the tolerance) the
   person aborts (confirm false) instead: the tree then keeps the can on the pad.
5. **Confirm lost?** If the wait still shows `reconfirm_s` after the press, looks again (1.).

A wait ends when the snapshot no longer shows it (confirmed, aborted, timed out, or the run stopped);
a stroke running then is stopped with zero twists. Each wait leaves a `WaitRecord` (looks, strokes,
time, the seen and the true offset at the press) for logs, tests and the benchmark.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import Enum

from salamander_control.operator_commands import Confirm, Jog
from salamander_sim.operator.params import OperatorSettings
from salamander_sim.operator.perception import PlacementError, Wait

MAX_OFFSET = 0.030
"""m: ManualAdjust's bound on the XY offset from the planned place target (spec)."""
STALE_S = 0.3
"""s: ManualAdjust treats a twist older than this as zero (spec); zeros are sent this long after a stroke."""
STROKE_FACTOR_RANGE = (0.5, 1.5)
"""A stroke's length is what the person meant times a factor drawn around 1 and kept in this range."""


class Phase(Enum):
    """Where the person is in the loop."""

    IDLE = "idle"  # no wait
    SETTLING = "settling"  # waiting for the can to come to rest
    REACTING = "reacting"  # saw it at rest; acts when the reaction time is over
    STROKE = "stroke"  # stick deflected
    PRESSED = "pressed"  # pressed confirm (or abort); waiting for the wait to end


@dataclass(frozen=True)
class Say:
    """A line for the node's log."""

    text: str


Action = Jog | Confirm | Say


@dataclass
class WaitRecord:
    """One ManualAdjust wait as the operator lived it.

    Attributes:
        name: the wait's name (``place_can_0``).
        began: when the operator saw the wait.
        looks: looks taken.
        strokes: stick strokes made.
        pressed_at: when it pressed confirm / abort (the last press), else None.
        outcome: "confirmed", "aborted", "ended" (the wait ended without a press of ours), or "waiting".
        seen: the offset it saw at the last look (m), else None.
        true: the true offset at the last look (m), else None.
        ended_at: when the wait ended, else None.
    """

    name: str
    began: float
    looks: int = 0
    strokes: int = 0
    pressed_at: float | None = None
    outcome: str = "waiting"
    seen: float | None = None
    true: float | None = None
    ended_at: float | None = None


class SimOperator:
    """The person (see the module docstring).

    Args:
        settings: the parameter snapshot.
        rng: the random source; default `random.Random(settings.seed)`.
    """

    def __init__(self, settings: OperatorSettings, rng: random.Random | None = None) -> None:
        self._s = settings
        self._rng = rng if rng is not None else random.Random(settings.seed)
        self._phase = Phase.IDLE
        self._wait: Wait | None = None
        self._record: WaitRecord | None = None
        self.records: list[WaitRecord] = []
        self._scenes: list[tuple[float, PlacementError | None]] = []  # the last two (received, offset)
        self._since = 0.0  # settling since
        self._until = 0.0  # reaction over / stroke end
        self._velocity = (0.0, 0.0)
        self._zero_until = -math.inf

    @property
    def phase(self) -> Phase:
        """Where the person is in the loop."""
        return self._phase

    @property
    def current(self) -> WaitRecord | None:
        """The record of the wait in progress, else None."""
        return self._record

    def configure(self, settings: OperatorSettings) -> None:
        """Swap in a new parameter snapshot (the random source and the state are kept)."""
        self._s = settings

    # ------------------------------------------------------------------------------------------ inputs
    def see_wait(self, wait: Wait | None, now: float) -> list[Action]:
        """The tree snapshot's wait (None: no ManualAdjust waits); returns lines to log."""
        out: list[Action] = []
        same = wait is not None and self._wait is not None and wait.name == self._wait.name
        if self._wait is not None and not same:
            out.append(self._end_wait(now))
        if wait is not None and not same:
            self._record = WaitRecord(wait.name, now)
            self._settle(now)
            out.append(Say(f"sees ManualAdjust[{wait.name}] waiting; watches the can over its compartment"))
        self._wait = wait
        return out

    def see_scene(self, offset: PlacementError | None, now: float) -> None:
        """One cell state: the true offset from the held can to its compartment's centre (None: none held)."""
        self._scenes = [*self._scenes[-1:], (now, offset)]

    # ------------------------------------------------------------------------------------------- timer
    def tick(self, now: float) -> list[Action]:
        """The timer: what to publish now."""
        out: list[Action] = []
        phase = self._phase
        if phase is Phase.STROKE:
            period = 1.0 / self._s.jog_rate_hz
            if now + period / 2 < self._until:
                return [Jog(*self._velocity)]
            self._stop_stick(now)
            self._settle(now)
        elif phase is Phase.SETTLING and self._at_rest(now):
            self._phase = Phase.REACTING
            self._until = now + self._rng.uniform(self._s.reaction_time_min_s, self._s.reaction_time_max_s)
        elif phase is Phase.REACTING and now >= self._until:
            out.extend(self._look(now))
        elif phase is Phase.PRESSED and self._record is not None and self._record.pressed_at is not None:
            if now - self._record.pressed_at >= self._s.reconfirm_s:
                out.append(Say(f"ManualAdjust[{self._record.name}] still waits "
                               f"{now - self._record.pressed_at:.1f} s after the press: looks again"))
                self._settle(now)
        if self._phase is not Phase.STROKE and now < self._zero_until:
            out.insert(0, Jog(0.0, 0.0))
        return out

    # -------------------------------------------------------------------------------------- the person
    def _settle(self, now: float) -> None:
        self._phase, self._since = Phase.SETTLING, now

    def _stop_stick(self, now: float) -> None:
        self._velocity = (0.0, 0.0)
        self._zero_until = now + STALE_S

    def _at_rest(self, now: float) -> bool:
        fresh = [(t, e) for t, e in self._scenes if t > self._since and e is not None]
        if not fresh:
            return False
        if now - self._since >= self._s.settle_timeout_s:
            return True
        if len(fresh) < 2:
            return False
        (_, a), (_, b) = fresh
        assert a is not None and b is not None
        return math.hypot(a.dx - b.dx, a.dy - b.dy) < self._s.still_tolerance_xy

    def _look(self, now: float) -> list[Action]:
        record, wait = self._record, self._wait
        offset = self._scenes[-1][1] if self._scenes else None
        if record is None or wait is None or offset is None:
            self._settle(now)  # nothing to look at (no can on the pad): watch on
            return []
        s, rng = self._s, self._rng
        record.looks += 1
        sx, sy = offset.dx + rng.gauss(0.0, s.look_sigma_xy), offset.dy + rng.gauss(0.0, s.look_sigma_xy)
        seen = math.hypot(sx, sy)
        record.seen, record.true = seen, offset.norm
        mm = f"{seen * 1000:.2f} mm (true {offset.norm * 1000:.2f} mm)"
        if seen <= s.confirm_tolerance_xy:
            where = f"compartment {offset.compartment}"
            return self._press(True, now, f"the can looks centred over {where}: {mm}")
        shown_x, shown_y = wait.offset[0], wait.offset[1]
        need = math.hypot(shown_x + sx, shown_y + sy)
        if need > MAX_OFFSET + s.confirm_tolerance_xy:
            return self._press(False, now, f"the centre is {need * 1000:.1f} mm from the plan, beyond the "
                                           f"{MAX_OFFSET * 1000:.0f} mm ManualAdjust allows: aborts")
        lo, hi = STROKE_FACTOR_RANGE
        factor = min(max(1.0 + rng.gauss(0.0, s.stroke_error), lo), hi)
        tx, ty = shown_x + sx * factor, shown_y + sy * factor  # where the stroke takes the offset
        radius = math.hypot(tx, ty)
        if radius > MAX_OFFSET:
            tx, ty = tx * MAX_OFFSET / radius, ty * MAX_OFFSET / radius
        dx, dy = tx - shown_x, ty - shown_y
        length = math.hypot(dx, dy)
        if length <= 0.0:
            return self._press(False, now, "at the 30 mm bound and the centre lies beyond it: aborts")
        speed = min(s.jog_speed, length / s.stroke_time_s)
        self._velocity = (dx / length * speed, dy / length * speed)
        self._phase, self._until = Phase.STROKE, now + length / speed
        record.strokes += 1
        return [
            Say(f"ManualAdjust[{record.name}] look {record.looks}: off by {mm}; jogs "
                f"[{dx * 1000:+.2f}, {dy * 1000:+.2f}] mm at {speed * 1000:.1f} mm/s"),
            Jog(*self._velocity),
        ]

    def _press(self, value: bool, now: float, why: str) -> list[Action]:
        record = self._record
        assert record is not None
        record.pressed_at, record.outcome = now, "confirmed" if value else "aborted"
        self._phase = Phase.PRESSED
        word = "confirms" if value else "aborts"
        return [Say(f"ManualAdjust[{record.name}] look {record.looks}: {why}; {word} "
                    f"({now - record.began:.1f} s after seeing the wait)"), Confirm(value)]

    def _end_wait(self, now: float) -> Say:
        record = self._record
        assert record is not None and self._wait is not None
        if self._phase is Phase.STROKE:
            self._stop_stick(now)
        if record.outcome == "waiting":
            record.outcome = "ended"
        record.ended_at = now
        self.records.append(record)
        self._record, self._phase = None, Phase.IDLE
        return Say(f"ManualAdjust[{record.name}] is over ({record.outcome} by the operator after "
                   f"{record.looks} look(s), {record.strokes} stroke(s), {now - record.began:.1f} s)"
                   if record.outcome != "ended" else
                   f"ManualAdjust[{record.name}] ended without a press of the operator's "
                   f"({record.looks} look(s), {record.strokes} stroke(s))")
