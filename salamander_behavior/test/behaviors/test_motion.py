"""MoveTo as a leaf (behaviors/motion.py): IK early-fail reasons, preemption, the offset cap, hand-off."""

from __future__ import annotations

from dataclasses import replace

import py_trees
import pytest
from py_trees.common import Status

from salamander_behavior.active_run import ActiveRun, RunEnd
from salamander_behavior.behaviors.base import BOX_ESTIMATE_KEY, Ports
from salamander_behavior.behaviors.motion import (
    LOW_CARRY_LEAD,
    CarryTarget,
    FixedTarget,
    MoveTo,
    OffsetTarget,
)
from salamander_behavior.box_estimate import BoxEstimate, Evidence
from salamander_behavior.mock.ports import FakeClock, FakeGripper, FakeMotion, ListLogger, Rig, Script
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import LOW_CARRY_ABOVE_RIM, load_jobs
from salamander_behavior.ports import CartesianTarget, MotionOutcome, MotionPath, MotionPhase, MotionRequest
from salamander_behavior.report import RunReport
from salamander_behavior.tree import lift_handoff, rise_handoff
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


def test_an_ik_failure_on_the_way_is_not_called_an_early_fail() -> None:
    # The Cartesian node also fails a goal with an IK status after the arm moved ("... while moving; the
    # arm holds its last target"): the lines said "early-fail", nothing moved, when it stopped part-way.
    message = "q1_out_of_range at TCP (0.3000, 0.0000, 0.0000) m while moving; the arm holds its last target"
    script = Script(polls=3, succeed=False, status=IkStatus.Q1_OUT_OF_RANGE, message=message, early=False)
    leaf, motion, clock, log = one_leaf(
        MoveTo("m", FixedTarget(CartesianTarget(0.3, 0.0, 0.0)), MotionPath.LINEAR, "release_speed"),
        FakeMotion({"m": script}),
    )
    for _ in range(20):
        leaf.tick_once()
    assert leaf.status is Status.FAILURE
    assert leaf.feedback_message == f"IK failed on the way: q1_out_of_range: {message}"


def test_a_preempted_move_cancels_its_goal() -> None:
    leaf, motion, _, _ = one_leaf(
        MoveTo("m", FixedTarget(CartesianTarget(0.3, 0.0, 0.0)), MotionPath.JOINT, "transit_speed"),
        FakeMotion(default=Script(polls=100)),
    )
    leaf.tick_once()
    leaf.tick_once()
    assert leaf.status is Status.RUNNING and "joint move" in leaf.feedback_message
    polls = motion.handles[0].polls
    leaf.stop(Status.INVALID)
    assert motion.handles[0].cancelled and leaf.feedback_message == "stopped: goal cancelled"
    assert motion.handles[0].polls == polls  # not polled: a poll of an unanswered goal may send it again


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


JOBS = load_jobs(REPO / "config" / "cell.yaml")


def test_the_carry_ends_low_only_with_low_carry_on_the_tree_placing_and_the_band_below_it() -> None:
    job = JOBS[2]
    low = job.place_above.shifted(0.0, 0.0, job.rim_pass_z + LOW_CARRY_ABOVE_RIM - job.place_above.z)
    py_trees.blackboard.Blackboard.unset(BOX_ESTIMATE_KEY)  # none left by an earlier test on this worker
    writer = py_trees.blackboard.Client(name="test")
    writer.register_key(key="/place_offset/can_2", access=py_trees.common.Access.WRITE)
    writer.set("/place_offset/can_2", (0.002, -0.001, 0.0))
    target = CarryTarget(job, low)
    assert target(BehaviorSettings()) == low.shifted(0.002, -0.001)  # at the estimate's offset
    above = job.place_above.shifted(0.002, -0.001)
    assert target(BehaviorSettings(low_carry=False)) == above
    assert target(BehaviorSettings(manual_place=True)) == above  # ManualAdjust nudges at place_above
    known = BehaviorSettings(manual_place=True, manual_place_known_m=0.0012)
    assert target(known) == above  # no box estimate yet: the operator places it
    box = BoxEstimate(job.centre).with_evidence(Evidence("can_1", JOBS[1].planned_xy, (0.002, 0.0), "manual"))
    writer.register_key(key=BOX_ESTIMATE_KEY, access=py_trees.common.Access.WRITE)
    writer.set(BOX_ESTIMATE_KEY, box)
    assert target(known) == low.shifted(0.002, -0.001)  # known to ~0.9 mm: the tree places it, low
    assert target(replace(known, manual_place_known_m=0.0008)) == above  # not known well enough
    py_trees.blackboard.Blackboard.unset(BOX_ESTIMATE_KEY)
    lead = LOW_CARRY_ABOVE_RIM - LOW_CARRY_LEAD  # the highest band top that leaves LOW_CARRY_LEAD below it
    assert target(BehaviorSettings(guard_band_above_m=lead - 1e-4)) == low.shifted(0.002, -0.001)
    assert target(BehaviorSettings(guard_band_above_m=lead + 1e-4)) == above  # the band's top too close
    assert CarryTarget(job, None)(BehaviorSettings()) == above
    writer.set("/place_offset/can_2", (0.0, 0.0, 0.01))  # an upward dz lifts either end
    assert target(BehaviorSettings()).position == pytest.approx(low.shifted(0.0, 0.0, 0.01).position)


