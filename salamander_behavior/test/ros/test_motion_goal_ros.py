"""`RosMotionHandle` (made by `ArmMotionCore`) over a real MoveCartesian action server.

The server is a stand-in in the test's own domain: one that rejects as many goals as a test asks, then
accepts and succeeds (at start-up under full CPU load the Cartesian node was measured rejecting the tree's
first goal, "no joint state yet", and the first can was skipped untouched); one that stays silent until
released (a hung or killed node); one that reports a contact. Answers are lost in the client the way its
executor drops an answer it no longer expects (a process stopped as the answer came).
"""

from __future__ import annotations

import pytest
from rclpy.action import ActionServer, CancelResponse, GoalResponse

from salamander_behavior.lease_keeper import LeaseKeeper
from salamander_behavior.ports import (
    CartesianTarget,
    MotionBand,
    MotionOutcome,
    MotionPath,
    MotionPhase,
    MotionRequest,
)
from salamander_behavior.ros.arm_motion_client import ArmMotionCore
from salamander_behavior.ros.motion_goal import (
    ANSWER_LOSS_S,
    ANSWER_WAIT_S,
    FEEDBACK_LOSS_S,
    REJECT_RETRY_PERIOD,
    REJECT_RETRY_S,
)
from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES
from salamander_msgs.action import MoveCartesian
from salamander_testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros

REQUEST = MotionRequest(CartesianTarget(0.3, 0.18, 0.085), MotionPath.LINEAR, 0.5, "above can_0")


class RejectingServer:
    """Rejects the first `rejections` goals, then accepts and succeeds at once."""

    def __init__(self, node, rejections: int) -> None:
        self.rejections = rejections
        self.received: list[MoveCartesian.Goal] = []
        self.server = ActionServer(
            node, MoveCartesian, names.MOVE_CARTESIAN, self._execute, goal_callback=self._on_goal
        )

    def _on_goal(self, goal: MoveCartesian.Goal) -> GoalResponse:
        self.received.append(goal)
        return GoalResponse.REJECT if len(self.received) <= self.rejections else GoalResponse.ACCEPT

    def _execute(self, handle) -> MoveCartesian.Result:
        handle.succeed()
        return MoveCartesian.Result(success=True, message="reached")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _core(make_node, ros_executor, rejections: int = 0, server_type=None):
    """A stand-in server (RejectingServer unless `server_type` is given), a fake clock and the client."""
    stand_in = make_node("cartesian_stand_in")
    server = server_type(stand_in) if server_type else RejectingServer(stand_in, rejections)
    clock = FakeClock()
    core = ArmMotionCore(make_node("tree"), "behavior_server", 1.0, clock=clock)
    assert spin_until(ros_executor, core.action.server_is_ready)
    return server, clock, core


def test_a_rejected_goal_is_sent_again_until_accepted(make_node, ros_executor) -> None:
    server, clock, core = _core(make_node, ros_executor, rejections=2)
    handle = core.send(REQUEST)
    outcomes = []

    def settled() -> bool:
        outcome = handle.poll()
        outcomes.append(outcome.phase)
        if outcome.phase is MotionPhase.PENDING:
            clock.now += REJECT_RETRY_PERIOD / 5  # time passes only between polls, as ticks do
        return outcome.phase is MotionPhase.SUCCEEDED

    assert spin_until(ros_executor, settled)
    assert len(server.received) == 3 and MotionPhase.FAILED not in outcomes
    assert all(g.tcp.x == 0.3 and g.client_id == "behavior_server" for g in server.received)  # the same goal


