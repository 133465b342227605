"""Goal parsing (by name, subsets, refusals) and the arm lease state machine."""

from __future__ import annotations

import math

import pytest

from salamander_control.kinematics import JOINT_NAMES
from salamander_control.trajectory.joint_goal import GoalError, joint_vector, merge_goal
from salamander_control.trajectory.lease import ArmLease

CURRENT = (0.0, -0.785, 0.59, 0.0, 0.0)


def test_subset_goal_keeps_the_other_joints() -> None:
    assert merge_goal(["beam_pitch", "base_yaw"], [0.7, 0.2], CURRENT) == (0.2, -0.785, 0.7, 0.0, 0.0)


@pytest.mark.parametrize(
    ("names", "positions", "match"),
    [
        ([], [], "no joint"),
        (["base_yaw"], [0.1, 0.2], "1 names but 2 positions"),
        (["elbow"], [0.1], "unknown joint 'elbow'"),
        (["base_yaw", "base_yaw"], [0.1, 0.2], "named twice"),
        (["wrist_yaw"], [math.nan], "wrist_yaw is nan"),
        (["wrist_yaw"], [math.inf], "wrist_yaw is inf"),
    ],
)
def test_bad_goals_are_refused_whole(names: list[str], positions: list[float], match: str) -> None:
    with pytest.raises(GoalError, match=match):
        merge_goal(names, positions, CURRENT)


def test_joint_vector_reads_any_order_and_refuses_missing_joints() -> None:
    names = list(reversed(JOINT_NAMES)) + ["gripper"]
    vec = joint_vector(names, [5.0, 4.0, 3.0, 2.0, 1.0, 9.0], [0.5, 0.4, 0.3, 0.2, 0.1, 0.0])
    assert vec.positions == (1.0, 2.0, 3.0, 4.0, 5.0) and vec.velocities == (0.1, 0.2, 0.3, 0.4, 0.5)
    with pytest.raises(GoalError, match="lacks wrist_yaw"):
        joint_vector(JOINT_NAMES[:4], [0.0] * 4)
    with pytest.raises(GoalError, match="not finite"):
        joint_vector(JOINT_NAMES, [0.0, math.nan, 0.0, 0.0, 0.0])


def test_lease_acquire_heartbeat_expire_release() -> None:
    lease = ArmLease()
    assert lease.allows("", now=0.0)  # free: the gamepad may jog
    assert lease.acquire("bt", 0.5, now=0.0).success
    assert not lease.allows("", now=0.1) and lease.allows("bt", now=0.1)
    reply = lease.acquire("gamepad", 0.5, now=0.2)
    assert not reply.success and "held by 'bt'" in reply.message
    assert lease.heartbeat("bt", now=0.4).success
    assert lease.seconds_left(0.5) == pytest.approx(0.4)
    assert lease.expire(now=0.95) == "bt"  # missed heartbeat: 0.4 + 0.5 < 0.95
    assert lease.holder == "" and lease.allows("", now=0.95)
    assert not lease.heartbeat("bt", now=1.0).success
    assert lease.acquire("gamepad", 1.0, now=1.0).success
    assert not lease.release("bt", now=1.1).success
    assert lease.release("gamepad", now=1.1).success and lease.holder == ""


@pytest.mark.parametrize("timeout", [0.0, -1.0, math.nan, math.inf, 1e3])
def test_lease_refuses_bad_timeouts(timeout: float) -> None:
    reply = ArmLease().acquire("bt", timeout, now=0.0)
    assert not reply.success and "timeout" in reply.message
