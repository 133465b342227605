"""A stand-in "robot" for tests: speaks the hardware contract and nothing else.

    python -m salamander_testing.standin_robot [--cell CELL] [--grip-below-z -0.06] \
        [--switch-delay-s 0.03] [--rate-hz 100] [--part-present-rate-hz 20] [--lose-first-above-z Z]

What a real Salamander must provide for the stack (docs/interfaces.md, "Hardware contract"), with the
simplest possible behaviour behind it, so that a test can show the stack runs on the contract alone
(use_sim:=false, no sim_hardware, no cell_sim):

- `/joint_states` (sensor_msgs/JointState, the five joints by name, at `--rate-hz`): the newest
  `/arm/joint_command` positions and velocities, followed exactly (ideal motors); the rest posture until
  the first command.
- `/salamander/gripper/vacuum` (std_srvs/SetBool, true = valve open): answered at once.
- `/salamander/gripper/part_present` (std_msgs/Bool, reliable, volatile; at `--part-present-rate-hz`
  and on every change): a part seals the pad when the valve is open and the pad (TCP from FK of the
  joints) is below `--grip-below-z` (m, base_link; the default is 5 mm above the top of a can standing
  on config/cell.yaml's table); it stays sealed until the valve closes. The switch reports both
  `--switch-delay-s` late (`sim.cell.switch.DelayedSwitch`). A test's fault: with
  `--lose-first-above-z Z` the first part carried above Z (m) breaks loose (a can torn off in transit:
  the switch drops with the valve still open); later parts stay sealed.

It knows no cans, no box and no cell state: there is nothing else for the tree to read. The names are
those of the default launch, or of ``cell:=CELL`` with `--cell`.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import SetBool

from salamander_control import names
from salamander_control.joint_state import JointStateError, joint_vector
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE, forward_kinematics
from salamander_control.ros.qos import SERVICE_QOS
from salamander_sim.cell.switch import DelayedSwitch


class StandinGripper:
    """The stand-in's suction rule (pure): valve, seal, delayed switch.

    Args:
        grip_below_z: the pad seals on a part when the valve is open and its z is below this (m).
        delay_s: the switch's dead time (s).
        lose_above_z: the first part carried above this z (m) breaks loose; None: none ever does.
    """

    def __init__(self, grip_below_z: float, delay_s: float, lose_above_z: float | None = None) -> None:
        self.grip_below_z = grip_below_z
        self.lose_above_z = lose_above_z
        self.valve = False
        self.sealed = False
        self.lost = 0
        self.switch = DelayedSwitch(delay_s)

    @property
    def needs_pad(self) -> bool:
        """Whether `step` would use the pad's height (valve open; nothing sealed, or a part to lose)."""
        to_lose = self.lose_above_z is not None and self.lost == 0
        return self.valve and (not self.sealed or to_lose)

    def step(self, pad_z: float | None, now: float) -> bool:
        """Advance to `now` with the pad at height `pad_z` (None: unknown); returns the switch."""
        if not self.valve:
            self.sealed = False
        elif not self.sealed and pad_z is not None and pad_z < self.grip_below_z:
            self.sealed = True
        elif (self.sealed and self.lose_above_z is not None and self.lost == 0 and pad_z is not None
              and pad_z > self.lose_above_z):  # fmt: skip
            self.sealed = False
            self.lost += 1
        return self.switch.update(self.sealed, now)


class StandinRobot(Node):
    """The stand-in's ROS shell (see the module docstring)."""

    def __init__(self, options: argparse.Namespace, **node_kwargs: Any) -> None:
        super().__init__("standin_robot", **node_kwargs)
        self._options = options

        def at(name: str) -> str:
            return names.absolute(name, options.cell)

        self._q = list(REST_POSTURE)
        self._v = [0.0] * len(JOINT_NAMES)
        self._gripper = StandinGripper(
            options.grip_below_z, options.switch_delay_s, options.lose_first_above_z
        )
        self._next_part = 0.0
        self._js_pub = self.create_publisher(JointState, at(names.JOINT_STATES), 10)
        self._part_pub = self.create_publisher(Bool, at(names.PART_PRESENT), 10)
        self.create_subscription(JointState, at(names.JOINT_COMMAND), self._on_command, 10)
        self.create_service(SetBool, at(names.GRIPPER_VACUUM), self._on_vacuum, qos_profile=SERVICE_QOS)
        self.create_timer(1.0 / options.rate_hz, self._on_timer)
        self.get_logger().info(
            f"stand-in robot: {at(names.JOINT_STATES)}, {at(names.GRIPPER_VACUUM)}, {at(names.PART_PRESENT)}"
        )

    def _on_command(self, msg: JointState) -> None:
        try:
            vector = joint_vector(msg.name, msg.position, msg.velocity, allow_extra=False)
        except JointStateError as exc:
            self.get_logger().warning(f"skipped a joint command: {exc}", throttle_duration_sec=2.0)
            return
        self._q = list(vector.positions)
        self._v = list(vector.velocities) if vector.velocities is not None else [0.0] * len(JOINT_NAMES)

    def _on_vacuum(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        self._gripper.valve = bool(request.data)
        response.success = True
        response.message = f"valve {'open' if request.data else 'closed'}"
        self.get_logger().info(response.message)
        return response

    def _on_timer(self) -> None:
        now = time.monotonic()
        msg = JointState(name=list(JOINT_NAMES), position=self._q, velocity=self._v)
        msg.header.stamp = self.get_clock().now().to_msg()
        self._js_pub.publish(msg)
        was = self._gripper.switch.value
        pad_z = forward_kinematics(tuple(self._q)).tcp[2] if self._gripper.needs_pad else None
        present = self._gripper.step(pad_z, now)
        if present != was:
            loose = not present and self._gripper.valve
            why = " (the part broke loose: --lose-first-above-z)" if loose else ""
            self.get_logger().info(f"part present: {str(present).lower()}{why}")
        if present != was or now >= self._next_part:
            self._part_pub.publish(Bool(data=present))
            self._next_part = now + 1.0 / self._options.part_present_rate_hz


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The stand-in's options (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", default="", help="the stack's namespace (cell:=CELL of the launch)")
    parser.add_argument("--grip-below-z", type=float, default=-0.06, help="pad z that seals (m)")
    parser.add_argument("--switch-delay-s", type=float, default=0.03, help="part-present dead time (s)")
    parser.add_argument("--rate-hz", type=float, default=100.0, help="/joint_states rate (Hz)")
    parser.add_argument("--part-present-rate-hz", type=float, default=20.0, help="part-present rate (Hz)")
    parser.add_argument(
        "--lose-first-above-z", type=float, default=None,
        help="the first part carried above this z breaks loose (m; a test's fault)",
    )  # fmt: skip
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``python -m salamander_testing.standin_robot``."""
    from salamander_control.ros.run import run_node

    argv = sys.argv[1:] if argv is None else argv
    ros_args = argv[argv.index("--ros-args") :] if "--ros-args" in argv else []
    own = argv[: argv.index("--ros-args")] if "--ros-args" in argv else argv
    options = parse_args(own)
    run_node(lambda: StandinRobot(options), ["standin_robot", *ros_args], events_executor=True)


if __name__ == "__main__":
    main()
