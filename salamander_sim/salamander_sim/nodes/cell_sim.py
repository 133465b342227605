"""`/salamander/cell_sim`: cans, a compartment box and a suction pad, simulated for a robot-less laptop.

A thin shell around a cell engine (`salamander_sim.cell.engine`: the MuJoCo physics cell by
default, the kinematic model with ``engine: kinematic``; parameters: `sim.cell.params`), run on the
true cell drawn from the configured uncertainty (the tree keeps the configured, believed one). Run it
with the arm model and the cell config::

    cell_sim --ros-args --params-file config/arm.yaml --params-file config/cell.yaml
    python -m salamander_sim.nodes.cell_sim --ros-args --params-file config/arm.yaml \
        --params-file config/cell.yaml

- subscribes `/joint_states`, polled (`ros.polled_subscription`: the executor is not woken 100 times a
  second for them): each step first takes the messages received since the last one, refuses one stamped
  more than `joint_state_timeout_s` before this node's clock or ahead of it (`stamp.skew_problem`, as the
  generator does), and files the newest (by stamp) in a one-slot mailbox, with the time it was measured
  (its stamp on the node's monotonic clock: `_clock_offset`); the step reads it, refuses a malformed one
  with a throttled warning, computes the TCP with the kinematics library (the arm model is a parameter
  set, as in the other nodes) and steps the engine to the time of that measurement, so the physics moves
  the pad between measurements at the pace they were taken (it runs behind the clock by the joint states'
  latency; with no fresh joint state it catches up with the pad at rest). An update that comes more
  than `skip_gap_s` after the previous one (the node was stopped or starved of CPU) does not simulate
  the gap: the engine's `skip` moves the clock on, the pad and a held can go straight to the newest
  pose, and one warning line says so (docs/design/cell_model.md, "Time");
- implements the gripper's hardware contract exactly as the robot must (docs/interfaces.md, "Hardware
  contract"): serves `names.GRIPPER_VACUUM` (std_srvs/SetBool, true = valve open, vacuum on; the
  command is queued with its time and applied by the next step, within 1/update_rate_hz s; the reply
  says what follows) and publishes `names.PART_PRESENT` (std_msgs/Bool, reliable, volatile) at
  `part_present_rate_hz` and on every change: "a can is on the pad" from the model, seen through the
  switch's dead time `part_present_delay_s` (`sim.cell.switch.DelayedSwitch`);
- publishes `names.SIM_TOOL_WRENCH` (geometry_msgs/WrenchStamped, base_link), every step: what the
  tool feels from the held can (`CellEngine.tool_wrench`: its weight, its inertia and the contacts on it
  in the physics engine; its weight in the kinematic one; zero without a can), stamped with the joint
  state the step ran to (the model time of the measured arm), or the clock's now without a fresh one.
  Simulation only: the simulated hardware (`sim_hardware`) turns it into the joint efforts of
  /joint_states, as a real arm's drives measure them;
- publishes its ground truth, for reports and tests only (the behaviour tree never reads it):
  `names.CELL_STATE` (std_msgs/String, JSON; format in `salamander_sim.cell.report`)
  at `state_rate_hz` and on every change (pad contact, grip, release, knock-off, vacuum),
  `names.CELL_MARKERS` (MarkerArray in base_link; colours in `salamander_sim.cell.scene`) at
  `marker_rate_hz` and on every change, and `names.CELL_VACUUM_STATE` (std_msgs/Bool, transient local)
  on change.

The layout (cans, box, targets) and the rates are read-only parameters: a can cannot teleport and a box
cannot grow while the cell runs. Suction tolerances, settle times and the arm model are live.
"""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

from geometry_msgs.msg import WrenchStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, String
from std_srvs.srv import SetBool
from visualization_msgs.msg import Marker, MarkerArray

