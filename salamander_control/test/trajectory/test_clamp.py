"""The post-clamp: never crosses a limit, reports what it did, replaces non-finite commands."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import ALPHA_BETA_RANGE, REST_POSTURE, ArmParams, within_limits
from salamander_control.trajectory.clamp import clamp_joints, rest_in_limits

DEFAULT = ArmParams()
finite = st.floats(-7.0, 7.0, allow_nan=False, allow_infinity=False)
anything = st.one_of(finite, st.sampled_from([math.nan, math.inf, -math.inf]))
limits = st.floats(*ALPHA_BETA_RANGE, allow_nan=False)


@settings(max_examples=5000, deadline=None)
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
