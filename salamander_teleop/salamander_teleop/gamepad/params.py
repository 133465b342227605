"""The gamepad node's parameters (`/salamander/gamepad_node`) and their `GamepadConfig` snapshot.

The convention of every node (see `salamander_control.ros.params`): `param_specs` and `build_config`.
Values in config/teleop.yaml (its ``/**/gamepad_node`` section). Pure: no rclpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salamander_control.param_spec import ParamSpec


@dataclass(frozen=True)
class GamepadConfig:
    """Parameter snapshot of the gamepad node."""

    device: str
    device_name: str
    deadzone: float
    autorepeat_rate_hz: float
    retry_period_s: float
    frame_id: str


def param_specs() -> list[ParamSpec]:
    """Every parameter of the node (joy_node's defaults where it has the same setting)."""
    return [
        ParamSpec(
            "device", "", "evdev device path, e.g. /dev/input/event5; empty = first gamepad found",
            read_only=True,
        ),
        ParamSpec(
            "device_name", "", "only open a gamepad whose name contains this (case-insensitive)",
            read_only=True,
        ),
        ParamSpec(
            "deadzone", 0.05, "axis deadzone as joy_node applies it, fraction of full scale", 0.0, 0.9,
            read_only=True,
        ),
        ParamSpec(
            "autorepeat_rate_hz", 20.0, "republish the unchanged state at this rate (Hz); faster than "
            "1/joy_timeout_s of the controller, which otherwise takes a press for a baseline",
            10.0, 1000.0,
        ),
        ParamSpec(
            "retry_period_s", 1.0, "time between attempts to open a missing gamepad (s)", 0.1, 60.0,
            read_only=True,
        ),
        ParamSpec("frame_id", "joy", "header.frame_id of the Joy messages (joy_node uses 'joy')"),
    ]


def build_config(values: dict[str, Any]) -> GamepadConfig:
    """The snapshot; ValueError for values a ParamSpec range cannot express."""
    return GamepadConfig(
        str(values["device"]), str(values["device_name"]), float(values["deadzone"]),
        float(values["autorepeat_rate_hz"]), float(values["retry_period_s"]), str(values["frame_id"]),
    )
