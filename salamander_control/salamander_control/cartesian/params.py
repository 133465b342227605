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


def own_param_specs() -> list[ParamSpec]:
    """The node's own parameters (config/cartesian_motion.yaml), without the arm model and motion limits."""
    return [
        ParamSpec(
            "max_linear_velocity", 1.0, "TCP speed limit along the line at speed_scale 1 (m/s)", 0.001, 5.0
        ),
        ParamSpec(
            "max_linear_acceleration", 4.0, "TCP acceleration limit at speed_scale 1 (m/s^2)", 0.01, 50.0
        ),
        ParamSpec("max_linear_jerk", 40.0, "TCP jerk limit at speed_scale 1 (m/s^3)", 0.1, 1000.0),
        ParamSpec(
            "max_angular_velocity", 1.5, "tool pitch/yaw rate limit at speed_scale 1 (rad/s)", 0.01, 10.0
        ),
        ParamSpec("max_angular_acceleration", 6.0, "tool pitch/yaw acceleration limit (rad/s^2)", 0.1, 100.0),
        ParamSpec("max_angular_jerk", 60.0, "tool pitch/yaw jerk limit (rad/s^3)", 1.0, 2000.0),
        ParamSpec(
            "control_rate_hz", 100.0, "rate of Cartesian sampling, IK and joint targets (Hz)", 10.0, 1000.0
        ),
        ParamSpec("feedback_rate_hz", 10.0, "rate of MoveCartesian feedback (Hz)", 1.0, 100.0),
        ParamSpec(
            "position_tolerance", 0.001, "measured TCP to target distance for success, linear or joint (m)",
            1e-5, 0.05,
        ),
        ParamSpec(
            "angle_tolerance", 0.01, "measured tool pitch/yaw error for success, linear or joint (rad)",
            1e-4, 0.2,
        ),
        ParamSpec(
            "settle_timeout_s", 3.0, "time after the trajectory ends for the arm to arrive (s)", 0.1, 60.0
        ),
        ParamSpec("joint_path_timeout_s", 30.0, "time a joint path goal may take (s)", 1.0, 600.0),
        ParamSpec("joint_state_timeout_s", 1.0, "older /joint_states count as missing (s)", 0.05, 60.0),
        ParamSpec(
            "path_sample_spacing", 0.002, "largest TCP step between path check samples (m)", 1e-4, 0.01
        ),
        ParamSpec(
            "path_angle_spacing", 0.01, "largest tool angle step between path check samples (rad)", 1e-3, 0.1
        ),
        ParamSpec("path_min_samples", 50, "fewest samples of a path check", 2, 100000),
        ParamSpec("max_joint_step", 0.2, "largest joint change between path samples (rad)", 0.01, 3.2),
        ParamSpec(
            "joint_limit_fraction",
            0.9,
            "fraction of the generator's joint limits Cartesian plans may use (the rest is headroom)",
            0.1,
            1.0,
        ),
        ParamSpec(
            "guard_debounce_samples",
            2,
            "measured samples in a row above a guarded goal's guard_force that stop it (contact.py)",
            1,
            50,
        ),
        ParamSpec(
            "guard_baseline_samples",
            5,
            "measured samples at a guarded goal's start averaged into its baseline load",
            1,
            100,
        ),
    ]


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
