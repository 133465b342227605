"""Parameters of /salamander/controller_node: the gamepad bindings plus the arm limits the jog respects.

The convention of every node (see `salamander_control.ros.params`): `param_specs`, `build_config`,
`config_warnings`. The defaults come from `JoyMapping()` (DualShock 4, see mapping.py) and `ArmParams()`
(docs/arm_model.md); config/teleop.yaml repeats the bindings with comments, and the arm model comes from
config/arm.yaml, loaded first, so the jog starts with the trajectory generator's limits. They stay
parameters here, so an operator who narrows `alpha_max` on the generator can narrow the jog the same
way; the generator's own clamp stays the backstop either way. Pure: no rclpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salamander_control.kinematics import JOINT_NAMES, ArmParams
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.param_spec import ParamSpec
from salamander_teleop.controller.mapping import RANGES, JoyMapping

_CONTROL_SYNTAX = "'button N', 'axis N+', 'axis N-' (one direction of an axis: the DPAD hat) or 'none'"
_DESCRIPTIONS = {
    "auto_mode": f"switches to auto mode: the behaviour tree drives the arm (pinned: DPAD_DOWN); "
    f"{_CONTROL_SYNTAX}",
    "manual_mode": f"switches back to manual joint jog (DPAD_UP); {_CONTROL_SYNTAX}",
    "confirm": f"publishes operator/confirm = true once per press (pinned: SQUARE); {_CONTROL_SYNTAX}",
    "abort": f"publishes operator/confirm = false once per press (CIRCLE); {_CONTROL_SYNTAX}",
    "rest_preset": f"manual mode: the rest posture as joint target (TRIANGLE); {_CONTROL_SYNTAX}",
    "run_start": f"auto mode: start a pick-and-place run of every can not yet placed (OPTIONS); "
    f"{_CONTROL_SYNTAX}",
    "run_cancel": f"any mode: cancel the running pick-and-place run (SHARE); {_CONTROL_SYNTAX}",
    "new_box": f"any mode: a new box is in, the behaviour server forgets its box estimate (L1); "
    f"{_CONTROL_SYNTAX}",
    "place_jog.enable": f"auto mode: hold to jog the placement with the left stick (pinned: R1); "
    f"{_CONTROL_SYNTAX}",
    "place_jog.axis_x": "axis for base_link +x in the place jog (left stick up = +1); -1 = none",
    "place_jog.axis_y": "axis for base_link +y in the place jog (left stick left = +1); -1 = none",
    "place_jog.invert_x": "flip the place jog's x direction",
    "place_jog.invert_y": "flip the place jog's y direction",
    "place_jog.speed": "place jog speed at full deflection, m/s (pinned cap 0.05)",
    "deadzone": "stick deflection ignored around centre, fraction of full scale (rest rescaled)",
    "joy_timeout_s": "a Joy stamped longer ago is refused; a jog stops when no fresh Joy came this long, s",
    "joint_state_timeout_s": "joint jog needs a /joint_states message at most this old, s",
    "target_rate_hz": "while jogging, a joint target or twist at least this often, Hz",
    "joy_rate_limit_hz": "outputs per second driven directly by Joy messages, on average (bursts of 5), Hz",
    "max_lead": "the jogged joint target never leads the measured joints by more than this, rad",
    "jog_resume_window_s": "a jog restarted within this time continues from the last target, s",
}
for _name in JOINT_NAMES:
    _DESCRIPTIONS[f"joint_jog.{_name}.axis"] = f"manual mode: axis that jogs {_name}; -1 = none"
    _DESCRIPTIONS[f"joint_jog.{_name}.speed"] = f"{_name} speed at full deflection, rad/s (sign = direction)"


@dataclass(frozen=True)
class ControllerConfig:
    """The node's parameter snapshot: bindings and arm limits, swapped in together."""

    mapping: JoyMapping
    arm: ArmParams


def param_specs() -> list[ParamSpec]:
    """ParamSpecs of every binding (defaults: DualShock 4) and every arm-model parameter."""
    specs = []
    for name, default in JoyMapping().to_params().items():
        lo, hi = RANGES.get(name, (None, None))
        specs.append(ParamSpec(name, default, _DESCRIPTIONS[name], lo, hi))
    return specs + arm_param_specs()


def build_config(values: dict[str, Any]) -> ControllerConfig:
    """The snapshot from parameter values; ValueError (the refusal reason) when inconsistent."""
    return ControllerConfig(JoyMapping.from_params(values), build_arm_params(values))


def config_warnings(config: ControllerConfig) -> list[str]:
    """Legal but notable settings (limits that lock out the rest posture)."""
    return arm_params_warnings(config.arm)
