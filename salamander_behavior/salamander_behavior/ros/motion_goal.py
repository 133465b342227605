"""`RosMotionHandle`: one MoveCartesian goal of the tree, polled by its leaf each tick (`ports.MotionHandle`).

- Its life: the send (under a goal id of the handle's making), the answer, feedback (progress and the
  measured TCP's distance remaining; a feedback inside the request's hand-off distance wakes the tree at
  once), the result, the cancel, and retargets (RetargetCartesian, one call in flight). `poll` never
  waits: the futures are completed by the node's executor between ticks.
- A rejected goal is sent again for `REJECT_RETRY_S` (the Cartesian node's transient "no joint state yet").
- A goal whose feedback comes before its answer (overtaken, or lost as this process stood) is followed by
  its goal id; one not answered at all is asked after by it (GetResult) and sent again only if the
  server does not know it (`ANSWER_LOSS_S`, `ANSWER_WAIT_S`). Sent again blind, a goal that had run would
  run twice: a guarded descent that met the rim would press on it.
- An accepted goal whose server falls silent (`FEEDBACK_LOSS_S`), or whose lease is gone, fails the leaf;
  a failed result without a contact under a lease that is gone names the lease first. A failure for the
  lease, or for a server lost or refusing, says so (`MotionOutcome.lease_lost`, `server_fault`): the tree
  stops the run on it rather than skip a can (behaviors/flow.py).

`ArmMotionCore` (arm_motion_client.py) makes these handles and holds what they share: the action client,
the lease, the clock. Design history: docs/design/behavior_server.md, "A goal's answer lost in the
stall"; docs/design/respawn_and_stop.md.
"""

from __future__ import annotations

import math
import uuid
from typing import Any, Protocol

import rclpy
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import Point
from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.client import Client
from rclpy.node import Node
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from salamander_behavior.ports import (
    CartesianTarget,
    Clock,
    Contact,
    MotionOutcome,
    MotionPhase,
    MotionRequest,
    RetargetReply,
)
from salamander_control import names
from salamander_control.cartesian.goal_common import EARLY_FAIL
from salamander_control.ros.conversions import INVALID_REQUEST
from salamander_control.ros.log import LOG_THROTTLE_S
from salamander_msgs.action import MoveCartesian
from salamander_msgs.srv import RetargetCartesian

REJECT_RETRY_S = 5.0
"""s; a goal the Cartesian node rejects is sent again for this long before the leaf fails. The tree
only sends well-formed goals, so a rejection is the node's transient "no joint state yet" (seen at
start-up under full CPU load: the node's first /joint_states came after the tree's)."""
REJECT_RETRY_PERIOD = 0.25
"""s between two sends of a rejected goal."""
ANSWER_LOSS_S = 2.5
"""s; a goal the Cartesian node has not answered (accepted or rejected) this long after it was sent is
asked after by its goal id (GetResult): its own result if it ran, sent again if the server does not know
it or does not answer that either within as long (within `ANSWER_WAIT_S` of the first send; then the
leaf fails). Its answer takes at most the node's 1 s lease check; a goal sent while a respawned node's
action server was still being discovered was never answered, and the leaf waited the whole 30 s
`motion_timeout_s`; a goal whose answer was lost while this process stood had run (docs/design/
behavior_server.md, "A goal's answer lost in the stall")."""
ANSWER_WAIT_S = 15.0
"""s from a goal's first send in which an unanswered goal is sent again. It covers a crashed Cartesian
node's respawn (the runner's 2 s) and the new server's discovery: once, the tree's client heard the
respawned server only ~9 s later, and with the 5 s of `REJECT_RETRY_S` the first can was skipped
(docs/design/respawn_and_stop.md). The arm stands while it waits: the previous goal has ended."""
NO_ANSWER = f"no answer from {names.CARTESIAN_MOTION_NODE} to the goal within {ANSWER_LOSS_S:.1f} s"
"""How the line of a goal whose answer did not come begins."""
FEEDBACK_LOSS_S = 1.5
"""s; an accepted goal whose server sends no feedback for this long (it sends 10 per second while the
goal runs) has lost its server (killed, hung, gone from the graph): the leaf fails instead of waiting
for a result that will not come (it once waited the whole 30 s `motion_timeout_s`)."""


class GoalSender(Protocol):
    """What a handle needs of the one that sends it (`ArmMotionCore`)."""

    node: Node
    action: ActionClient
    retarget_client: Client
    client_id: str
    move_name: str
    clock: Clock

    def lease_token(self) -> str:
        """The current lease's token, which the goal carries."""
        ...

    def lease_gone(self, token: str) -> str | None:
        """Why the lease of `token` is gone; None while it is held."""
        ...

    def wake(self) -> None:
        """Tick the tree now (a result, or the hand-off point, came)."""
        ...


