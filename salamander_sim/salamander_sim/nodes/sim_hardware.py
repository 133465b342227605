"""`/arm/sim_hardware`: the simulated arm behind /arm/joint_command and /joint_states.

The embedded default hardware; the real robot's driver replaces only this node (same topics). The
motor and stop model is `sim.hardware.SimModel`, its parameters `sim.params`; this shell caches the
latest valid command, advances the model at `update_rate_hz` by the measured elapsed time along the
command interpolated from the previous to the newest one at no more than the commanded velocities
(`SimModel.advance`: neither a late tick nor a late command makes the motors outrun the command,
docs/design/trajectory_generator.md), publishes
/joint_states (positions and velocities, stamped on the ROS clock exactly as far apart as the model's
steps: `stamp_clock.StampClock`) and the physical-stop counter, and warns on every stop hit: in
a correct stack the counter stays 0.

With `publish_efforts` (default) /joint_states also carries `effort`: the joint torques of the external
wrench on the tool (`hardware.EffortSensor`: J^T F through the arm's Jacobian at the measured joints,
plus `effort_noise_nm` of seeded Gaussian noise). The wrench is the cell's, subscribed on
`names.SIM_TOOL_WRENCH` (geometry_msgs/WrenchStamped, base_link; cell_sim publishes it); none received
within `tool_wrench_timeout_s` counts as no external force, said once in the log when it starts and
when it ends. A wrench that is not six finite numbers in base_link is refused with a throttled line
and changes nothing. `publish_efforts` false leaves the field empty (a robot whose drives report none).

Its command subscription is a plain callback, not polled at the tick (`ros.polled_subscription`): taking
the 5 commands of each 10 ms at once is a burst of work that delays the 500 Hz processes sharing the
cores more than the callbacks cost (measured in docs/design/cpu.md).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import UInt64

from salamander_control import names
from salamander_control.joint_state import JointStateError, JointVector, joint_vector
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE
from salamander_control.ros.conversions import BASE_FRAME
from salamander_control.ros.log import LOG_THROTTLE_S
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node
from salamander_sim import params
from salamander_sim.hardware import EffortSensor, SimConfig, SimModel
from salamander_sim.stamp_clock import StampClock

MAX_STEPS_PER_TICK = 125  # a late tick integrates at most this many periods (1.25 s at 100 Hz); the rest
# of a longer stall is dropped. Each period is one sub-step along the command interpolated from the
# previous to the newest one (`SimModel.advance`): the motors never outrun the command.


class SimHardware(Node):
    """The simulated hardware node (see the module docstring)."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.SIM_HARDWARE, **node_kwargs)
        self._lock = threading.Lock()
        self._pending: JointVector | None = None
        self._params = ParamBinding(
            self, params.param_specs(), params.build_config, on_change=self._on_params
        )
        self._model = SimModel(self._params.snapshot, REST_POSTURE)
        config = self._params.snapshot
        self._efforts = EffortSensor(config.effort_noise, config.effort_seed)
        self._wrench: tuple[tuple[float, ...], float] | None = None  # (wrench, time.monotonic() received)
        self._wrench_fresh: bool | None = None  # as last logged (None: not yet)
        self._holding = True  # as last logged: the motors hold until the first command
        self._period = 1.0 / float(self.get_parameter("update_rate_hz").value)
        self._last_tick = time.monotonic()
        self._stamps = StampClock(lambda: self.get_clock().now().nanoseconds)
        self._js_pub = self.create_publisher(JointState, names.JOINT_STATES, 10)
        self._hits_pub = self.create_publisher(UInt64, names.SIM_STOP_HITS, LATCHED)
        self.create_subscription(JointState, names.JOINT_COMMAND, self._on_command, 10)
        self._wrench_sub = self.create_subscription(WrenchStamped, names.SIM_TOOL_WRENCH, self._on_wrench, 10)
        self._js_msg = JointState(name=list(JOINT_NAMES))
        self._hits_pub.publish(UInt64(data=0))
        self.create_timer(self._period, self._on_tick)
        self.get_logger().info(f"simulated arm at rest, {1.0 / self._period:.0f} Hz")

    def _on_command(self, msg: JointState) -> None:
        try:  # all five, no others; the velocities (when given) are the pace `SimModel.advance` keeps
            command = joint_vector(msg.name, msg.position, msg.velocity, allow_extra=False)
        except JointStateError as exc:
            self.get_logger().error(f"command refused: {exc}", throttle_duration_sec=LOG_THROTTLE_S)
            return
        with self._lock:
            self._pending = command

    def _on_wrench(self, msg: WrenchStamped) -> None:
        f, m = msg.wrench.force, msg.wrench.torque
        wrench = (f.x, f.y, f.z, m.x, m.y, m.z)
        if msg.header.frame_id not in (BASE_FRAME, "") or not all(map(math.isfinite, wrench)):
            self.get_logger().error(
                f"tool wrench refused (six finite numbers in {BASE_FRAME} expected, got frame "
                f"{msg.header.frame_id!r}, {wrench}): the efforts keep the last good one",
                throttle_duration_sec=LOG_THROTTLE_S,
            )
            return
        with self._lock:
            self._wrench = (wrench, time.monotonic())

    def _on_params(self, old: SimConfig, new: SimConfig) -> None:
        with self._lock:
            self._model.set_config(new)
            self._efforts.sigma = new.effort_noise

    def _external_wrench(self, now: float, timeout: float) -> tuple[float, ...]:
        """The newest tool wrench if it is fresh, else none (zero), saying so once on each change.

        A warning when one stopped coming; an info line at start-up (the cell usually starts after this
        node: nothing is wrong yet).
        """
        with self._lock:
            latest = self._wrench
        fresh = latest is not None and now - latest[1] <= timeout
        if fresh != self._wrench_fresh:
            self._wrench_fresh = fresh
            topic = self._wrench_sub.topic_name
            if fresh:
                self.get_logger().info(f"tool wrench on {topic}: the efforts carry its load")
            elif latest is None:
                self.get_logger().info(
                    f"no tool wrench on {topic} yet: the efforts show no external force until one comes"
                )
            else:
                self.get_logger().warning(
                    f"no tool wrench on {topic} for {timeout:.2f} s: the efforts show no external force "
                    f"until one comes"
                )
        return latest[0] if fresh and latest is not None else (0.0,) * 6

    def _on_tick(self) -> None:
        now = time.monotonic()
        stamp = Time(nanoseconds=self._stamps.stamp_ns(now)).to_msg()  # as far apart as the model's steps
        dt = min(max(now - self._last_tick, 1e-6), MAX_STEPS_PER_TICK * self._period)
        self._last_tick = now
        with self._lock:
            pending, self._pending = self._pending, None
            hits_before = self._model.stop_hits
            if pending is None:
                event = self._model.advance(None, dt, self._period)
            else:
                event = self._model.advance(pending.positions, dt, self._period, pending.velocities)
            position, velocity, hits = self._model.position, self._model.velocity, self._model.stop_hits
            holding = self._model.holding
        if holding != self._holding:
            self._holding = holding
            topic = self.resolve_topic_name(names.JOINT_COMMAND)
            if holding:
                self.get_logger().warning(
                    f"no {topic} for {self._params.snapshot.command_timeout:.2f} s (command_timeout_s): "
                    "the motors hold where they are"
                )
            else:
                self.get_logger().info(f"commands on {topic}: the motors follow them")
        msg = self._js_msg
        msg.header.stamp = stamp
        msg.position = list(position)
        msg.velocity = list(velocity)
        config = self._params.snapshot
        if config.publish_efforts:
            msg.effort = self._efforts.read(position, self._external_wrench(now, config.wrench_timeout))
        else:
            msg.effort = []
        self._js_pub.publish(msg)
        if event is not None and hits != hits_before:
            self._hits_pub.publish(UInt64(data=hits))
            beyond = f", command {event.command_beyond:.4f} rad beyond" if event.command_beyond > 0.0 else ""
            self.get_logger().warning(
                f"physical stop hit: {', '.join(event.stops)} (would have passed by {event.overshoot:.4f} rad"
                f"{beyond}; hits: {hits})", throttle_duration_sec=LOG_THROTTLE_S,
            )


def main(args: list[str] | None = None) -> None:
    """Console-script entry point."""
    run_node(SimHardware, args, events_executor=True)


if __name__ == "__main__":
    main()
