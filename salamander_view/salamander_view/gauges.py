"""The joints against their limits and the two coupled margins, as the operator view's bars show them.

Per joint: the measured angle, its limits (the arm model's) and where it sits between them (0 = lower,
1 = upper).
The coupled shoulder/beam limits (docs/arm_model.md, "Coupled limits"): alpha = q2 - q1 <= alpha_max and
beta = q1 - q2 <= beta_max; a margin is max - value (rad), negative when the limit is exceeded. The
pair in force comes from /arm/coupled_limits (the trajectory generator's latched CoupledLimits). Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from salamander_control.kinematics import JOINT_NAMES, ArmParams

NEAR_LIMIT = 0.05
"""rad; a joint or margin closer than this to its limit is shown as 'near' (the bar turns orange)."""


@dataclass(frozen=True)
class Gauge:
    """One bar: a value between `lo` and `hi` (rad), or a margin to `hi` when `lo` is None."""

    label: str
    value: float
    lo: float
    hi: float

    @property
    def fraction(self) -> float:
        """Where the value sits in [lo, hi], clipped to [0, 1] (0.5 when the range is empty)."""
        span = self.hi - self.lo
        if span <= 0 or not math.isfinite(self.value):
            return 0.5
        return min(1.0, max(0.0, (self.value - self.lo) / span))

    @property
    def margin(self) -> float:
        """Rad to the nearer limit (negative outside)."""
        return min(self.value - self.lo, self.hi - self.value)

    @property
    def level(self) -> str:
        """'ok', 'near' (within NEAR_LIMIT) or 'over' (outside)."""
        if self.margin < 0:
            return "over"
        return "near" if self.margin < NEAR_LIMIT else "ok"


def joint_limits(arm: ArmParams) -> dict[str, tuple[float, float]]:
    """The per-joint position limits of the arm model `arm` by joint name."""
    return dict(zip(JOINT_NAMES, zip(arm.joint_lower, arm.joint_upper, strict=True), strict=True))


def joint_gauges(q: Sequence[float], limits: Mapping[str, tuple[float, float]]) -> list[Gauge]:
    """One gauge per joint, in motor order (`q` in JOINT_NAMES order)."""
    return [Gauge(name, float(v), *limits[name]) for name, v in zip(JOINT_NAMES, q, strict=True)]


def coupled_gauges(q: Sequence[float], alpha_max: float, beta_max: float) -> list[Gauge]:
    """Alpha = q2 - q1 in [-inf.., alpha_max] and beta = q1 - q2 in [.., beta_max], drawn from -pi/2.

    Each bar runs from -beta_max (resp. -alpha_max), the value the other limit allows, to its own
    maximum; its margin is what matters: max - value.
    """
    q1, q2 = float(q[1]), float(q[2])
    return [
        Gauge("alpha = q2 - q1", q2 - q1, -beta_max, alpha_max),
        Gauge("beta = q1 - q2", q1 - q2, -alpha_max, beta_max),
    ]
