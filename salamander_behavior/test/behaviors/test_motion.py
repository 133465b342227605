"""MoveTo as a leaf (behaviors/motion.py): IK early-fail reasons, preemption, the offset cap, hand-off."""

from __future__ import annotations

import math

import py_trees
import pytest
from py_trees.common import Status

from salamander_behavior.active_run import ActiveRun, RunEnd
from salamander_behavior.behaviors.base import Ports
from salamander_behavior.behaviors.motion import FixedTarget, MoveTo, OffsetTarget
from salamander_behavior.mock.ports import FakeClock, FakeGripper, FakeMotion, ListLogger, Rig, Script
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import load_jobs
from salamander_behavior.ports import CartesianTarget, MotionPath, MotionPhase, MotionRequest
from salamander_behavior.report import RunReport
from salamander_behavior.tree import ROW_MARGIN, carry_handoff, lift_handoff
from salamander_control.kinematics import IkStatus
from salamander_testing import REPO


def one_leaf(leaf, motion=None, settings=None):
    motion = motion or FakeMotion()
    clock = FakeClock()
    log = ListLogger()
    ports = Ports(
        motion,
        FakeGripper(motion, {}, clock),
        clock,
        lambda: settings or BehaviorSettings(),
        log,
        RunReport(),
    )
    leaf.setup(ports=ports)
    return leaf, motion, clock, log


def test_an_ik_early_fail_is_reported_with_its_reason() -> None:
    script = Script(polls=1, succeed=False, status=IkStatus.COUPLED_LIMIT, message="early fail at 40%")
    target = CartesianTarget(0.3, 0.0, 0.0)
    leaf, motion, clock, log = one_leaf(
        MoveTo("m", FixedTarget(target), MotionPath.LINEAR, "release_speed"), FakeMotion({"m": script})
    )
    statuses = [leaf.tick_once() or leaf.status for _ in range(2)]
    assert statuses == [Status.RUNNING, Status.FAILURE]
    assert leaf.feedback_message == "IK early-fail coupled_limit: early fail at 40%"
    assert ("error", "m: IK early-fail coupled_limit: early fail at 40%") in log.lines
    assert motion.handles[0].request.speed_scale == 0.5 and motion.handles[0].request.target == target


def test_a_preempted_move_cancels_its_goal() -> None:
    leaf, motion, _, _ = one_leaf(
        MoveTo("m", FixedTarget(CartesianTarget(0.3, 0.0, 0.0)), MotionPath.JOINT, "transit_speed"),
        FakeMotion(default=Script(polls=100)),
    )
    leaf.tick_once()
    leaf.tick_once()
    assert leaf.status is Status.RUNNING and "joint move" in leaf.feedback_message
    leaf.stop(Status.INVALID)
    assert motion.handles[0].cancelled and leaf.feedback_message == "stopped: goal cancelled"


def test_an_offset_beyond_thirty_mm_is_refused_before_any_goal() -> None:
    base = CartesianTarget(0.3, -0.18, -0.05)
    writer = py_trees.blackboard.Client(name="test")
    writer.register_key(key="/place_offset/can_x", access=py_trees.common.Access.WRITE)
    writer.set("/place_offset/can_x", (0.025, 0.025))
    leaf, motion, _, _ = one_leaf(
        MoveTo("m", OffsetTarget(base, "can_x"), MotionPath.LINEAR, "release_speed")
    )
    leaf.tick_once()
    assert leaf.status is Status.FAILURE and "not within 30 mm" in leaf.feedback_message
    assert motion.handles == []
    writer.set("/place_offset/can_x", (0.02, 0.0))
    leaf.tick_once()
    assert motion.handles[0].request.target == base.shifted(0.02, 0.0)


# Hand-off (base.HandOff): the lift bends into the carry, the carry into the fast leg to the rim band.
JOBS = load_jobs(REPO / "config" / "cell.yaml")
SLOW = Script(polls=20)


def handle(rig: Rig, label: str):
    return next(h for h in rig.motion.handles if h.request.label == label)


