"""The IK ghost node's parameters (`/salamander/ik_ghost_node`) and their `GhostConfig` snapshot.

The convention of every node (see `salamander_control.ros.params`): `param_specs`, `build_config`,
`config_warnings`. The ghost declares the arm model (config/arm.yaml, shared with the trajectory
generator, so the ghost turns red exactly where the generator's limits would refuse the pose) and its
own two parameters (config/ghost.yaml). Pure: no rclpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salamander_control.kinematics import ArmParams
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.param_spec import ParamSpec


@dataclass(frozen=True)
class GhostConfig:
    """The ghost node's parameter snapshot: arm model, processing rate, marker lifetime."""

    arm: ArmParams
    max_rate_hz: float
    marker_lifetime_s: float


def param_specs() -> list[ParamSpec]:
    """Every parameter of the ghost node: the arm model's plus its own two."""
    return [
        *arm_param_specs(),
        ParamSpec(
            "max_rate_hz",
            20.0,
            "at most this many joint states per second are evaluated, always the newest (Hz)",
            0.5,
            200.0,
        ),
        ParamSpec(
            "marker_lifetime_s",
            1.0,
            "rviz drops a ghost drawing not refreshed for this long, so a stalled ghost fades (s; 0 = never)",
            0.0,
            60.0,
        ),
    ]


def build_config(values: dict[str, Any]) -> GhostConfig:
    """The snapshot from parameter values; raises ValueError for an inconsistent arm model."""
    return GhostConfig(
        build_arm_params(values), float(values["max_rate_hz"]), float(values["marker_lifetime_s"])
    )


def config_warnings(config: GhostConfig) -> list[str]:
    """Accepted but worth saying: the arm model's warnings (rest posture no longer admitted)."""
    return arm_params_warnings(config.arm)
