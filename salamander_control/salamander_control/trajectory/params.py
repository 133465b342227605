"""Per-joint parameters (`max_velocity.<joint>` etc.): the motion limits and the simulated motors.

One scalar parameter per joint rather than a five-element array: `ros2 param describe` then shows each
joint's range, rclpy enforces it, and a YAML file reads as a small table
(``max_velocity: {base_yaw: 1.5, shoulder_pitch: 1.0, ...}``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from salamander_control.kinematics import JOINT_NAMES
from salamander_control.ros.params import ParamSpec
from salamander_control.trajectory.otg import MotionLimits

# (parameter group, unit, range) of the trajectory generator's motion limits.
MOTION_GROUPS = {
    "max_velocity": ("rad/s", (0.01, 10.0)),
    "max_acceleration": ("rad/s^2", (0.01, 100.0)),
    "max_jerk": ("rad/s^3", (0.1, 10000.0)),
}


def per_joint_specs(
    group: str, defaults: Sequence[float], what: str, unit: str, value_range: tuple[float, float]
) -> list[ParamSpec]:
    """One ParamSpec `<group>.<joint>` per joint, e.g. `max_velocity.base_yaw`."""
    lo, hi = value_range
    return [
        ParamSpec(f"{group}.{name}", float(default), f"{what} of {name} ({unit})", lo, hi)
        for name, default in zip(JOINT_NAMES, defaults, strict=True)
    ]


def per_joint_values(values: dict[str, Any], group: str) -> tuple[float, ...]:
    """The five values of `<group>.<joint>` from a parameter dict, motor order."""
    return tuple(float(values[f"{group}.{name}"]) for name in JOINT_NAMES)


def motion_limit_specs(defaults: MotionLimits | None = None) -> list[ParamSpec]:
    """ParamSpecs of the trajectory generator's per-joint velocity, acceleration and jerk limits."""
    defaults = defaults or MotionLimits()
    specs: list[ParamSpec] = []
    for group, (unit, value_range) in MOTION_GROUPS.items():
        what = group.replace("max_", "maximum ")
        specs += per_joint_specs(group, getattr(defaults, group), f"trajectory {what}", unit, value_range)
    return specs


def build_motion_limits(values: dict[str, Any]) -> MotionLimits:
    """MotionLimits from parameter values (extra keys ignored); raises ValueError when invalid."""
    return MotionLimits(**{group: per_joint_values(values, group) for group in MOTION_GROUPS})
