"""Reading a JointState by name (salamander_control/joint_state.py): complete vectors, goals, refusals.

Every node reads joint states through this module; the last tests check that a repeated joint name is
refused on each path that reads one (measured states, goals, commands, service requests, limit samples).
"""

from __future__ import annotations

import math

import pytest

from salamander_control.joint_state import (
    JointStateError,
    JointStateProblem,
    joint_vector,
    merge_goal,
    read_by_name,
)
from salamander_control.kinematics import JOINT_NAMES

NAMES = list(JOINT_NAMES)
Q = (0.3, 0.2, 0.6, -0.1, 0.4)
CURRENT = (0.0, -0.785, 0.59, 0.0, 0.0)

# --- complete vectors ----------------------------------------------------------------------------------


def test_a_complete_vector_is_reordered_into_motor_order():
    names = list(reversed(NAMES))
    assert joint_vector(names, list(reversed(Q)), allow_extra=False).positions == Q


def test_joint_vector_reads_any_order_and_refuses_missing_joints() -> None:
    names = list(reversed(JOINT_NAMES)) + ["gripper"]
    vec = joint_vector(names, [5.0, 4.0, 3.0, 2.0, 1.0, 9.0], [0.5, 0.4, 0.3, 0.2, 0.1, 0.0])
    assert vec.positions == (1.0, 2.0, 3.0, 4.0, 5.0) and vec.velocities == (0.1, 0.2, 0.3, 0.4, 0.5)
    with pytest.raises(JointStateError, match="lacks wrist_yaw"):
        joint_vector(JOINT_NAMES[:4], [0.0] * 4)
    with pytest.raises(JointStateError, match="not finite"):
        joint_vector(JOINT_NAMES, [0.0, math.nan, 0.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("names", "positions", "problem", "text"),
    [
        (NAMES, list(Q[:4]), JointStateProblem.LENGTH_MISMATCH, "5 names but 4 positions"),
        ([*NAMES, "gripper"], [*Q, 0.0], JointStateProblem.UNKNOWN_JOINT, "unknown joint 'gripper'"),
        ([*NAMES, "base_yaw"], [*Q, 0.0], JointStateProblem.DUPLICATE_JOINT, "'base_yaw' named twice"),
        (NAMES[:4], list(Q[:4]), JointStateProblem.MISSING_JOINT, "wrist_yaw"),
        (NAMES, [0.0, math.nan, 0.0, 0.0, 0.0], JointStateProblem.NON_FINITE, "shoulder_pitch=nan"),
        (NAMES, [0.0, 0.0, 0.0, math.inf, 0.0], JointStateProblem.NON_FINITE, "wrist_pitch=inf"),
        (NAMES, [1e200, 0.0, 0.0, 0.0, 0.0], JointStateProblem.ABSURD, "base_yaw=1e+200"),
        (NAMES, [0.0, 0.0, -1000.5, 0.0, 0.0], JointStateProblem.ABSURD, "beam_pitch=-1000.5"),
    ],
)
def test_a_request_is_refused_with_the_problem(names, positions, problem, text):
    with pytest.raises(JointStateError) as info:
        joint_vector(names, positions, allow_extra=False)
    assert info.value.problem is problem
    assert text in str(info.value)


def test_a_measured_joint_state_may_carry_other_joints():
    names, positions = ["gripper", *NAMES], [math.nan, *Q]
    assert joint_vector(names, positions).positions == Q  # the gripper's NaN is not ours to judge
    with pytest.raises(JointStateError):
        joint_vector(names, positions, allow_extra=False)


# --- goals: a subset of the joints onto the current target ------------------------------------------


def test_subset_goal_keeps_the_other_joints() -> None:
    goal = merge_goal(["beam_pitch", "base_yaw"], [0.7, 0.2], CURRENT)
    assert goal.positions == (0.2, -0.785, 0.7, 0.0, 0.0)


@pytest.mark.parametrize(
    ("names", "positions", "match"),
    [
        ([], [], "no joint"),
        (["base_yaw"], [0.1, 0.2], "1 names but 2 positions"),
        (["elbow"], [0.1], "unknown joint 'elbow'"),
        (["base_yaw", "base_yaw"], [0.1, 0.2], "named twice"),
        (["wrist_yaw"], [math.nan], "wrist_yaw=nan"),
        (["wrist_yaw"], [math.inf], "wrist_yaw=inf"),
    ],
)
def test_bad_goals_are_refused_whole(names: list[str], positions: list[float], match: str) -> None:
    with pytest.raises(JointStateError, match=match):
        merge_goal(names, positions, CURRENT)


def test_goal_velocities_are_merged_by_name_and_absent_means_none() -> None:
    assert merge_goal(["base_yaw"], [0.3], CURRENT).velocities is None
    streamed = merge_goal(["wrist_yaw", "base_yaw"], [0.1, 0.3], CURRENT, [0.5, -0.2])
    assert streamed == ((0.3, -0.785, 0.59, 0.0, 0.1), (-0.2, 0.0, 0.0, 0.0, 0.5))


# --- any joints by name (the limit samples) -----------------------------------------------------------


def test_read_by_name_keeps_every_array_by_name_and_empty_ones_empty() -> None:
    read = read_by_name(["a", "b"], [1.0, 2.0], [], [0.5, 0.25])
    assert read.positions == {"a": 1.0, "b": 2.0}
    assert read.velocities == {} and read.efforts == {"a": 0.5, "b": 0.25}
    with pytest.raises(JointStateError, match="efforts are not all numbers"):
        read_by_name(["a"], [1.0], [], ["x"])


# --- a repeated name is refused on every path (never "the last one wins") -----------------------------

TWICE = [*NAMES, "shoulder_pitch"]
TWICE_Q = [*Q, 0.9]


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda: joint_vector(TWICE, TWICE_Q), id="measured"),
        pytest.param(lambda: joint_vector(TWICE, TWICE_Q, [0.0] * 6), id="measured_with_velocities"),
        pytest.param(lambda: joint_vector(TWICE, TWICE_Q, allow_extra=False), id="request_or_command"),
        pytest.param(lambda: merge_goal(TWICE, TWICE_Q, CURRENT), id="goal"),
        pytest.param(lambda: merge_goal(["shoulder_pitch"] * 2, [0.1, 0.2], CURRENT), id="subset_goal"),
        pytest.param(lambda: read_by_name(TWICE, TWICE_Q), id="limit_sample"),
    ],
)
def test_a_repeated_joint_name_is_refused_on_every_path(read) -> None:
    with pytest.raises(JointStateError, match="'shoulder_pitch' named twice") as info:
        read()
    assert info.value.problem is JointStateProblem.DUPLICATE_JOINT


def test_a_nan_effort_is_an_effort_not_reported_and_an_infinite_one_is_refused() -> None:
    """ros2_control's joint_state_broadcaster sends NaN for a joint whose drive has no effort interface."""
    read = read_by_name(NAMES, list(Q), (), [0.5, math.nan, 0.25, math.nan, 0.0])
    assert read.efforts == {"base_yaw": 0.5, "beam_pitch": 0.25, "wrist_yaw": 0.0}
    assert read.positions == dict(zip(NAMES, Q, strict=True))
    assert read_by_name(NAMES, list(Q), (), [math.nan] * 5).efforts == {}
    with pytest.raises(JointStateError, match="efforts not finite for shoulder_pitch=-inf") as info:
        read_by_name(NAMES, list(Q), (), [0.5, -math.inf, 0.25, 0.0, 0.0])
    assert info.value.problem is JointStateProblem.NON_FINITE


def test_huge_velocities_are_refused_and_efforts_only_need_to_be_finite():
    with pytest.raises(JointStateError, match="velocities beyond"):
        joint_vector(NAMES, list(Q), [0.0, 0.0, 5e3, 0.0, 0.0])
    assert read_by_name(NAMES, list(Q), (), [2e3] * 5).efforts["base_yaw"] == 2e3
