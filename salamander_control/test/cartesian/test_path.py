"""The Cartesian path check: finds the housing in the middle of a line, jumps, and nothing else."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.cartesian.path import (
    SNAP_TOL,
    PathSampling,
    check_line,
    check_poses,
    line_poses,
    relaxed,
)
from salamander_control.kinematics import (
    ArmParams,
    IkStatus,
    branch_of,
    forward_kinematics,
    solve_ik_pitched,
    within_limits,
)
from salamander_testing.kin_strategies import feasible_joints

DEFAULT = ArmParams()
SAMPLING = PathSampling()
# A line sweeping past the front of the base: both ends solve, its middle needs q2 - q1 > alpha_max.
HOUSING_START = (0.06, 0.12, 0.04, 0.0, 0.0)
HOUSING_GOAL = (0.06, -0.12, 0.04, 0.0, 0.0)


def seed_of(pose, params=DEFAULT):
    res = solve_ik_pitched(pose[:3], pose[3], pose[4], params)
    assert res.ok, res
    return res.q


def pose_of(q, params=DEFAULT):
    fk = forward_kinematics(q, params)
    return (*fk.tcp, fk.tool_pitch, fk.tool_yaw)


def test_coupled_limit_in_the_middle_of_a_line_with_feasible_ends():
    assert solve_ik_pitched(HOUSING_GOAL[:3], 0.0, 0.0).ok  # both ends are fine on their own
    check = check_line(HOUSING_START, HOUSING_GOAL, DEFAULT, seed_of(HOUSING_START), SAMPLING)
    assert check.status is IkStatus.COUPLED_LIMIT and not check.ok and check.joints is None
    assert 0.05 < check.distance < 0.19 and check.length == pytest.approx(0.24)
    # It is the first bad sample: everything before it solves, the sample itself does not.
    poses = line_poses(HOUSING_START, HOUSING_GOAL, SAMPLING)
    assert solve_ik_pitched(check.pose[:3], 0.0, 0.0).status is IkStatus.COUPLED_LIMIT
    assert all(solve_ik_pitched(p[:3], p[3], p[4]).ok for p in poses[: check.index])
    assert check.message.startswith(f"coupled_limit at {check.distance * 1000:.1f} mm of 240.0 mm")
    assert "along the line from (0.0600, 0.1200, 0.0400) m to (0.0600, -0.1200, 0.0400) m" in check.message


def test_the_same_line_is_feasible_once_alpha_max_allows_it():
    wide = DEFAULT.with_changes(alpha_max=1.7)
    check = check_line(HOUSING_START, HOUSING_GOAL, wide, seed_of(HOUSING_START, wide), SAMPLING)
    assert check.ok and check.joints.shape == (len(line_poses(HOUSING_START, HOUSING_GOAL, SAMPLING)), 5)
    assert all(within_limits(q, wide) for q in check.joints)


def test_sampling_is_dense_short_lines_get_min_samples_and_yaw_goes_the_short_way():
    poses = line_poses((0.3, 0.0, 0.0, 0.0, 0.0), (0.3, 0.001, 0.0, 0.0, 0.0), SAMPLING)
    assert len(poses) == 50 and tuple(poses[-1]) == (0.3, 0.001, 0.0, 0.0, 0.0)
    poses = line_poses((0.1, -0.3, 0.2, 0.0, 3.0), (0.5, 0.3, -0.1, 0.4, -3.0), SAMPLING)
    steps = np.diff(poses, axis=0)
    assert np.max(np.linalg.norm(steps[:, :3], axis=1)) <= 0.002 + 1e-12
    assert np.max(np.abs(steps[:, 3:])) <= 0.01 + 1e-12
    # -3.0 is reached through +pi (0.28 rad), not back through 0 (6 rad).
    assert poses[-1][4] == pytest.approx(-3.0 + 2 * math.pi) and np.all(steps[:, 4] > 0)


def test_a_line_behind_the_base_across_the_yaw_limit_fails_where_the_base_would_wrap():
    a, b = (-0.3, 0.05, 0.05, 0.0, 0.0), (-0.3, -0.05, 0.05, 0.0, 0.0)
    check = check_line(a, b, DEFAULT, seed_of(a), SAMPLING)
    # Both ends solve, yet following the line would need base_yaw past +pi: a 2*pi jump at y = 0.
    assert check.status is IkStatus.YAW_OUT_OF_RANGE
    assert check.pose[1] == pytest.approx(0.0, abs=0.0021)
    assert "yaw_out_of_range at" in check.message
    # With base and wrist yaw ranges wider than a turn the same line is smooth: the check follows the
    # chained solution instead of flagging the single-seed batch answer's representation switch.
    wide = DEFAULT.with_changes(yaw_min=-4.0, yaw_max=4.0, wrist_yaw_min=-4.0, wrist_yaw_max=4.0)
    check = check_line(a, b, wide, seed_of(a, wide), SAMPLING)
    assert check.ok
    assert np.max(np.abs(np.diff(check.joints, axis=0))) < SAMPLING.max_joint_step
    assert check.joints[-1][0] > math.pi  # kept turning the same way


def test_an_attitude_change_across_the_wrist_yaw_limit_is_located_by_percentage():
    a, b = (0.3, 0.0, 0.05, 0.3, 3.0), (0.3, 0.0, 0.05, 0.3, -3.0)
    check = check_line(a, b, DEFAULT, seed_of(a), SAMPLING)
    assert check.status is IkStatus.WRIST_OUT_OF_RANGE
    assert "0.0 mm of 0.0 mm (" in check.message and "%) along the line" in check.message


def test_sampling_refuses_nonsense():
    for kwargs in (
        {"spacing": 0.0},
        {"angle_spacing": math.nan},
        {"min_samples": 1},
        {"max_joint_step": -1.0},
    ):
        with pytest.raises(ValueError, match="PathSampling"):
            PathSampling(**kwargs)
    with pytest.raises(ValueError, match="finite"):
        line_poses((0.0, 0.0, math.nan, 0.0, 0.0), HOUSING_GOAL, SAMPLING)


def test_check_poses_names_the_path_it_checked():
    poses = line_poses(HOUSING_START, HOUSING_GOAL, SAMPLING)
    check = check_poses(poses, DEFAULT, seed_of(HOUSING_START), SAMPLING, "along the blend")
    assert "along the blend" in check.message


# On the shoulder's stop 57 mm from the base axis, rising as it goes out: between the first two samples
# (2 mm apart) the shoulder bows below its stop, by 3.1e-5 rad rising 0.25 mm per mm (inside SNAP_TOL: the
# per-cycle IK snaps it back), by 1.2e-4 rad rising 0.5 mm per mm (found by test_stream_follow.py).
ON_STOP = (0.0, -1.35, 0.03125, 0.0, 0.0)


def along_the_stop(rise: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    start = np.array(pose_of(ON_STOP))
    direction = np.array((0.0, 1.0, rise)) / math.hypot(1.0, rise)
    return tuple(start), (*(start[:3] + 0.1 * direction), 0.0, 0.0)


def test_a_line_that_leaves_a_joint_range_between_two_samples_is_refused_where_it_leaves():
    start, goal = along_the_stop(0.5)
    poses = line_poses(start, goal, SAMPLING)
    assert all(solve_ik_pitched(p[:3], p[3], p[4], seed=ON_STOP).ok for p in poses)  # every sample solves
    check = check_line(start, goal, DEFAULT, ON_STOP, SAMPLING)
    assert check.status is IkStatus.Q1_OUT_OF_RANGE and check.index == 1
    assert 0.0 < check.distance < math.dist(poses[0][:3], poses[1][:3])
    assert not solve_ik_pitched(check.pose[:3], 0.0, 0.0, relaxed(DEFAULT, SNAP_TOL), seed=ON_STOP).ok
    assert check.message.startswith(f"q1_out_of_range at {check.distance * 1000:.1f} mm of 100.0 mm")


def test_a_line_that_bows_past_a_limit_by_less_than_the_snap_is_feasible():
    start, goal = along_the_stop(0.25)
    check = check_line(start, goal, DEFAULT, ON_STOP, SAMPLING)
    assert check.ok, check.message


@settings(max_examples=300, deadline=None)
@given(feasible_joints(), feasible_joints(), st.floats(1.0, 2.0))
def test_random_lines_either_pass_with_joints_inside_every_limit_or_name_a_real_failure(
    q_start, q_goal, alpha
):
    params = DEFAULT.with_changes(alpha_max=alpha)
    start, goal = pose_of(q_start, params), pose_of(q_goal, params)
    check = check_line(start, goal, params, q_start, SAMPLING)
    poses = line_poses(start, goal, SAMPLING)
    if check.ok:
        assert all(within_limits(q, params) for q in check.joints)
        steps = np.abs(np.diff(np.vstack((q_start, check.joints)), axis=0))
        assert np.max(steps) <= SAMPLING.max_joint_step * 1.0000001
        fk = np.array([pose_of(q, params)[:3] for q in check.joints[:: max(1, len(poses) // 20)]])
        assert np.max(np.abs(fk - poses[:: max(1, len(poses) // 20), :3])) < 1e-9
    else:
        assert 0 <= check.index < len(poses)
        assert check.message.startswith(check.status.reason + " at ")
        # Every sample before the named one solves; the named one does not, or only after a jump.
        assert all(solve_ik_pitched(p[:3], p[3], p[4], params).ok for p in poses[: check.index])
        bad = poses[check.index]
        if not np.allclose(check.pose, bad, rtol=0.0, atol=1e-12):  # found between two samples
            prev = poses[check.index - 1]
            before = solve_ik_pitched(prev[:3], prev[3], prev[4], params, seed=q_start)
            between = check.pose
            loose = relaxed(params, SNAP_TOL)
            assert not solve_ik_pitched(between[:3], between[3], between[4], loose, seed=before.q).ok
            return
        res = solve_ik_pitched(bad[:3], bad[3], bad[4], params)
        jumps = (IkStatus.YAW_OUT_OF_RANGE, IkStatus.WRIST_OUT_OF_RANGE, IkStatus.COUPLED_LIMIT)
        # Solvable only on the other elbow branch than the arm's (alpha_max > pi/2) is a jump too.
        other_branch = res.ok and res.branch is not branch_of(q_start[1], q_start[2])
        assert not res.ok or check.status in jumps or other_branch