def _point(target: CartesianTarget) -> Point:
    return Point(x=target.x, y=target.y, z=target.z)


class RosMotionHandle:
    """One MoveCartesian goal, polled (see `ports.MotionHandle`)."""

    def __init__(self, core: GoalSender, request: MotionRequest) -> None:
        self.request = request
        self._core = core
        self._goal_handle: Any = None
        self._result_future: Future | None = None
        self._final: MotionOutcome | None = None
        self._cancel = False
        self._progress = 0.0
        self._remaining = math.nan  # the measured TCP's distance to the target, from the feedback
        self._retarget_future: Future | None = None
        self._retarget_target: CartesianTarget | None = None
        self._reply: RetargetReply | None = None
        self._send_future: Future | None = None
        self._first_send = core.clock()
        self._sent_at = core.clock()  # of the latest send
        self._resend_at: float | None = None  # clock time to send a rejected goal again
        self._heard_at = core.clock()  # clock time of the acceptance or of the last feedback
        self._near = False  # a feedback at or inside the request's hand-off distance arrived (woke)
        self._token = ""  # the lease token of the latest send
        self._goal_id = UUID()  # the latest send's goal id
        self._running_id = b""  # the goal id of the latest feedback; b"" while none came
        self._asking = False  # the goal's answer is overdue: its result was asked for by its id
        self._followed = False  # the latest send is followed by its feedback's goal id, its answer not in
        if not core.action.server_is_ready():
            self._final = MotionOutcome(
                MotionPhase.FAILED, 0, f"no {core.move_name} action server", server_fault=True
            )
            return
        self._send()

    def _send(self) -> None:
        target = self.request.target
        self._token = self._core.lease_token()
        goal = MoveCartesian.Goal(
            tcp=_point(target),
            tool_pitch=target.tool_pitch,
            tool_yaw=target.tool_yaw,
            path=self.request.path.value,
            speed_scale=self.request.speed_scale,
            client_id=self._core.client_id,
            lease_token=self._token,
            branch=self.request.branch,
            guard_force=self.request.guard_force,
            handoff_distance=self.request.handoff,
        )
        if self.request.band is not None:
            band = self.request.band
            goal.band_speed_scale, goal.band_start, goal.band_end = band.speed_scale, band.start, band.end
        self._sent_at = self._core.clock()
        self._followed = False
        self._goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        self._send_future = self._core.action.send_goal_async(
            goal, feedback_callback=self._on_feedback, goal_uuid=self._goal_id
        )

    def _by_id(self) -> ClientGoalHandle:
        """A handle to the latest send by its goal id, for a goal whose answer was lost."""
        answer = MoveCartesian.Impl.SendGoalService.Response(accepted=True)
        return ClientGoalHandle(self._core.action, self._goal_id, answer)

    def _accept(self, handle: ClientGoalHandle) -> None:
        self._goal_handle = handle
        self._heard_at = self._core.clock()  # accepted: the server is alive now
        self._result_future = handle.get_result_async()
        self._result_future.add_done_callback(lambda _future: self._core.wake())
        if self._cancel:
            handle.cancel_goal_async()

    def _on_feedback(self, message: Any) -> None:
        # Plain assignments, each atomic: the leaf reads them on its tick.
        self._progress = float(message.feedback.progress)
        self._remaining = float(message.feedback.distance_remaining)
        self._heard_at = self._core.clock()
        self._running_id = bytes(message.goal_id.uuid)  # the goal ran (an early fail sends no feedback)
        if not self._near and 0.0 < self.request.handoff and self._remaining <= self.request.handoff:
            self._near = True
            self._core.wake()  # the leaf hands on now: tick at once, not at the next tick

    def poll(self) -> MotionOutcome:
        """Acceptance, then the result; never waits."""
        if self._final is not None:
            return self._final
        if self._resend_at is not None:
            if self._cancel:
                self._final = MotionOutcome(MotionPhase.FAILED, 0, "cancelled before the goal was accepted")
                return self._final
            if self._core.clock() < self._resend_at:
                return MotionOutcome(MotionPhase.PENDING)
            self._resend_at = None
            self._send()
        if self._goal_handle is None:
            waiting = self._poll_answer()
            if waiting is not None:
                return waiting
        assert self._result_future is not None
        if self._followed:
            self._say_if_lost()
        if not self._result_future.done():
            if self._asking:
                return self._poll_asked()
            gone = self._core.lease_gone(self._token)
            if gone is not None:  # the generator refuses the goal's stream: it would end stalled, later
                self._goal_handle.cancel_goal_async()
                self._final = MotionOutcome(MotionPhase.FAILED, 0, gone, lease_lost=True)
                return self._final
            silent = self._core.clock() - self._heard_at
            if silent <= FEEDBACK_LOSS_S:
                return MotionOutcome(MotionPhase.ACTIVE, progress=self._progress, remaining=self._remaining)
            self._goal_handle.cancel_goal_async()  # in case the server is alive but stuck
            self._final = MotionOutcome(
                MotionPhase.FAILED, 0,
                f"lost {names.CARTESIAN_MOTION_NODE}: no feedback for {silent:.1f} s on the running goal",
                server_fault=True,
            )
            return self._final
        return self._poll_result()

    def _poll_answer(self) -> MotionOutcome | None:
        """Before the goal's answer: None once it is accepted (or taken by its id), else the outcome now."""
        assert self._send_future is not None
        if self._send_future.done():
            handle = self._send_future.result() if self._send_future.exception() is None else None
            if handle is None or not handle.accepted:
                why = f"goal rejected by {names.CARTESIAN_MOTION_NODE} (its log says why)"
                now = self._core.clock()
                if not self._cancel and now - self._first_send < REJECT_RETRY_S:
                    self._core.node.get_logger().warning(
                        f"{why}; sending it again for up to {REJECT_RETRY_S:.0f} s",
                        throttle_duration_sec=LOG_THROTTLE_S,
                    )
                    self._resend_at = now + REJECT_RETRY_PERIOD
                    return MotionOutcome(MotionPhase.PENDING)
                # The tree sends only well-formed goals: what the node refuses for that long is the stack's
                # (no joint state, nothing following its targets, a lease token it cannot confirm).
                self._final = MotionOutcome(
                    MotionPhase.FAILED, 0, f"{why}, for {REJECT_RETRY_S:.0f} s", server_fault=not self._cancel
                )
                return self._final
            self._accept(handle)
            return None
        if self._follow_if_running():
            return None
        if self._core.clock() - self._sent_at <= ANSWER_LOSS_S:
            return MotionOutcome(MotionPhase.PENDING)
        # Not sent again blind: the goal may have run, and ended, while this process stood (its answer
        # lost in a stall). Sent again, a guarded descent that met the rim would start pressing on it,
        # its load taken for the held can's. The server says by the goal's id what became of it.
        if (failed := self._gave_up(NO_ANSWER)) is not None:
            return failed
        self._core.node.get_logger().warning(f"{NO_ANSWER}: asking it for the goal's result by the goal's id")
        self._asking = True
        self._accept(self._by_id())
        return MotionOutcome(MotionPhase.PENDING)

    def _follow_if_running(self) -> bool:
        """Whether feedback for the latest send came without its answer; if so, follow that goal by its id.

        Feedback may simply overtake the answer (another channel); or the answer was lost (this process was
        stopped as it came, and the server's writer gave up). Either way the goal runs: sent again, it would
        preempt itself; followed, it ends with its own result (or on its lease). Only an answer still
        missing `ANSWER_LOSS_S` after the send is called lost: `poll` asks `_say_if_lost` while followed.
        """
        if self._running_id != bytes(self._goal_id.uuid):
            return False
        if self._goal_handle is None:
            self._accept(self._by_id())
        self._asking = False
        self._followed = True
        return True

    def _say_if_lost(self) -> None:
        """Once, for a followed goal: a warning if its answer is overdue (lost, not merely overtaken)."""
        assert self._send_future is not None
        if self._send_future.done():
            self._followed = False  # it came after all: nothing to say
        elif self._core.clock() - self._sent_at > ANSWER_LOSS_S:
            self._followed = False
            self._core.node.get_logger().warning(
                f"the answer of {names.CARTESIAN_MOTION_NODE} to the goal was lost, but its feedback shows "
                "it running: following it"
            )

    def _poll_asked(self) -> MotionOutcome:
        """Waiting for the result asked for by the goal's id (no answer came to the goal)."""
        if self._follow_if_running():
            return self.poll()
        if self._core.clock() - self._heard_at <= ANSWER_LOSS_S:
            return MotionOutcome(MotionPhase.PENDING)
        # Nobody answers by the id either: a server not discovered yet (a respawned node), or gone.
        return self._send_again(f"{NO_ANSWER}, nor to a request for its result")

    def _gave_up(self, why: str) -> MotionOutcome | None:
        """The leaf's failure once the goal was cancelled or `ANSWER_WAIT_S` passed without an answer."""
        if self._cancel or self._core.clock() - self._first_send >= ANSWER_WAIT_S:
            self._final = MotionOutcome(
                MotionPhase.FAILED, 0, f"{why}, for {ANSWER_WAIT_S:.0f} s", server_fault=not self._cancel
            )
        return self._final

    def _send_again(self, why: str) -> MotionOutcome:
        if (failed := self._gave_up(why)) is not None:
            return failed
        self._core.node.get_logger().warning(f"{why}: sending it again")
        self._goal_handle, self._result_future, self._asking = None, None, False
        self._send()
        return MotionOutcome(MotionPhase.PENDING)

    def _poll_result(self) -> MotionOutcome:
        """The goal's end, from its result."""
        assert self._result_future is not None
        if self._result_future.exception() is not None:
            self._final = MotionOutcome(
                MotionPhase.FAILED, 0, f"no result: {self._result_future.exception()}", server_fault=True
            )
            return self._final
        wrapped = self._result_future.result()
        if self._asking:
            self._asking = False
            if wrapped.status == GoalStatus.STATUS_UNKNOWN:  # it never reached the server, or was refused
                return self._send_again(f"{names.CARTESIAN_MOTION_NODE} does not know the unanswered goal")
            self._core.node.get_logger().warning(
                f"the goal whose answer was lost had ended: {wrapped.result.message or wrapped.status}"
            )
        result = wrapped.result
        if wrapped.status == GoalStatus.STATUS_SUCCEEDED and result.success:
            self._final = MotionOutcome(MotionPhase.SUCCEEDED, 0, result.message, 1.0)
            return self._final
        why = result.message or f"goal ended with action status {wrapped.status}"
        # Early: the node's early-fail message and no feedback ever (it decides before the first cycle).
        early = not self._running_id and why.startswith(EARLY_FAIL)
        contact, gone = None, None
        if result.contact:
            tcp, force = result.contact_tcp, result.contact_force
            contact = Contact((tcp.x, tcp.y, tcp.z), (force.x, force.y, force.z))
        else:
            gone = self._core.lease_gone(self._token)
            if gone is not None:  # it ended because the generator stopped following it
                why = f"{gone}; the goal ended: {why}"
        self._final = MotionOutcome(
            MotionPhase.FAILED, int(result.status), why,
            early=early, contact=contact, lease_lost=gone is not None,
        )  # fmt: skip
        return self._final

    def cancel(self) -> None:
        """Request the cancel: now (by the goal id while it is not answered), and at its acceptance."""
        if self._final is not None or self._cancel:
            return
        self._cancel = True
        if self._goal_handle is not None:
            self._goal_handle.cancel_goal_async()
        elif self._send_future is not None:
            # Also by its id now: the leaf may never poll again (its answer may be lost, or come after
            # the run ended). A cancel that overtakes its goal is refused as unknown; the acceptance's
            # own cancel (poll) covers that one.
            self._by_id().cancel_goal_async()

    def settle_cancel(self, timeout: float) -> None:
        """On shutdown: a cancel that waits for the goal's acceptance waits for it (bounded), then goes out.

        Without this, a SIGTERM right after a goal was sent would leave that goal running: the cancel is
        deferred to the acceptance, which nobody processes once the executor has stopped.
        """
        future = self._send_future
        if not self._cancel or self._goal_handle is not None or future is None:
            return
        if not future.done():
            rclpy.spin_until_future_complete(self._core.node, future, timeout_sec=timeout)
        if future.done():
            self.poll()  # accepted: sends the cancel

    def retarget(self, target: CartesianTarget) -> bool:
        """Start a RetargetCartesian call; False while one is pending or the goal is not accepted yet."""
        if self._final is not None or self._goal_handle is None or self._asking or self.retarget_pending:
            return False
        client = self._core.retarget_client
        self._retarget_target = target
        if not client.service_is_ready():
            self._reply = RetargetReply(
                False, INVALID_REQUEST, f"no {client.service_name} service", target
            )
            return True
        request = RetargetCartesian.Request(
            tcp=_point(target),
            tool_pitch=target.tool_pitch,
            tool_yaw=target.tool_yaw,
            lease_token=self._core.lease_token(),
        )
        self._retarget_future = client.call_async(request)
        return True

    @property
    def retarget_pending(self) -> bool:
        """Whether a retarget call awaits its answer."""
        return self._retarget_future is not None and not self._retarget_future.done()

    def take_retarget_reply(self) -> RetargetReply | None:
        """The answer, once."""
        if self._reply is not None:
            reply, self._reply = self._reply, None
            return reply
        future, target = self._retarget_future, self._retarget_target
        if future is None or not future.done() or target is None:
            return None
        self._retarget_future = None
        if future.exception() is not None:
            return RetargetReply(
                False, INVALID_REQUEST, f"retarget call failed: {future.exception()}", target
            )
        res = future.result()
        return RetargetReply(bool(res.success), int(res.status), res.message, target)
