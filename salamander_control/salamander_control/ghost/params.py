"""The IK ghost node's parameters (`/salamander/ik_ghost_node`) and their `GhostConfig` snapshot.

The convention of every node (see `salamander_control.ros.params`): `param_specs`, `build_config`,
`config_warnings`. The ghost declares the arm model (config/arm.yaml, shared with the trajectory
generator, so the ghost turns red exactly where the generator's limits would refuse the pose) and its
own parameters (config/ghost.yaml). Pure: no rclpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salamander_control.kinematics import ArmParams
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.param_spec import ParamSpec

NOISE_TOLERANCE = 0.0175
"""rad (about 1 degree, as the operating notes relaxed q2_min): the default of `noise_tolerance`."""


@dataclass(frozen=True)
class GhostConfig:
    """The ghost node's parameter snapshot: arm model, processing rate, marker lifetime, noise tolerance."""

    arm: ArmParams
    max_rate_hz: float
    marker_lifetime_s: float
    noise_tolerance: float = NOISE_TOLERANCE


def param_specs() -> list[ParamSpec]:
    """Every parameter of the ghost node: the arm model's plus its own."""
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
        ParamSpec(
            "noise_tolerance",
            NOISE_TOLERANCE,
            "rad; a reading that moving each joint by at most this brings inside every limit counts as on "
            "the limit for the ghost's question (encoder noise at a stop; a coupled difference may then be "
            "up to twice this past); widens no limit used for motion",
            0.0,
            0.1,
        ),
    ]


def build_config(values: dict[str, Any]) -> GhostConfig:
    """The snapshot from parameter values; raises ValueError for an inconsistent arm model."""
    return GhostConfig(
        build_arm_params(values), float(values["max_rate_hz"]), float(values["marker_lifetime_s"]),
        float(values["noise_tolerance"]),
    )


def config_warnings(config: GhostConfig) -> list[str]:
    """Accepted but worth saying: the arm model's warnings (rest posture no longer admitted)."""
    return arm_params_warnings(config.arm)
