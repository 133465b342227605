"""Joint and coupled-limit gauges."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from salamander_control.kinematics import ArmParams, within_limits
from salamander_view.gauges import coupled_gauges, joint_gauges, joint_limits

ARM = ArmParams()
angles = st.floats(-3.0, 3.0, allow_nan=False)


def test_joint_gauges_follow_the_limits():
    q = (0.0, ARM.q1_max, ARM.q2_min + 0.01, 0.0, 0.0)
    gauges = joint_gauges(q, joint_limits(ARM))
    assert [g.label for g in gauges][:3] == ["base_yaw", "shoulder_pitch", "beam_pitch"]
    assert gauges[0].fraction == 0.5 and gauges[0].level == "ok"
    assert gauges[1].fraction == 1.0 and gauges[1].level == "near"
    assert gauges[2].level == "near"


def test_a_joint_outside_its_limit_is_over():
    gauges = joint_gauges((0.0, ARM.q1_max + 0.1, 0.5, 0.0, 0.0), joint_limits(ARM))
    assert gauges[1].level == "over" and gauges[1].margin < 0 and gauges[1].fraction == 1.0


@given(angles, angles)
def test_coupled_margins_are_nonnegative_exactly_when_the_coupled_limits_hold(q1, q2):
    alpha, beta = coupled_gauges((0.0, q1, q2, 0.0, 0.0), ARM.alpha_max, ARM.beta_max)
    assert math.isclose(alpha.hi - alpha.value, ARM.alpha_max - (q2 - q1))
    assert math.isclose(beta.hi - beta.value, ARM.beta_max - (q1 - q2))
    coupled_ok = q2 - q1 <= ARM.alpha_max and q1 - q2 <= ARM.beta_max
    inside = ARM.q1_min <= q1 <= ARM.q1_max and ARM.q2_min <= q2 <= ARM.q2_max
    if inside:
        assert within_limits((0.0, q1, q2, 0.0, 0.0), ARM) == coupled_ok
    assert (alpha.hi - alpha.value >= 0 and beta.hi - beta.value >= 0) == coupled_ok
