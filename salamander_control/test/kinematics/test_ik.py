"""The closed-form IK: round trips at and inside every limit, failure statuses, input validation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import (
    REST_POSTURE,
    ArmParams,
    ElbowBranch,
    IkStatus,
    branch_of,
    forward_kinematics,
    polygon_vertices,
    project_to_feasible,
    solve_ik_pitched,
    within_limits,
)
from salamander_testing.kin_strategies import any_pose, feasible_joints

DEFAULT = ArmParams()
WIDE = ArmParams(alpha_max=2.7, beta_max=2.7)  # coupled limits inactive: both elbow branches feasible


def _angle_diff(a: float, b: float) -> float:
    return abs(math.remainder(a - b, 2.0 * math.pi))


def roundtrip(q: tuple[float, ...], params: ArmParams = DEFAULT):  # noqa: ANN201
    pose = forward_kinematics(q, params)
    return solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw, params, seed=q)


@settings(max_examples=3000, deadline=None)
@given(feasible_joints())
def test_fk_ik_roundtrip_returns_the_arms_own_joints(q: tuple[float, ...]) -> None:
    result = roundtrip(q)
    assert result.status is IkStatus.OK, (q, result)
    assert max(abs(a - b) for a, b in zip(result.q, q, strict=True)) <= 1e-9
    assert within_limits(result.q, DEFAULT)


@settings(max_examples=1500, deadline=None)
@given(feasible_joints(WIDE))
def test_roundtrip_with_both_branches_feasible(q: tuple[float, ...]) -> None:
    # With the coupled limits opened up, the DOWN branch and negative reach exist. Near full stretch or
    # fold (|cos(q1 - q2)| -> 0) the problem is ill-conditioned: FK loses O(eps^2) of the angle, so
    # only the pose can be asserted tightly there.
    result = roundtrip(q, WIDE)
    assert result.status is IkStatus.OK, (q, result)
    assert within_limits(result.q, WIDE)
    got, want = forward_kinematics(result.q, WIDE), forward_kinematics(q, WIDE)
    assert math.dist(got.tcp, want.tcp) <= 1e-9
    if abs(math.cos(q[1] - q[2])) > 1e-3 and abs(WIDE.upper_arm_length * math.sin(q[1])
                                                  + WIDE.beam_length * math.cos(q[2])) > 1e-3:
        assert max(_angle_diff(a, b) for a, b in zip(result.q, q, strict=True)) <= 1e-9


@settings(max_examples=3000, deadline=None)
@given(any_pose())
def test_any_pose_gives_a_status_never_nan_and_ok_means_limits_hold(pose) -> None:  # noqa: ANN001
    tcp, pitch, yaw = pose
    result = solve_ik_pitched(tcp, pitch, yaw)
    assert isinstance(result.status, IkStatus)
    if result.status is IkStatus.OK:
        assert all(math.isfinite(v) for v in result.q)
        assert within_limits(result.q, DEFAULT)
        back = forward_kinematics(result.q)
        assert math.dist(back.tcp, tcp) <= 1e-9
        assert abs(back.tool_pitch - pitch) <= 1e-9
        assert _angle_diff(back.tool_yaw, yaw) <= 1e-9
    else:
        assert result.q is None


def test_spec_reference_points() -> None:
    rest = forward_kinematics(REST_POSTURE)
    assert rest.tcp == pytest.approx((0.0787, 0.0, 0.0374), abs=5e-5)
    forward = forward_kinematics((0.0, math.radians(80), math.radians(30), 0.0, 0.0))
    assert forward.tcp == pytest.approx((0.5986, 0.0, -0.1029), abs=5e-5)


def test_without_seed_prefers_elbow_up() -> None:
    pose = forward_kinematics(REST_POSTURE)
    result = solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw)
    assert result.ok and result.branch is ElbowBranch.UP
    assert result.q == pytest.approx(REST_POSTURE, abs=1e-12)


# --- The five failure patterns docs/arm_model.md names, one regression test each. ---


def test_regression_reach_boundary_rounding_still_solves() -> None:
    """|c| computed as 1 + 1e-16 at full fold must not be reported out of reach."""
    q = (0.3, -0.5, -0.5 + math.pi / 2, 0.2, 0.1)  # q2 - q1 = pi/2: links folded, c = -1
    pose = forward_kinematics(q, WIDE)
    result = solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw, WIDE, seed=q)
    assert result.ok, result
    assert math.dist(forward_kinematics(result.q, WIDE).tcp, pose.tcp) <= 1e-9
    # A target clearly beyond the fold is still refused.
    far = solve_ik_pitched((2.0, 0.0, 0.1), 0.0, 0.0)
    assert far.status is IkStatus.OUT_OF_REACH and far.reason == "out_of_reach"


def _corners() -> list[tuple[float, ...]]:
    """Joint vectors at every vertex of the (q1, q2) polygon, with wrist joints at their limits."""
    out = []
    wrists = [(1.5708, 0.0), (-1.5708, math.pi), (0.3, -math.pi), (0.0, 0.0)]
    for i, (v1, v2) in enumerate(polygon_vertices(DEFAULT)):
        proj = project_to_feasible(v1, v2, DEFAULT)  # nudges a vertex that rounding put a hair outside
        q3, q4 = wrists[i % len(wrists)]
        out.append((0.0, proj.q1, proj.q2, q3, q4))
    return out


@pytest.mark.parametrize("q", _corners())
def test_regression_joint_exactly_at_limit_is_not_solved_a_hair_outside(q: tuple[float, ...]) -> None:
    assert within_limits(q, DEFAULT)
    result = roundtrip(q)
    assert result.ok, result
    assert within_limits(result.q, DEFAULT)  # exact: snapped onto, never past, the bound
    assert max(abs(a - b) for a, b in zip(result.q, q, strict=True)) <= 1e-9


def test_regression_pitched_tool_correction_near_full_reach() -> None:
    """The wrist-target correction for a pitched pad must not push a reachable pose out of reach."""
    # Farthest feasible wrist: q1 at its max with q1 - q2 = beta_max; pad pitched to its limits.
    for pitch in (-1.5708, 1.5708, 0.7):
        for yaw in (0.0, 1.0, -2.5):
            q = (yaw, 1.35, math.nextafter(1.35 - 0.87, 1.0), pitch, -0.4)
            result = roundtrip(q)
            assert result.ok, (q, result)
            assert max(abs(a - b) for a, b in zip(result.q, q, strict=True)) <= 1e-9
    # And the same with the links folded, where the correction moves the target across c = -1.
    q = (0.0, -0.5, -0.5 + math.pi / 2, 1.5708, 0.0)
    result = roundtrip(q, WIDE)
    assert result.ok, result


NEAR_PI = [math.pi, -math.pi, math.nextafter(math.pi, 0.0), math.nextafter(-math.pi, 0.0)]


@pytest.mark.parametrize("yaw", NEAR_PI)
def test_regression_base_yaw_near_pi_keeps_its_sign(yaw: float) -> None:
    q = (yaw, 0.4, 0.5, 0.3, 0.0)
    result = roundtrip(q)
    assert result.ok, result
    assert result.q[0] == pytest.approx(yaw, abs=1e-9)  # not flipped to the other end of the range
    wrist_at_pi = (0.2, 0.4, 0.5, 0.0, math.pi)
    assert roundtrip(wrist_at_pi).q[4] == pytest.approx(math.pi, abs=1e-9)
    wrist_at_minus_pi = (0.2, 0.4, 0.5, 0.0, -math.pi)
    assert roundtrip(wrist_at_minus_pi).q[4] == pytest.approx(-math.pi, abs=1e-9)


def test_regression_returns_the_elbow_branch_the_arm_is_in() -> None:
    # Joint boxes opened so that the pose below has a valid twin on each branch.
    both = ArmParams(alpha_max=2.7, beta_max=2.7, q1_min=-3.0, q1_max=3.0, q2_min=-3.0, q2_max=3.0)
    down = (0.1, -1.0, 0.8, 0.2, 0.0)
    assert branch_of(down[1], down[2]) is ElbowBranch.DOWN
    pose = forward_kinematics(down, both)
    up = solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw, both, branch="up")
    assert up.ok and up.branch is ElbowBranch.UP  # the twin exists ...
    seeded = solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw, both, seed=down)
    assert seeded.ok and seeded.branch is ElbowBranch.DOWN  # ... but the arm is in DOWN, so DOWN it is
    assert seeded.q == pytest.approx(down, abs=1e-9)
    from_up = solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw, both, seed=up.q)
    assert from_up.branch is ElbowBranch.UP
    # With the real joint boxes, a DOWN posture has no UP twin: a fixed-UP IK would call it unreachable.
    real_down = (0.0, -0.6, 1.2, 0.0, 0.0)
    pose = forward_kinematics(real_down, WIDE)
    assert solve_ik_pitched(pose.tcp, 0.0, 0.0, WIDE, branch="up").status is not IkStatus.OK
    result = solve_ik_pitched(pose.tcp, 0.0, 0.0, WIDE)
    assert result.ok and result.branch is ElbowBranch.DOWN


# --- Failure statuses and their reasons. ---


def test_failure_statuses_follow_the_spec_table() -> None:
    narrow_yaw = ArmParams(yaw_min=-1.0, yaw_max=1.0)
    behind = forward_kinematics((2.5, 0.3, 0.5, 0.0, 0.0), ArmParams())
    assert solve_ik_pitched(behind.tcp, 0.0, behind.tool_yaw, narrow_yaw).reason == "yaw_out_of_range"

    # q1 = 1.45 exceeds q1_max; everything else fine (wide coupled limits so q1 is the first failure).
    p = ArmParams(q1_max=1.5, alpha_max=2.7, beta_max=2.7)
    pose = forward_kinematics((0.0, 1.45, 1.0, 0.0, 0.0), p)
    assert solve_ik_pitched(pose.tcp, 0.0, 0.0, WIDE, branch="up").reason == "q1_out_of_range"

    p = ArmParams(q2_min=-0.5, alpha_max=2.7, beta_max=2.7)
    pose = forward_kinematics((0.0, 0.3, -0.2, 0.0, 0.0), p)
    assert solve_ik_pitched(pose.tcp, 0.0, 0.0, WIDE, branch="up").reason == "q2_out_of_range"

    pose = forward_kinematics((0.0, 0.3, 0.5, 0.0, 0.0))
    assert solve_ik_pitched(pose.tcp, 1.7, 0.0).reason == "wrist_out_of_range"
    narrow_wrist = ArmParams(wrist_yaw_min=-0.5, wrist_yaw_max=0.5)
    assert solve_ik_pitched(pose.tcp, 0.0, 2.0, narrow_wrist).reason == "wrist_out_of_range"

    # Beam lowered too far with the shoulder back: q2 - q1 = 1.5 > alpha_max 1.40.
    pose = forward_kinematics((0.0, -0.5, 1.0, 0.0, 0.0), WIDE)
    result = solve_ik_pitched(pose.tcp, 0.0, 0.0)
    assert result.status is IkStatus.COUPLED_LIMIT and result.q is None
    # Beam raised too far with the shoulder forward: q1 - q2 = 1.2 > beta_max 0.87.
    pose = forward_kinematics((0.0, 1.3, 0.1, 0.0, 0.0), WIDE)
    assert solve_ik_pitched(pose.tcp, 0.0, 0.0).reason == "coupled_limit"


def test_narrowing_alpha_blocks_the_rest_posture() -> None:
    narrow = ArmParams(alpha_max=1.30)
    assert not narrow.admits_rest() and DEFAULT.admits_rest()
    pose = forward_kinematics(REST_POSTURE)
    assert solve_ik_pitched(pose.tcp, 0.0, 0.0, narrow).status is IkStatus.COUPLED_LIMIT


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"tcp": (math.nan, 0.0, 0.0)}, "tcp"),
        ({"tcp": (0.1, math.inf, 0.0)}, "tcp"),
        ({"tcp": (0.1, 0.0)}, "tcp"),
        ({"tcp": (0.1, 0.0, 0.0, 0.0)}, "tcp"),
        ({"tcp": "abc"}, "tcp"),
        ({"tcp": None}, "tcp"),
        ({"tool_pitch": math.nan}, "tool_pitch"),
        ({"tool_pitch": "0.1"}, "tool_pitch"),
        ({"tool_yaw": -math.inf}, "tool_yaw"),
        ({"seed": (0.0, 0.0, 0.0, 0.0)}, "seed"),
        ({"seed": (0.0, math.nan, 0.0, 0.0, 0.0)}, "seed"),
        ({"branch": "sideways"}, "branch"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(kwargs: dict, name: str) -> None:
    args = {"tcp": (0.3, 0.0, 0.1), "tool_pitch": 0.0, "tool_yaw": 0.0} | kwargs
    with pytest.raises(ValueError, match=name):
        solve_ik_pitched(**args)


@given(st.sampled_from(list(IkStatus)))
def test_status_reason_table_round_trips(status: IkStatus) -> None:
    assert IkStatus.from_reason(status.reason) is status
    assert status.message
