"""The arm-model parameters shared by the trajectory generator, kinematics and Cartesian motion nodes.

`alpha_max` and `beta_max` are the spec's live parameters; geometry and per-joint limits are
parameters too (defaults from kinematics.md) so a recalibrated arm needs no code change.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from salamander_control.kinematics import ALPHA_BETA_RANGE, ArmParams
from salamander_control.kinematics.model import REST_Q1, REST_Q2
from salamander_control.ros.params import ParamSpec

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


def arm_param_specs() -> list[ParamSpec]:
    """ParamSpecs for every ArmParams field (joint limits described generically)."""
    specs = []
    for f in fields(ArmParams):
        lo, hi = _RANGES.get(f.name, (-2.0 * math.pi, 2.0 * math.pi))
        desc = _DESCRIPTIONS.get(f.name, f"per-joint limit {f.name} (rad)")
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
