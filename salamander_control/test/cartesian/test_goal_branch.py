"""The MoveCartesian goal's elbow branch: joint goals solve the end pose on it, linear goals keep theirs."""

from __future__ import annotations

import math

import pytest

from salamander_control.cartesian.config import GoalRejected, MotionConfig, parse_goal
from salamander_control.cartesian.goal import start_goal
from salamander_control.cartesian.goal_common import EARLY_FAIL
from salamander_control.cartesian.joint_goal import JointGoalRun
from salamander_control.cartesian.linear_goal import LinearGoalRun
from salamander_control.kinematics import ArmParams, IkStatus, forward_kinematics, solve_ik_pitched
from salamander_control.kinematics.ik import branch_of

WIDE = MotionConfig(arm=ArmParams(alpha_max=2.0))  # alpha_max > pi/2: the elbow-down branch exists
Q_DOWN = (0.0, -1.228, 0.401, 0.0, 0.0)  # q2 - q1 = 1.629 > pi/2: elbow down
POSE = forward_kinematics(Q_DOWN, WIDE.arm).tcp  # solvable on both branches with alpha_max 2.0
Q_UP = solve_ik_pitched(POSE, 0.0, 0.0, WIDE.arm, branch="up").q


def test_the_pose_has_a_solution_on_each_branch() -> None:
    assert Q_UP is not None and branch_of(Q_UP[1], Q_UP[2]).value == "up"
    assert branch_of(Q_DOWN[1], Q_DOWN[2]).value == "down"


@pytest.mark.parametrize(
    ("branch", "start", "expected"),
    [
        ("down", Q_UP, "down"),
        ("up", Q_DOWN, "up"),
        ("", Q_DOWN, "down"),
        ("", Q_UP, "up"),
    ],
)
def test_a_joint_goal_solves_its_end_pose_on_the_named_branch(branch: str, start, expected: str) -> None:
    away = (start[0], start[1], start[2], start[3], 0.3)  # not already there
    goal = parse_goal(POSE, 0.0, 0.0, "joint", 0.5, "bt", branch)
    run, outcome = start_goal(goal, WIDE, 0.0, away, None)
    assert outcome is None and isinstance(run, JointGoalRun)
    assert branch_of(run.q_goal[1], run.q_goal[2]).value == expected
    fk = forward_kinematics(run.q_goal, WIDE.arm)
    assert math.dist(fk.tcp, POSE) < 1e-9


@pytest.mark.parametrize(("start", "branch"), [(Q_UP, "down"), (Q_DOWN, "up")])
def test_a_joint_goal_to_the_other_branch_at_the_same_pose_succeeds_only_once_the_elbow_is_there(
    start, branch: str
) -> None:
    # Both branches reach POSE: the measured pose alone had said "arrived" before the arm moved.
    goal = parse_goal(POSE, 0.0, 0.0, "joint", 0.5, "bt", branch)
    run, outcome = start_goal(goal, WIDE, 0.0, start, None)
    assert outcome is None and isinstance(run, JointGoalRun)
    cycle = run.step(0.01, WIDE, start)
    assert cycle.target is not None and cycle.outcome is None  # the target goes out; not there yet
    assert run.step(0.02, WIDE, start).outcome is None
    cycle = run.step(0.03, WIDE, run.q_goal)
    assert cycle.outcome is not None and cycle.outcome.result == "succeeded"


def test_a_joint_goal_whose_branch_cannot_solve_it_fails_early_with_that_branch_status() -> None:
    default = MotionConfig()  # alpha_max 1.40: no elbow-down solution anywhere
    q = (0.0, 0.0, 0.5, 0.0, 0.0)
    tcp = forward_kinematics(q).tcp
    run, outcome = start_goal(parse_goal(tcp, 0.0, 0.0, "joint", 0.5, "bt", "down"), default, 0.0, q, None)
    assert run is None and outcome is not None and outcome.result == "aborted"
    assert outcome.status is not IkStatus.OK
    assert outcome.message.startswith(f"{EARLY_FAIL}: ") and "on the down branch" in outcome.message
    run, outcome = start_goal(parse_goal(tcp, 0.0, 0.0, "joint", 0.5, "bt", "up"), default, 0.0, q, None)
    assert outcome is None and run is not None


def test_a_linear_goal_runs_on_the_arm_branch_and_refuses_the_other_with_the_reason() -> None:
    target = forward_kinematics((0.0, -0.40, 1.10, 0.0, 0.0), WIDE.arm).tcp  # a few cm from POSE, elbow up
    run, outcome = start_goal(parse_goal(target, 0.0, 0.0, "linear", 0.5, "bt", "up"), WIDE, 0.0, Q_UP, None)
    assert outcome is None and isinstance(run, LinearGoalRun)
    run, outcome = start_goal(parse_goal(target, 0.0, 0.0, "linear", 0.5, "bt", ""), WIDE, 0.0, Q_UP, None)
    assert outcome is None and isinstance(run, LinearGoalRun)
    run, outcome = start_goal(
        parse_goal(target, 0.0, 0.0, "linear", 0.5, "bt", "down"), WIDE, 0.0, Q_UP, None
    )
    assert run is None and outcome is not None and outcome.result == "aborted"
    assert outcome.status is IkStatus.OK  # not an IK answer: a request this path cannot honour
    assert outcome.message.startswith(f"{EARLY_FAIL}: branch 'down' refused for a linear path")
    assert "the arm is on the 'up' branch" in outcome.message and "joint goal first" in outcome.message


@pytest.mark.parametrize("branch", ["sideways", "UP", " up", None])
def test_an_unknown_branch_is_rejected(branch) -> None:
    with pytest.raises(GoalRejected, match="branch must be '', 'up' or 'down'"):
        parse_goal((0.3, 0.0, 0.0), 0.0, 0.0, "joint", 0.5, "bt", branch)