def test_a_goal_rejected_for_the_whole_retry_window_fails_with_the_reason(make_node, ros_executor) -> None:
    server, clock, core = _core(make_node, ros_executor, rejections=10**6)
    start = clock.now
    handle = core.send(REQUEST)

    def failed() -> bool:
        outcome = handle.poll()
        clock.now += REJECT_RETRY_PERIOD / 2
        return outcome.phase is MotionPhase.FAILED

    assert spin_until(ros_executor, failed)
    outcome = handle.poll()
    assert "goal rejected by" in outcome.message and f"for {REJECT_RETRY_S:.0f} s" in outcome.message
    assert outcome.server_fault  # a fault of the stack: the tree stops the run on it
    assert clock.now - start >= REJECT_RETRY_S
    assert 2 <= len(server.received) <= REJECT_RETRY_S / REJECT_RETRY_PERIOD + 1


def test_a_cancel_while_waiting_to_send_again_ends_the_goal_without_a_send(make_node, ros_executor) -> None:
    server, clock, core = _core(make_node, ros_executor, rejections=10**6)
    handle = core.send(REQUEST)
    assert spin_until(ros_executor, lambda: handle._send_future.done())  # noqa: SLF001 - the rejection is in
    assert handle.poll().phase is MotionPhase.PENDING  # rejected: waiting to send again (the clock stands)
    handle.cancel()
    clock.now += 10 * REJECT_RETRY_PERIOD
    outcome = handle.poll()
    assert outcome.phase is MotionPhase.FAILED and "cancelled" in outcome.message
    assert len(server.received) == 1


class SilentServer:
    """Accepts a goal (and its cancel), sends feedback when a test publishes it, and otherwise stays silent
    (a hung or killed Cartesian node) until the test releases it."""

    def __init__(self, node) -> None:
        from rclpy.task import Future

        self.release = Future()
        self.handles = []
        self.server = ActionServer(
            node, MoveCartesian, names.MOVE_CARTESIAN, self._execute,
            cancel_callback=lambda _request: CancelResponse.ACCEPT,
        )

    async def _execute(self, handle) -> MoveCartesian.Result:
        self.handles.append(handle)
        await self.release
        handle.abort()
        return MoveCartesian.Result(success=False, message="released by the test")


def _fed(ros_executor, server, handle, feedback) -> bool:
    """Publish `feedback` on the server's first goal until the handle's poll shows it (the client's
    feedback subscription may match the server's publisher late); False on the timeout."""

    def shown() -> bool:
        server.handles[0].publish_feedback(feedback)
        outcome = handle.poll()
        return outcome.progress == feedback.progress and outcome.remaining == feedback.distance_remaining

    return spin_until(ros_executor, shown)


def test_a_running_goal_whose_server_falls_silent_fails_within_the_feedback_bound(
    make_node, ros_executor
) -> None:
    server, clock, core = _core(make_node, ros_executor, server_type=SilentServer)
    handle = core.send(REQUEST)
    assert spin_until(ros_executor, lambda: handle.poll().phase is MotionPhase.ACTIVE and server.handles)
    for i in range(1, 4):  # a server that talks keeps the goal running, however long it takes
        clock.now += FEEDBACK_LOSS_S * 0.9
        assert _fed(ros_executor, server, handle, MoveCartesian.Feedback(progress=0.25 * i))
        assert handle.poll().phase is MotionPhase.ACTIVE
    clock.now += FEEDBACK_LOSS_S * 0.9
    assert handle.poll().phase is MotionPhase.ACTIVE
    clock.now += FEEDBACK_LOSS_S * 0.2  # silent for longer than the bound
    outcome = handle.poll()
    assert outcome.phase is MotionPhase.FAILED and "no feedback for" in outcome.message
    assert outcome.server_fault and not outcome.lease_lost  # a fault of the stack: the tree stops the run
    server.release.set_result(True)


def _answer_lost(core: ArmMotionCore) -> None:
    """The answer to the goal just sent never reaches the client, as when its process was stopped (SIGSTOP)
    past the server's writer's 1 s as the answer came: the client no longer knows the request, so its
    executor drops the answer ("Ignoring unexpected goal response")."""
    core.action._goal_sequence_number_to_goal_id.clear()


