"""The simulated vacuum (part-present) switch: the model's "a can is on the pad", seen through a dead time.

A real vacuum switch reports a part when the pressure behind the pad has fallen below its set point and
reports it gone when the pressure has risen again. Between the seal forming (or breaking) and the
contact switching lie a few tens of milliseconds: the volume of the hose and the pad has to be
evacuated or vented through the ejector and the valve, and the switch itself has a response time of a
few ms (typical catalogue figures for vacuum switches are 2-5 ms for the switch, and the hose and
pad volume of a small pad add tens of ms). The default delay of 30 ms (`part_present_delay_s`, a
live parameter of the cell simulator) stands for that. The tree's grip and release confirmations wait
on the switch, so it adds to every cycle as on the robot; it is short next to the tree's freshness
bound (`part_present_timeout_s`, 0.5 s), and long enough that a change the simulator makes is never
seen by the tree in the same instant.

`DelayedSwitch` is a pure dead-time element: the output takes a new input value once that value has
held for `delay_s` without interruption; a blip shorter than that never shows (a switch does not
follow a pressure spike shorter than its response). No rclpy.
"""

from __future__ import annotations

import math


class DelayedSwitch:
    """A boolean seen through a dead time.

    Args:
        delay_s: how long a new input value must hold before the output takes it (s, >= 0).
        value: the output (and input) at the start.
    """

    def __init__(self, delay_s: float, value: bool = False) -> None:
        self.delay_s = self._checked(delay_s)
        self.value = value
        self._pending: tuple[bool, float] | None = None  # (input value, since when)

    @staticmethod
    def _checked(delay_s: float) -> float:
        if not (math.isfinite(delay_s) and delay_s >= 0.0):
            raise ValueError(f"delay_s must be a finite number >= 0, got {delay_s}")
        return float(delay_s)

    def set_delay(self, delay_s: float) -> None:
        """A new delay (a live parameter); a pending change keeps its start time."""
        self.delay_s = self._checked(delay_s)

    def update(self, raw: bool, now: float) -> bool:
        """Feed the input at time `now` (s, monotonic); returns the output.

        Raises:
            ValueError: `now` is not finite.
        """
        if not math.isfinite(now):
            raise ValueError(f"time must be finite, got {now}")
        if raw == self.value:
            self._pending = None
        elif self._pending is None or self._pending[0] != raw:
            self._pending = (raw, now)
        if self._pending is not None and now - self._pending[1] >= self.delay_s - 1e-9:
            self.value, self._pending = raw, None
        return self.value
