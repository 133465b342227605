"""The parameters of `/arm/arm_cartesian_motion_node` and the `MotionConfig` snapshot they build.

The convention of every node (see `salamander_control.ros.params`): `param_specs` lists the parameters,
`build_config` turns a complete set of values into the frozen `MotionConfig` or raises ValueError (the
refusal `ros2 param set` prints), `config_warnings` says what is accepted but notable. The node declares
the arm model (config/arm.yaml), the trajectory generator's per-joint motion limits
(config/motion_limits.yaml: its plans must fit `joint_limit_fraction` of them) and its own parameters
(config/cartesian_motion.yaml). docs/interfaces.md pins `alpha_max`/`beta_max` and the defaults of the
three linear limits. Pure: no rclpy.
"""

from __future__ import annotations

import math
from typing import Any

from salamander_control.cartesian.config import MotionConfig
from salamander_control.cartesian.path import PathSampling
from salamander_control.cartesian.plan import CartesianLimits, JointRateLimits
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.param_spec import ParamSpec
from salamander_control.trajectory.params import build_motion_limits, motion_limit_specs

LIMIT_PARAMS = {
    "max_linear_velocity": "linear_velocity",
    "max_linear_acceleration": "linear_acceleration",
    "max_linear_jerk": "linear_jerk",
    "max_angular_velocity": "angular_velocity",
    "max_angular_acceleration": "angular_acceleration",
    "max_angular_jerk": "angular_jerk",
}
"""Parameter name -> `CartesianLimits` field."""
SAMPLING_PARAMS = {
    "path_sample_spacing": "spacing",
    "path_angle_spacing": "angle_spacing",
    "path_min_samples": "min_samples",
    "max_joint_step": "max_joint_step",
}
"""Parameter name -> `PathSampling` field."""
PLAIN_PARAMS = (
    "control_rate_hz",
    "feedback_rate_hz",
    "position_tolerance",
    "angle_tolerance",
    "settle_timeout_s",
    "joint_path_timeout_s",
    "joint_state_timeout_s",
    "joint_limit_fraction",
)
"""Parameters that are `MotionConfig` fields of the same name."""
GUARD_PARAMS = ("guard_debounce_samples", "guard_baseline_samples")
"""Integer `MotionConfig` fields of the same name (guarded moves: `cartesian.contact`)."""


_OWN: tuple[tuple[str, str, float, float], ...] = (
    ("max_linear_velocity", "TCP speed limit along the line at speed_scale 1 (m/s)", 0.001, 5.0),
    ("max_linear_acceleration", "TCP acceleration limit at speed_scale 1 (m/s^2)", 0.01, 50.0),
    ("max_linear_jerk", "TCP jerk limit at speed_scale 1 (m/s^3)", 0.1, 1000.0),
    ("max_angular_velocity", "tool pitch/yaw rate limit at speed_scale 1 (rad/s)", 0.01, 10.0),
    ("max_angular_acceleration", "tool pitch/yaw acceleration limit (rad/s^2)", 0.1, 100.0),
    ("max_angular_jerk", "tool pitch/yaw jerk limit (rad/s^3)", 1.0, 2000.0),
    ("control_rate_hz", "rate of Cartesian sampling, IK and joint targets (Hz)", 10.0, 1000.0),
    ("feedback_rate_hz", "rate of MoveCartesian feedback (Hz)", 1.0, 100.0),
    ("position_tolerance", "measured TCP to target distance for success, linear or joint (m)", 1e-05, 0.05),
    ("angle_tolerance", "measured tool pitch/yaw error for success, linear or joint (rad)", 0.0001, 0.2),
    ("settle_timeout_s", "time after the trajectory ends for the arm to arrive (s)", 0.1, 60.0),
    ("joint_path_timeout_s", "time a joint path goal may take (s)", 1.0, 600.0),
    ("joint_state_timeout_s", "older /joint_states count as missing (s)", 0.05, 60.0),
    ("path_sample_spacing", "largest TCP step between path check samples (m)", 0.0001, 0.01),
    ("path_angle_spacing", "largest tool angle step between path check samples (rad)", 0.001, 0.1),
    ("path_min_samples", "fewest samples of a path check", 2, 100000),
    ("max_joint_step", "largest joint change between path samples (rad)", 0.01, 3.2),
    ("joint_limit_fraction",
     "fraction of the generator's joint limits Cartesian plans may use (the rest is headroom)", 0.1, 1.0),
    ("guard_debounce_samples",
     "measured samples in a row above a guarded goal's guard_force that stop it (contact.py)", 1, 50),
    ("guard_baseline_samples",
     "measured samples at a guarded goal's start averaged into its baseline load", 1, 100),
)
"""The node's own parameters: name, description, range; the default is `MotionConfig`'s (`_default`)."""


_D = MotionConfig()
"""The node's defaults (written once, in `MotionConfig` and its parts)."""


def _default(name: str) -> Any:
    """A parameter's default: `MotionConfig`'s own (its limits', its sampling's)."""
    if name in LIMIT_PARAMS:
        return getattr(_D.limits, LIMIT_PARAMS[name])
    if name in SAMPLING_PARAMS:
        return getattr(_D.sampling, SAMPLING_PARAMS[name])
    return getattr(_D, name)


def own_param_specs() -> list[ParamSpec]:
    """The node's own parameters (config/cartesian_motion.yaml), without the arm model and motion limits."""
    return [ParamSpec(name, _default(name), description, lo, hi) for name, description, lo, hi in _OWN]


def param_specs() -> list[ParamSpec]:
    """Every parameter of the node: the arm model, the generator's motion limits, its own."""
    return [*arm_param_specs(), *motion_limit_specs(), *own_param_specs()]


def build_config(values: dict[str, Any]) -> MotionConfig:
    """MotionConfig from a complete set of parameter values; ValueError refuses the set."""
    limits = CartesianLimits(**{attr: float(values[name]) for name, attr in LIMIT_PARAMS.items()})
    sampling = PathSampling(**{attr: values[name] for name, attr in SAMPLING_PARAMS.items()})
    plain = {name: float(values[name]) for name in PLAIN_PARAMS}
    for name, value in plain.items():
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be a positive finite number, got {value}")
    if plain["joint_limit_fraction"] > 1.0:
        raise ValueError(f"joint_limit_fraction must lie in (0, 1], got {plain['joint_limit_fraction']}")
    motion = build_motion_limits(values)
    joint_limits = JointRateLimits(motion.max_velocity, motion.max_acceleration, motion.max_jerk)
    guard = {name: int(values[name]) for name in GUARD_PARAMS}
    return MotionConfig(
        build_arm_params(values), limits, sampling, **plain, joint_limits=joint_limits, **guard
    )


def config_warnings(config: MotionConfig) -> list[str]:
    """Accepted but worth saying: the arm model's warnings (rest posture no longer admitted)."""
    return arm_params_warnings(config.arm)
