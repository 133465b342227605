"""The simulated hardware node's parameters (`/arm/sim_hardware`) and their `SimConfig` snapshot.

The convention of every node (see `salamander_control.ros.params`): `param_specs` and `build_config`.
The simulated arm stands in for the hardware, so it loads neither config/arm.yaml nor
config/motion_limits.yaml: its stops surround the URDF's joint limits, and its `max_velocity.<joint>`
are the motors' own limits (config/sim_hardware.yaml), above the trajectory generator's. The cell
simulator's parameters are in `salamander_sim.cell.params`. Pure: no rclpy.
"""

from __future__ import annotations

from typing import Any

from salamander_control.kinematics import ALPHA_BETA_RANGE
from salamander_control.param_spec import ParamSpec
from salamander_control.trajectory.params import per_joint_specs, per_joint_values
from salamander_sim.hardware import SimConfig


def param_specs() -> list[ParamSpec]:
    """Every parameter of the node, defaults from `SimConfig`."""
    d = SimConfig()
    return [
        ParamSpec(
            "update_rate_hz", 100.0, "integration and /joint_states rate (Hz)", 10.0, 2000.0, read_only=True
        ),
        ParamSpec("time_constant_s", d.time_constant, "first-order lag of every motor (s)", 0.001, 1.0),
        *per_joint_specs("max_velocity", d.max_velocity, "motor velocity limit", "rad/s", (0.01, 20.0)),
        ParamSpec("stop_margin", d.stop_margin, "stops beyond the URDF joint limits (rad)", 0.0, 0.5),
        ParamSpec("alpha_stop", d.alpha_stop, "physical stop of q2 - q1 (rad)", *ALPHA_BETA_RANGE),
        ParamSpec("beta_stop", d.beta_stop, "physical stop of q1 - q2 (rad)", *ALPHA_BETA_RANGE),
        ParamSpec(
            "command_timeout_s", d.command_timeout, "the motors hold when no command came for this long (s)",
            0.01, 10.0,
        ),
        ParamSpec("publish_efforts", d.publish_efforts, "/joint_states carries the effort field (N m)"),
        ParamSpec(
            "effort_noise_nm", d.effort_noise, "standard deviation of each effort reading (N m)", 0.0, 10.0
        ),
        ParamSpec("effort_seed", d.effort_seed, "seed of the effort noise", 0, 2**31 - 1, read_only=True),
        ParamSpec(
            "tool_wrench_timeout_s", d.wrench_timeout,
            "an older tool wrench from the cell counts as no external force (s)", 0.01, 10.0,
        ),
    ]


def build_config(values: dict[str, Any]) -> SimConfig:
    """The model configuration for a complete set of parameter values; ValueError refuses it.

    `update_rate_hz` is the node's timer, not part of the model (read-only, read once at start-up).
    """
    return SimConfig(
        time_constant=values["time_constant_s"],
        max_velocity=per_joint_values(values, "max_velocity"),
        stop_margin=values["stop_margin"],
        alpha_stop=values["alpha_stop"],
        beta_stop=values["beta_stop"],
        command_timeout=values["command_timeout_s"],
        publish_efforts=bool(values["publish_efforts"]),
        effort_noise=values["effort_noise_nm"],
        effort_seed=int(values["effort_seed"]),
        wrench_timeout=values["tool_wrench_timeout_s"],
    )
