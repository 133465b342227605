"""ManualAdjust's integrator: operator twists -> a bounded XY offset of the place target.

Pure and clock-agnostic (times in seconds from any monotonic clock), so every rule of the manual
placement (docs/interfaces.md, "Manual placement") is unit-tested without ROS:

- at most `max_offset` (30 mm) from the planned target, as a radius in XY;
- at most `max_speed` (50 mm/s), as the norm of the XY velocity;
- a twist older than `stale_after` (0.3 s) counts as zero: only the part of an update interval in
  which the latest twist was fresh is integrated, so a lost publisher stops the nudge at once;
- at most `timeout` (120 s) of waiting, then the adjustment fails;
- only confirmations received after the wait began count; `false` aborts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum


class AdjustOutcome(Enum):
    """Where the adjustment stands."""

    WAITING = "waiting"
    CONFIRMED = "confirmed"
    ABORTED = "aborted"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True)
class AdjustLimits:
    """Bounds of the manual placement; the defaults are pinned (docs/interfaces.md)."""

    max_offset: float = 0.030
    max_speed: float = 0.050
    stale_after: float = 0.3
    timeout: float = 120.0

    def __post_init__(self) -> None:
        """Refuse non-finite or non-positive bounds."""
        for name in ("max_offset", "max_speed", "stale_after", "timeout"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"AdjustLimits.{name} must be a positive finite number, got {value!r}")


class ManualAdjustIntegrator:
    """Integrates operator jog twists into an XY offset, within the limits.

    Args:
        limits: the bounds.
        start_time: when the wait began (confirmations before it do not count).
    """

    def __init__(self, limits: AdjustLimits, start_time: float) -> None:
        self.limits = limits
        self.start_time = start_time
        self._last_update = start_time
        self._offset = (0.0, 0.0)
        self._twist = (0.0, 0.0)
        self._twist_time = -math.inf
        self._outcome = AdjustOutcome.WAITING
        self._end_time: float | None = None
        self.ignored_twists = 0

    @property
    def offset(self) -> tuple[float, float]:
        """Current XY offset from the planned target, m."""
        return self._offset

    @property
    def outcome(self) -> AdjustOutcome:
        """WAITING until confirmed, aborted or timed out."""
        return self._outcome

    def elapsed(self, now: float) -> float:
        """Seconds since the wait began (frozen at the outcome)."""
        return (self._end_time if self._end_time is not None else now) - self.start_time

    def on_twist(self, vx: float, vy: float, received: float) -> bool:
        """Record the latest operator twist (m/s in base_link). Returns False when it was refused.

        Non-finite velocities are refused (and counted); so is a twist received before the wait began.
        """
        if not (math.isfinite(vx) and math.isfinite(vy)) or received < self.start_time:
            self.ignored_twists += 1
            return False
        if received >= self._twist_time:
            self._twist, self._twist_time = (vx, vy), received
        return True

    def on_confirm(self, confirmed: bool, received: float) -> bool:
        """Record a confirmation; returns whether it counted (received after the wait began)."""
        if self._outcome is not AdjustOutcome.WAITING or received < self.start_time:
            return False
        self.update(received)
        self._outcome = AdjustOutcome.CONFIRMED if confirmed else AdjustOutcome.ABORTED
        self._end_time = received
        return True

    def update(self, now: float) -> AdjustOutcome:
        """Integrate up to `now` and check the timeout."""
        if self._outcome is not AdjustOutcome.WAITING:
            return self._outcome
        lim = self.limits
        deadline = self.start_time + lim.timeout
        until = min(now, deadline)
        # The twist is valid on [twist_time, twist_time + stale_after]; integrate only the overlap.
        lo = max(self._last_update, self._twist_time)
        hi = min(until, self._twist_time + lim.stale_after)
        if hi > lo:
            vx, vy = self._twist
            speed = math.hypot(vx, vy)
            if speed > lim.max_speed:
                vx, vy = vx * lim.max_speed / speed, vy * lim.max_speed / speed
            ox, oy = self._offset[0] + vx * (hi - lo), self._offset[1] + vy * (hi - lo)
            radius = math.hypot(ox, oy)
            if radius > lim.max_offset:
                ox, oy = ox * lim.max_offset / radius, oy * lim.max_offset / radius
            self._offset = (ox, oy)
        self._last_update = max(self._last_update, until)
        if now >= deadline:
            self._outcome = AdjustOutcome.TIMED_OUT
            self._end_time = deadline
        return self._outcome

    def summary(self, name: str, now: float) -> str:
        """The log line operators rely on (pinned, docs/interfaces.md).

        For example ``ManualAdjust[place_can_1]: confirmed, offset [20.0, 0.0, 0.0] mm after 3.2 s``.
        """
        x, y = (1000.0 * v for v in self._offset)
        return (
            f"ManualAdjust[{name}]: {self._outcome.value}, offset [{x:.1f}, {y:.1f}, 0.0] mm "
            f"after {self.elapsed(now):.1f} s"
        )
