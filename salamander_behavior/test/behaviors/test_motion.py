"""MoveTo as a leaf (behaviors/motion.py): IK early-fail reasons, preemption, the placement offset cap."""

from __future__ import annotations

import py_trees
from py_trees.common import Status

from salamander_behavior.behaviors.base import Ports
from salamander_behavior.behaviors.motion import FixedTarget, MoveTo, OffsetTarget
from salamander_behavior.mock.ports import FakeClock, FakeGripper, FakeMotion, ListLogger, Script
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.ports import CartesianTarget, MotionPath
from salamander_behavior.report import RunReport
from salamander_control.kinematics import IkStatus


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