def _lost(make_node, ros_executor, request: MotionRequest = REQUEST, **server_kwargs):
    """A stand-in server (as `_core` makes it) and a goal sent to it, whose answer the client loses.

    Returns (server, fake clock, the goal's handle), once the server has the goal."""
    server, clock, core = _core(make_node, ros_executor, **server_kwargs)
    handle = core.send(request)
    _answer_lost(core)
    heard = server.handles if isinstance(server, SilentServer) else server.received
    assert spin_until(ros_executor, lambda: bool(heard))
    return server, clock, handle


def test_a_goal_whose_answer_was_lost_is_followed_by_its_feedback_not_sent_again(
    make_node, ros_executor
) -> None:
    """Sent again, the goal would preempt itself (and a frozen server's run once stopped on the refusal)."""
    server, _clock, handle = _lost(make_node, ros_executor, server_type=SilentServer)
    spin_until(ros_executor, lambda: False, timeout=0.2)  # the answer arrives, and is dropped
    assert handle.poll().phase is MotionPhase.PENDING
    assert _fed(ros_executor, server, handle, MoveCartesian.Feedback(progress=0.5))
    assert handle.poll().phase is MotionPhase.ACTIVE
    server.release.set_result(True)
    assert spin_until(ros_executor, lambda: handle.poll().phase is MotionPhase.FAILED)  # its true result
    assert handle.poll().message == "released by the test"
    assert len(server.handles) == 1  # never sent again


class _Warnings:
    """The node's logger, its warnings kept for the test."""

    def __init__(self, logger) -> None:
        self._logger, self.said = logger, []

    def warning(self, message: str, **kwargs) -> None:
        self.said.append(message)
        self._logger.warning(message, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._logger, name)


def test_a_goal_whose_feedback_overtakes_its_answer_is_followed_and_called_lost_only_once_overdue(
    make_node, ros_executor, monkeypatch
) -> None:
    """Feedback on its own topic may simply come before the answer: no warning until the answer is late."""
    server, clock, handle = _lost(make_node, ros_executor, server_type=SilentServer)
    warnings = _Warnings(handle._core.node.get_logger())
    monkeypatch.setattr(handle._core.node, "get_logger", lambda: warnings)

    assert _fed(ros_executor, server, handle, MoveCartesian.Feedback(progress=0.1))
    assert handle.poll().phase is MotionPhase.ACTIVE
    assert warnings.said == []  # followed at once, not yet called lost
    sent, step = clock.now, 0
    while clock.now - sent <= ANSWER_LOSS_S:  # still no answer, and the goal still talks
        clock.now += FEEDBACK_LOSS_S * 0.9
        step += 1
        assert _fed(ros_executor, server, handle, MoveCartesian.Feedback(progress=0.1 + 0.1 * step))
    assert handle.poll().phase is MotionPhase.ACTIVE
    assert warnings.said == [
        f"the answer of {names.CARTESIAN_MOTION_NODE} to the goal was lost, but its feedback shows it "
        "running: following it"
    ]  # once
    server.release.set_result(True)


def test_a_goal_whose_answer_was_lost_under_a_lease_that_lapsed_fails_on_the_lease_and_is_cancelled(
    make_node, ros_executor
) -> None:
    """The whole stall: the answer lost, the lease lapsed and granted anew with another token."""
    server, clock, core = _core(make_node, ros_executor, server_type=SilentServer)
    core.keeper = LeaseKeeper("behavior_server", 1.0)  # a lease as the generator granted it
    core.keeper.token = "old"
    handle = core.send(REQUEST)
    _answer_lost(core)
    assert spin_until(ros_executor, lambda: bool(server.handles))
    core.keeper.token, core.keeper.loss = "new", "it lapsed, no heartbeat confirmed for 1.63 s"

    def ended() -> bool:
        server.handles[0].publish_feedback(MoveCartesian.Feedback(progress=0.5))
        return handle.poll().phase is MotionPhase.FAILED

    assert spin_until(ros_executor, ended)
    assert handle.poll().message == (
        "the arm lease it was sent under is gone (it lapsed, no heartbeat confirmed for 1.63 s)"
    )
    assert handle.poll().lease_lost  # a fault of the stack: the tree stops the run on it
    assert spin_until(ros_executor, lambda: server.handles[0].is_cancel_requested)  # cancelled by its id
    server.release.set_result(True)


