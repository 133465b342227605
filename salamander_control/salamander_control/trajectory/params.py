"""The trajectory generator's parameters, and the per-joint motion limits it shares with Cartesian motion.

- `param_specs` / `build_config` / `config_warnings`: the generator node's parameters (the convention of
  every node, see `salamander_control.ros.params`): the arm model (config/arm.yaml), the per-joint motion
  limits (config/motion_limits.yaml) and its own (config/trajectory_generator.yaml).
- `motion_limit_specs` / `build_motion_limits`: the per-joint limits (`max_velocity.<joint>`, ...), a
  group the Cartesian motion node declares too, from the same file.
- `per_joint_specs` / `per_joint_values`: one scalar parameter per joint rather than a five-element
  array: `ros2 param describe` then shows each joint's range, rclpy enforces it, and a YAML file reads
  as a small table (``max_velocity: {base_yaw: 1.5, shoulder_pitch: 1.0, ...}``); the simulated motors
  use them for their own velocity limits.

Pure: no rclpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING, fields
from typing import Any

from salamander_control.kinematics import JOINT_NAMES
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.param_spec import ParamSpec
from salamander_control.trajectory.core import TrajectoryConfig
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
        what = group.replace("max_", "trajectory ") + " limit"
        specs += per_joint_specs(group, getattr(defaults, group), what, unit, value_range)
    return specs


def build_motion_limits(values: dict[str, Any]) -> MotionLimits:
    """MotionLimits from parameter values (extra keys ignored); raises ValueError when invalid."""
    return MotionLimits(**{group: per_joint_values(values, group) for group in MOTION_GROUPS})


_DEFAULT = {f.name: f.default for f in fields(TrajectoryConfig) if f.default is not MISSING}
"""`TrajectoryConfig`'s defaults, which the parameters take (written once, there)."""


def param_specs() -> list[ParamSpec]:
    """Every parameter of the generator: the arm model, the motion limits, the rate and the stream timing."""
    rate = ParamSpec(
        "control_rate_hz", _DEFAULT["control_rate_hz"],
        "control loop rate (Hz); Ruckig's time step is its inverse", 10.0, 2000.0, read_only=True,
    )
    timeout = ParamSpec(
        "stream_timeout_s", _DEFAULT["stream_timeout"],
        "a stream of goals with velocities whose next goal is this late has stopped: the arm comes to rest "
        "at its newest goal (s; a few periods of the sender, longer than stream_delay_s)", 0.005, 1.0,
    )
    delay = ParamSpec(
        "stream_delay_s", _DEFAULT["stream_delay"],
        "how far behind a stream of goals with velocities the command follows it (s; longer than the "
        "sender's period plus its latency, shorter than stream_timeout_s)", 0.001, 0.5,
    )
    js_timeout = ParamSpec(
        "joint_state_timeout_s", _DEFAULT["joint_state_timeout"],
        "no measured joint state for this long: hold (send no command; a goal waits) and re-anchor at the "
        "measured state when it is back (s)", 0.02, 5.0,
    )
    js_tolerance = ParamSpec(
        "joint_state_tolerance", _DEFAULT["joint_state_tolerance"],
        "a measured joint this far outside the range of the recent commands (the last 0.25 s plus "
        "joint_state_timeout_s) disagrees with the command: re-anchor at the measured state (rad)",
        0.001, 1.0,
    )
    hold_rate = ParamSpec(
        "hold_command_rate_hz", _DEFAULT["hold_command_rate_hz"],
        "while the command stands still (arm at rest, holding), it is sent again only this often, as a "
        "keep-alive; any change goes out in the cycle that computed it; >= control_rate_hz sends every cycle "
        "(Hz; the driver holds its last command between them, docs/interfaces.md)", 1.0, 2000.0,
    )
    monitor_rate = ParamSpec(
        "monitor_rate_hz", _DEFAULT["monitor_rate_hz"],
        "the measured joint states received are republished on joint_states_monitor at most this often, "
        "for the monitors (ghost, behaviour server, teleop controller, operator view) (Hz)", 1.0, 1000.0,
    )
    return [
        *arm_param_specs(), *motion_limit_specs(), rate, timeout, delay, js_timeout, js_tolerance, hold_rate,
        monitor_rate,
    ]


def build_config(values: dict[str, Any]) -> TrajectoryConfig:
    """The frozen snapshot for a complete set of parameter values; ValueError refuses the set."""
    return TrajectoryConfig(
        arm=build_arm_params(values),
        limits=build_motion_limits(values),
        control_rate_hz=float(values["control_rate_hz"]),
        stream_timeout=float(values["stream_timeout_s"]),
        stream_delay=float(values["stream_delay_s"]),
        joint_state_timeout=float(values["joint_state_timeout_s"]),
        joint_state_tolerance=float(values["joint_state_tolerance"]),
        hold_command_rate_hz=float(values["hold_command_rate_hz"]),
        monitor_rate_hz=float(values["monitor_rate_hz"]),
    )


def config_warnings(config: TrajectoryConfig) -> list[str]:
    """Accepted but worth saying: the arm model's warnings (rest posture no longer admitted)."""
    return arm_params_warnings(config.arm)
