"""/arm/arm_cartesian_motion_node: MoveCartesian goals as straight TCP lines (or joint moves).

The thin ROS shell around `cartesian.goal` (and the goal runs it starts) / `cartesian.motion` /
`cartesian.path` (design: docs/design/cartesian_plan.md; interface: docs/interfaces.md):
- action `/arm/move_cartesian` (salamander_msgs/action/MoveCartesian). The goal callback rejects malformed
  goals (NaN or absurd pose, unknown path, speed_scale out of range), any goal before a valid
  /joint_states arrived or while nobody subscribes the joint targets (no trajectory generator matched yet:
  a target sent then is lost), and, while the arm lease is held (latched `/arm/lease_state`), every goal
  whose client_id is not the holder's, with the reason in the log: a client without the lease can never
  preempt the holder's running goal. A goal in the holder's name must carry the holder's lease token
  (`lease_token`): the callback checks it with a HEARTBEAT on the lease service (the generator is the one
  that knows the token; a goal from the holder is a sign of its life anyway) and rejects the goal when the
  generator refuses it or does not answer within LEASE_CHECK_TIMEOUT_S, so the holder's name alone never
  preempts the holder's goal (docs/security.md). Accepted goals check their whole path first and end at
  once (ABORTED, the IK status of the first bad point) when it is infeasible, before any joint target. A
  new feasible goal preempts the running one (which ends ABORTED, "preempted"); see cartesian.goal. A
  goal sent without a lease token while the lease was free ends ABORTED the control cycle the node sees
  the lease held (`GoalRun.lease_taken`): the generator refuses its targets from then on.
- service `/arm/retarget_cartesian` swaps the running goal's target if the new path is feasible;
  an infeasible one is refused with the IK status of its first bad point, a request that cannot be
  tried (no active goal, NaN, goal stopping, a lease_token not the goal's, a goal sent without a token
  while the lease is now held) with `ros.conversions.INVALID_REQUEST` like the other services.
- results carry the IK status of an early fail; a failure that is not the IK's (timeout, preempted,
  cancel) has status Ok, success false and the reason in `message`. An early fail's message (nothing
  sent for the goal) begins with `cartesian.goal_common.EARLY_FAIL`.
- the goal's `branch` ("" / "up" / "down") picks the elbow branch of a joint goal's end pose; a linear
  goal naming a branch the arm is not on fails early with the reason (see cartesian.goal).
- the control timer (`control_rate_hz`) samples the Cartesian trajectory, solves the IK and publishes the
  joints on `/arm/joint_target` with header.frame_id = the goal's lease_token (the lease identity), the
  positions and, as a feed-forward a generator may use, the joint velocities at that point. The timer
  runs only while a goal is active. Plans are slowed until their joint motion fits
  `joint_limit_fraction` of the per-joint limits (`max_velocity.<joint>`, ...; the generator's).
- every parameter lives in one frozen `MotionConfig` snapshot (ParamBinding), read once per cycle.
- a guarded goal (`guard_force` > 0, linear only) stops at the first contact felt in the efforts of
  /joint_states (`cartesian.contact`, docs/design/guarded_moves.md): it brakes on its line and ends
  ABORTED with `contact` true, the measured TCP and the force estimate, and one INFO line; its first
  sample without efforts fails it early. The efforts of each sample are read with its positions.
- a goal also ends (and the next one starts at its end) the cycle the trajectory generator's command rests
  at it with the measured arm trailing by the motors' lag (`cartesian.goal_common.arrived_by_command`): the
  newest /arm/joint_command, polled like /joint_states while goals come (depth 1: only the newest is
  kept), counts when every velocity in it is zero and it is at most COMMAND_FRESH_S old (the generator
  re-sends a resting command as a keep-alive, 50 times a second by default).

Everything runs on one SingleThreadedExecutor: the execute callback is a coroutine that awaits a future
the timer completes, so no callback ever blocks. (The EventsExecutor costs less per wake-up,
docs/design/cpu.md, but this node's 100 Hz stream is what the generator follows: kept on the executor
its stream timing was measured on until that is measured again.) It reads `/joint_states` at the
measurement's full rate, not the monitors': a goal starts from the measured pose, ends when the measured
TCP arrives, and a cancelled joint goal holds the measured joints, all of which a 25 Hz sample would
delay or make stale by up to 40 ms. But only while it has goals: the subscription is made by the first
goal request (which waits for its first valid sample, ~10 ms after the subscription is made, at most
`joint_state_timeout_s`) and dropped MEASURE_LINGER_S after the last goal ended, so an idle node wakes
for nothing; at start-up it is made at once and kept STARTUP_MEASURE_S, while a starting stack's
discovery is slow. And nothing wakes for the samples: the control timer takes the newest from the
subscription's history each cycle (`ros.polled_subscription`), so a running goal costs 100 wake-ups a
second, not 200 (docs/design/cpu.md).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from geometry_msgs.msg import Vector3
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from rclpy.subscription import Subscription
from rclpy.task import Future
from rclpy.time import Time
from rclpy.timer import Timer
from sensor_msgs.msg import JointState

from salamander_control import names
from salamander_control.cartesian import params
from salamander_control.cartesian.clock_map import ClockMap
from salamander_control.cartesian.config import (
    PATH_LINEAR,
    CartesianGoal,
    GoalRejected,
    MotionConfig,
    parse_goal,
    pose_problem,
)
from salamander_control.cartesian.contact import NO_SAMPLE, Efforts, read_efforts
from salamander_control.cartesian.goal import GoalRun, start_goal, stream_start
from salamander_control.cartesian.goal_common import Outcome, RestStart, fmt_m
from salamander_control.kinematics import JOINT_NAMES, IkStatus
from salamander_control.latest_sample import PutResult, StampOrder
from salamander_control.ros.conversions import (
    INVALID_REQUEST,
    invalid_reason,
    measured_joints,
    point_to_tuple,
    read_joint_vector,
    read_measurement_stamp,
    tuple_to_point,
)
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.log import LOG_THROTTLE_S, KindLogger
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.polled_subscription import PolledNode
from salamander_control.ros.qos import LATCHED, SERVICE_QOS
from salamander_control.ros.run import run_node
from salamander_control.trajectory.lease import same_token
from salamander_msgs.action import MoveCartesian
from salamander_msgs.msg import LeaseState
from salamander_msgs.srv import ArmLease, RetargetCartesian

COMMAND_QOS = QoSProfile(depth=1)
"""/arm/joint_command as polled here: reliable, only the newest kept (the generator sends 500 a second)."""
LEASE_CHECK_TIMEOUT_S = 1.0
"""s; a goal whose lease token the generator has not confirmed by then is rejected."""
MEASURE_LINGER_S = 2.0
"""s the /joint_states subscription outlives the last goal (a run's next segment follows within it)."""
STARTUP_MEASURE_S = 10.0
"""s the node measures from its start, before any goal: matching a subscription made by the first goal
took over `joint_state_timeout_s` (1 s) while a whole stack started on two cores (the README demo's first
goal was refused, "no joint state yet", and sent again 1.5 s later); a stack that starts and runs at once
finds it matched. A later first goal meets a settled graph (~10 ms, docs/design/cpu.md)."""
MEASURE_POLL_S = 0.005
"""s between two looks while a goal request waits (for the first joint state, for a matched follower)."""
AFTER_TAIL_S = 1e-6
"""s: a target sent while a line's tail (samples stamped ahead) is pending is stamped this much after it."""
COMMAND_FRESH_S = 0.1
"""s: a resting command received longer ago than this is not used (the generator's keep-alive: 20 ms)."""
STALL_S = 0.1
"""s: a timer call this much later than the previous cycle's grid point is a stall of the node (a starved or
stopped process); the rest of its gap does not count toward the goal's timeouts
(`cartesian.goal_common.Stalls`)."""
MAX_CATCH_UP = 50
"""Control cycles one timer call runs at most (0.5 s at 100 Hz; a longer stall is caught up over the next
calls); see `_on_timer`."""


@dataclass
class _Active:
    """The running goal: its pure run, its action handle, and the future its execute coroutine awaits."""

    run: GoalRun
    handle: ServerGoalHandle
    done: Future
    stepped_at: float  # time.monotonic() of the run's last cycle (its start before the first)
    near_told: bool = False  # the feedback at the goal's handoff_distance went out


class CartesianMotionNode(PolledNode):
    """MoveCartesian action server, retarget service and the Cartesian control loop."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.CARTESIAN_MOTION_NODE, **node_kwargs)
        self._binding: ParamBinding[MotionConfig] = ParamBinding(
            self, params.param_specs(), params.build_config, warn=params.config_warnings,
            on_change=self._on_params,
        )
        self._limits = follow_coupled_limits(self)  # alpha_max/beta_max: one pair for the whole arm
        self._lock = threading.Lock()
        self._joints: tuple[float, ...] | None = None  # last valid measured joints, motor order
        self._efforts: Efforts = NO_SAMPLE  # that sample's efforts (a guarded goal's input)
        self._command: tuple[tuple[float, ...], float] | None = None  # newest resting command, received
        self._joints_order = StampOrder()  # of the stamped joint states (unstamped ones are not ordered)
        self._warnings = KindLogger(self.get_logger())  # per kind: joint states stale or ahead
        self._joints_time = -math.inf  # monotonic receive time
        self._active: _Active | None = None
        self._rest: RestStart | None = None  # where the last goal that succeeded left the command
        self._last_sample_at = -math.inf  # time.monotonic() of the last joint target sent (its plan time)
        self._last_feedback = -math.inf
        self._js_topic = self.resolve_topic_name(names.JOINT_STATES)  # resolved and remapped, for the logs
        self._js_sub: Subscription | None = None  # only while goals come: `_start_measuring`
        self._cmd_sub: Subscription | None = None  # /arm/joint_command, the same
        self._cmd_topic = self.resolve_topic_name(names.JOINT_COMMAND)
        self._measure_until = -math.inf  # monotonic time the subscriptions may be dropped (`_on_linger`)
        self._linger = self.create_timer(MEASURE_LINGER_S, self._on_linger)
        self._linger.cancel()
        self._target_pub = self.create_publisher(JointState, names.JOINT_TARGET, names.JOINT_TARGET_DEPTH)
        self._lease_holder = ""  # the arm lease's holder as the generator last published it ("" = free)
        self._lease_sub = self.create_subscription(
            LeaseState, names.LEASE_STATE, self._on_lease_state, LATCHED
        )
        self._lease_known = False  # a LeaseState arrived (`_await_lease_state`)
        self._lease_client = self.create_client(ArmLease, names.LEASE_SERVICE)  # checks goals' lease tokens
        self._server = ActionServer(
            self,
            MoveCartesian,
            names.MOVE_CARTESIAN,
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            cancel_callback=lambda _handle: CancelResponse.ACCEPT,
            # Its own group: a goal callback holds its group while it awaits the lease check, and the
            # control timer, the lease client and the retarget service (default group) must run meanwhile.
            callback_group=MutuallyExclusiveCallbackGroup(),
        )
        retarget = self.create_service(
            RetargetCartesian, names.RETARGET_CARTESIAN, self._on_retarget, qos_profile=SERVICE_QOS
        )
        self._clock_map = ClockMap(time.monotonic_ns, lambda: self.get_clock().now().nanoseconds)
        self._timer = self._make_timer(self._binding.snapshot.control_rate_hz)
        self._start_measuring(STARTUP_MEASURE_S)  # matched while the stack starts, before the first goal
        self.get_logger().info(
            f"ready: {self.resolve_topic_name(names.MOVE_CARTESIAN)}, {retarget.service_name} -> "
            f"{self._target_pub.topic_name} "
            f"at {self._binding.snapshot.control_rate_hz:.0f} Hz"
        )

    # Inputs -------------------------------------------------------------------------------------------

    def _on_joint_state(self, msg: JointState, received: float) -> None:
        """Cache a valid measured joint state; refuse NaN, missing joints, stamps out of range or order."""
        q = measured_joints(msg, self._js_topic, self.get_logger().warning, velocities=True)
        if q is None:
            return
        # Stamped ahead, one would hold back every real state stamped before it (the newest stamp wins).
        now, limit = self.get_clock().now().nanoseconds, self._binding.snapshot.joint_state_timeout_s
        stamp = read_measurement_stamp(msg.header.stamp, self._js_topic, self.get_logger(), self._warnings,
                                       now, limit)  # fmt: skip
        if stamp is None:
            return
        with self._lock:
            if stamp and self._joints_order.offer(stamp) is PutResult.OUT_OF_ORDER:
                self.get_logger().warning(
                    f"ignoring {self._js_topic}: stamp older than the last one",
                    throttle_duration_sec=LOG_THROTTLE_S,
                )
                return
            self._joints, self._joints_time = q, received
            self._efforts = read_efforts(msg.name, msg.effort)

    def _take_joint_states(self) -> None:
        """File the joint states (and the newest command) received since the last call (oldest first)."""
        if self._js_sub is not None:
            for msg, received in self.polled.take(self._js_sub):
                self._on_joint_state(msg, received)
        if self._cmd_sub is not None:
            for msg, received in self.polled.take(self._cmd_sub):
                self._on_command(msg, received)

    def _on_command(self, msg: JointState, received: float) -> None:
        """Keep the generator's command when it rests (every velocity zero); forget it when it moves."""
        read = read_joint_vector(msg, self._cmd_topic, self.get_logger().warning, velocities=True)
        if read is None:
            return
        rests = read.velocities is not None and all(v == 0.0 for v in read.velocities)
        with self._lock:
            self._command = (read.positions, received) if rests else None

    def _resting_command(self, now: float) -> tuple[float, ...] | None:
        """The generator's command while it rests, received at most COMMAND_FRESH_S ago; else None."""
        with self._lock:
            command = self._command
        if command is None or now - command[1] > COMMAND_FRESH_S:
            return None
        return command[0]

    def _keep_measuring(self, now: float, hold: float = MEASURE_LINGER_S) -> None:
        """Keep the subscriptions at least `hold` s past `now` (and while a goal runs: `_on_linger`)."""
        self._measure_until = max(self._measure_until, now + hold)

    def _start_measuring(self, hold: float = MEASURE_LINGER_S) -> None:
        """Subscribe /joint_states and /arm/joint_command (if not yet) and keep them `_keep_measuring`."""
        self._keep_measuring(time.monotonic(), hold)
        if self._js_sub is None:
            self._js_sub = self.polled.subscribe(JointState, names.JOINT_STATES, qos_profile_sensor_data)
            self._cmd_sub = self.polled.subscribe(JointState, names.JOINT_COMMAND, COMMAND_QOS)
            self._linger.reset()

    def _on_linger(self) -> None:
        """Drop the subscriptions once no goal has wanted them for MEASURE_LINGER_S (`_keep_measuring`)."""
        if self._active is not None or time.monotonic() < self._measure_until:
            return
        self._linger.cancel()
        if self._js_sub is not None:
            self.polled.unsubscribe(self._js_sub)
            self._js_sub = None
        if self._cmd_sub is not None:
            self.polled.unsubscribe(self._cmd_sub)
            self._cmd_sub = None
        with self._lock:
            self._joints, self._joints_time, self._joints_order = None, -math.inf, StampOrder()
            self._efforts, self._command = NO_SAMPLE, None

    async def _await_measurement(self, cfg: MotionConfig) -> str:
        """Measure (`_start_measuring`) and await a fresh valid joint state; why not, or "" once there."""
        self._start_measuring()

        def fresh() -> bool:
            self._take_joint_states()
            return self._measured(cfg, time.monotonic()) is not None

        ok = await self._poll_until(fresh, cfg.joint_state_timeout_s)
        self._keep_measuring(time.monotonic())
        if ok:
            return ""
        with self._lock:
            never = self._joints is None
        if never:
            return f"no joint state yet: none valid on {self._js_topic} within {cfg.joint_state_timeout_s} s"
        return f"joint state older than {cfg.joint_state_timeout_s} s on {self._js_topic}"

    def _on_lease_state(self, msg: LeaseState) -> None:
        with self._lock:
            self._lease_holder = msg.holder
            self._lease_known = True

    def _measured(self, cfg: MotionConfig, now: float) -> tuple[float, ...] | None:
        """The last valid joint state, or None when there is none or it is older than the timeout."""
        return self._measured_sample(cfg, now)[0]

    def _measured_sample(self, cfg: MotionConfig, now: float) -> tuple[tuple[float, ...] | None, Efforts]:
        """`_measured` and that sample's efforts (`NO_SAMPLE` without one)."""
        with self._lock:
            if self._joints is None or now - self._joints_time > cfg.joint_state_timeout_s:
                return None, NO_SAMPLE
            return self._joints, self._efforts

    def _make_timer(self, rate: float) -> Timer:
        """The control timer; it only runs while a goal is active (an idle node costs no CPU)."""
        timer = self.create_timer(1.0 / rate, self._on_timer)
        if self._active is None:
            timer.cancel()
        return timer

    def _on_params(self, old: MotionConfig, new: MotionConfig) -> None:
        """Apply a control-rate change; re-check a running path against changed arm limits."""
        if new.control_rate_hz != old.control_rate_hz:
            self.destroy_timer(self._timer)
            self._timer = self._make_timer(new.control_rate_hz)
        if new.arm != old.arm and self._active is not None:
            problem = self._active.run.on_params(time.monotonic(), new)
            if problem:
                self.get_logger().warning(problem)

    # Action -------------------------------------------------------------------------------------------

    async def _on_goal(self, request: MoveCartesian.Goal) -> GoalResponse:
        """Reject malformed, premature and (while the lease is held) other clients' goals, with the reason."""
        try:
            _parse(request)
        except GoalRejected as exc:
            self.get_logger().warning(f"rejected MoveCartesian goal: {exc}")
            return GoalResponse.REJECT
        cfg = self._binding.snapshot
        why = await self._await_measurement(cfg) or await self._await_follower(cfg)
        if not why:
            await self._await_lease_state(cfg)
        if why:
            self.get_logger().warning(f"rejected MoveCartesian goal: {why}")
            return GoalResponse.REJECT
        holder = self._holder()  # after the wait above: the holder as it is now
        if holder and request.client_id != holder:
            self.get_logger().warning(
                f"rejected MoveCartesian goal from {request.client_id!r}: the arm lease is held by {holder!r}"
            )
            return GoalResponse.REJECT
        if holder:  # last: the one check that asks another node
            refused = await self._token_refusal(request.client_id, request.lease_token)
            if refused:
                self.get_logger().warning(
                    f"rejected MoveCartesian goal from {request.client_id!r}: its lease token is not the "
                    f"holder's: {refused}"
                )
                return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _holder(self) -> str:
        """The arm lease's holder as the generator last published it ("" = free)."""
        with self._lock:
            return self._lease_holder

    def _taken_from(self, active: _Active) -> str:
        """Who took the lease from under `active`, a goal sent without a token while it was free ("" else).

        The generator refuses such a goal's targets once the lease is held. The lock is read only for it.
        """
        return "" if active.run.goal.lease_token else self._holder()

    async def _await_follower(self, cfg: MotionConfig) -> str:
        """Wait (at most `joint_state_timeout_s`) until a subscriber of the joint targets is matched.

        A joint goal sends its one target once: published before the trajectory generator's subscription
        was matched (a stack just started, a generator respawned), it was lost, and the goal waited its
        whole `joint_path_timeout_s` for an arm that never moved (seen in bench/bench_placement.py).
        """
        publisher = self._target_pub
        if await self._poll_until(lambda: publisher.get_subscription_count() > 0, cfg.joint_state_timeout_s):
            return ""
        return (
            f"nobody subscribes {publisher.topic_name} (no trajectory generator) after "
            f"{cfg.joint_state_timeout_s} s"
        )

    async def _await_lease_state(self, cfg: MotionConfig) -> None:
        """Wait (at most `joint_state_timeout_s`) for the latched lease state of a matched publisher.

        A goal that came before it (the node just started, on a loaded machine) would be checked against
        "no holder" and accepted without the holder's token. With no publisher of the lease state there is
        no lease to wait for.
        """
        sub = self._lease_sub

        def known() -> bool:
            with self._lock:
                return self._lease_known or sub.get_publisher_count() == 0

        await self._poll_until(known, cfg.joint_state_timeout_s)

    async def _poll_until(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Whether `ready()` holds, checked now and every MEASURE_POLL_S for at most `timeout` s."""
        if ready():
            return True
        done = Future()

        def look() -> None:
            if not done.done() and ready():
                done.set_result(None)

        poll = self.create_timer(MEASURE_POLL_S, look)
        try:
            await self._within(done, timeout)
        finally:
            self.destroy_timer(poll)
        return done.done() or ready()

    async def _token_refusal(self, client_id: str, token: str) -> str:
        """Why the generator does not confirm `token` as the lease holder `client_id`'s, or "" if it does.

        Asks with a HEARTBEAT in the goal's name (no new operation: a goal from the holder is a sign of
        its life). The token itself is never logged.
        """
        if not token:
            return "the goal carries no lease_token"
        client = self._lease_client
        if not client.service_is_ready():
            return f"no {client.service_name} service to check it with"
        future = client.call_async(
            ArmLease.Request(operation=ArmLease.Request.HEARTBEAT, client_id=client_id, token=token)
        )
        if not await self._within(future, LEASE_CHECK_TIMEOUT_S):
            client.remove_pending_request(future)
            return f"no answer from {client.service_name} within {LEASE_CHECK_TIMEOUT_S:.1f} s"
        if future.exception() is not None:
            return f"{client.service_name} failed: {future.exception()}"
        reply = future.result()
        return "" if reply.success else reply.message

    async def _within(self, future: Future, timeout: float) -> bool:
        """Await `future` for at most `timeout` s without blocking the executor; whether it is done."""
        waited = Future()

        def finish(_: object = None) -> None:
            if not waited.done():
                waited.set_result(None)

        future.add_done_callback(finish)
        timer = self.create_timer(timeout, finish)
        try:
            await waited
        finally:
            self.destroy_timer(timer)
        return future.done()

    async def _execute(self, handle: ServerGoalHandle) -> MoveCartesian.Result:
        """Check and start the goal, then wait (without blocking) for the timer to decide its outcome."""
        goal = _parse(handle.request)
        cfg = self._binding.snapshot
        now = time.monotonic()
        self._take_joint_states()
        measured, efforts = self._measured_sample(cfg, now)
        self._keep_measuring(now)
        if measured is None:
            return self._finish(handle, Outcome("aborted", IkStatus.OK, "no joint state", (math.nan,) * 3))
        active = self._active
        # A preempted goal's plan is continued from the instant of its last sample: the new one's samples
        # then follow on the same grid, a period apart (see `_on_timer`); a line from rest starts its grid
        # a stream delay back, so the first cycle sends that much of it and the command starts at once.
        if active is not None:
            start = active.stepped_at
            if goal.path == PATH_LINEAR:  # a line continues after what the running one sent ahead
                start = max(start, active.run.sent_until)
        else:
            start = stream_start(goal, now, self._last_sample_at, 1.0 / cfg.control_rate_hz)
        run, outcome = start_goal(
            goal, cfg, start, measured, active.run if active else None, efforts, self._rest,
            self._resting_command(now),
        )
        if outcome is not None:
            self.get_logger().warning(f"MoveCartesian goal failed: {outcome.message}")
            return self._finish(handle, outcome)
        self._rest = None  # the new goal moves the command
        if active is not None:
            self._active = None
            active.done.set_result(
                Outcome("aborted", IkStatus.OK, "preempted by a new goal", (math.nan,) * 3)
            )
        guard = f", guarded at {goal.guard_force:g} N" if goal.guarded else ""
        if goal.banded:
            guard += (
                f", at speed_scale {goal.band_speed_scale:g} from {goal.band_start * 1000:g} to "
                f"{goal.band_end * 1000:g} mm before it{' (the guard feels there)' if goal.guarded else ''}"
            )
        self.get_logger().info(
            f"MoveCartesian {goal.path} goal to {fmt_m(goal.pose)} for {goal.client_id!r}{guard}"
        )
        self._clock_map.calibrate()  # stamps = plan times on the ROS clock (docs/design/clock_map.md)
        done = Future()
        self._active = _Active(run, handle, done, start)
        if self._timer.is_canceled():
            self._timer.reset()
        return self._finish(handle, await done)

    def _finish(self, handle: ServerGoalHandle, outcome: Outcome) -> MoveCartesian.Result:
        """Set the goal's terminal state and build its result."""
        if outcome.result == "succeeded":
            handle.succeed()
        elif outcome.result == "canceled" and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        result = MoveCartesian.Result(
            success=outcome.result == "succeeded",
            status=int(outcome.status),
            message=outcome.message,
            final_tcp=tuple_to_point(outcome.final_tcp),
        )
        if outcome.contact is not None:
            result.contact = True
            result.contact_tcp = tuple_to_point(outcome.contact.tcp)
            fx, fy, fz = outcome.contact.force
            result.contact_force = Vector3(x=fx, y=fy, z=fz)
        return result

    # Retarget -----------------------------------------------------------------------------------------

    def _on_retarget(
        self, request: RetargetCartesian.Request, response: RetargetCartesian.Response
    ) -> RetargetCartesian.Response:
        """Swap the running goal's target when the new path is feasible; refuse otherwise."""
        tcp = point_to_tuple(request.tcp)
        pose = (*tcp, request.tool_pitch, request.tool_yaw)
        active = self._active
        status: IkStatus | None = None  # None: not tried, answered as INVALID_REQUEST
        ended = False  # no goal runs: routine when a client's retarget crosses its goal's end
        if problem := pose_problem(tcp, request.tool_pitch, request.tool_yaw):
            ok, message = False, invalid_reason(f"retarget {problem}")
        elif active is None:
            ok, ended, message = False, True, invalid_reason("no active MoveCartesian goal to retarget")
        elif holder := self._taken_from(active):
            # Sent while the lease was free; its targets go out without a token, which the generator now
            # refuses: redirecting it would change nothing but the goal's report (it ends next cycle).
            ok, message = False, invalid_reason(
                f"the arm lease is held by {holder!r}; the running goal (of {active.run.goal.client_id!r}) "
                "was sent without a lease token and cannot be redirected"
            )
        elif active.run.goal.lease_token and not same_token(request.lease_token, active.run.goal.lease_token):
            # Only the goal's own client may redirect it (its lease token; never logged).
            ok, message = False, invalid_reason(
                f"the request's lease_token is not the running goal's (goal of {active.run.goal.client_id!r})"
            )
        else:
            # From the instant of the last sample sent: the new plan's samples follow it on the same grid.
            ok, status, message = active.run.retarget(pose, active.stepped_at, self._binding.snapshot)
        # One call site per severity: rclpy refuses a call site whose severity changes between calls.
        if ok:
            self.get_logger().info(f"retarget: {message}")
        elif ended:
            self.get_logger().info(f"retarget: {message} (refused)")
        else:
            self.get_logger().warning(f"retarget: {message}")
        response.success, response.message = ok, message
        response.status = INVALID_REQUEST if status is None else int(status)
        return response

    # Control loop -------------------------------------------------------------------------------------

    def _on_timer(self) -> None:
        """One cycle of the running goal: cancel handling, joint target, feedback, outcome."""
        active = self._active
        if active is None:
            return
        cfg = self._binding.snapshot
        now = time.monotonic()
        self._take_joint_states()
        measured, efforts = self._measured_sample(cfg, now)
        with self._lock:
            measured_at = self._joints_time  # when it was received: a resume needs the arm still over time
        # The plan is sampled on a fixed grid from the goal's start, one period apart, each sample stamped
        # with its own time: every grid point due by now, so a late call (a starved process) first sends
        # the ones it missed. The generator's curve through its samples kinks past the jerk bound when
        # they lie far apart (a cubic over 0.2 s), or unevenly (15-25 ms after a late call): both handed
        # the line to Ruckig in joint space (docs/design/stream_following.md).
        period = 1.0 / cfg.control_rate_hz
        times, t = [], active.stepped_at + period
        while t <= now + 1e-9 and len(times) < MAX_CATCH_UP:
            times.append(t)
            t += period
        if not times:
            return  # called early: the next grid point is not due yet
        if now - active.stepped_at > STALL_S:  # the node did not run: the arm is not to blame for that time
            active.run.stalls.excuse(active.stepped_at + STALL_S, now)
        if holder := self._taken_from(active):
            self._end_goal(active, active.run.lease_taken(times[0], holder, measured, cfg), cfg, now)
            return
        if active.handle.is_cancel_requested and not active.run.cancelling:
            active.run.cancel(times[0], cfg, measured)
            self.get_logger().info("MoveCartesian goal cancel requested: stopping")
        resting = self._resting_command(now)
        for t in times:
            cycle = active.run.step(t, cfg, measured, measured_at, efforts, ahead=True, resting=resting)
            active.stepped_at = t
            token = active.run.goal.lease_token
            if cycle.target is not None:
                # A joint goal bent out of a line whose tail went out ahead is stamped after the tail's last
                # sample (the generator drops a goal stamped before the last it took); a goal without
                # velocities is reached from the command at once, whatever its stamp.
                when = t if t > self._last_sample_at else self._last_sample_at + AFTER_TAIL_S
                self._publish_target(cycle.target[0], cycle.target[1], token, when)
            for ahead_t, q, qd in cycle.ahead:  # a line's final deceleration, whole (cartesian.linear_goal)
                self._publish_target(q, qd, token, ahead_t)
            if cycle.event:
                self.get_logger().warning(f"MoveCartesian: {cycle.event}")
            if cycle.outcome is not None:
                break
        fb = cycle.feedback
        due = fb is not None and now - self._last_feedback >= 1.0 / cfg.feedback_rate_hz
        near = active.run.goal.handoff_distance  # the client hands on there: tell it the cycle it happens
        if fb is not None and near > 0.0 and not active.near_told and fb.distance_remaining <= near:
            active.near_told = due = True
        if due:
            self._last_feedback = now
            active.handle.publish_feedback(
                MoveCartesian.Feedback(
                    tcp=tuple_to_point(fb.tcp), distance_remaining=fb.distance_remaining, progress=fb.progress
                )
            )
        if cycle.outcome is not None:
            self._end_goal(active, cycle.outcome, cfg, now)

    def _end_goal(self, active: _Active, outcome: Outcome, cfg: MotionConfig, now: float) -> None:
        """End the running goal with `outcome`: its log line, where the next goal may start, the timer."""
        text = f"MoveCartesian goal {outcome.result}: {outcome.message}"
        if outcome.result == "succeeded":
            self.get_logger().info(text)
        elif outcome.contact is not None:  # a guarded move did its job: not a fault
            self.get_logger().info(text)
        else:
            self.get_logger().warning(text)
            if self._measured(cfg, now) is None:
                self._log_blind()
        self._active = None
        succeeded = outcome.result == "succeeded"
        self._rest = active.run.rest(active.stepped_at, cfg.arm) if succeeded else None
        self._timer.cancel()
        self._keep_measuring(now)  # the subscriptions linger from here (`_on_linger`)
        active.done.set_result(outcome)

    def _log_blind(self) -> None:
        """Log what DDS says of /joint_states when a goal failed without a fresh valid joint state.

        A stream that stopped, or one that no longer reaches this node: docs/design/stream_following.md.
        """
        sub = self._js_sub
        matched = "none made" if sub is None else f"matches {sub.get_publisher_count()} publisher(s)"
        self.get_logger().warning(
            f"{self._js_topic}: no fresh valid joint state at the goal's end; this node's subscription "
            f"{matched}, the graph shows {self.count_publishers(self._js_topic)}"
        )

    def _publish_target(
        self, q: tuple[float, ...], qd: tuple[float, ...] | None, sender: str, t: float
    ) -> None:
        """Publish a joint target stamped with the instant `t` it samples (plan time, `time.monotonic()`).

        The trajectory generator follows the targets as a curve through (stamp, position, velocity):
        a stamp taken after the IK (tens of us later, varying) would misplace a sample moving at 1 rad/s
        by ~1e-5 rad, enough to kink the curve's acceleration by several times the jerk limit. So the
        stamp is `t` itself on the ROS clock (docs/design/clock_map.md).
        """
        stamp = Time(nanoseconds=self._clock_map.to_other_ns(t), clock_type=self.get_clock().clock_type)
        self._last_sample_at = t
        msg = JointState()
        msg.header.stamp = stamp.to_msg()
        msg.header.frame_id = sender  # the goal's lease token: the lease identity (docs/interfaces.md)
        msg.name = list(JOINT_NAMES)
        msg.position = [float(v) for v in q]
        msg.velocity = [float(v) for v in qd] if qd is not None else []
        self._target_pub.publish(msg)


def _parse(request: MoveCartesian.Goal) -> CartesianGoal:
    return parse_goal(
        point_to_tuple(request.tcp),
        request.tool_pitch,
        request.tool_yaw,
        request.path,
        request.speed_scale,
        request.client_id,
        request.branch,
        lease_token=request.lease_token,
        guard_force=request.guard_force,
        handoff_distance=request.handoff_distance,
        band_speed_scale=request.band_speed_scale,
        band_start=request.band_start,
        band_end=request.band_end,
    )


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`arm_cartesian_motion_node`)."""
    run_node(CartesianMotionNode, args)


if __name__ == "__main__":
    main()