def test_a_failed_result_under_a_lease_that_is_gone_names_the_lease_first(make_node, ros_executor) -> None:
    server, _clock, core = _core(make_node, ros_executor, server_type=SilentServer)
    core.keeper = LeaseKeeper("behavior_server", 1.0)
    core.keeper.token = "old"
    handle = core.send(REQUEST)
    assert spin_until(ros_executor, lambda: handle.poll().phase is MotionPhase.ACTIVE and server.handles)
    server.release.set_result(True)  # the goal ends failed (the generator stopped following it) ...
    assert spin_until(ros_executor, lambda: handle._result_future.done())
    # ... and, before the tree polled it, the lease lapsed and was granted anew:
    core.keeper.token, core.keeper.loss = "new", "it lapsed, no heartbeat confirmed for 1.20 s"
    outcome = handle.poll()
    assert outcome.phase is MotionPhase.FAILED and outcome.lease_lost
    assert outcome.message == (
        "the arm lease it was sent under is gone (it lapsed, no heartbeat confirmed for 1.20 s); "
        "the goal ended: released by the test"
    )


def _overdue(ros_executor, clock: FakeClock, handle, phase: MotionPhase) -> MotionOutcome:
    """Past the answer's timeout: the handle asks by the goal's id, and the goal ends in `phase`."""
    assert handle.poll().phase is MotionPhase.PENDING
    clock.now += ANSWER_LOSS_S + 0.1
    assert handle.poll().phase is MotionPhase.PENDING  # asked, not sent again
    assert spin_until(ros_executor, lambda: handle.poll().phase is phase), handle.poll()
    return handle.poll()


def test_a_goal_whose_answer_was_lost_after_it_ended_ends_with_its_own_result_not_sent_again(
    make_node, ros_executor
) -> None:
    server, clock, handle = _lost(make_node, ros_executor)  # accepts, succeeds at once, no feedback
    assert _overdue(ros_executor, clock, handle, MotionPhase.SUCCEEDED).message == "reached"
    assert len(server.received) == 1


def test_a_guarded_goal_whose_answer_was_lost_comes_back_with_its_contact_not_sent_again(
    make_node, ros_executor
) -> None:
    """Sent again, it would start pressing on what it met, and take that load for the held can's."""
    from dataclasses import replace

    guarded = replace(REQUEST, guard_force=5.0, band=MotionBand(0.01, 0.059, 0.049))
    server, clock, handle = _lost(make_node, ros_executor, guarded, server_type=ContactServer)
    outcome = _overdue(ros_executor, clock, handle, MotionPhase.FAILED)
    assert outcome.contact is not None and outcome.contact.force_n == pytest.approx(6.2)
    assert len(server.received) == 1


def test_a_goal_the_server_does_not_know_is_sent_again(make_node, ros_executor) -> None:
    """Its answer lost, a goal the server refused (or never had) is unknown to it: that one goes again."""
    server, clock, handle = _lost(make_node, ros_executor, rejections=1)
    assert _overdue(ros_executor, clock, handle, MotionPhase.SUCCEEDED).message == "reached"
    assert len(server.received) == 2


def test_a_goal_cancelled_before_its_answer_is_cancelled_by_its_id_without_another_poll(
    make_node, ros_executor
) -> None:
    """A leaf stopped while its goal waits for the answer never polls again (the run stopped)."""
    server, _clock, handle = _lost(make_node, ros_executor, server_type=SilentServer)
    handle.cancel()
    assert spin_until(ros_executor, lambda: server.handles[0].is_cancel_requested)
    server.release.set_result(True)


