"""What a MoveCartesian goal and the Cartesian motion node's parameters may be, as frozen values.

`parse_goal` turns a goal's fields into a `CartesianGoal` or says why it is malformed (the node's goal
callback rejects it with that reason). `build_motion_config` turns the node's parameter values into one
`MotionConfig` snapshot or raises ValueError (ParamBinding refuses the change with that reason).

Pure Python, no rclpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from salamander_control.cartesian.path import PathSampling
from salamander_control.cartesian.plan import CartesianLimits, JointRateLimits
from salamander_control.kinematics import JOINT_NAMES, ArmParams
from salamander_control.trajectory.otg import MotionLimits

PATH_LINEAR = "linear"
PATH_JOINT = "joint"
DEFAULT_SPEED_SCALE = 0.5


class GoalRejected(ValueError):
    """A malformed goal; the message is the logged reason."""


@dataclass(frozen=True)
class CartesianGoal:
    """A validated MoveCartesian goal: pose (x, y, z, pitch, yaw), path, speed scale, client id."""

    pose: tuple[float, float, float, float, float]
    path: str
    speed_scale: float
    client_id: str


def parse_goal(
    tcp: Any, tool_pitch: float, tool_yaw: float, path: str, speed_scale: float, client_id: str
) -> CartesianGoal:
    """Validate a goal's fields.

    Raises:
        GoalRejected: NaN/inf pose, unknown path, speed_scale outside [0, 1] (0 means the default).
    """
    values = (*tcp, tool_pitch, tool_yaw)
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        raise GoalRejected(
            f"pose must be finite, got tcp={tuple(tcp)} tool_pitch={tool_pitch} tool_yaw={tool_yaw}"
        )
    if path not in (PATH_LINEAR, PATH_JOINT):
        raise GoalRejected(f"path must be {PATH_LINEAR!r} or {PATH_JOINT!r}, got {path!r}")
    if not (
        isinstance(speed_scale, (int, float)) and math.isfinite(speed_scale) and 0.0 <= speed_scale <= 1.0
    ):
        raise GoalRejected(
            f"speed_scale must lie in (0, 1] (0 = default {DEFAULT_SPEED_SCALE}), got {speed_scale}"
        )
    scale = DEFAULT_SPEED_SCALE if speed_scale == 0.0 else float(speed_scale)
    pose = tuple(float(v) for v in values)
    return CartesianGoal(pose, path, scale, client_id)  # type: ignore[arg-type]


def _generator_defaults() -> JointRateLimits:
    d = MotionLimits()
    return JointRateLimits(d.max_velocity, d.max_acceleration, d.max_jerk)


JOINT_LIMIT_GROUPS = ("max_velocity", "max_acceleration", "max_jerk")
"""Per-joint parameters `<group>.<joint>`, named as on the trajectory generator (keep the values in step)."""


@dataclass(frozen=True)
class MotionConfig:
    """The node's parameters as one frozen snapshot (see config/cartesian_motion.yaml)."""

    arm: ArmParams = field(default_factory=ArmParams)
    limits: CartesianLimits = field(default_factory=CartesianLimits)
    sampling: PathSampling = field(default_factory=PathSampling)
    control_rate: float = 100.0
    feedback_rate: float = 20.0
    position_tolerance: float = 0.001
    angle_tolerance: float = 0.01
    joint_tolerance: float = 0.001
    settle_timeout: float = 3.0
    joint_path_timeout: float = 30.0
    joint_state_timeout: float = 1.0
    joint_limits: JointRateLimits = field(default_factory=_generator_defaults)
    joint_limit_fraction: float = 0.9

    @property
    def joint_rate_limits(self) -> JointRateLimits:
        """The joint limits Cartesian plans must stay within: the generator's, times the fraction.

        The fraction leaves the trajectory generator headroom to catch up with a moving target.
        """
        f = self.joint_limit_fraction
        return JointRateLimits(*(tuple(f * v for v in group) for group in self.joint_limits))


LIMIT_PARAMS = {
    "max_linear_velocity": "linear_velocity",
    "max_linear_acceleration": "linear_acceleration",
    "max_linear_jerk": "linear_jerk",
    "max_angular_velocity": "angular_velocity",
    "max_angular_acceleration": "angular_acceleration",
    "max_angular_jerk": "angular_jerk",
}
SAMPLING_PARAMS = {
    "path_sample_spacing": "spacing",
    "path_angle_spacing": "angle_spacing",
    "path_min_samples": "min_samples",
    "max_joint_step": "max_joint_step",
}
PLAIN_PARAMS = (
    "control_rate",
    "feedback_rate",
    "position_tolerance",
    "angle_tolerance",
    "joint_tolerance",
    "settle_timeout",
    "joint_path_timeout",
    "joint_state_timeout",
    "joint_limit_fraction",
)


def build_motion_config(values: dict[str, Any]) -> MotionConfig:
    """MotionConfig from parameter values (arm fields + the names above); ValueError when invalid."""
    limits = CartesianLimits(**{attr: float(values[name]) for name, attr in LIMIT_PARAMS.items()})
    sampling = PathSampling(**{attr: values[name] for name, attr in SAMPLING_PARAMS.items()})
    plain = {name: float(values[name]) for name in PLAIN_PARAMS}
    for name, value in plain.items():
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be a positive finite number, got {value}")
    if plain["joint_limit_fraction"] > 1.0:
        raise ValueError(f"joint_limit_fraction must lie in (0, 1], got {plain['joint_limit_fraction']}")
    joint_limits = JointRateLimits(
        *(tuple(float(values[f"{group}.{name}"]) for name in JOINT_NAMES) for group in JOINT_LIMIT_GROUPS)
    )
    for group, bounds in zip(JOINT_LIMIT_GROUPS, joint_limits, strict=True):
        if not all(math.isfinite(v) and v > 0.0 for v in bounds):
            raise ValueError(f"{group} must be > 0 for every joint, got {bounds}")
    arm = ArmParams(**{f.name: values[f.name] for f in fields(ArmParams) if f.name in values})
    return MotionConfig(arm, limits, sampling, **plain, joint_limits=joint_limits)
