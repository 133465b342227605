"""`/arm/sim_hardware`: the simulated arm behind /arm/joint_command and /joint_states.

The embedded default hardware; the real robot's driver replaces only this node (same topics). The
motor and stop model is `sim_model.SimModel`; this shell caches the latest valid command, steps the
model at `rate_hz` with the measured elapsed time, publishes /joint_states (positions and velocities)
and the physical-stop counter, and warns on every stop hit: in a correct stack the counter stays 0.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rclpy.node import Node
from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import UInt64

from salamander_control import names
from salamander_control.kinematics import ALPHA_BETA_RANGE, JOINT_NAMES, REST_POSTURE
from salamander_control.ros.params import ParamBinding, ParamSpec
from salamander_control.ros.run import run_node
from salamander_control.sim.hardware import SimConfig, SimModel
from salamander_control.trajectory.joint_goal import GoalError, merge_goal
from salamander_control.trajectory.params import per_joint_specs, per_joint_values

THROTTLE = 1.0  # s between two log lines of one kind
MAX_STEPS_PER_TICK = 4  # a late tick integrates at most this many periods (no catch-up burst)
LATCHED = QoSProfile(
    depth=1, reliability=QoSReliabilityPolicy.RELIABLE, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL
)


def parameter_specs() -> list[ParamSpec]:
    """Every parameter of the node, defaults from `SimConfig`."""
    d = SimConfig()
    return [
        ParamSpec("rate_hz", 250.0, "integration and /joint_states rate (Hz)", 10.0, 2000.0, read_only=True),
        ParamSpec("time_constant", d.time_constant, "first-order lag of every motor (s)", 0.001, 1.0),
        *per_joint_specs("max_velocity", d.max_velocity, "motor velocity limit", "rad/s", (0.01, 20.0)),
        ParamSpec("stop_margin", d.stop_margin, "stops beyond the URDF joint limits (rad)", 0.0, 0.5),
        ParamSpec("alpha_stop", d.alpha_stop, "physical stop of q2 - q1 (rad)", *ALPHA_BETA_RANGE),
        ParamSpec("beta_stop", d.beta_stop, "physical stop of q1 - q2 (rad)", *ALPHA_BETA_RANGE),
        ParamSpec(
            "command_timeout", d.command_timeout, "the motors hold when no command came for this long (s)",
            0.01, 10.0,
        ),
    ]


def build_config(values: dict[str, Any]) -> SimConfig:
    """The model configuration for a complete set of parameter values; ValueError refuses it."""
    return SimConfig(
        time_constant=values["time_constant"],
        max_velocity=per_joint_values(values, "max_velocity"),
        stop_margin=values["stop_margin"],
        alpha_stop=values["alpha_stop"],
        beta_stop=values["beta_stop"],
        command_timeout=values["command_timeout"],
    )


class SimHardware(Node):
    """The simulated hardware node (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("sim_hardware", namespace=names.ARM_NS)
        self._lock = threading.Lock()
        self._pending: tuple[float, ...] | None = None
        self._params = ParamBinding(self, parameter_specs(), build_config, on_change=self._on_params)
        self._model = SimModel(self._params.snapshot, REST_POSTURE)
        self._period = 1.0 / float(self.get_parameter("rate_hz").value)
        self._last_tick = time.monotonic()
        self._js_pub = self.create_publisher(JointState, names.JOINT_STATES, 10)
        self._hits_pub = self.create_publisher(UInt64, names.SIM_STOP_HITS, LATCHED)
        self.create_subscription(JointState, names.JOINT_COMMAND, self._on_command, 10)
        self._js_msg = JointState(name=list(JOINT_NAMES))
        self._hits_pub.publish(UInt64(data=0))
        self.create_timer(self._period, self._on_tick)
        self.get_logger().info(f"simulated arm at rest, {1.0 / self._period:.0f} Hz")

    def _on_command(self, msg: JointState) -> None:
        try:
            if len(msg.name) != len(JOINT_NAMES):
                raise GoalError(f"a command names all {len(JOINT_NAMES)} joints, got {list(msg.name)}")
            command = merge_goal(msg.name, msg.position, REST_POSTURE)  # every joint named: nothing kept
        except GoalError as exc:
            self.get_logger().error(f"command refused: {exc}", throttle_duration_sec=THROTTLE)
            return
        with self._lock:
            self._pending = command

    def _on_params(self, old: SimConfig, new: SimConfig) -> None:
        with self._lock:
            self._model.set_config(new)

    def _on_tick(self) -> None:
        now = time.monotonic()
        stamp = self.get_clock().now().to_msg()  # read with `now`: stamps are as far apart as the steps
        dt = min(max(now - self._last_tick, 1e-6), MAX_STEPS_PER_TICK * self._period)
        self._last_tick = now
        with self._lock:
            if self._pending is not None:
                self._model.command(self._pending)
                self._pending = None
            hits_before = self._model.stop_hits
            event = self._model.step(dt)
            position, velocity, hits = self._model.position, self._model.velocity, self._model.stop_hits
        msg = self._js_msg
        msg.header.stamp = stamp
        msg.position = list(position)
        msg.velocity = list(velocity)
        self._js_pub.publish(msg)
        if event is not None and hits != hits_before:
            self._hits_pub.publish(UInt64(data=hits))
            beyond = f", command {event.command_beyond:.4f} rad beyond" if event.command_beyond > 0.0 else ""
            self.get_logger().warning(
                f"physical stop hit: {', '.join(event.stops)} (would have passed by {event.overshoot:.4f} rad"
                f"{beyond}; hits: {hits})", throttle_duration_sec=THROTTLE,
            )


def main(args: list[str] | None = None) -> None:
    """Console-script entry point."""
    run_node(SimHardware, args, events_executor=True)


if __name__ == "__main__":
    main()