# Hand-off (base.HandOff): the rise after a release bends into the next can's joint path.
SLOW = Script(polls=20)
TWO = JOBS[:2]


def handle(rig: Rig, label: str):
    return next(h for h in rig.motion.handles if h.request.label == label)


def test_the_rise_hands_on_to_the_next_cans_joint_path_but_the_last_rise_ends_at_rest() -> None:
    rig = Rig(TWO, BehaviorSettings(blend_m=0.1), default=SLOW)  # the fake's goals are few polls long
    rig.run(until=lambda: "above can_1" in rig.motion.labels)
    rise = rig.motion.handles[rig.motion.labels.index("rise")]
    assert rise.poll().phase is MotionPhase.ACTIVE and not rise.cancelled
    assert rig.run() == "SUCCESS" and rig.motion.cancels == 0
    first, last = [b for b in rig.root.iterate() if b.name == "rise"]
    assert first.handoff is not None and last.handoff is None  # nothing follows the last: at rest


def test_the_lift_hands_on_to_the_carrys_joint_path_while_still_rising() -> None:
    rig = Rig(JOBS[:1], default=SLOW)
    rig.run(until=lambda: "carry can_0" in rig.motion.labels)
    lift, carry = handle(rig, "lift can_0"), handle(rig, "carry can_0")
    assert lift.poll().phase is MotionPhase.ACTIVE and not lift.cancelled  # the carry bends out of it
    assert carry.request.path is MotionPath.JOINT
    assert rig.run() == "SUCCESS" and rig.motion.cancels == 0


@pytest.mark.parametrize("early", [0.002, 0.0])
def test_the_vacuum_comes_on_before_the_descent_onto_the_can_has_ended(early: float) -> None:
    """`vacuum_early_m` before the can top (60 polls over 30 mm: 0.5 mm a poll) the descent hands on to
    "vacuum on"; the pad seals as it arrives, and the lift starts from rest once the descent has ended.
    0: the vacuum comes on after the descent, as a goal's end."""
    slow = {"descend to can_0": Script(polls=60)}
    rig = Rig(JOBS[:1], BehaviorSettings(vacuum_early_m=early), scripts=slow)
    rig.run(until=lambda: rig.gripper.commands == [True])
    descent = handle(rig, "descend to can_0")
    running = descent.polls <= descent.script.polls  # not ended yet (read without polling it)
    if early:
        assert running and rig.gripper.holding is None  # the pad is still on its way: not sealed yet
    else:
        assert not running and rig.gripper.holding == "can_0"
    assert descent.request.handoff == early
    rig.run(until=lambda: "lift can_0" in rig.motion.labels)
    done = [request.label for request, _ in rig.motion.finished]
    assert "descend to can_0" in done and rig.gripper.holding == "can_0"
    assert rig.run() == "SUCCESS" and rig.motion.cancels == 0


def test_a_move_that_does_not_blend_starts_only_once_the_handed_on_goal_ended() -> None:
    rig = Rig(JOBS[:1], default=SLOW)
    leaf = MoveTo("m", FixedTarget(JOBS[0].contact), MotionPath.LINEAR, "approach_speed")
    leaf.setup(ports=rig.ports)
    prior = rig.motion.send(MotionRequest(JOBS[0].above, MotionPath.LINEAR, 0.3, "rise"))
    rig.ports.handoff.put(prior)
    leaf.tick_once()
    assert "m" not in rig.motion.labels and leaf.feedback_message == "waiting for the move before to end"
    while prior.poll().phase is not MotionPhase.SUCCEEDED:
        leaf.tick_once()
    leaf.tick_once()
    assert rig.motion.labels[-1] == "m"


