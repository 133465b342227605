"""/salamander/gamepad_node: a Linux gamepad (evdev) published as /joy, for machines without joy_node.

Publishes `sensor_msgs/Joy` in joy_node's layout and signs (evdev_mapping.py) on every changed input
frame and, while the pad is connected, at `autorepeat_rate` (so the controller's staleness watchdog sees a
live stream while a stick is held still). A missing or unplugged pad is retried every `retry_period`
with a clear log line and nothing is published meanwhile; the node never exits over it.

Run: ``python -m salamander_teleop.nodes.gamepad_node --ros-args -p device:=/dev/input/event5``
(device "" picks the first gamepad; `device_name` filters by name, e.g. "Wireless Controller").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from rclpy.node import Node
from sensor_msgs.msg import Joy

from salamander_control import names
from salamander_control.ros.params import ParamBinding, ParamSpec
from salamander_control.ros.run import run_node
from salamander_teleop.gamepad.reader import GamepadReader, open_gamepad


@dataclass(frozen=True)
class GamepadConfig:
    """Parameter snapshot of the gamepad node."""

    device: str
    device_name: str
    deadzone: float
    autorepeat_rate: float
    retry_period: float
    frame_id: str


SPECS = [
    ParamSpec("device", "", "evdev device path, e.g. /dev/input/event5; empty = first gamepad found",
              read_only=True),
    ParamSpec("device_name", "", "only open a gamepad whose name contains this (case-insensitive)",
              read_only=True),
    ParamSpec("deadzone", 0.05, "axis deadzone as joy_node applies it, fraction of full scale", 0.0, 0.9,
              read_only=True),
    ParamSpec("autorepeat_rate", 20.0, "republish the unchanged state at this rate, Hz; 0 = only on change",
              0.0, 1000.0),
    ParamSpec("retry_period", 1.0, "seconds between attempts to open a missing gamepad", 0.1, 60.0,
              read_only=True),
    ParamSpec("frame_id", "joy", "header.frame_id of the Joy messages (joy_node uses 'joy')"),
]


def build_config(values: dict[str, Any]) -> GamepadConfig:
    """The snapshot; ValueError for values a ParamSpec range cannot express."""
    return GamepadConfig(
        str(values["device"]), str(values["device_name"]), float(values["deadzone"]),
        float(values["autorepeat_rate"]), float(values["retry_period"]), str(values["frame_id"]),
    )


class GamepadNode(Node):
    """Owns a `GamepadReader`; publishes its frames on /joy from the executor."""

    def __init__(self) -> None:
        super().__init__("gamepad_node", namespace=names.SALAMANDER_NS)
        self._params: ParamBinding[GamepadConfig] = ParamBinding(
            self, SPECS, build_config, on_change=self._on_params
        )
        config = self._params.snapshot
        self._pub = self.create_publisher(Joy, names.JOY, 10)
        self._published_frame = -1
        self._last_publish = -float("inf")
        self._changed = self.create_guard_condition(self._publish_if_changed)
        self._timer = None
        self._start_timer(config.autorepeat_rate)
        self._reader = GamepadReader(
            partial(open_gamepad, config.device, config.device_name),
            config.deadzone,
            self._changed.trigger,
            self._log,
            config.retry_period,
        )
        self._reader.start()

    def _log(self, level: str, message: str) -> None:
        logger = self.get_logger()
        (logger.info if level == "info" else logger.warning)(message)

    def _on_params(self, old: GamepadConfig, new: GamepadConfig) -> None:
        if new.autorepeat_rate != old.autorepeat_rate:
            self._start_timer(new.autorepeat_rate)

    def _start_timer(self, rate: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self.destroy_timer(self._timer)
            self._timer = None
        if rate > 0.0:
            self._timer = self.create_timer(1.0 / rate, self._autorepeat)

    def _publish_if_changed(self) -> None:
        snap = self._reader.snapshot()
        if snap is not None and snap[2] != self._published_frame:
            self._publish(snap)

    def _autorepeat(self) -> None:
        snap = self._reader.snapshot()
        rate = self._params.snapshot.autorepeat_rate
        if snap is not None and rate > 0.0 and time.monotonic() - self._last_publish >= 0.9 / rate:
            self._publish(snap)

    def _publish(self, snap: tuple[tuple[float, ...], tuple[int, ...], int]) -> None:
        axes, buttons, frame = snap
        msg = Joy(axes=list(axes), buttons=list(buttons))
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self._params.snapshot.frame_id
        self._pub.publish(msg)
        self._published_frame = frame
        self._last_publish = time.monotonic()

    def destroy_node(self) -> None:
        """Stop the reading thread (and close the device) before the node goes."""
        self._reader.stop()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`gamepad_node`)."""
    run_node(GamepadNode, args)


if __name__ == "__main__":
    main()
