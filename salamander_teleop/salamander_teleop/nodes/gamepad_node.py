"""/salamander/gamepad_node: a Linux gamepad (evdev) published as /joy, for machines without joy_node.

Publishes `sensor_msgs/Joy` in joy_node's layout and signs (evdev_mapping.py) on every changed input
frame and, while the pad is connected, at `autorepeat_rate_hz` (so the controller's staleness watchdog
sees a live stream while a stick is held still). A missing or unplugged pad is retried every
`retry_period_s` with a clear log line and nothing is published meanwhile; the node never exits over it.
Parameters: `salamander_teleop.gamepad.params`.

Run: ``python -m salamander_teleop.nodes.gamepad_node --ros-args -p device:=/dev/input/event5``
(device "" picks the first gamepad; `device_name` filters by name, e.g. "Wireless Controller").
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from rclpy.node import Node
from sensor_msgs.msg import Joy

from salamander_control import names
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.run import run_node
from salamander_teleop.gamepad import params
from salamander_teleop.gamepad.params import GamepadConfig
from salamander_teleop.gamepad.reader import GamepadReader, open_gamepad


class GamepadNode(Node):
    """Owns a `GamepadReader`; publishes its frames on /joy from the executor."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.GAMEPAD_NODE, **node_kwargs)
        self._params: ParamBinding[GamepadConfig] = ParamBinding(
            self, params.param_specs(), params.build_config, on_change=self._on_params
        )
        config = self._params.snapshot
        self._pub = self.create_publisher(Joy, names.JOY, 10)
        self._published_frame = -1
        self._last_publish = -float("inf")
        self._changed = self.create_guard_condition(self._publish_if_changed)
        self._timer = None
        self._start_timer(config.autorepeat_rate_hz)
        self._reader = GamepadReader(
            partial(open_gamepad, config.device, config.device_name),
            config.deadzone,
            self._changed.trigger,
            self._log,
            config.retry_period_s,
        )
        self._reader.start()

    def _log(self, level: str, message: str) -> None:
        logger = self.get_logger()
        (logger.info if level == "info" else logger.warning)(message)

    def _on_params(self, old: GamepadConfig, new: GamepadConfig) -> None:
        if new.autorepeat_rate_hz != old.autorepeat_rate_hz:
            self._start_timer(new.autorepeat_rate_hz)

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
        rate = self._params.snapshot.autorepeat_rate_hz
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