def test_the_lift_and_the_carry_hand_on_while_their_goals_still_run() -> None:
    rig = Rig(JOBS[:1], BehaviorSettings(blend_m=0.1), default=SLOW)  # the fake's goals are few polls long
    rig.run(until=lambda: "carry can_0" in rig.motion.labels)
    lift = handle(rig, "lift can_0")
    assert lift.poll().phase is MotionPhase.ACTIVE and not lift.cancelled
    rig.run(until=lambda: "over the rim can_0: to the rim" in rig.motion.labels)
    carry = handle(rig, "carry can_0")
    assert carry.poll().phase is MotionPhase.ACTIVE and not carry.cancelled
    assert rig.run() == "SUCCESS" and rig.motion.cancels == 0


def test_a_move_that_does_not_blend_starts_only_once_the_handed_on_goal_ended() -> None:
    rig = Rig(JOBS[:1], default=SLOW)
    rig.motion.efforts = False  # unguarded: the place_release descent follows the carry directly
    rig.run(until=lambda: "place_release" in rig.motion.labels)
    assert handle(rig, "carry can_0").poll().phase is MotionPhase.SUCCEEDED
    assert rig.run() == "SUCCESS"


def test_a_blend_the_node_refuses_is_sent_again_from_rest() -> None:
    refused = Script(polls=1, succeed=False, message="early fail, no joint target sent: along the blend")
    rig = Rig(JOBS[:1], default=SLOW, scripts={"carry can_0": [refused, SLOW]})
    assert rig.run() == "SUCCESS"
    carries = [h for h in rig.motion.handles if h.request.label == "carry can_0"]
    assert len(carries) == 2 and "no blend out of the running move" in rig.log.text()
    assert rig.motion.labels.index("carry can_0") < rig.motion.labels.index("over the rim can_0: to the rim")


def test_stopping_the_move_that_took_over_cancels_the_handed_on_goal_too() -> None:
    rig = Rig(JOBS[:1], default=SLOW)
    rig.run(until=lambda: "carry can_0" in rig.motion.labels)
    rig.root.stop(Status.INVALID)  # the run cancelled (a guard or a dropped can stops the leaf the same way)
    assert handle(rig, "lift can_0").cancelled and handle(rig, "carry can_0").cancelled


def test_the_lift_hands_on_only_above_the_row_and_the_carry_not_for_the_operator() -> None:
    job = JOBS[0]
    length = job.above.z - job.contact.z
    assert job.row_clear_z is not None
    room = job.above.z - job.row_clear_z - ROW_MARGIN
    at = lift_handoff(job)
    assert at is not None
    assert (1.0 - at(BehaviorSettings(blend_m=0.1))) * length == pytest.approx(room)  # capped by the row
    assert (1.0 - at(BehaviorSettings(blend_m=0.01))) * length == pytest.approx(0.01)
    assert at(BehaviorSettings(blend_m=0.0)) == math.inf
    carry = carry_handoff(job)
    assert carry(BehaviorSettings(manual_place=True)) == math.inf
    assert carry(BehaviorSettings(blend_m=0.0)) == math.inf
    assert carry(BehaviorSettings()) < 1.0


def test_the_rise_hands_on_to_the_next_cans_joint_path_but_the_last_rise_ends_at_rest() -> None:
    rig = Rig(JOBS[:2], BehaviorSettings(blend_m=0.1), default=SLOW)
    rig.run(until=lambda: "above can_1" in rig.motion.labels)
    rise = rig.motion.handles[rig.motion.labels.index("rise")]
    assert rise.poll().phase is MotionPhase.ACTIVE and not rise.cancelled
    assert rig.run() == "SUCCESS" and rig.motion.cancels == 0
    assert rig.leaf("rise").handoff is not None
    last = [b for b in rig.root.iterate() if b.name == "rise"][-1]
    assert last.handoff is None  # nothing follows it: the run ends with the arm at rest


def test_the_runs_end_cancels_a_goal_left_handed_on() -> None:
    rig = Rig(JOBS[:1], default=SLOW)
    run = ActiveRun(("can_0",), rig.root, rig.report, None, rig.ports.handoff)
    left = rig.motion.send(MotionRequest(JOBS[0].above, MotionPath.LINEAR, 0.3, "rise"))
    rig.ports.handoff.put(left)  # e.g. a rise handed on, then a pad check waits for the operator
    run.cancel_requested = True
    assert run.tick() is RunEnd.CANCELLED  # no motion leaf runs: only the run's end can stop it
    assert left.cancelled and rig.ports.handoff.live() is None
