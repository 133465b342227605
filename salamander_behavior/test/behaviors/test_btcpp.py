"""The BehaviorTree.CPP ports without ROS: a JointStateCache filled directly, ticked by hand."""

from __future__ import annotations

import math

import py_trees
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from salamander_behavior.behaviors.btcpp import (
    AreJointsWithinLimits,
    IsJointNearLimit,
    parse_joint_limits,
    safe_trajectory_execution,
)
from salamander_behavior.limits import JointStateCache
from salamander_behavior.mock.ports import FakeClock, StaysRunning
from salamander_control import names

LIMITS = "shoulder_pitch,-1.35,1.35;beam_pitch,0.0,1.309"


def tick(b: py_trees.behaviour.Behaviour) -> Status:
    b.tick_once()
    assert b.feedback_message, "every path sets a feedback message"
    return b.status


# Parsing -----------------------------------------------------------------------------------------------


def test_the_original_port_string_parses() -> None:
    bounds = parse_joint_limits(" shoulder_pitch, -1.35, 1.35 ; beam_pitch,0,1.309; ", 0.1)
    assert [(b.name, b.min, b.max) for b in bounds] == [
        ("shoulder_pitch", -1.35, 1.35),
        ("beam_pitch", 0.0, 1.309),
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "names no joint"),
        ("   ", "names no joint"),
        (";", "names no joint"),
        ("a,0,1;;b,0,1", "expected 3 fields"),
        ("a,0", "expected 3 fields .*, got 2"),
        ("a,0,1,2", "expected 3 fields .*, got 4"),
        (",0,1", "one word"),
        ("a b,0,1", "one word"),
        ("a,zero,1", "min 'zero' is not a number"),
        ("a,0,1rad", "max '1rad' is not a number"),
        ("a,nan,1", "min must be finite"),
        ("a,0,inf", "max must be finite"),
        ("a,1,0", "no position would be within limits"),
        ("a,0,0.2", "no position would be within limits"),  # 0 >= 0.2 - 2 * 0.1
        ("a,0,1;a,0,2", "names 'a' twice"),
    ],
)
def test_a_bad_joint_limits_string_fails_at_construction(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        AreJointsWithinLimits(joint_limits=text, margin=0.1)


@pytest.mark.parametrize("margin", [-0.1, math.nan, math.inf, "0.1"])
def test_a_bad_margin_fails_at_construction(margin) -> None:
    with pytest.raises(ValueError, match="margin"):
        AreJointsWithinLimits(joint_limits=LIMITS, margin=margin)
    with pytest.raises(ValueError, match="warning_margin"):
        IsJointNearLimit(joint_name="beam_pitch", min_limit=0.0, max_limit=1.3, warning_margin=margin)


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"joint_name": ""}, "joint_name"),
        ({"min_limit": math.nan}, "min_limit must be a finite"),
        ({"max_limit": math.inf}, "max_limit must be a finite"),
        ({"min_limit": 1.0, "max_limit": 1.2}, "every position of beam_pitch would be near"),
    ],
)
def test_bad_near_limit_arguments_fail_at_construction(kwargs, why: str) -> None:
    args = {"joint_name": "beam_pitch", "min_limit": 0.0, "max_limit": 1.309, **kwargs}
    with pytest.raises(ValueError, match=why):
        IsJointNearLimit(**args)


# AreJointsWithinLimits ------------------------------------------------------------------------------------


