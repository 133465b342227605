"""/salamander/controller_node: the gamepad (/joy) drives joint jog, presets, the place jog and confirm.

Thin shell around `controller.Controller`: callbacks convert messages and hand them to the core under a
lock, the core says what to publish, a timer at `target_rate_hz` keeps a held jog flowing and stops a jog
whose Joy stream went stale. The timer runs only while a jog runs (without one it has nothing to do, and
each call would wake the process); the measured joints come at the monitors' rate
(`names.JOINT_STATES_MONITOR`, 25 Hz: the jog's lead window needs no more), and the node spins on the
EventsExecutor (docs/design/cpu.md). The Joy callback publishes the core's answer itself (a few tens of
microseconds of work, rate-limited by `joy_rate_limit_hz`) instead of waiting for the timer: that keeps
stick-to-target latency at the DDS floor (bench/bench_teleop.py) rather than up to one timer period.
Joint targets go out anonymously (header.frame_id ""), so the trajectory
generator ignores them while the behaviour tree holds the arm lease (exactly while a run is active), as
intended.

Runs: `RunStart` sends a RunPickPlace goal (every can not yet placed) to the behaviour server's
`run_pick_place` action and logs its acceptance and result; `RunCancel` calls the action's cancel
service with a zero goal id and stamp, which cancels every goal of the server (the run may have been
started by another client: the CLI, run_on_start). `NewBox` calls the behaviour server's
/salamander/box/new_box (std_srvs/Trigger) and logs its answer. All return at once; the answers arrive
as callbacks.

Parameters: `salamander_teleop.controller.params`. Run::

    python -m salamander_teleop.nodes.controller_node --ros-args \
        --params-file config/arm.yaml --params-file config/teleop.yaml
"""

from __future__ import annotations

import threading
from typing import Any

from action_msgs.srv import CancelGoal
from geometry_msgs.msg import Twist
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import Bool, String
from std_srvs.srv import Trigger

from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES
from salamander_control.ros.conversions import measured_joints, read_stamp
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.log import KindLogger
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node
from salamander_msgs.action import RunPickPlace
from salamander_teleop.controller import params
from salamander_teleop.controller.core import (
    Action,
    Confirm,
    Controller,
    Jog,
    JointTarget,
    JoySample,
    Measured,
    ModeChange,
    NewBox,
    Rejected,
    RunCancel,
    RunStart,
)
from salamander_teleop.controller.params import ControllerConfig