def _goal_to_a_deaf_server(ros_context, make_node, ros_executor):
    """A stand-in server in the graph that never takes a request (its node not spun), and a goal sent to it.

    Returns (the deaf node, to destroy; the client's fake clock; the client; the goal's handle)."""
    from rclpy.node import Node

    deaf = Node("deaf_stand_in", context=ros_context)  # not on the executor: it never takes a request
    ActionServer(deaf, MoveCartesian, names.MOVE_CARTESIAN, lambda handle: MoveCartesian.Result())
    clock = FakeClock()
    core = ArmMotionCore(make_node("tree"), "behavior_server", 1.0, clock=clock)
    assert spin_until(ros_executor, core.action.server_is_ready)
    return deaf, clock, core, core.send(REQUEST)


def test_a_goal_never_answered_is_sent_again_then_fails_with_the_reason(
    ros_context, make_node, ros_executor
) -> None:
    """A server that is in the graph but never answers (a respawned node whose server was still being
    discovered when the goal went out). Before, the leaf waited the 30 s motion_timeout_s."""
    deaf, clock, _core, handle = _goal_to_a_deaf_server(ros_context, make_node, ros_executor)
    try:
        start = clock.now
        phases = []
        for _ in range(400):
            spin_until(ros_executor, lambda: False, timeout=0.005)
            outcome = handle.poll()
            phases.append(outcome.phase)
            if outcome.phase is not MotionPhase.PENDING:
                break
            clock.now += 0.1  # time passes only between polls, as ticks do
        assert outcome.phase is MotionPhase.FAILED, phases[-3:]
        assert f"no answer from {names.CARTESIAN_MOTION_NODE} to the goal within {ANSWER_LOSS_S:.1f} s" in (
            outcome.message
        )
        assert f"for {ANSWER_WAIT_S:.0f} s" in outcome.message
        assert ANSWER_WAIT_S <= clock.now - start <= ANSWER_WAIT_S + ANSWER_LOSS_S + 0.2  # not 30 s
    finally:
        deaf.destroy_node()


def test_a_goal_sent_while_the_server_respawns_is_answered_by_the_new_one(
    ros_context, make_node, ros_executor
) -> None:
    """The Cartesian node crashed at start-up: its server was in the graph but never answered, then it
    was gone, then a respawned one came, whose server the tree's client heard only ~9 s after the first
    goal (seen once: the leaf had given up at 5 s, and the run skipped can_0 untouched)."""
    deaf, clock, core, handle = _goal_to_a_deaf_server(ros_context, make_node, ros_executor)
    start, server, alive = clock.now, None, True
    try:
        outcome = handle.poll()
        while outcome.phase is MotionPhase.PENDING and clock.now - start < ANSWER_WAIT_S + 1.0:
            spin_until(ros_executor, lambda: False, timeout=0.005)
            if alive and clock.now - start >= 3.0:
                deaf.destroy_node()  # its process died; the respawn comes later
                alive = False
            if server is None and clock.now - start >= 9.0:
                server = RejectingServer(make_node("cartesian_respawned"), 0)
                assert spin_until(ros_executor, core.action.server_is_ready)  # heard before the next send
            clock.now += 0.1  # time passes only between polls, as ticks do
            outcome = handle.poll()
        assert spin_until(ros_executor, lambda: handle.poll().phase is MotionPhase.SUCCEEDED), handle.poll()
        assert server is not None and len(server.received) == 1
        assert clock.now - start < ANSWER_WAIT_S
    finally:
        if alive:
            deaf.destroy_node()


class ContactServer:
    """Records each goal; a guarded one stops at a contact (success false, status Ok, contact true)."""

    def __init__(self, node) -> None:
        self.received: list[MoveCartesian.Goal] = []
        self.server = ActionServer(node, MoveCartesian, names.MOVE_CARTESIAN, self._execute)

    def _execute(self, handle) -> MoveCartesian.Result:
        goal = handle.request
        self.received.append(goal)
        if goal.guard_force > 0.0:
            handle.abort()
            result = MoveCartesian.Result(success=False, message="contact: stopped at 6.2 N", contact=True)
            result.contact_tcp.x, result.contact_tcp.y, result.contact_tcp.z = 0.38, -0.18, -0.002
            result.contact_force.z = 6.2
            return result
        handle.succeed()
        return MoveCartesian.Result(success=True, message="reached")


