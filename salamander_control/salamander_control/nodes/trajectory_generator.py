"""`/arm/trajectory_generator`: goals on /arm/joint_target -> jerk-limited, clamped /arm/joint_command.

A thin ROS shell: `GoalGate` decides which goals count (lease, order, form), `TrajectoryCore` runs the
control cycle (goal projection, Ruckig, post-clamp), `ParamBinding` holds the parameters as one frozen
snapshot read once per cycle. This module only wires them to topics, the lease service and the timers.

Invariants: no command before the first valid /joint_states (the generator starts from that
measurement, so bringing it up never makes the arm jump); after that it runs open loop on its own
commands and `MeasurementWatch` checks the cached measurement once per cycle: with none for
`joint_state_timeout_s` it sends nothing (a goal waits, a stream is dropped), and when it is back, or lies
more than `joint_state_tolerance` outside the recent commands, the core is re-anchored at the measured
state before the arm is commanded again (a WARN and an INFO say so). A lease expiry brakes the arm
within its limits and holds it. Narrowed limits under the arm are returned inside on a Ruckig
trajectory, never by a jump, with a WARN that says how far outside it is. Goals with velocities are a
stream, followed `stream_delay_s` behind and brought to rest at the newest sample after
`stream_timeout_s` of silence.

What it sends how often (`trajectory.output_rates`, docs/design/cpu.md): the command of every control
cycle that changes it; a command that stands still (at rest, holding) only every 1/`hold_command_rate_hz`
as a keep-alive. And every valid /joint_states it receives at most `monitor_rate_hz` times a second on
`names.JOINT_STATES_MONITOR`, for the monitors that need the arm's state 20 to 50 times a second.
/joint_states itself is polled (`ros.polled_subscription`): each control-timer call, once its command is
out, takes the messages received since the last one (for the next cycle's measurement watch), so the
executor is not woken another 100 times a second for them. Goals on /arm/joint_target are queued by their
callback with their arrival time and taken by the next control cycles, at most `GOALS_PER_CYCLE` a call,
so a line's final deceleration (one burst of 60-70 samples) does not hold the loop.

The loop's pace (`trajectory.pace`): at `control_rate_hz` while anything moves, late calls catching
up the cycles they missed. Once the command has stood still for a moment the timer slows to the
keep-alive period and each call runs that many control cycles one by one; the first cycle whose command
changes (a re-anchored goal resuming, a lease-expiry stop) ends the batch, is sent, and the timer is
back at the full rate. A goal accepted and a parameter change put it back at once, so the next cycle
comes within one control period. `hold_command_rate_hz` >= `control_rate_hz` keeps the full rate.

Interface: docs/interfaces.md; why it works this way: docs/design/trajectory_generator.md and
docs/design/stream_following.md.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from builtin_interfaces.msg import Time as TimeMsg
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from salamander_control import names
from salamander_control.joint_state import joints_text, names_an_arm_joint
from salamander_control.kinematics import JOINT_NAMES
from salamander_control.ros.conversions import measured_joints, read_measurement_stamp, read_stamp
from salamander_control.ros.coupled_limits_sync import own_coupled_limits
from salamander_control.ros.log import LOG_THROTTLE_S, KindLogger
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.polled_subscription import PolledNode
from salamander_control.ros.qos import LATCHED, SERVICE_QOS
from salamander_control.ros.run import run_node
from salamander_control.trajectory import params
from salamander_control.trajectory.clamp import clamp_joints, describe_clamp
from salamander_control.trajectory.core import ROUNDING, CycleOutput, TrajectoryConfig, TrajectoryCore
from salamander_control.trajectory.goal_gate import GoalGate, Verdict
from salamander_control.trajectory.lease import LeaseReply
from salamander_control.trajectory.measurement_watch import MAX_SILENCE_STEP, MeasurementWatch
from salamander_control.trajectory.measurement_watch import Verdict as Watch
from salamander_control.trajectory.output_rates import HoldThrottle, MonitorGate, hold_cycles
from salamander_control.trajectory.pace import LoopPace
from salamander_msgs.msg import ClampReport, LeaseState
from salamander_msgs.srv import ArmLease

LEASE_STATE_PERIOD = 0.5  # s; LeaseState is also published on every change
GOALS_PER_CYCLE = 8
"""Queued goals the control cycle takes into the core per call, oldest first (`_take_goals`).