from salamander_control import names
from salamander_control.joint_state import JointStateError, joint_vector, names_an_arm_joint
from salamander_control.kinematics import forward_kinematics
from salamander_control.latest_sample import LatestSample, PutResult
from salamander_control.ros.conversions import BASE_FRAME, read_measurement_stamp
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.log import KindLogger
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.polled_subscription import PolledNode
from salamander_control.ros.qos import LATCHED, SERVICE_QOS
from salamander_control.ros.run import run_node
from salamander_sim.cell import params
from salamander_sim.cell.engine import build_engine
from salamander_sim.cell.scene import Shape, scene
from salamander_sim.cell.switch import DelayedSwitch

_KINDS = {"cylinder": Marker.CYLINDER, "cube": Marker.CUBE, "text": Marker.TEXT_VIEW_FACING}
CLOCK_BRACKET_S = 0.0005
"""s: the longest read of the ROS clock taken for the offset between the clocks."""
STATS_PERIOD_S = 60.0
"""s: how often the physics engine's step time and real-time factor are logged."""


def shape_marker(shape: Shape, stamp: Any) -> Marker:
    """A Marker in base_link for one scene shape."""
    m = Marker(ns=shape.ns, id=shape.id, type=_KINDS[shape.kind], action=Marker.ADD, text=shape.text)
    m.header.frame_id = BASE_FRAME
    m.header.stamp = stamp
    m.pose.position.x, m.pose.position.y, m.pose.position.z = shape.position
    if shape.quat is not None:
        o = m.pose.orientation
        o.w, o.x, o.y, o.z = shape.quat
    else:
        m.pose.orientation.z, m.pose.orientation.w = math.sin(shape.yaw / 2), math.cos(shape.yaw / 2)
    m.scale.x, m.scale.y, m.scale.z = shape.size
    m.color.r, m.color.g, m.color.b, m.color.a = shape.rgba
    return m


