"""Parameters of /salamander/operator_view: where it listens, how often it draws, the nudge buttons.

Plus the arm-model group every node using the model declares (`salamander_control.kinematics.params`;
config/arm.yaml): the joint gauges show each joint against the bounds the arm is driven within.

The convention of every node (see `salamander_control.ros.params`): `param_specs`, `build_config`.
Pure: no rclpy, no viser.

Security (docs/security.md): `host` defaults to 127.0.0.1, so only this machine reaches the page. On any
other address the controls need `access_token`; left empty, the node makes one at start and prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from salamander_control.kinematics import ArmParams
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.param_spec import ParamSpec

MAX_NUDGE_SPEED = 0.050
"""m/s: the spec's cap of the placement jog (ManualAdjust clips to it anyway)."""


@dataclass(frozen=True)
class ViewSettings:
    """The node's parameter snapshot."""

    host: str = "127.0.0.1"
    port: int = 8080
    rate_hz: float = 25.0
    access_token: str = ""
    nudge_step_m: float = 0.005
    nudge_speed: float = 0.025
    jog_rate_hz: float = 25.0
    urdf_path: str = ""
    arm: ArmParams = field(default_factory=ArmParams)


_DESCRIPTIONS = {
    "host": "address the page listens on (read-only): 127.0.0.1 = this machine only; any other (0.0.0.0 = "
    "every interface) makes the controls need access_token",
    "port": "TCP port of the page (read-only)",
    "rate_hz": "how often the page is redrawn from the newest messages, Hz",
    "access_token": "token the page's controls need when host is not loopback (read-only); empty = a "
    "random one, printed at start",
    "nudge_step_m": "how far one click of a nudge button jogs the placement, m",
    "nudge_speed": "speed of a nudge, m/s (pinned cap 0.05)",
    "jog_rate_hz": "operator/jog twists per second while a nudge runs, Hz (the tree's staleness is 0.3 s)",
    "urdf_path": "the arm's URDF (read-only); empty = urdf/salamander.urdf of the source tree or the install",
}
_RANGES: dict[str, tuple[float, float]] = {
    "port": (1, 65535),
    "rate_hz": (1.0, 60.0),
    "nudge_step_m": (0.0005, 0.030),
    "nudge_speed": (0.001, MAX_NUDGE_SPEED),
    "jog_rate_hz": (10.0, 100.0),
}
_READ_ONLY = {"host", "port", "access_token", "urdf_path"}


def param_specs() -> list[ParamSpec]:
    """The node's ParamSpecs (defaults: `ViewSettings()`) and the arm-model group's."""
    defaults = ViewSettings()
    specs = []
    for name, description in _DESCRIPTIONS.items():
        lo, hi = _RANGES.get(name, (None, None))
        specs.append(ParamSpec(name, getattr(defaults, name), description, lo, hi, name in _READ_ONLY))
    return specs + arm_param_specs()


def build_config(values: dict[str, Any]) -> ViewSettings:
    """The snapshot from parameter values; ValueError (the refusal reason) when inconsistent."""
    host = str(values["host"]).strip()
    if not host:
        raise ValueError("host must be an address, e.g. 127.0.0.1 or 0.0.0.0")
    return ViewSettings(
        host=host,
        port=int(values["port"]),
        rate_hz=float(values["rate_hz"]),
        access_token=str(values["access_token"]),
        nudge_step_m=float(values["nudge_step_m"]),
        nudge_speed=float(values["nudge_speed"]),
        jog_rate_hz=float(values["jog_rate_hz"]),
        urdf_path=str(values["urdf_path"]),
        arm=build_arm_params(values),
    )


def config_warnings(settings: ViewSettings) -> list[str]:
    """Legal but notable settings (limits that lock out the rest posture)."""
    return arm_params_warnings(settings.arm)
