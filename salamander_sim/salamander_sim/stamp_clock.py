"""Header stamps on the ROS clock for instants of the monotonic clock, exactly as far apart as those.

The simulated arm steps its model by the monotonic time between ticks and stamps each /joint_states
with the time of measurement. A separate read of the ROS clock for the stamp is out of step with the
model's time whenever the process is preempted between the two reads, and a monitor that divides the
position step by the stamp step then reads speeds the arm never had (docs/design/trajectory_generator.md,
"Which limit bounds which speed"). `StampClock` converts monotonic instants with one offset between the
clocks, measured by a ROS clock read bracketed by two monotonic reads; a bracket wider than
`bracket_s` (a read preempted itself) is not taken, and the offset changes only when a new measurement
disagrees by more than that (the system clock was stepped or slewed), checked every `refresh_s`.

Pure: the clocks are passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable

BRACKET_S = 0.0005
"""s: the widest monotonic bracket around a ROS clock read that measures the offset."""
REFRESH_S = 1.0
"""s: how often the offset is measured again."""


class StampClock:
    """ROS-clock nanoseconds for monotonic instants (see the module docstring).

    Args:
        ros_now_ns: the ROS clock now, in nanoseconds.
        monotonic: the monotonic clock, in seconds (the one the instants are on).
        bracket_s: see `BRACKET_S`.
        refresh_s: see `REFRESH_S`.
    """

    def __init__(
        self,
        ros_now_ns: Callable[[], int],
        monotonic: Callable[[], float] = time.monotonic,
        bracket_s: float = BRACKET_S,
        refresh_s: float = REFRESH_S,
    ) -> None:
        self._ros_now_ns = ros_now_ns
        self._monotonic = monotonic
        self._bracket_s = bracket_s
        self._refresh_s = refresh_s
        self._offset_ns: int | None = None  # ROS clock minus monotonic clock
        self._due = -float("inf")

    def stamp_ns(self, t: float) -> int:
        """The ROS-clock time (ns) of the monotonic instant `t` (s)."""
        if self._offset_ns is None or t >= self._due:
            self._measure(t)
        assert self._offset_ns is not None
        return round(t * 1e9) + self._offset_ns

    def _measure(self, t: float) -> None:
        before = self._monotonic()
        ros = self._ros_now_ns()
        after = self._monotonic()
        if after - before > self._bracket_s and self._offset_ns is not None:
            return  # preempted while reading: try again at the next instant
        offset = ros - round((before + after) / 2 * 1e9)
        if self._offset_ns is None or abs(offset - self._offset_ns) > self._bracket_s * 1e9:
            self._offset_ns = offset
        self._due = t + self._refresh_s
