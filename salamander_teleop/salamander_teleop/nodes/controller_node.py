"""/salamander/controller_node: the gamepad (/joy) drives joint jog, presets, the place jog and confirm.

Thin shell around `controller.Controller`: callbacks convert messages and hand them to the core under a
lock, the core says what to publish, a timer at `target_rate` keeps a held jog flowing and stops a jog
whose Joy stream went stale. The Joy callback publishes the core's answer itself (a few tens of
microseconds of work, rate-limited by `joy_rate_limit`) instead of waiting for the timer: that keeps
stick-to-target latency at the DDS floor (bench/bench_teleop.py) rather than up to one timer period.
Joint targets go out anonymously (header.frame_id ""), so the trajectory
generator ignores them while the behaviour tree holds the arm lease, as intended.

Run: ``python -m salamander_teleop.nodes.controller_node --ros-args --params-file config/teleop.yaml``.
"""

from __future__ import annotations

import threading
import time

from geometry_msgs.msg import Twist
from rclpy.node import Node
from rclpy.qos import QoSDurabilityPolicy, QoSProfile, qos_profile_sensor_data
from rclpy.time import Time
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import Bool, String

from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.run import run_node
from salamander_control.trajectory.joint_goal import GoalError, joint_vector
from salamander_teleop.controller.core import (
    Action,
    Confirm,
    Controller,
    Jog,
    JointTarget,
    JoySample,
    Measured,
    ModeChange,
    Rejected,
)
from salamander_teleop.controller.params import (
    ControllerConfig,
    build_controller_config,
    controller_config_warnings,
    controller_param_specs,
)

LOG_THROTTLE_S = 2.0
"""Refusals of the same kind are logged at most this often."""


class ControllerNode(Node):
    """Wires /joy and /joint_states into the controller core and its actions onto the topics."""

    def __init__(self) -> None:
        super().__init__("controller_node", namespace=names.SALAMANDER_NS)
        self._lock = threading.Lock()
        self._params: ParamBinding[ControllerConfig] = ParamBinding(
            self,
            controller_param_specs(),
            build_controller_config,
            warn=controller_config_warnings,
            on_change=self._on_params,
        )
        config = self._params.snapshot
        self._core = Controller(config.mapping, config.arm)
        self._measured: Measured | None = None
        self._target_pub = self.create_publisher(JointState, names.JOINT_TARGET, 10)
        self._jog_pub = self.create_publisher(Twist, names.OPERATOR_JOG, 10)
        self._confirm_pub = self.create_publisher(Bool, names.OPERATOR_CONFIRM, 10)
        latched = QoSProfile(depth=1, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)
        self._mode_pub = self.create_publisher(String, names.TELEOP_MODE, latched)
        self._logged: dict[str, float] = {}  # Rejected.kind -> when it was last logged (monotonic)
        # Reliable Joy (as joy_node publishes it): a lost message could be a lost button edge. The
        # measured joints are best effort, which matches a reliable or a best-effort publisher.
        self.create_subscription(Joy, names.JOY, self._on_joy, 10)
        self.create_subscription(
            JointState, names.JOINT_STATES, self._on_joint_states, qos_profile_sensor_data
        )
        self._timer = self.create_timer(1.0 / config.mapping.target_rate, self._on_timer)
        self._publish_mode(self._core.mode)
        m = config.mapping
        self.get_logger().info(
            f"gamepad controller up in {self._core.mode} mode: auto={m.auto_mode}, manual={m.manual_mode}, "
            f"confirm={m.confirm}, abort={m.abort}, rest={m.rest_preset}, place_jog={m.place_jog_enable}"
        )

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_params(self, old: ControllerConfig, new: ControllerConfig) -> None:
        with self._lock:
            self._core.configure(new.mapping, new.arm)
        if new.mapping.target_rate != old.mapping.target_rate:
            self._timer.cancel()
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(1.0 / new.mapping.target_rate, self._on_timer)

    def _on_joy(self, msg: Joy) -> None:
        sample = JoySample(
            tuple(float(a) for a in msg.axes),
            tuple(int(b) for b in msg.buttons),
            Time.from_msg(msg.header.stamp).nanoseconds * 1e-9,
        )
        with self._lock:
            actions = self._core.feed(sample, self._now(), self._measured)
        self._publish(actions)

    def _on_joint_states(self, msg: JointState) -> None:
        try:
            q = joint_vector(msg.name, msg.position).positions
        except GoalError as exc:
            self.get_logger().warning(f"/joint_states refused: {exc}", throttle_duration_sec=LOG_THROTTLE_S)
            return
        measured = Measured(q, self._now())
        with self._lock:
            self._measured = measured

    def _on_timer(self) -> None:
        with self._lock:
            actions = self._core.tick(self._now(), self._measured)
        self._publish(actions)

    def _publish(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, JointTarget):
                msg = JointState(name=list(JOINT_NAMES), position=list(action.q))
                msg.header.stamp = self.get_clock().now().to_msg()
                msg.header.frame_id = ""  # anonymous sender: refused while the behaviour tree holds the lease
                self._target_pub.publish(msg)
                if action.why != "jog":
                    self.get_logger().info(f"{action.why}: target {[round(v, 4) for v in action.q]}")
            elif isinstance(action, Jog):
                twist = Twist()
                twist.linear.x, twist.linear.y = action.vx, action.vy
                self._jog_pub.publish(twist)
            elif isinstance(action, Confirm):
                self._confirm_pub.publish(Bool(data=action.value))
                self.get_logger().info(f"operator/confirm = {str(action.value).lower()}")
            elif isinstance(action, ModeChange):
                self.get_logger().info(f"mode: {action.mode}")
                self._publish_mode(action.mode)
            elif isinstance(action, Rejected):
                self._log_rejected(action)

    def _log_rejected(self, rejected: Rejected) -> None:
        # Throttled per kind (rclpy's throttle is per call site): a flood of malformed Joys must not hide
        # the line that says the watchdog stopped a jog.
        now = time.monotonic()
        if now - self._logged.get(rejected.kind, -LOG_THROTTLE_S) >= LOG_THROTTLE_S:
            self._logged[rejected.kind] = now
            self.get_logger().warning(rejected.reason)

    def _publish_mode(self, mode: str) -> None:
        self._mode_pub.publish(String(data=str(mode)))


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`controller_node`)."""
    run_node(ControllerNode, args)


if __name__ == "__main__":
    main()