The callback only queues. A line's final deceleration comes as one burst of 60-70 samples stamped up to
0.7 s ahead (`linear_goal`, the tail); gated and taken in the callbacks, one after the other, a burst
held the control loop 5-10 ms (README demo, this 2-core machine). Eight per cycle take it within nine
cycles (18 ms), each sample long before the follower reaches its stamp (30 ms behind the newest); a
single goal is taken in the next cycle, as before (docs/design/stream_following.md)."""
_LEASE_OPS = {
    ArmLease.Request.ACQUIRE: "ACQUIRE",
    ArmLease.Request.HEARTBEAT: "HEARTBEAT",
    ArmLease.Request.RELEASE: "RELEASE",
}


class TrajectoryGenerator(PolledNode):
    """The trajectory generator node (see the module docstring)."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.TRAJECTORY_GENERATOR, **node_kwargs)
        self._lock = threading.Lock()
        self._core: TrajectoryCore | None = None
        self._measured: tuple[float, ...] | None = None
        self._measured_new = False  # a measurement arrived since the last control cycle
        self._watch: MeasurementWatch | None = None  # created with the core
        self._last_cycle = 0.0  # monotonic time of the last control cycle
        self._gate = GoalGate()
        self._warnings = KindLogger(self.get_logger())  # per kind: lease events, stale or ahead joint states
        self._clamp_count = 0
        self._pace = LoopPace()  # cycles per timer call, and when the loop rests (trajectory.pace)
        self._hold = HoldThrottle()  # whether a cycle's command goes out (a standing one: as a keep-alive)
        self._params = ParamBinding(
            self, params.param_specs(), params.build_config, warn=params.config_warnings,
            on_change=self._on_params,
        )
        self._limits = own_coupled_limits(self)  # publishes alpha_max/beta_max for every other node
        self._monitor = MonitorGate(1.0 / self._params.snapshot.monitor_rate_hz)
        self._cmd_pub = self.create_publisher(JointState, names.JOINT_COMMAND, 10)
        self._monitor_pub = self.create_publisher(JointState, names.JOINT_STATES_MONITOR, 10)
        self._clamp_pub = self.create_publisher(ClampReport, names.CLAMP_REPORT, 10)
        self._lease_pub = self.create_publisher(LeaseState, names.LEASE_STATE, LATCHED)
        self._js_sub = self.polled.subscribe(JointState, names.JOINT_STATES, qos_profile_sensor_data)
        self._js_topic = self._js_sub.topic_name  # resolved and remapped, for the logs
        self._goals: deque[tuple[JointState, float, int]] = deque(maxlen=names.JOINT_TARGET_DEPTH)
        goals = self.create_subscription(
            JointState, names.JOINT_TARGET, self._on_goal, names.JOINT_TARGET_DEPTH
        )
        self._goal_topic = goals.topic_name
        self.create_service(ArmLease, names.LEASE_SERVICE, self._on_lease, qos_profile=SERVICE_QOS)
        self._cmd_msg = JointState(name=list(JOINT_NAMES))
        self._timer = self.create_timer(1.0 / self._params.snapshot.control_rate_hz, self._on_cycle)
        self.create_timer(LEASE_STATE_PERIOD, self._publish_lease)
        self._publish_lease()
        self.get_logger().info(
            f"waiting for {self._js_topic} to start at {self._params.snapshot.control_rate_hz:.0f} Hz"
        )

    # --- callbacks that only cache or decide small things -------------------------------------------

    def _on_joint_states(self, msg: JointState) -> None:
        if not names_an_arm_joint(msg.name):  # another device's (a gripper's broadcaster): not for monitors
            if self._core is None:  # none of the arm's yet: a robot whose joints are misnamed waits here
                named = ", ".join(msg.name[:6])
                self.get_logger().warning(
                    f"passing by {self._js_topic} naming none of the arm's joints ({named}): still waiting "
                    f"for {', '.join(JOINT_NAMES)}", throttle_duration_sec=LOG_THROTTLE_S,
                )
            return
        now, limit = self.get_clock().now().nanoseconds, self._params.snapshot.joint_state_timeout
        log = self.get_logger()
        if read_measurement_stamp(msg.header.stamp, self._js_topic, log, self._warnings, now, limit) is None:
            return
        measured = measured_joints(msg, self._js_topic, self.get_logger().error, velocities=True)
        if measured is not None:
            with self._lock:
                self._measured, self._measured_new = measured, True
        monitor = self._monitor
        monitor.period = 1.0 / self._params.snapshot.monitor_rate_hz
        if monitor.due(time.monotonic(), measured is not None):  # only this method touches the gate
            self._monitor_pub.publish(msg)

    def _on_goal(self, msg: JointState) -> None:
        """Queue a goal with its arrival time; the control cycle takes it (`_take_goals`)."""
        self._goals.append((msg, time.monotonic(), self.get_clock().now().nanoseconds))
        self._wake()  # the next cycle within one control period, as at the full rate

    def _take_goals(self) -> None:
        """Take up to `GOALS_PER_CYCLE` queued goals into the core, oldest first, before the cycle."""
        if not self._goals:
            return
        taken_ns = self.get_clock().now().nanoseconds  # one clock read for the whole take
        for _ in range(min(GOALS_PER_CYCLE, len(self._goals))):
            self._take_goal(*self._goals.popleft(), taken_ns)

    def _take_goal(self, msg: JointState, now: float, now_ns: int, taken_ns: int) -> None:
        """Gate one goal as of its arrival (`now`, `now_ns`); to the core with its age at `taken_ns`."""
        stamp_ns = read_stamp(msg.header.stamp, self._goal_topic, self.get_logger())
        if stamp_ns is None:
            return  # no time on a ROS clock: refused (logged), nothing changes
        with self._lock:
            if self._core is None:
                self.get_logger().warning(
                    f"goal ignored: no {self._js_topic} received yet",
                    throttle_duration_sec=LOG_THROTTLE_S,
                )
                return
            holding = ""  # why, while the measurement watch holds the arm
            if self._watch is not None and self._watch.holding:
                holding = self._watch.hold_reason(self._params.snapshot.joint_state_timeout)
            decision = self._gate.check(
                msg.name, msg.position, stamp_ns, msg.header.frame_id, self._core.goal, now, now_ns,
                msg.velocity,
            )
            projected = None
            moving = decision.velocity is not None and any(decision.velocity)
            if decision.verdict is Verdict.ACCEPTED and not (holding and moving):
                # Its age when taken, not at its arrival: the core places the sample by it on its own clock.
                age = (taken_ns - stamp_ns) * 1e-9 if stamp_ns else 0.0  # the core clips it
                projected = self._core.set_goal(  # while holding: pending, at rest (see `_reanchor`)
                    decision.goal, self._params.snapshot.arm, None if holding else decision.velocity, age,
                    stamp_ns * 1e-9 if stamp_ns else None,
                )
        log = self.get_logger()
        if holding and decision.verdict is Verdict.ACCEPTED:
            what = "streamed goal dropped" if moving else "goal kept pending"
            then = "" if moving else (
                ": planned from the measured state when the measurement is back, dropped if the arm is not "
                "where it was commanded"
            )
            log.warning(f"{what} ({holding}){then}", throttle_duration_sec=LOG_THROTTLE_S)
        if decision.verdict is Verdict.MALFORMED:
            log.error(decision.reason, throttle_duration_sec=LOG_THROTTLE_S)
        elif decision.verdict is Verdict.STALE:
            log.warning(f"stale goal dropped: {decision.reason}", throttle_duration_sec=LOG_THROTTLE_S)
        elif decision.verdict is Verdict.LEASE:
            log.warning(decision.reason, throttle_duration_sec=LOG_THROTTLE_S)
        elif projected is not None and projected.amount > ROUNDING:  # not the rounding of a goal on a bound
            log.warning(
                f"goal outside the limits ({', '.join(projected.active)}): projected by "
                f"{projected.amount:.4f} rad", throttle_duration_sec=LOG_THROTTLE_S,
            )

    def _on_lease(self, request: ArmLease.Request, response: ArmLease.Response) -> ArmLease.Response:
        now = time.monotonic()
        with self._lock:
            before = self._gate.holder
            if request.operation == ArmLease.Request.ACQUIRE:
                reply = self._gate.acquire(request.client_id, request.timeout, now, request.token)
            elif request.operation == ArmLease.Request.HEARTBEAT:
                reply = self._gate.heartbeat(request.client_id, request.token, now)
            elif request.operation == ArmLease.Request.RELEASE:
                reply = self._gate.release(request.client_id, request.token, now)
            else:
                reply = LeaseReply(False, f"unknown lease operation {request.operation}", before)
            after = self._gate.holder
        response.success, response.message, response.holder = reply.success, reply.message, reply.holder
        response.token = reply.token  # only a granted ACQUIRE carries it; never logged (lease.fingerprint)
        if before != after:
            self.get_logger().info(f"lease: {reply.message}")
            self._publish_lease()
        elif not reply.success and (
            request.operation != ArmLease.Request.ACQUIRE or request.client_id == after
        ):
            # A heartbeat or release that is not the holder's, or the holder's name without its token.
            op = _LEASE_OPS.get(request.operation, "unknown")
            self._warnings.warning(
                f"lease_{op.lower()}",  # throttled per operation: a flood of one cannot hide another
                f"lease {op} from client id {request.client_id[:40]!r} refused: {reply.message}",
            )
        return response

    def _on_params(self, old: TrajectoryConfig, new: TrajectoryConfig) -> None:
        self._wake()  # new limits may move the arm; a new hold rate takes effect from the full rate
        with self._lock:
            command = self._core.command if self._core is not None else None
        if command is not None and new.arm is not old.arm:
            outside = clamp_joints(command, new.arm, command)
            if outside.clamped:
                self.get_logger().warning(
                    f"the new limits exclude the current command ({', '.join(outside.active)}, "
                    f"{outside.amount:.4f} rad outside): moving back inside within the motion limits"
                )

    # --- timers: the decisions -----------------------------------------------------------------------

    def _on_cycle(self) -> None:
        """The control timer: the cycle, then the joint states received meanwhile (for the next one)."""
        if self._core is None:
            self._take_joint_states()  # the first valid one starts the core
        self._take_goals()
        try:
            self._cycle()
        finally:
            # After the command went out, as a callback between two cycles would: parsing them first
            # delays every fifth command (bench_trajectory's period error; docs/design/cpu.md).
            self._take_joint_states()

    def _take_joint_states(self) -> None:
        for msg, _received in self.polled.take(self._js_sub):
            self._on_joint_states(msg)

    def _cycle(self) -> None:
        now = time.monotonic()
        with self._lock:
            holder = self._gate.holder
            stalled = self._gate.ran(now, self._clock_period())  # every cycle, started or not
            if stalled:  # only after a stall: logged under the lock
                self.get_logger().warning(
                    f"the generator did not run for {stalled:.2f} s more than its timers allow (a starved or "
                    f"stopped process): that time is not counted against the heartbeat of {holder!r}'s lease",
                    throttle_duration_sec=1.0,
                )
            if self._core is None and not self._start(now):
                return
            assert self._watch is not None
            expired = self._gate.poll_expired(now)
            if expired:
                self._core.stop()
            config = self._params.snapshot
            fresh = self._measured if self._measured_new else None
            self._measured_new = False
            cycles = hold_cycles(config.control_rate_hz, config.hold_command_rate_hz)
            resting = self._pace.resting
            max_step = MAX_SILENCE_STEP  # a call at rest stands for `cycles` cycles: a little more
            if resting:
                max_step = max(MAX_SILENCE_STEP, 1.5 * cycles / config.control_rate_hz)
            watch = self._watch.cycle(
                now - self._last_cycle, fresh, config.joint_state_timeout, config.joint_state_tolerance,
                max_step,
            )
            self._last_cycle = now
            outs: list[CycleOutput] = []
            send = False
            if watch.verdict is Watch.HOLD:
                self._pace.restart()  # resume on a schedule from then, without a catch-up
                self._hold.forget()  # the first command after the hold goes out, whatever it is
            else:
                if watch.anchor is not None:
                    self._reanchor(watch.anchor, watch.keep_goal, config)
                if resting:  # the keep-alive period's cycles, one by one, until one moves
                    previous = self._core.command
                    for _ in range(cycles):
                        outs.append(self._core.step(config))
                        if not self._standing(outs[-1], previous):
                            break
                else:
                    previous = self._core.command
                    due = self._pace.cycles_due(now, config.control_rate_hz)
                    outs = [self._core.step(config) for _ in range(due)]
                for each in outs:
                    self._watch.commanded(each.position)
                send = self._hold.due(outs[-1].position, outs[-1].velocity, cycles, len(outs))
                standing = []
                for each in outs:
                    standing.append(self._standing(each, previous))
                    previous = each.position
                pace = self._pace.after(standing, cycles, config.control_rate_hz)
                if pace is not None:
                    self._set_pace(pace, config)
        if watch.warning:  # not throttled: each is an event, at most one per joint_state_timeout_s
            self.get_logger().warning(watch.warning)
        if watch.info:
            self.get_logger().info(watch.info)
        if not outs:
            if expired:
                self.get_logger().warning(f"lease of {expired!r} expired (missed heartbeat): arm held")
                self._publish_lease()
            return
        out = outs[-1]
        stamp = self.get_clock().now().to_msg()
        if send:
            msg = self._cmd_msg
            msg.header.stamp = stamp
            msg.position = list(out.position)
            msg.velocity = list(out.velocity)
            self._cmd_pub.publish(msg)
        if expired:
            self.get_logger().warning(f"lease of {expired!r} expired (missed heartbeat): stopping the arm")
            self._publish_lease()
        for each in outs:
            self._report(each, stamp)

    def _standing(self, out: CycleOutput, previous: tuple[float, ...]) -> bool:
        """Whether `out` keeps the command standing where `previous` left it (under the lock).

        A stream at rest counts: its next sample is a goal, which wakes the loop (`_wake`), and anything
        the core starts on its own (a stream's timeout braking back to its newest sample) is a change
        that ends the batch at rest in the cycle it happens.
        """
        core = self._core
        assert core is not None
        return out.position == previous and not any(out.velocity) and not out.error and not core.stopping

    def _set_pace(self, resting: bool, config: TrajectoryConfig) -> None:
        """The control timer at the keep-alive period (`resting`) or at the control rate (under the lock)."""
        cycles = hold_cycles(config.control_rate_hz, config.hold_command_rate_hz) if resting else 1
        self._pace.set_resting(resting)
        self._timer.timer_period_ns = round(1e9 * cycles / config.control_rate_hz)
        self._timer.reset()
        self._gate.expect(self._clock_period())

    def _clock_period(self) -> float:
        """The longest the generator goes without reading the clock while it runs, s.

        The control timer's period, or the lease state's (both pass the clock to the gate).
        """
        return min(self._timer.timer_period_ns * 1e-9, LEASE_STATE_PERIOD)

    def _wake(self) -> None:
        """Back to the full control rate now: the next cycle comes within one control period."""
        with self._lock:
            if self._pace.resting:
                self._set_pace(False, self._params.snapshot)

    def _reanchor(self, anchor: tuple[float, ...], keep_goal: bool, config: TrajectoryConfig) -> None:
        """Restart the core at the measured state (under the lock): the next command is `anchor` itself.

        A goal at rest that still stands (the measurement only paused and agrees with the command) is
        planned again from there; a stream, a stop and a goal after a disagreement are dropped.
        """
        core = self._core
        assert core is not None
        goal = core.goal if keep_goal and not (core.streaming or core.stopping) else None
        core.reanchor(anchor)
        if goal is not None:
            core.set_goal(goal, config.arm)
        self._pace.restart()

    def _start(self, now: float) -> bool:
        """Create the core from the first measurement (called under the lock); False while waiting."""
        if self._measured is None:
            return False
        config = self._params.snapshot
        self._core = TrajectoryCore(config, self._measured)
        # Still subscribed: the watch holds the arm when the measurement stops or disagrees.
        self._watch = MeasurementWatch(self._measured, self._js_topic)
        self._measured_new, self._last_cycle = False, now
        self.get_logger().info(f"started from the measured joint state {joints_text(self._measured)}")
        outside = clamp_joints(self._measured, config.arm, self._measured)
        if outside.clamped:
            self.get_logger().warning(
                f"the arm starts outside its limits ({', '.join(outside.active)}, {outside.amount:.4f} rad): "
                "moving it inside within the motion limits"
            )
            self._core.set_goal(self._measured, config.arm)
        return True

    def _report(self, out: CycleOutput, stamp: TimeMsg) -> None:
        log = self.get_logger()
        if out.clamp.clamped:
            self._clamp_count += 1
            log.warning(
                f"{describe_clamp(out.clamp)} (clamped cycles: {self._clamp_count})",
                throttle_duration_sec=LOG_THROTTLE_S,
            )
            report = ClampReport(
                active_bounds=list(out.clamp.active), requested=list(out.requested),
                clamped=list(out.position), amount=out.clamp.amount, clamp_count=self._clamp_count,
            )
            report.header.stamp = stamp
            self._clamp_pub.publish(report)
        if out.outside > 0.0:
            log.warning(
                f"command {out.outside:.4f} rad outside the limits (narrowed under it): returning inside",
                throttle_duration_sec=LOG_THROTTLE_S,
            )
        if out.error:
            log.error(
                f"ruckig failed ({out.error}): holding, then braking", throttle_duration_sec=LOG_THROTTLE_S
            )
        if out.stop_finished:
            log.info(f"arm stopped at {joints_text(out.position)}; holding there")
        if out.stream_event:
            log.warning(f"streamed goals: {out.stream_event}", throttle_duration_sec=LOG_THROTTLE_S)

    def _publish_lease(self) -> None:
        now = time.monotonic()
        with self._lock:
            self._gate.expire(now)  # the control cycle reports (and acts on) an expiry noticed here
            msg = LeaseState(
                holder=self._gate.holder,
                seconds_to_expiry=self._gate.seconds_left(now),
                timeout=self._gate.timeout,
            )
        msg.header.stamp = self.get_clock().now().to_msg()
        self._lease_pub.publish(msg)


def main(args: list[str] | None = None) -> None:
    """Console-script entry point: run the node on the EventsExecutor (500 Hz timer, low CPU)."""
    run_node(TrajectoryGenerator, args, events_executor=True)


if __name__ == "__main__":
    main()