class ControllerNode(Node):
    """Wires /joy and /joint_states into the controller core and its actions onto the topics."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.CONTROLLER_NODE, **node_kwargs)
        self._lock = threading.Lock()
        self._params: ParamBinding[ControllerConfig] = ParamBinding(
            self,
            params.param_specs(),
            params.build_config,
            warn=params.config_warnings,
            on_change=self._on_params,
        )
        config = self._params.snapshot
        self._core = Controller(config.mapping, config.arm)
        self._limits = follow_coupled_limits(self)  # alpha_max/beta_max: one pair for the whole arm
        self._measured: Measured | None = None
        self._target_pub = self.create_publisher(JointState, names.JOINT_TARGET, 10)
        self._jog_pub = self.create_publisher(Twist, names.OPERATOR_JOG, 10)
        self._confirm_pub = self.create_publisher(Bool, names.OPERATOR_CONFIRM, 10)
        self._mode_pub = self.create_publisher(String, names.TELEOP_MODE, LATCHED)
        self._run_client = ActionClient(self, RunPickPlace, names.RUN_PICK_PLACE)
        self._run_name = self.resolve_topic_name(names.RUN_PICK_PLACE)  # for the logs
        self._run_cancel = self.create_client(CancelGoal, f"{names.RUN_PICK_PLACE}/_action/cancel_goal")
        self._new_box = self.create_client(Trigger, names.NEW_BOX)
        # Refusals throttled per kind: a flood of malformed Joys must not hide the watchdog's line.
        self._rejections = KindLogger(self.get_logger())
        # Reliable Joy (as joy_node publishes it): a lost message could be a lost button edge. The
        # measured joints are best effort, which matches a reliable or a best-effort publisher.
        self._joy_topic = self.create_subscription(Joy, names.JOY, self._on_joy, 10).topic_name
        self._js_topic = self.create_subscription(
            JointState, names.JOINT_STATES_MONITOR, self._on_joint_states, qos_profile_sensor_data
        ).topic_name  # resolved and remapped, for the logs
        self._timer = self.create_timer(1.0 / config.mapping.target_rate_hz, self._on_timer)
        self._timer.cancel()  # no jog yet (`_sync_timer`)
        self._publish_mode(self._core.mode)
        m = config.mapping
        self.get_logger().info(
            f"gamepad controller up in {self._core.mode} mode: auto={m.auto_mode}, manual={m.manual_mode}, "
            f"confirm={m.confirm}, abort={m.abort}, rest={m.rest_preset}, place_jog={m.place_jog_enable}, "
            f"run_start={m.run_start}, run_cancel={m.run_cancel}, new_box={m.new_box}"
        )

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_params(self, old: ControllerConfig, new: ControllerConfig) -> None:
        with self._lock:
            self._core.configure(new.mapping, new.arm)
        if new.mapping.target_rate_hz != old.mapping.target_rate_hz:
            self._timer.cancel()
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(1.0 / new.mapping.target_rate_hz, self._on_timer)
            self._timer.cancel()
            self._sync_timer()

    def _on_joy(self, msg: Joy) -> None:
        stamp = read_stamp(msg.header.stamp, self._joy_topic, self.get_logger())
        if stamp is None:
            return
        axes, buttons = tuple(float(a) for a in msg.axes), tuple(int(b) for b in msg.buttons)
        sample = JoySample(axes, buttons, stamp * 1e-9)
        with self._lock:
            actions = self._core.feed(sample, self._now(), self._measured)
        self._publish(actions)
        self._sync_timer()

    def _on_joint_states(self, msg: JointState) -> None:
        q = measured_joints(msg, self._js_topic, self.get_logger().warning)
        if q is not None:
            measured = Measured(q, self._now())
            with self._lock:
                self._measured = measured

    def _on_timer(self) -> None:
        with self._lock:
            actions = self._core.tick(self._now(), self._measured)
        self._publish(actions)
        self._sync_timer()

    def _sync_timer(self) -> None:
        """Run the timer exactly while a jog runs: without one `Controller.tick` does nothing."""
        with self._lock:
            jogging = self._core.jogging
        if jogging and self._timer.is_canceled():
            self._timer.reset()
        elif not jogging and not self._timer.is_canceled():
            self._timer.cancel()

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
            elif isinstance(action, RunStart):
                self._start_run()
            elif isinstance(action, RunCancel):
                self._cancel_run()
            elif isinstance(action, NewBox):
                self._call_new_box()
            elif isinstance(action, ModeChange):
                self.get_logger().info(f"mode: {action.mode}")
                self._publish_mode(action.mode)
            elif isinstance(action, Rejected):
                self._rejections.warning(action.kind, action.reason)

    def _start_run(self) -> None:
        if not self._run_client.server_is_ready():
            self.get_logger().warning(f"run_start: no {self._run_name} action server (no behaviour server?)")
            return
        self._run_client.send_goal_async(RunPickPlace.Goal()).add_done_callback(self._on_run_accepted)
        self.get_logger().info(f"run_start: RunPickPlace goal sent to {self._run_name} (every can left)")

    def _on_run_accepted(self, future: Any) -> None:
        handle = future.result() if future.exception() is None else None
        if handle is None or not handle.accepted:
            self.get_logger().warning("run_start: goal rejected (the behaviour server's log says why)")
            return
        self.get_logger().info("run_start: goal accepted")
        handle.get_result_async().add_done_callback(self._on_run_result)

    def _on_run_result(self, future: Any) -> None:
        if future.exception() is None:
            result = future.result().result
            self.get_logger().info(f"run ended: {', '.join(result.outcomes)}: {result.message}")

    def _cancel_run(self) -> None:
        if not self._run_cancel.service_is_ready():
            self.get_logger().warning(f"run_cancel: no {self._run_name} action server (no behaviour server?)")
            return
        self._run_cancel.call_async(CancelGoal.Request())  # zero id and stamp: every goal of the server
        self.get_logger().info(f"run_cancel: cancel of every {self._run_name} goal requested")

    def _call_new_box(self) -> None:
        name = self.resolve_service_name(names.NEW_BOX)
        if not self._new_box.service_is_ready():
            self.get_logger().warning(f"new_box: no {name} service (no behaviour server?)")
            return
        self._new_box.call_async(Trigger.Request()).add_done_callback(self._on_new_box_answer)
        self.get_logger().info(f"new_box: a new box is in, {name} called")

    def _on_new_box_answer(self, future: Any) -> None:
        if future.exception() is not None:
            self.get_logger().warning(f"new_box: the call failed: {future.exception()}")
        elif future.result().success:
            self.get_logger().info(f"new_box: {future.result().message}")
        else:
            self.get_logger().warning(f"new_box refused: {future.result().message}")

    def _publish_mode(self, mode: str) -> None:
        self._mode_pub.publish(String(data=str(mode)))


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`controller_node`)."""
    run_node(ControllerNode, args, events_executor=True)


if __name__ == "__main__":
    main()