def test_within_limits_fails_on_no_empty_invalid_stale_or_incomplete_messages(
    cache: JointStateCache, clock: FakeClock
) -> None:
    unset = AreJointsWithinLimits(joint_limits=LIMITS)
    assert tick(unset) is Status.FAILURE and "not set up" in unset.feedback_message
    with pytest.raises(KeyError, match="didn't find 'node'"):
        unset.setup()

    b = AreJointsWithinLimits(joint_limits=LIMITS, margin=0.1, cache=cache)
    b.setup()
    assert tick(b) is Status.FAILURE
    assert b.feedback_message == f"not within limits: no joint state received on {names.JOINT_STATES} yet"

    assert cache.put(["shoulder_pitch", "beam_pitch"], [0.0, 0.6]) is None
    assert tick(b) is Status.SUCCESS
    assert b.feedback_message == "within limits: 2 joint(s) inside their margin 0.1 rad"

    clock.t += 0.01
    assert cache.put([], []) is not None  # empty message: refused by the cache ...
    assert tick(b) is Status.FAILURE  # ... and the condition fails on it (not on the older, valid one)
    assert "invalid joint state" in b.feedback_message and "names no joint" in b.feedback_message

    clock.t += 0.01
    assert cache.put(["shoulder_pitch", "beam_pitch"], [0.0, 0.6]) is None
    assert tick(b) is Status.SUCCESS  # a valid message after it: judged again

    clock.t += 0.01
    assert cache.put(["shoulder_pitch", "beam_pitch"], [math.nan, 0.6]) is not None  # invalid
    assert tick(b) is Status.FAILURE and "invalid joint state" in b.feedback_message
    clock.t += 0.01
    assert cache.put(["shoulder_pitch", "beam_pitch"], [0.0]) is not None  # lengths disagree
    assert tick(b) is Status.FAILURE and "invalid joint state" in b.feedback_message

    clock.t += 0.01
    assert cache.put(["shoulder_pitch"], [0.0]) is None  # valid, but beam_pitch is missing
    assert tick(b) is Status.FAILURE
    assert b.feedback_message == "not within limits: joint state lacks beam_pitch"

    assert cache.put(["shoulder_pitch", "beam_pitch", "base_yaw"], [0.0, 0.6, 3.0]) is None
    assert tick(b) is Status.SUCCESS  # joints not listed are not judged
    clock.t += 0.6
    assert tick(b) is Status.FAILURE and "stale: 0.60 s old" in b.feedback_message

    clock.t += 0.01
    assert cache.put(["shoulder_pitch", "beam_pitch"], [1.3, 0.6]) is None
    assert tick(b) is Status.FAILURE
    expected = "not within limits: shoulder_pitch = 1.300 rad outside [-1.250, 1.250]"
    assert b.feedback_message.startswith(expected)


@settings(max_examples=300, deadline=None)
@given(
    lo=st.floats(-3.0, 3.0),
    width=st.floats(0.0, 3.0),
    margin=st.floats(0.0, 0.5),
    pos=st.floats(-4.0, 7.0),
)
def test_the_success_set_is_exactly_the_interval(lo: float, width: float, margin: float, pos: float) -> None:
    hi = lo + 2 * margin + width
    if lo >= hi - 2 * margin:  # rounding made the interval empty: refused, as the parser says
        with pytest.raises(ValueError):
            AreJointsWithinLimits(joint_limits=f"j,{lo!r},{hi!r}", margin=margin)
        return
    cache = JointStateCache(clock=lambda: 0.0)
    b = AreJointsWithinLimits(joint_limits=f"j,{lo!r},{hi!r};k,-1,1", margin=margin, cache=cache)
    assert cache.put(["j", "k"], [pos, 0.0]) is None
    expected = lo + margin <= pos <= hi - margin
    assert (tick(b) is Status.SUCCESS) == expected
    assert cache.put(["j"], [pos]) is None  # k missing: never SUCCESS
    assert tick(b) is Status.FAILURE


# IsJointNearLimit -----------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(pos=st.floats(-2.0, 3.0), margin=st.floats(0.0, 0.5))
def test_near_is_exactly_the_two_warning_zones(pos: float, margin: float) -> None:
    cache = JointStateCache(clock=lambda: 0.0)
    b = IsJointNearLimit(
        joint_name="beam_pitch", min_limit=0.0, max_limit=1.309, warning_margin=margin, cache=cache
    )
    assert cache.put(["beam_pitch"], [pos]) is None
    near = pos <= 0.0 + margin or pos >= 1.309 - margin
    assert (tick(b) is Status.SUCCESS) == near
    assert b.feedback_message.startswith("near: " if near else "safe: ")