class CellSimNode(PolledNode):
    """Steps the cell engine at `update_rate_hz` on the newest joint state and the queued vacuum commands."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.CELL_SIM, **node_kwargs)
        self._params: ParamBinding[params.CellSimSettings] = ParamBinding(
            self, params.param_specs(), params.build_config
        )
        self._limits = follow_coupled_limits(self)  # alpha_max/beta_max: one pair for the whole arm
        settings = self._params.snapshot
        config = settings.config
        self._t0 = time.monotonic()
        self._model = build_engine(config, t=self._now())  # ValueError (an impossible draw): the node stops
        self._latest: LatestSample[tuple[JointState, float]] = LatestSample()
        self._lock = threading.Lock()
        self._vacuum_commands: list[tuple[bool, float]] = []
        self._q: tuple[float, ...] | None = None
        self._q_time = -math.inf
        self._q_stamp: Any = None  # the header stamp of the joint state behind self._q
        self._offset: float | None = None  # node clock - ROS clock (s), see _clock_offset
        self._next_state = self._next_markers = 0.0
        self._warnings = KindLogger(self.get_logger())
        self._summary: tuple[bool, str | None, str | None] = (False, None, None)
        self._switch = DelayedSwitch(config.node["part_present_delay_s"])
        self._next_part = 0.0

        self._state_pub = self.create_publisher(String, names.CELL_STATE, 10)
        self._markers_pub = self.create_publisher(MarkerArray, names.CELL_MARKERS, 10)
        self._vacuum_pub = self.create_publisher(Bool, names.CELL_VACUUM_STATE, LATCHED)
        self._vacuum_pub.publish(Bool(data=False))
        self._part_pub = self.create_publisher(Bool, names.PART_PRESENT, 10)
        self._wrench_pub = self.create_publisher(WrenchStamped, names.SIM_TOOL_WRENCH, 10)
        self._wrench_msg = WrenchStamped()
        self._wrench_msg.header.frame_id = BASE_FRAME
        self._js_sub = self.polled.subscribe(JointState, names.JOINT_STATES, qos_profile_sensor_data)
        self._js_topic = self._js_sub.topic_name  # resolved and remapped, for the logs
        self.create_service(SetBool, names.GRIPPER_VACUUM, self._on_vacuum, qos_profile=SERVICE_QOS)
        self.create_timer(1.0 / config.node["update_rate_hz"], self._on_timer)
        true = self._model.layout
        ids = ", ".join(
            f"{cid} at ({x:.4f}, {y:.4f})" for cid, (x, y) in zip(true.can_ids, true.can_xy, strict=True)
        )
        believed = config.layout
        dx, dy = (true.box_x - believed.box_x) * 1000, (true.box_y - believed.box_y) * 1000
        dyaw = math.degrees(math.remainder(true.box_yaw - believed.box_yaw, 2 * math.pi))
        self.get_logger().info(
            f"cell ready ({config.engine} engine, uncertainty_seed {config.uncertainty.seed}): {ids}; box at "
            f"({true.box_x:.4f}, {true.box_y:.4f}, yaw {true.box_yaw:.4f}), {dx:+.1f} mm, {dy:+.1f} mm, "
            f"{dyaw:+.2f} deg off the configured pose"
        )
        self._stats_at = (time.monotonic(), 0.0, 0, 0.0, 0.0)  # wall, simulated, steps, step wall, skipped
        self._next_stats = time.monotonic() + STATS_PERIOD_S
        self._last_update = self._now()

    def _now(self) -> float:
        """Seconds since the simulator started, monotonic (the model's and the state's clock)."""
        return time.monotonic() - self._t0

    # --- callbacks: file the input, decide nothing ------------------------------------------------------

    def _clock_offset(self) -> float:
        """The node's clock minus the ROS clock (s).

        One read of the ROS clock between two of the node's: a read preempted for longer than
        `CLOCK_BRACKET_S` is not taken (the last good offset stays), so a busy machine does not shift
        the time of a measurement.
        """
        before = self._now()
        ros = self.get_clock().now().nanoseconds * 1e-9
        after = self._now()
        if after - before <= CLOCK_BRACKET_S or self._offset is None:
            self._offset = (before + after) / 2 - ros
        return self._offset

    def _on_joint_state(self, msg: JointState, received: float) -> None:
        """File a joint state received at `received` (time.monotonic()) in the mailbox."""
        if not names_an_arm_joint(msg.name):
            return  # another device's joint states (a gripper's broadcaster)
        # Stale or ahead of this node's clock: refused, as the generator refuses it (a replayed state must
        # not grip a can, and one stamped ahead would block every real state until its stamp passed).
        clock = self.get_clock().now().nanoseconds
        stale_s = self._params.snapshot.config.node["joint_state_timeout_s"]
        log = self.get_logger()
        stamp = read_measurement_stamp(msg.header.stamp, self._js_topic, log, self._warnings, clock, stale_s)
        if stamp is None:
            return
        now = received - self._t0  # its arrival on the model's clock
        measured = stamp * 1e-9 + self._clock_offset()
        if not now - 1.0 <= measured <= now:  # unstamped, or the clocks' offset not yet known: its arrival
            measured = now
        if self._latest.put(stamp, (msg, measured)) is PutResult.OUT_OF_ORDER:
            self._warn("out_of_order", f"skipped a {self._js_topic} stamped before the newest one received")

    def _on_vacuum(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        with self._lock:
            self._vacuum_commands.append((bool(request.data), self._now()))
        suction = self._params.snapshot.config.suction
        response.success = True
        if request.data:
            response.message = f"vacuum on: a can under the pad is held after {suction.attach_settle_s:.2f} s"
        else:
            response.message = f"vacuum off: a held can lets go after {suction.release_settle_s:.2f} s"
        return response

    def _warn(self, kind: str, text: str) -> None:
        self._warnings.warning(kind, text)

    # --- the step: all decisions -------------------------------------------------------------------------

    def _on_timer(self) -> None:
        now = self._now()
        gap, self._last_update = now - self._last_update, now
        settings = self._params.snapshot
        model = self._model
        model.set_suction(settings.config.suction)
        with self._lock:
            commands, self._vacuum_commands = self._vacuum_commands, []
        for on, stamp in commands:
            model.set_vacuum(on, max(stamp, model.t))
        for msg, received in self.polled.take(self._js_sub):
            self._on_joint_state(msg, received)
        taken = self._latest.take()
        if taken is not None:
            msg, received = taken
            try:
                self._q, self._q_time = joint_vector(msg.name, msg.position).positions, received
                self._q_stamp = msg.header.stamp
            except JointStateError as exc:
                self._warn(exc.problem.value, f"skipped a {self._js_topic}: {exc}")
        pose, at = None, now
        if self._q is not None and now - self._q_time <= settings.config.node["joint_state_timeout_s"]:
            pose = forward_kinematics(self._q, settings.arm)
            at = min(now, self._q_time)
        elif self._q is not None and model.held is not None:
            self._warn("stale", f"no fresh {self._js_topic}: the held can stays where it was")
        if gap > settings.config.node["skip_gap_s"]:
            model.skip(pose, max(at, model.t))
        else:
            model.step(pose, max(at, model.t))
        self._publish_wrench(self._q_stamp if pose is not None else None)
        self._log_stats()
        events = model.drain_events()
        for event in events:
            if event.kind == "skipped":
                self.get_logger().warning(event.text)
            else:
                self.get_logger().info(event.text)
            if event.kind == "vacuum":
                self._vacuum_pub.publish(Bool(data=model.vacuum))
        node = settings.config.node
        self._switch.set_delay(node["part_present_delay_s"])
        was = self._switch.value
        present = self._switch.update(model.held is not None, now)
        if present != was or now >= self._next_part:
            self._part_pub.publish(Bool(data=present))
            self._next_part = now + 1.0 / node["part_present_rate_hz"]
        summary = (model.vacuum, model.held, model.contact)
        changed = bool(events) or summary != self._summary
        self._summary = summary
        if changed or now >= self._next_state:
            self._state_pub.publish(String(data=json.dumps(model.state(), separators=(",", ":"))))
            self._next_state = now + 1.0 / node["state_rate_hz"]
        if changed or now >= self._next_markers:
            stamp = self.get_clock().now().to_msg()
            self._markers_pub.publish(MarkerArray(markers=[shape_marker(s, stamp) for s in scene(model)]))
            self._next_markers = now + 1.0 / node["marker_rate_hz"]

    def _publish_wrench(self, stamp: Any) -> None:
        """The tool wrench after this step, stamped `stamp` (None: the clock's now)."""
        msg = self._wrench_msg
        msg.header.stamp = stamp if stamp is not None else self.get_clock().now().to_msg()
        f, m = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, m.x, m.y, m.z = (float(v) for v in self._model.tool_wrench())
        self._wrench_pub.publish(msg)

    def _log_stats(self) -> None:
        """Every STATS_PERIOD_S: the physics step's wall time and the real-time factor since the last line."""
        stats = getattr(self._model, "stats", None)
        wall = time.monotonic()
        if stats is None or wall < self._next_stats:
            return
        self._next_stats = wall + STATS_PERIOD_S
        w0, sim0, n0, busy0, skip0 = self._stats_at
        steps, busy = stats.steps - n0, stats.step_wall_s - busy0
        self._stats_at = (wall, stats.simulated_s, stats.steps, stats.step_wall_s, stats.skipped_s)
        rtf = (stats.simulated_s - sim0) / (wall - w0)
        per_step = f"{busy / steps * 1e6:.0f} us per step (with the seal checks)" if steps else "all at rest"
        self.get_logger().info(
            f"physics: {steps} steps of {self._model.timestep * 1000:.1f} ms in {wall - w0:.0f} s, "
            f"{per_step}, "
            f"{busy / (wall - w0) * 100:.1f} % of a core, real-time factor {rtf:.3f}, "
            f"{stats.skipped_s - skip0:.2f} s skipped"
        )


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`cell_sim`): on rclpy's EventsExecutor (less CPU per /joint_states)."""
    run_node(CellSimNode, args, events_executor=True)


if __name__ == "__main__":
    main()
