"""ManualAdjust's integrator: operator twists -> a bounded offset of the place target.

Pure and clock-agnostic (times in seconds from any monotonic clock), so every rule of the manual
placement (docs/interfaces.md, "Manual placement") is unit-tested without ROS:

- at most `max_offset` (30 mm) from the planned target, as a radius in XY; the wait may start from an
  offset (the box estimate's), brought within that radius too;
- with `allow_z` (default false) the twist's z is integrated too, within [-`max_down_z`,
  +`max_offset_z`] (both at most 30 mm; ManualAdjust sets `max_down_z` to the height of place_above
  over the planned place_release, so the held can never goes below where the plan releases it);
  without it z stays 0 whatever the twist says;
- at most `max_speed` (50 mm/s), as the norm of the velocity (XY, or XYZ with `allow_z`);
- a twist older than `stale_after` (0.3 s) counts as zero: only the part of an update interval in
  which the latest twist was fresh is integrated, so a lost publisher stops the nudge at once;
- at most `timeout` (120 s) of waiting, then the adjustment fails;
- only confirmations received after the wait began count; `false` aborts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from salamander_behavior.report import offset_mm


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
    allow_z: bool = False
    max_offset_z: float = 0.030
    """m; how far up the operator may move the can (with `allow_z`), and the most it may go down."""
    max_down_z: float = 0.0
    """m; how far below the planned place_above the held can may go (with `allow_z`; at most
    `max_offset_z`). 0 (the default, and where the place_release height is unknown) allows up only."""

    def __post_init__(self) -> None:
        """Refuse non-finite or non-positive bounds (a negative `max_down_z`)."""
        for name in ("max_offset", "max_speed", "stale_after", "timeout", "max_offset_z"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"AdjustLimits.{name} must be a positive finite number, got {value!r}")
        if not (isinstance(self.max_down_z, (int, float)) and math.isfinite(self.max_down_z)
                and self.max_down_z >= 0.0):
            raise ValueError(f"AdjustLimits.max_down_z must be a finite number >= 0, got {self.max_down_z!r}")

    @property
    def z_range(self) -> tuple[float, float]:
        """(lowest, highest) z offset, m: (0, 0) without `allow_z`."""
        if not self.allow_z:
            return (0.0, 0.0)
        return (-min(self.max_down_z, self.max_offset_z), self.max_offset_z)


def within_radius(offset: tuple[float, float], radius: float) -> tuple[float, float]:
    """`offset` scaled back onto the circle of `radius` when beyond it; a non-finite one is (0, 0)."""
    ox, oy = float(offset[0]), float(offset[1])
    if not (math.isfinite(ox) and math.isfinite(oy)):
        return (0.0, 0.0)
    norm = math.hypot(ox, oy)
    return (ox * radius / norm, oy * radius / norm) if norm > radius else (ox, oy)


class ManualAdjustIntegrator:
    """Integrates operator jog twists into an offset (XY; and z with `allow_z`), within the limits.

    Args:
        limits: the bounds.
        start_time: when the wait began (confirmations before it do not count).
        start: the XY offset the wait starts from (the box estimate's, m); brought within `max_offset`.
    """

    def __init__(
        self, limits: AdjustLimits, start_time: float, start: tuple[float, float] = (0.0, 0.0)
    ) -> None:
        self.limits = limits
        self.start_time = start_time
        self._last_update = start_time
        self._offset = within_radius(start, limits.max_offset)
        self._offset_z = 0.0
        self._twist = (0.0, 0.0, 0.0)
        self._twist_time = -math.inf
        self._outcome = AdjustOutcome.WAITING
        self._end_time: float | None = None
        self.ignored_twists = 0

    @property
    def offset(self) -> tuple[float, float]:
        """Current XY offset from the planned target, m."""
        return self._offset

    @property
    def offset_z(self) -> float:
        """Current z offset from the planned target, m (0 unless `allow_z`)."""
        return self._offset_z

    @property
    def offset3(self) -> tuple[float, float, float]:
        """Current (x, y, z) offset from the planned target, m."""
        return (*self._offset, self._offset_z)

    @property
    def outcome(self) -> AdjustOutcome:
        """WAITING until confirmed, aborted or timed out."""
        return self._outcome

    def elapsed(self, now: float) -> float:
        """Seconds since the wait began (frozen at the outcome)."""
        return (self._end_time if self._end_time is not None else now) - self.start_time

    def on_twist(self, vx: float, vy: float, received: float, vz: float = 0.0) -> bool:
        """Record the latest operator twist (m/s in base_link). Returns False when it was refused.

        Non-finite velocities are refused (and counted); so is a twist received before the wait began.
        Without `allow_z`, `vz` is not used (and not checked).
        """
        vz = vz if self.limits.allow_z else 0.0
        if not (math.isfinite(vx) and math.isfinite(vy) and math.isfinite(vz)) or received < self.start_time:
            self.ignored_twists += 1
            return False
        if received >= self._twist_time:
            self._twist, self._twist_time = (vx, vy, vz), received
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
            vx, vy, vz = self._twist
            speed = math.hypot(vx, vy, vz)
            if speed > lim.max_speed:
                vx, vy, vz = (v * lim.max_speed / speed for v in (vx, vy, vz))
            ox, oy = self._offset[0] + vx * (hi - lo), self._offset[1] + vy * (hi - lo)
            self._offset = within_radius((ox, oy), lim.max_offset)
            z_lo, z_hi = lim.z_range
            self._offset_z = min(max(self._offset_z + vz * (hi - lo), z_lo), z_hi)
        self._last_update = max(self._last_update, until)
        if now >= deadline:
            self._outcome = AdjustOutcome.TIMED_OUT
            self._end_time = deadline
        return self._outcome

    def summary(self, name: str, now: float) -> str:
        """The log line operators rely on (pinned, docs/interfaces.md).

        For example ``ManualAdjust[place_can_1]: confirmed, offset [20.0, 0.0, 0.0] mm after 3.2 s``.
        """
        return (
            f"ManualAdjust[{name}]: {self._outcome.value}, offset {offset_mm(self.offset3)} "
            f"after {self.elapsed(now):.1f} s"
        )