def test_near_limit_fails_when_the_joint_is_unknown_unless_told_to_count_it_as_near(
    cache: JointStateCache, clock: FakeClock
) -> None:
    original = IsJointNearLimit(joint_name="beam_pitch", min_limit=0.0, max_limit=1.309, cache=cache)
    safe = IsJointNearLimit(
        joint_name="beam_pitch", min_limit=0.0, max_limit=1.309, cache=cache, unknown_is_near=True
    )
    unset = IsJointNearLimit(joint_name="beam_pitch", min_limit=0.0, max_limit=1.309)
    assert tick(unset) is Status.FAILURE and "not set up" in unset.feedback_message

    def both() -> tuple[Status, Status]:
        return tick(original), tick(safe)

    assert both() == (Status.FAILURE, Status.SUCCESS)  # no message yet
    assert cache.put(["shoulder_pitch"], [0.0]) is None
    assert both() == (Status.FAILURE, Status.SUCCESS)  # joint missing
    assert original.feedback_message == "not judged near: joint state lacks beam_pitch"
    assert safe.feedback_message == "counted as near: joint state lacks beam_pitch"
    assert cache.put(["beam_pitch"], [0.6]) is None
    assert both() == (Status.FAILURE, Status.FAILURE)  # safe
    clock.t += 0.01
    assert cache.put(["beam_pitch"], [math.inf]) is not None
    assert both() == (Status.FAILURE, Status.SUCCESS)  # invalid newest message
    assert cache.put(["beam_pitch"], [1.2]) is None
    assert both() == (Status.SUCCESS, Status.SUCCESS)  # near the upper limit: 1.2 >= 1.159
    assert original.feedback_message == "near: beam_pitch = 1.200 rad >= 1.159 (max - margin)"
    clock.t += 1.0
    assert both() == (Status.FAILURE, Status.SUCCESS)  # stale


# SafeTrajectoryExecution ----------------------------------------------------------------------------------


def test_safe_trajectory_execution_has_the_original_shape_and_stops_the_motion_near_a_limit(
    cache: JointStateCache,
) -> None:
    motion = StaysRunning()
    root = safe_trajectory_execution(
        motion, joint_name="beam_pitch", min_limit=0.0, max_limit=1.309, warning_margin=0.15, cache=cache
    )
    assert isinstance(root, py_trees.composites.Sequence) and root.memory is False
    inverter, move = root.children
    assert isinstance(inverter, py_trees.decorators.Inverter) and move is motion
    assert isinstance(inverter.decorated, IsJointNearLimit)

    root.tick_once()
    assert root.status is Status.FAILURE and motion.ticks == 0  # unknown: not started blind (fail_safe)
    assert cache.put(["beam_pitch"], [0.6]) is None
    root.tick_once()
    root.tick_once()
    assert root.status is Status.RUNNING and motion.ticks == 2
    assert cache.put(["beam_pitch"], [1.2]) is None  # near
    root.tick_once()
    assert root.status is Status.FAILURE and motion.ticks == 2  # not ticked again ...
    assert motion.terminated[-1] is Status.INVALID  # ... and stopped
    assert "near: beam_pitch = 1.200" in inverter.decorated.feedback_message


def test_safe_trajectory_execution_without_fail_safe_is_the_original(cache: JointStateCache) -> None:
    motion = StaysRunning()
    root = safe_trajectory_execution(
        motion, joint_name="beam_pitch", min_limit=0.0, max_limit=1.309, fail_safe=False, cache=cache
    )
    root.tick_once()
    assert root.status is Status.RUNNING and motion.ticks == 1  # the original runs without data
