"""Hypothesis strategies for joint vectors and poses, biased towards the limits where IKs break."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from salamander_control.kinematics import ArmParams


def _in_range(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Floats in [lo, hi] with the bounds themselves drawn often."""
    return st.one_of(
        st.sampled_from([lo, hi]),
        st.floats(lo, hi, allow_nan=False, allow_infinity=False),
    )


@st.composite
def feasible_joints(draw: st.DrawFn, params: ArmParams = ArmParams()) -> tuple[float, ...]:  # noqa: B008
    """A joint vector inside every per-joint and coupled limit, bounds included."""
    p = params
    q0 = draw(_in_range(p.yaw_min, p.yaw_max))
    q1 = draw(_in_range(p.q1_min, p.q1_max))
    lo = max(p.q2_min, q1 - p.beta_max)
    hi = min(p.q2_max, q1 + p.alpha_max)
    if lo > hi:  # q1 at a corner where the half-planes leave no q2; pick another
        q1 = 0.0
        lo, hi = max(p.q2_min, -p.beta_max), min(p.q2_max, p.alpha_max)
    q2 = draw(_in_range(lo, hi))
    # Exact bound values of q2 computed from q1 +- alpha/beta may round a hair outside; pull them in.
    while q2 - q1 > p.alpha_max:
        q2 = math.nextafter(q2, -math.inf)
    while q1 - q2 > p.beta_max:
        q2 = math.nextafter(q2, math.inf)
    q3 = draw(_in_range(p.wrist_pitch_min, p.wrist_pitch_max))
    q4 = draw(_in_range(p.wrist_yaw_min, p.wrist_yaw_max))
    return (q0, q1, q2, q3, q4)


def any_pose() -> st.SearchStrategy[tuple[tuple[float, float, float], float, float]]:
    """Any finite TCP pose near the arm: reachable or not."""
    coord = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)
    angle = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)
    return st.tuples(st.tuples(coord, coord, coord), angle, angle)