def test_a_guarded_goal_carries_its_force_and_comes_back_with_the_contact(make_node, ros_executor) -> None:
    from dataclasses import replace

    from sensor_msgs.msg import JointState

    server, _clock, core = _core(make_node, ros_executor, server_type=ContactServer)
    plain = core.send(REQUEST)
    assert spin_until(ros_executor, lambda: plain.poll().done)
    assert plain.poll().phase is MotionPhase.SUCCEEDED and plain.poll().contact is None
    band = MotionBand(0.01, 0.059, 0.049)
    guarded = core.send(replace(REQUEST, label="through the rim", guard_force=5.0, band=band))
    assert spin_until(ros_executor, lambda: guarded.poll().done)
    outcome = guarded.poll()
    assert [g.guard_force for g in server.received] == [0.0, 5.0]
    sent = [(g.band_speed_scale, g.band_start, g.band_end) for g in server.received]
    assert sent == [(0.0, 0.0, 0.0), (0.01, 0.059, 0.049)]  # the band goes out with the goal
    assert outcome.phase is MotionPhase.FAILED and not outcome.early and outcome.status == 0
    assert outcome.contact is not None
    assert outcome.contact.tcp == pytest.approx((0.38, -0.18, -0.002))
    assert outcome.contact.force_n == pytest.approx(6.2)
    # Contact sensing: unknown before a joint state, then the first one decides for good.
    assert core.contact_sensing() is None
    core.joint_states.put_message(JointState(name=list(JOINT_NAMES), position=[0.0] * 5, effort=[0.4] * 5))
    assert core.contact_sensing() is True
    core.joint_states.put_message(JointState(name=list(JOINT_NAMES), position=[0.0] * 5))
    assert core.contact_sensing() is True


def test_a_result_wakes_the_server_without_another_poll(make_node, ros_executor) -> None:
    """`on_result` is called when the result arrives: the server ticks the tree then, not a tick later."""
    _server, _clock, core = _core(make_node, ros_executor)
    woken: list[bool] = []
    core.on_result = lambda: woken.append(True)
    handle = core.send(REQUEST)
    assert spin_until(ros_executor, lambda: handle.poll().phase is not MotionPhase.PENDING or bool(woken))
    assert spin_until(ros_executor, lambda: bool(woken))  # no poll in between: the callback alone
    assert handle.poll().phase is MotionPhase.SUCCEEDED


def test_a_feedback_at_the_requests_hand_off_distance_wakes_the_server_once(make_node, ros_executor) -> None:
    """The leaf hands on when the measured TCP is `handoff` from the target: the feedback that says so wakes
    the server at once (the Cartesian node sends it the cycle it happens: its `handoff_distance`)."""
    from dataclasses import replace

    server, _clock, core = _core(make_node, ros_executor, server_type=SilentServer)
    woken: list[bool] = []
    core.on_result = lambda: woken.append(True)
    handle = core.send(replace(REQUEST, label="lift can_0", handoff=0.025))
    assert spin_until(ros_executor, lambda: handle.poll().phase is MotionPhase.ACTIVE and server.handles)
    assert server.handles[0].request.handoff_distance == pytest.approx(0.025)  # on the goal
    for remaining, wakes in ((0.06, 0), (0.03, 0), (0.024, 1), (0.01, 1)):  # woken once, at 0.024
        assert _fed(ros_executor, server, handle, MoveCartesian.Feedback(distance_remaining=remaining))
        assert len(woken) == wakes, (remaining, woken)
    server.release.set_result(True)
    assert spin_until(ros_executor, lambda: handle.poll().done)
