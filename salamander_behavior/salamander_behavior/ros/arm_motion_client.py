"""`ArmMotionCore`: the arm over ROS for the tree (a `MotionPort`): lease, Cartesian goals, retargets.

- Lease, explicit per run: `acquire_lease()` (a run starts) makes a fresh `LeaseKeeper`, which a timer
  drives: ACQUIRE, a HEARTBEAT every timeout/4, ACQUIRE again after a refusal; `release_lease()` (the
  run ended, failed or was cancelled) drops the keeper and sends RELEASE, returning its future so the
  caller can wait for the generator's answer without blocking. Between runs no keeper exists and the
  node holds nothing. `shutdown()` stops, cancels and releases.
- Goals: `send` starts a MoveCartesian goal and returns its `RosMotionHandle` (motion_goal.py), which
  the leaf polls each tick: acceptance, feedback, result, cancel, retargets, and a lost answer. Nothing
  waits on a future.
- Guarded moves: a request's `guard_force` (and its `band`) go out on the goal; a result with
  ``contact`` true comes back as a FAILED outcome carrying the `Contact` (TCP and force).
  `contact_sensing()` says whether the joint states carry efforts, decided by the first joint state
  heard (the tree's start-up answer).

Every call returns at once; the futures are completed by the node's executor between ticks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import rclpy
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.task import Future

from salamander_behavior.lease_keeper import LAPSED, LeaseKeeper, LeaseOp
from salamander_behavior.limits.cache import JointStateCache, shared_joint_state_cache
from salamander_behavior.ports import Clock, MotionRequest
from salamander_behavior.ros.motion_goal import RosMotionHandle
from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES
from salamander_control.ros.log import LOG_THROTTLE_S
from salamander_msgs.action import MoveCartesian
from salamander_msgs.srv import ArmLease, RetargetCartesian

RELEASE_WAIT_S = 0.6
"""s the stop waits for the generator's answer to the lease's RELEASE (a round trip takes milliseconds);
within run_node's STOP_GRACE_S with the goal's cancel (1 s) and the progress flush."""


class ArmMotionCore:
    """The tree's `MotionPort` on a ROS node (see the module docstring).

    Args:
        node: the behaviour server.
        client_id: lease identity; every goal carries it.
        lease_timeout: heartbeat timeout asked for, s.
        joint_states: the cache that tells whether joint states flow (default: the node's shared one of
            `joint_states_topic`, which the guard conditions read too).
        clock: monotonic seconds.
        joint_state_max_age: older joint states mean "not ready".
        joint_states_topic: the measured joint states' topic (the behaviour server reads
            `names.JOINT_STATES_MONITOR`, the monitors' rate).
    """

    def __init__(
        self,
        node: Node,
        client_id: str,
        lease_timeout: float,
        joint_states: JointStateCache | None = None,
        clock: Clock = time.monotonic,
        joint_state_max_age: float = 0.5,
        joint_states_topic: str = names.JOINT_STATES,
    ) -> None:
        self.node = node
        self.client_id = client_id
        self.clock = clock
        self.lease_timeout = lease_timeout
        self.keeper: LeaseKeeper | None = None  # the current run's; None between runs (nothing held)
        self._pending_release: tuple[LeaseKeeper, Future] | None = None  # see release_lease
        self._stopping = False  # `shutdown` ran: the release is reported there
        self._last_handle: RosMotionHandle | None = None
        self._lock = threading.Lock()
        self._max_age = joint_state_max_age
        self.joint_states = joint_states or shared_joint_state_cache(node, joint_states_topic)
        self.action = ActionClient(node, MoveCartesian, names.MOVE_CARTESIAN)
        self.lease_client = node.create_client(ArmLease, names.LEASE_SERVICE)
        self.retarget_client = node.create_client(RetargetCartesian, names.RETARGET_CARTESIAN)
        # The names as resolved in the node's namespace and remapped (by the launch file), for messages.
        self.move_name = node.resolve_topic_name(names.MOVE_CARTESIAN)
        self.joint_states_name = node.resolve_topic_name(joint_states_topic)
        # keeper.period / 2; it runs only while a keeper keeps the lease (a run), see `_on_lease_timer`
        self._timer = node.create_timer(lease_timeout / 8.0, self._on_lease_timer)
        self._timer.cancel()
        self._efforts: bool | None = None  # latched from the first joint state (`contact_sensing`)
        self.on_result: Callable[[], None] | None = None
        """Called (from the executor) when a goal's result arrives, or its feedback says the measured TCP
        reached the request's hand-off distance: the server ticks the tree at once."""

    def wake(self) -> None:
        """A goal's result arrived, or its hand-off point: tell the server (`on_result`)."""
        if self.on_result is not None:
            self.on_result()

    # MotionPort ---------------------------------------------------------------------------------------

    def ready(self) -> tuple[bool, str]:
        """Lease held, action server up, joint states fresh."""
        why = []
        if not self.lease_held():
            keeper = self.keeper
            why.append(f"arm lease: {keeper.problem if keeper else 'not requested (no run active)'}")
        return self._motion_ready(why)

    def stack_ready(self) -> tuple[bool, str]:
        """What a run needs besides the lease: lease service and action server up, joint states fresh."""
        why = []
        if not self.lease_client.service_is_ready():
            why.append(f"no {self.lease_client.service_name} service")
        return self._motion_ready(why)

    def _motion_ready(self, why: list[str]) -> tuple[bool, str]:
        """`why` plus what is missing of the action server and the joint states; (ok, the reasons)."""
        if not self.action.server_is_ready():
            why.append(f"no {self.move_name} action server")
        age = self.joint_states.age()
        if age is None:
            why.append(f"no {self.joint_states_name} yet")
        elif age > self._max_age:
            why.append(f"{self.joint_states_name} {age:.1f} s old")
        return (not why, "; ".join(why))

    def lease_held(self) -> bool:
        """Whether the lease is ours now."""
        with self._lock:
            return self.keeper is not None and self.keeper.held(self.clock())

    def lease_gone(self, token: str) -> str | None:
        """Why the lease that `token` was granted under is no longer ours, or None while it is.

        The generator refuses goals that carry it: the lease was refused, or it lapsed and was granted
        anew with another token (this process stalled past the heartbeat timeout).
        """
        with self._lock:
            keeper = self.keeper
            if keeper is None or not token or keeper.token == token:
                return None
            return f"the arm lease it was sent under is gone ({keeper.loss or keeper.problem})"

    def lease_token(self) -> str:
        """The current run's lease token ("" between runs or before the grant); goals carry it."""
        with self._lock:
            return self.keeper.token if self.keeper is not None else ""

    def send(self, request: MotionRequest) -> RosMotionHandle:
        """Start a goal."""
        self._last_handle = RosMotionHandle(self, request)
        return self._last_handle

    def contact_sensing(self) -> bool | None:
        """Whether the joint states carry the five joints' efforts: the first one heard decides, for good.

        None before any that names the five joints (another device's state cannot decide it). A joint
        whose effort is NaN (its drive reports none) counts as without.
        """
        if self._efforts is None:
            state = self.joint_states.latest()
            if state is not None and set(JOINT_NAMES) <= state.sample.positions.keys():
                self._efforts = set(JOINT_NAMES) <= state.sample.efforts.keys()
        return self._efforts

    # Lease --------------------------------------------------------------------------------------------

    def acquire_lease(self) -> None:
        """A run starts: keep the lease from now on (ACQUIRE now, then heartbeats on the lease timer)."""
        with self._lock:
            if self.keeper is None:
                self.keeper = LeaseKeeper(self.client_id, self.lease_timeout)
        if self._timer.is_canceled():
            self._timer.reset()
        self._on_lease_timer()

    def release_lease(self) -> Future | None:
        """A run ended: stop keeping the lease and give it back.

        Returns a future that is done once the generator answered the RELEASE (or the lease turned out
        not to be ours), or None when there was nothing to give back (no keeper, never granted) or no
        lease service. With an ACQUIRE in flight (a re-acquire after a lost lease) its answer decides:
        granted, the lease is released with the new token then; refused, there is nothing to release.
        """
        with self._lock:
            keeper, self.keeper = self.keeper, None
            if keeper is None:
                return None
            acquiring = keeper.in_flight is LeaseOp.ACQUIRE
            held = keeper.stop()
            if acquiring:
                done: Future = Future()
                self._pending_release = (keeper, done)
                return done
        if not (held and self.lease_client.service_is_ready()):
            return None
        return self._send_release(keeper.token)

    def _send_release(self, token: str) -> Future:
        request = ArmLease.Request(operation=int(LeaseOp.RELEASE), client_id=self.client_id, token=token)
        future = self.lease_client.call_async(request)
        future.add_done_callback(self._on_release_reply)
        return future

    def _release_after_acquire(self, keeper: LeaseKeeper, op: LeaseOp, granted: bool, token: str) -> None:
        """The answer to the ACQUIRE a stopped keeper had in flight: release what it got, if anything."""
        with self._lock:
            pending = self._pending_release
            if pending is None or pending[0] is not keeper or op is not LeaseOp.ACQUIRE:
                return
            self._pending_release = None
        done = pending[1]
        if not granted or not self.lease_client.service_is_ready():
            done.set_result(None)
            return
        self.node.get_logger().info("arm lease granted after the run ended: releasing it")
        self._send_release(token).add_done_callback(lambda _f: done.set_result(None))

    def _on_lease_timer(self) -> None:
        with self._lock:
            keeper = self.keeper
            if keeper is None:
                self._timer.cancel()  # no run: nothing to keep until `acquire_lease`
                return
            op = keeper.next_request(self.clock())
            if op is None:
                return
            request = keeper.request_id
            if not self.lease_client.service_is_ready():
                keeper.on_error(op, f"no {self.lease_client.service_name} service", request)
                return
        # The reply goes to the keeper and the request that asked: a late answer never passes for the
        # answer to a later request, nor reaches the next run's keeper.
        self._call_lease(op, keeper).add_done_callback(
            lambda future, op=op, keeper=keeper, request=request: self._on_lease_reply(
                keeper, op, future, request
            )
        )

    def _call_lease(self, op: LeaseOp, keeper: LeaseKeeper) -> Future:
        request = ArmLease.Request(
            operation=int(op), client_id=self.client_id, timeout=float(keeper.timeout), token=keeper.token
        )
        return self.lease_client.call_async(request)

    def _on_lease_reply(self, keeper: LeaseKeeper, op: LeaseOp, future: Future, request: int) -> None:
        logger = self.node.get_logger()
        if future.exception() is not None or future.result() is None:
            with self._lock:
                keeper.on_error(op, str(future.exception()), request)
            self._release_after_acquire(keeper, op, False, "")
            return
        res = future.result()
        if keeper is not self.keeper:  # the run ended meanwhile: its keeper is gone
            self._release_after_acquire(keeper, op, bool(res.success), res.token)
            return
        with self._lock:
            line = keeper.on_reply(op, bool(res.success), res.message, res.holder, res.token, request)
        if line and res.success and not line.startswith(LAPSED):
            logger.info(line)
        elif line:
            logger.warning(line)
        elif not res.success:
            logger.warning(f"arm lease: {keeper.problem}", throttle_duration_sec=LOG_THROTTLE_S)

    def _on_release_reply(self, future: Future) -> None:
        if self._stopping:  # `shutdown` says it (this task may or may not run after its spin)
            return
        if future.exception() is not None or future.result() is None:
            self.node.get_logger().warning(f"arm lease: RELEASE failed: {future.exception()}")
            return
        self._report_release(future.result())

    def _report_release(self, res: ArmLease.Response) -> None:
        if res.success:
            self.node.get_logger().info(f"arm lease released: {res.message}")
        else:
            why = f"{res.message} (holder {res.holder!r})"
            self.node.get_logger().warning(f"arm lease: RELEASE refused: {why}")

    def shutdown(self) -> None:
        """Stop the lease timer, cancel the last goal and give the lease back, its answer awaited (bounded).

        The executor has stopped, so the RELEASE's answer is spun for here, at most `RELEASE_WAIT_S`; a
        RELEASE not answered within half of it is sent once more (seen once in a suite run: a RELEASE
        sent in the stop never reached the generator, which dropped the lease on expiry a second later).
        One log line says whether the generator confirmed it. If it never arrives (the process is killed,
        the generator is gone), the generator drops the lease after its timeout and stops the arm anyway.
        """
        self._timer.cancel()
        self._stopping = True
        if self._last_handle is not None:
            self._last_handle.settle_cancel(timeout=1.0)
        with self._lock:
            token = self.keeper.token if self.keeper is not None else ""
        release = self.release_lease()
        if release is None:
            return
        half = RELEASE_WAIT_S / 2.0
        rclpy.spin_until_future_complete(self.node, release, timeout_sec=half)
        if not release.done() and token:
            self.node.get_logger().warning(
                f"arm lease: no answer to the RELEASE within {half:.2f} s: sending it again"
            )
            release = self._send_release(token)
            rclpy.spin_until_future_complete(self.node, release, timeout_sec=half)
        if not release.done():
            self.node.get_logger().warning(
                f"arm lease: no answer to the RELEASE within {RELEASE_WAIT_S:.1f} s of the stop: the "
                "generator drops the lease when its heartbeats stop"
            )
        elif release.exception() is None and isinstance(release.result(), ArmLease.Response):
            # Said here: a future's done-callback is a task of an executor that no longer spins.
            self._report_release(release.result())