def test_a_blend_the_node_refuses_is_sent_again_from_rest() -> None:
    refused = Script(polls=1, succeed=False, message="early fail, no joint target sent: along the blend")
    rig = Rig(TWO, BehaviorSettings(blend_m=0.1), default=SLOW, scripts={"above can_1": [refused, SLOW]})
    assert rig.run() == "SUCCESS"
    assert rig.motion.labels.count("above can_1") == 2
    assert "no blend out of the running move" in rig.log.text()
    rise = rig.motion.handles[rig.motion.labels.index("rise")]
    second = [h for h in rig.motion.handles if h.request.label == "above can_1"][1]
    assert rise.poll().phase is MotionPhase.SUCCEEDED and second.poll().phase is MotionPhase.SUCCEEDED


def test_stopping_the_move_that_took_over_cancels_the_handed_on_goal_too() -> None:
    rig = Rig(TWO, BehaviorSettings(blend_m=0.1), default=SLOW)
    rig.run(until=lambda: "above can_1" in rig.motion.labels)
    rig.root.stop(Status.INVALID)  # the run cancelled (a guard or a dropped can stops the leaf the same way)
    rise = rig.motion.handles[rig.motion.labels.index("rise")]
    assert rise.cancelled and handle(rig, "above can_1").cancelled


def test_the_runs_end_cancels_a_goal_left_handed_on() -> None:
    rig = Rig(JOBS[:1], default=SLOW)
    run = ActiveRun(("can_0",), rig.root, rig.report, None, rig.ports.handoff)
    left = rig.motion.send(MotionRequest(JOBS[0].above, MotionPath.LINEAR, 0.3, "rise"))
    rig.ports.handoff.put(left)  # e.g. a rise handed on, then a pad check waits for the operator
    run.cancel_requested = True
    assert run.tick() is RunEnd.CANCELLED  # no motion leaf runs: only the run's end can stop it
    assert left.cancelled and rig.ports.handoff.live() is None


def test_the_rise_hands_on_blend_m_before_its_end_and_no_lower_than_its_depart() -> None:
    job = JOBS[0]
    room = job.place_above.z - job.depart.z
    assert room == pytest.approx(0.11)  # shipped cell: the empty pad 15 mm above the placed cans' tops
    at = rise_handoff(job)
    assert at(BehaviorSettings(blend_m=0.06)) == 0.06
    assert at(BehaviorSettings(blend_m=0.0)) == 0.0  # never
    assert at(BehaviorSettings(blend_m=0.2)) == pytest.approx(room)  # no lower than the depart
    assert at(BehaviorSettings()) == pytest.approx(room)  # the default hands on at the depart
    assert rise_handoff(replace(job, depart=None))(BehaviorSettings(blend_m=0.06)) == 0.0  # unknown: never
    below = replace(job, depart=replace(job.depart, z=job.place_release.z - 0.001))
    assert rise_handoff(below)(BehaviorSettings(blend_m=0.06)) == 0.0  # a depart below the release: never


def test_the_lift_hands_on_blend_m_before_its_end_and_once_its_can_clears_the_level_given() -> None:
    job = JOBS[2]
    tops = job.above.z - (job.lift_clear_z + 0.01)  # the default: 10 mm over the cans' tops and the rim
    assert tops == pytest.approx(0.025)
    assert lift_handoff(job)(BehaviorSettings()) == pytest.approx(tops)
    assert lift_handoff(job, job.rim_pass_z)(BehaviorSettings()) == pytest.approx(0.077)  # over the rim
    assert lift_handoff(job, job.rim_pass_z)(BehaviorSettings(blend_m=0.05)) == 0.05
    assert lift_handoff(job, job.rim_pass_z)(BehaviorSettings(blend_m=0.0)) == 0.0  # never
    assert lift_handoff(replace(job, lift_clear_z=None))(BehaviorSettings()) == 0.0  # not known: never


def test_a_hand_off_is_judged_on_the_measured_distance_not_the_commanded_progress() -> None:
    target = FixedTarget(JOBS[0].above)
    rise = MoveTo("m", target, MotionPath.LINEAR, "approach_speed", handoff=lambda s: 0.06)
    leaf, motion, _, _ = one_leaf(rise, FakeMotion(default=Script(polls=100)))
    leaf.tick_once()
    handle = motion.handles[0]
    assert handle.request.handoff == 0.06  # on the goal: the Cartesian node reports the moment at once
    ahead = MotionOutcome(MotionPhase.ACTIVE, progress=0.99, remaining=0.2)  # command ran on, the arm stood
    handle.poll = lambda: ahead
    leaf.tick_once()
    assert leaf.status is Status.RUNNING
    handle.poll = lambda: MotionOutcome(MotionPhase.ACTIVE, progress=0.5, remaining=0.05)
    leaf.tick_once()
    assert leaf.status is Status.SUCCESS and "handed on 50 mm before it" in leaf.feedback_message
