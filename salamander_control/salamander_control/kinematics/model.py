"""The arm's model: geometry, per-joint limits and the coupled shoulder/beam limits.

`ArmParams` is a frozen snapshot. Nodes build a new one when a parameter changes and swap it in
atomically, so a control cycle never sees half an update. The model, its limits and the reference
points: docs/arm_model.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

JOINT_NAMES: tuple[str, ...] = ("base_yaw", "shoulder_pitch", "beam_pitch", "wrist_pitch", "wrist_yaw")
"""Joint names in motor order; every joint vector in the library uses this order."""

NUM_JOINTS = len(JOINT_NAMES)

REST_Q1 = math.radians(-45.0)
"""Rest posture shoulder pitch (docs/arm_model.md)."""
REST_Q2 = math.radians(33.8)
"""Rest posture beam pitch (docs/arm_model.md)."""
REST_POSTURE: tuple[float, ...] = (0.0, REST_Q1, REST_Q2, 0.0, 0.0)

ALPHA_BETA_RANGE = (0.0, 2.7)
"""Range accepted for alpha_max and beta_max, rad. Above ~2.66 the coupled limit no longer binds."""


@dataclass(frozen=True)
class ArmParams:
    """Geometry and limits of the arm; the defaults are those of docs/arm_model.md.

    Attributes are metres and radians. `alpha_max` bounds ``q2 - q1`` (beam lowered while the
    shoulder leans back) and `beta_max` bounds ``q1 - q2`` (beam raised while the shoulder leans
    forward). Construction validates everything, so a snapshot in use is always consistent.
    """

    base_height: float = 0.12
    upper_arm_length: float = 0.30
    beam_length: float = 0.35
    tool_drop: float = 0.10
    pad_mount_yaw: float = 0.0
    yaw_min: float = -math.pi
    yaw_max: float = math.pi
    q1_min: float = -1.35
    q1_max: float = 1.35
    q2_min: float = 0.0
    q2_max: float = 1.309
    wrist_pitch_min: float = -1.5708
    wrist_pitch_max: float = 1.5708
    wrist_yaw_min: float = -math.pi
    wrist_yaw_max: float = math.pi
    alpha_max: float = 1.40
    beta_max: float = 0.87

    def __post_init__(self) -> None:
        """Reject non-finite values, non-positive lengths, empty ranges and an empty (q1, q2) polygon."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"ArmParams.{f.name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"ArmParams.{f.name} must be finite, got {value!r}")
            object.__setattr__(self, f.name, float(value))
        for name in ("upper_arm_length", "beam_length"):
            if getattr(self, name) <= 0.0:
                raise ValueError(f"ArmParams.{name} must be > 0, got {getattr(self, name)}")
        if self.tool_drop < 0.0:
            raise ValueError(f"ArmParams.tool_drop must be >= 0, got {self.tool_drop}")
        for lo, hi in (
            ("yaw_min", "yaw_max"),
            ("q1_min", "q1_max"),
            ("q2_min", "q2_max"),
            ("wrist_pitch_min", "wrist_pitch_max"),
            ("wrist_yaw_min", "wrist_yaw_max"),
        ):
            if not getattr(self, lo) < getattr(self, hi):
                raise ValueError(f"ArmParams.{lo} ({getattr(self, lo)}) must be < {hi} ({getattr(self, hi)})")
        for name in ("yaw_min", "yaw_max", "wrist_yaw_min", "wrist_yaw_max"):
            if abs(getattr(self, name)) > 2.0 * math.pi:
                raise ValueError(f"ArmParams.{name} must lie within [-2pi, 2pi], got {getattr(self, name)}")
        lo, hi = ALPHA_BETA_RANGE
        for name in ("alpha_max", "beta_max"):
            if not lo <= getattr(self, name) <= hi:
                raise ValueError(f"ArmParams.{name} must lie in [{lo}, {hi}] rad, got {getattr(self, name)}")
        # The polygon is empty when no q1 in its range has a q2 in range that satisfies both half-planes.
        if self.q2_min - self.q1_max > self.alpha_max or self.q1_min - self.q2_max > self.beta_max:
            raise ValueError("ArmParams: alpha_max/beta_max leave no feasible (q1, q2) pair")

    def with_changes(self, **changes: Any) -> ArmParams:
        """Return a validated copy with some fields changed (the atomic-update path of the nodes)."""
        return replace(self, **changes)

    def admits_rest(self) -> bool:
        """Whether the rest posture (q1 = -45 deg, q2 = 33.8 deg) satisfies every limit.

        Operators narrow alpha/beta on purpose; a setting that locks out rest is legal but worth a warning.
        """
        return (
            self.q1_min <= REST_Q1 <= self.q1_max
            and self.q2_min <= REST_Q2 <= self.q2_max
            and REST_Q2 - REST_Q1 <= self.alpha_max
            and REST_Q1 - REST_Q2 <= self.beta_max
        )

    @property
    def joint_lower(self) -> tuple[float, ...]:
        """Per-joint lower limits in motor order."""
        return (self.yaw_min, self.q1_min, self.q2_min, self.wrist_pitch_min, self.wrist_yaw_min)

    @property
    def joint_upper(self) -> tuple[float, ...]:
        """Per-joint upper limits in motor order."""
        return (self.yaw_max, self.q1_max, self.q2_max, self.wrist_pitch_max, self.wrist_yaw_max)


def within_limits(q: Any, params: ArmParams, tol: float = 0.0) -> bool:
    """Whether joints `q` satisfy every per-joint and both coupled limits (within `tol`, rad).

    The exact check (tol = 0) is what the property tests assert: the IK and the clamp never cross a limit.
    """
    q0, q1, q2, q3, q4 = (float(v) for v in q)
    lower, upper = params.joint_lower, params.joint_upper
    for value, lo, hi in zip((q0, q1, q2, q3, q4), lower, upper, strict=True):
        if not lo - tol <= value <= hi + tol:
            return False
    return q2 - q1 <= params.alpha_max + tol and q1 - q2 <= params.beta_max + tol
