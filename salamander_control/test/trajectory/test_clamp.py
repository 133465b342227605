"""The post-clamp: never crosses a limit, reports what it did, replaces non-finite commands.

Two rules: `clamp_joints` (the projection, for goals) and `post_clamp_joints` (the generator's
post-clamp: the shoulder kept and the beam cut back onto the crossed bound, the projection only where no
beam angle fits the shoulder's).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import ALPHA_BETA_RANGE, REST_POSTURE, ArmParams, within_limits
from salamander_control.trajectory.clamp import (
    BEAM_CUT_BACK,
    PROJECTION,
    beam_within_limits,
    clamp_joints,
    describe_clamp,
    post_clamp_joints,
    rest_in_limits,
)

DEFAULT = ArmParams()
finite = st.floats(-7.0, 7.0, allow_nan=False, allow_infinity=False)
anything = st.one_of(finite, st.sampled_from([math.nan, math.inf, -math.inf]))
limits = st.floats(*ALPHA_BETA_RANGE, allow_nan=False)


@settings(max_examples=2500, deadline=None)
@given(st.lists(anything, min_size=5, max_size=5), limits, limits)
def test_clamp_output_is_always_inside_every_limit(q: list[float], alpha: float, beta: float) -> None:
    params = ArmParams(alpha_max=alpha, beta_max=beta)
    result = clamp_joints(q, params, last_safe=REST_POSTURE)
    assert within_limits(result.q, params)
    assert all(math.isfinite(v) for v in result.q)
    if all(math.isfinite(v) for v in q):
        assert result.clamped == (not within_limits(q, params))
        if not result.clamped:
            assert result.q == tuple(q) and result.active == () and result.amount == 0.0
        else:
            assert result.amount == pytest.approx(math.dist(q, result.q))
    else:
        assert result.clamped and result.active[0] == "non_finite"


def test_clamp_names_the_coupled_bound_and_the_amount() -> None:
    result = clamp_joints((0.0, -1.0, 1.0, 0.0, 0.0), DEFAULT, REST_POSTURE)
    assert result.active == ("alpha_max",)
    assert result.q[2] - result.q[1] <= DEFAULT.alpha_max
    assert result.amount == pytest.approx(0.3 * math.sqrt(2))
    result = clamp_joints((4.0, 0.3, 0.5, -2.0, 0.0), DEFAULT, REST_POSTURE)
    assert set(result.active) == {"yaw_max", "wrist_pitch_min"}
    assert result.q == (math.pi, 0.3, 0.5, -1.5708, 0.0)


def test_non_finite_command_is_replaced_by_the_last_safe_one() -> None:
    last = (0.1, 0.2, 0.3, 0.0, 0.0)
    result = clamp_joints((0.1, math.nan, 0.3, 0.0, 0.0), DEFAULT, last)
    assert result.q == last and result.active == ("non_finite",)
    # A last safe command that the limits no longer admit is clamped too.
    narrowed = DEFAULT.with_changes(alpha_max=1.0)
    result = clamp_joints((math.inf,) * 5, narrowed, REST_POSTURE)
    assert within_limits(result.q, narrowed) and "alpha_max" in result.active
    # And with nothing finite at all, the rest posture projected into the limits.
    result = clamp_joints((math.nan,) * 5, narrowed, (math.nan,) * 5)
    assert result.q == rest_in_limits(narrowed)


def test_wrong_length_is_an_error() -> None:
    with pytest.raises(ValueError, match="five joints"):
        clamp_joints((0.0, 0.0), DEFAULT, REST_POSTURE)


def test_a_huge_finite_command_is_clamped_without_overflow() -> None:
    params = ArmParams()
    for huge in (1e200, -1e308, 1.7e308):
        result = clamp_joints((huge, huge, -huge, huge, huge), params, REST_POSTURE)
        assert result.clamped and all(lo <= v <= hi for v, lo, hi in
                                      zip(result.q, params.joint_lower, params.joint_upper, strict=True))


# --- post_clamp_joints: the shoulder kept, the beam cut back ------------------------------------------


def beam_range(q1: float, params: ArmParams) -> tuple[float, float]:
    """What every limit allows q2 to be at shoulder angle q1 (empty when lo > hi)."""
    return max(params.q2_min, q1 - params.beta_max), min(params.q2_max, q1 + params.alpha_max)


@settings(max_examples=2500, deadline=None)
@given(st.lists(anything, min_size=5, max_size=5), limits, limits)
def test_post_clamp_stays_inside_and_keeps_the_shoulder_wherever_a_beam_angle_fits(
    q: list[float], alpha: float, beta: float
) -> None:
    params = ArmParams(alpha_max=alpha, beta_max=beta)
    result = post_clamp_joints(q, params, last_safe=REST_POSTURE)
    assert within_limits(result.q, params)
    assert all(math.isfinite(v) for v in result.q)
    if not all(math.isfinite(v) for v in q):
        assert result == clamp_joints(q, params, REST_POSTURE)  # the last safe command, projected
        return
    assert result.clamped == (not within_limits(q, params))
    if not result.clamped:
        assert result.q == tuple(q) and result.active == () and result.amount == 0.0
        return
    assert result.amount == pytest.approx(math.dist(q, result.q))
    q1 = min(max(q[1], params.q1_min), params.q1_max)
    lo, hi = beam_range(q1, params)
    if lo + 1e-9 < hi:  # a beam angle fits this shoulder angle (not a rounding-thin interval)
        assert result.q[1] == q1  # the shoulder kept (clipped to its own box only)
        assert result.q[2] == pytest.approx(min(max(q[2], lo), hi), abs=1e-12)  # the nearest such q2
        assert result.rule in (BEAM_CUT_BACK, "")
    elif lo > hi + 1e-9:  # nothing fits: the projection
        projected = clamp_joints(q, params, REST_POSTURE)
        assert result.q == projected.q and result.rule == PROJECTION


@settings(max_examples=3000, deadline=None)
@given(st.lists(finite, min_size=2, max_size=2), st.lists(finite, min_size=2, max_size=2), limits, limits)
def test_a_post_clamp_step_from_inside_moves_no_joint_more_than_the_request_did(
    start: list[float], step: list[float], alpha: float, beta: float
) -> None:
    """What lets the generator stay within its velocity limits through a clamp (test_otg checks it)."""
    params = ArmParams(alpha_max=alpha, beta_max=beta)
    p = clamp_joints((0.0, *start, 0.0, 0.0), params, REST_POSTURE).q
    request = (0.0, p[1] + step[0] * 0.05, p[2] + step[1] * 0.05, 0.0, 0.0)
    result = post_clamp_joints(request, params, p)
    assert within_limits(result.q, params), (request, result)
    largest = max(abs(request[1] - p[1]), abs(request[2] - p[2]))
    if result.rule == PROJECTION:  # no beam angle fits the shoulder's: onto the nearest feasible point
        assert math.dist(result.q, request) <= math.dist(p, request) + 1e-12
        return
    # Clipped to the joints' boxes (rule ""), or the shoulder kept and the beam cut back: the shoulder
    # moves no more than asked, the beam no more than the larger of the two requested steps.
    assert abs(result.q[1] - p[1]) <= abs(request[1] - p[1]) + 1e-12
    beam_bound = largest if result.rule == BEAM_CUT_BACK else abs(request[2] - p[2])
    assert abs(result.q[2] - p[2]) <= beam_bound + 1e-12


def test_post_clamp_cuts_the_beam_back_onto_alpha_max_and_says_so() -> None:
    result = post_clamp_joints((0.0, -1.0, 1.0, 0.0, 0.0), DEFAULT, REST_POSTURE)  # q2 - q1 = 2.0
    assert result.active == ("alpha_max",) and result.rule == BEAM_CUT_BACK
    assert result.q[1] == -1.0 and result.q[2] == pytest.approx(0.4)  # q1 kept, q2 onto q1 + 1.40
    assert result.amount == pytest.approx(0.6)
    line = describe_clamp(result)
    assert line.startswith("post-clamp: alpha_max crossed: beam (q2) cut back by 0.60000 rad (34.377 deg)")
    assert "shoulder (q1) kept at -1.0000 rad" in line
    # The lower coupled bound: q1 - q2 = 1.3 > beta_max 0.87, the beam raised onto q1 - 0.87.
    result = post_clamp_joints((0.0, 1.3, 0.0, 0.0, 0.0), DEFAULT, REST_POSTURE)
    assert result.active == ("beta_max",) and result.q[1:3] == (1.3, pytest.approx(0.43))
    assert "beta_max crossed: beam (q2) cut back by 0.43000 rad" in describe_clamp(result)


def test_post_clamp_falls_back_to_the_projection_where_no_beam_angle_fits() -> None:
    narrowed = DEFAULT.with_changes(alpha_max=1.30)  # at q1 = -1.35 the beam would need q2 <= -0.05 < q2_min
    assert beam_within_limits(-1.35, 0.2, narrowed) is None
    result = post_clamp_joints((0.0, -1.35, 0.2, 0.0, 0.0), narrowed, REST_POSTURE)
    assert result.rule == PROJECTION and result.active == ("alpha_max",)
    assert result.q == clamp_joints((0.0, -1.35, 0.2, 0.0, 0.0), narrowed, REST_POSTURE).q
    assert within_limits(result.q, narrowed) and result.q[1] > -1.35
    line = describe_clamp(result)
    assert "no beam (q2) angle fits that shoulder (q1) angle: projected onto the limits" in line
    # Joints outside the coupled pair only: named as before.
    result = post_clamp_joints((4.0, 0.3, 0.5, -2.0, 0.0), DEFAULT, REST_POSTURE)
    assert result.q == (math.pi, 0.3, 0.5, -1.5708, 0.0) and result.rule == ""
    assert describe_clamp(result).startswith("post-clamp: yaw_max, wrist_pitch_min moved the command by")
