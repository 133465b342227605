"""The arm-model parameters: the kinematics node's, and a group every node using the arm model declares.

`alpha_max` and `beta_max` are pinned live parameters (docs/interfaces.md); geometry and per-joint
limits are parameters too (defaults in docs/arm_model.md) so a recalibrated arm needs no code change;
a per-joint limit may narrow its joint's travel (the defaults), never widen it past the stops. Their
values are written once, in config/arm.yaml, which each of these nodes loads before its own file.

The group (`arm_param_specs`, `build_arm_params`, `arm_params_warnings`) is what the trajectory
generator, the Cartesian motion node, the ghost, the cell simulator, the behaviour server and the
gamepad controller add to their own parameters. The kinematics service node has no others, so its
params-module functions (`param_specs`, `build_config`, `config_warnings`, the convention of every
node: see `salamander_control.ros.params`) are the group itself. Pure: no rclpy.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from salamander_control.kinematics import ALPHA_BETA_RANGE, ArmParams
from salamander_control.kinematics.model import REST_Q1, REST_Q2
from salamander_control.param_spec import ParamSpec

_DESCRIPTIONS = {
    "alpha_max": "coupled upper limit: q2 - q1 <= alpha_max (rad); shoulder back, beam lowered",
    "beta_max": "coupled lower limit: q1 - q2 <= beta_max (rad); shoulder forward, beam raised",
    "base_height": "base_link origin to the shoulder axis along +z (m)",
    "upper_arm_length": "shoulder axis to elbow axis (m)",
    "beam_length": "elbow axis to wrist axis (m)",
    "tool_drop": "wrist axis to the suction pad tip (m)",
    "pad_mount_yaw": "fixed yaw of the pad mount relative to the wrist yaw joint (rad)",
}
_RANGES = {
    "alpha_max": ALPHA_BETA_RANGE,
    "beta_max": ALPHA_BETA_RANGE,
    "base_height": (0.0, 2.0),
    "upper_arm_length": (0.01, 2.0),
    "beam_length": (0.01, 2.0),
    "tool_drop": (0.0, 1.0),
    "pad_mount_yaw": (-math.pi, math.pi),
}
# A per-joint limit may narrow its joint's travel (the defaults: docs/arm_model.md, the URDF's limits),
# never widen it: a wider window would let the generator drive the joint into its stop.
_TRAVEL = ArmParams()
_RANGES.update({
    f"{joint}_{end}": (getattr(_TRAVEL, f"{joint}_min"), getattr(_TRAVEL, f"{joint}_max"))
    for joint in ("yaw", "q1", "q2", "wrist_pitch", "wrist_yaw")
    for end in ("min", "max")
})  # fmt: skip
_JOINT_LIMIT = "per-joint limit {} (rad): may narrow the joint's travel, not widen it"


def arm_param_specs() -> list[ParamSpec]:
    """ParamSpecs for every ArmParams field (joint limits described generically)."""
    specs = []
    for f in fields(ArmParams):
        lo, hi = _RANGES[f.name]
        desc = _DESCRIPTIONS.get(f.name, _JOINT_LIMIT.format(f.name))
        specs.append(ParamSpec(f.name, float(f.default), desc, lo, hi))
    return specs


def build_arm_params(values: dict[str, Any]) -> ArmParams:
    """ArmParams from parameter values (extra keys ignored); raises ValueError when inconsistent."""
    names = {f.name for f in fields(ArmParams)}
    return ArmParams(**{k: v for k, v in values.items() if k in names})


def arm_params_warnings(params: ArmParams) -> list[str]:
    """Warnings for a legal but notable setting: the rest posture no longer admitted."""
    if params.admits_rest():
        return []
    return [
        f"alpha_max={params.alpha_max:.4f}/beta_max={params.beta_max:.4f} no longer admit the rest posture "
        f"(q1={math.degrees(REST_Q1):.1f} deg, q2={math.degrees(REST_Q2):.1f} deg needs alpha_max >= "
        f"{REST_Q2 - REST_Q1:.4f}): the arm cannot return to rest until it is widened again"
    ]


def param_specs() -> list[ParamSpec]:
    """The kinematics node's parameters: the arm model, nothing else."""
    return arm_param_specs()


def build_config(values: dict[str, Any]) -> ArmParams:
    """The kinematics node's snapshot: the arm model (ValueError refuses an inconsistent one)."""
    return build_arm_params(values)


def config_warnings(config: ArmParams) -> list[str]:
    """The kinematics node's warnings: those of the arm model."""
    return arm_params_warnings(config)
