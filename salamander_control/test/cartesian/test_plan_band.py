"""A line with a slow band (`cartesian.plan.SlowBand`): the release descent as one plan.

The band is crossed at its speed without stopping at either end; the rest of the line is as fast as
the goal's limits. Tested on the plan (straight, within the limits, the band's speed inside it, the
goal at rest at the end) and on the goal's fields (`config.parse_goal`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.cartesian.config import GoalRejected, MotionConfig, parse_goal
from salamander_control.cartesian.plan import (
    CartesianLimits,
    CartesianState,
    LinePlan,
    SlowBand,
    fit_to_joints,
)
from salamander_control.kinematics import solve_ik_pitched
from salamander_testing.line_metrics import line_deviation

LIMITS = CartesianLimits().scaled(0.5)  # the release descent's speed_scale
ABOVE = np.array([0.38, -0.18, 0.063, 0.0, 0.0])  # compartment 1's place_above (config/cell.yaml)
RELEASE = ABOVE - np.array([0.0, 0.0, 0.12, 0.0, 0.0])  # its release point
RIM_BAND = SlowBand(0.01, 0.059, 0.049)  # 10 mm/s through the 10 mm where the can's bottom passes the rim


def dense(plan: LinePlan, dt: float = 5e-4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    states = [plan.state_at(t) for t in np.arange(0.0, plan.duration + dt, dt)]
    return tuple(np.array([getattr(s, f) for s in states]) for f in ("pose", "velocity", "acceleration"))


def check_band_plan(
    plan: LinePlan, start: np.ndarray, goal: np.ndarray, band: SlowBand, dt: float = 5e-4
) -> np.ndarray:
    """Straight, forward only, within `LIMITS`, at most the band's speed inside it, at rest at the goal."""
    pos, vel, acc = dense(plan, dt)
    assert line_deviation(pos[:, :3], start[:3], goal[:3]) < 1e-9
    length = float(np.linalg.norm(goal[:3] - start[:3]))
    along = (pos[:, :3] - start[:3]) @ (goal[:3] - start[:3]) / length
    assert np.all(np.diff(along) >= -1e-12)  # never back up the line
    speed = np.linalg.norm(vel[:, :3], axis=1)
    assert np.max(speed) <= LIMITS.linear_velocity * (1 + 1e-9)
    assert np.max(np.linalg.norm(acc[:, :3], axis=1)) <= LIMITS.linear_acceleration * (1 + 1e-9)
    to_go = length - along
    inside = (to_go <= band.start) & (to_go >= band.end)
    assert np.max(speed[inside], initial=0.0) <= band.speed * (1 + 1e-6)
    end = plan.state_at(plan.duration)
    np.testing.assert_allclose(end.pose, goal, atol=1e-12)
    assert not np.any(end.velocity)
    return speed


def test_the_release_descent_crosses_the_rim_band_at_its_speed_without_stopping() -> None:
    start = CartesianState.at_rest(ABOVE)
    plan = LinePlan(start, RELEASE, LIMITS, band=RIM_BAND)
    speed = check_band_plan(plan, ABOVE, RELEASE, RIM_BAND)
    # Into the band at its speed (decelerating before it), through it at that speed, then fast again.
    pos, _, _ = dense(plan)
    to_go = np.linalg.norm(RELEASE[:3] - pos[:, :3], axis=1)
    for where in (RIM_BAND.start, 0.054, RIM_BAND.end):
        i = int(np.argmax(to_go <= where))  # the first sample that far before the goal
        assert speed[i] == pytest.approx(RIM_BAND.speed, rel=0.02)
    assert np.max(speed) > 0.1  # the fast legs are fast
    # One plan is quicker than three from rest (to the band, through it, on to the release).
    legs = [(0.0, 0.061, LIMITS), (0.061, 0.071, CartesianLimits().scaled(0.01)), (0.071, 0.12, LIMITS)]
    apart = sum(
        LinePlan(CartesianState.at_rest(ABOVE - [0, 0, a, 0, 0]), ABOVE - [0, 0, b, 0, 0], lim).duration
        for a, b, lim in legs
    )
    assert plan.duration < apart - 0.05  # measured 1.91 s against 1.99 s


@pytest.mark.parametrize(
    ("band", "legs"),
    [
        (SlowBand(0.01, 0.2, 0.049), 2),  # the start lies in the band: it starts at the band's speed
        (SlowBand(0.01, 0.059, 0.0), 2),  # the band reaches the goal: it stops there at the band's ramps
        (SlowBand(0.01, 0.1199, 0.049), 3),  # 0.1 mm away: it enters the band slower than its speed
        (SlowBand(0.01, 0.3, 0.2), 1),  # behind the start: no band
        (SlowBand(2.0, 0.059, 0.049), 1),  # faster than the goal: the band changes nothing
    ],
)
def test_bands_at_either_end_of_the_line(band: SlowBand, legs: int) -> None:
    plan = LinePlan(CartesianState.at_rest(ABOVE), RELEASE, LIMITS, band=band)
    check_band_plan(plan, ABOVE, RELEASE, band)
    assert len(plan._legs) == legs
    if band.speed > LIMITS.linear_velocity:
        plain = LinePlan(CartesianState.at_rest(ABOVE), RELEASE, LIMITS)
        assert plan.duration == pytest.approx(plain.duration)


@settings(max_examples=25, deadline=None)
@given(
    length=st.floats(0.002, 0.3),
    start=st.floats(0.0, 1.2),
    width=st.floats(0.0005, 0.5),
    speed=st.floats(0.002, 0.2),
    pitch=st.floats(-0.3, 0.3),
)
def test_any_band_on_any_line_is_crossed_no_faster_than_its_speed(
    length: float, start: float, width: float, speed: float, pitch: float
) -> None:
    """A band anywhere (before, across or behind the start), any speed: the plan's invariants hold."""
    band = SlowBand(speed, start * length + width, start * length)
    goal = ABOVE + np.array([0.0, -length * 0.6, -length * 0.8, pitch, 0.0])
    plan = LinePlan(CartesianState.at_rest(ABOVE), goal, LIMITS, band=band)
    check_band_plan(plan, ABOVE, goal, band, dt=2e-3)


def test_the_joint_fit_keeps_the_band_and_its_speed() -> None:
    cfg = MotionConfig()
    seed = solve_ik_pitched(ABOVE[:3], 0.0, 0.0, cfg.arm).q
    start = CartesianState.at_rest(ABOVE)
    plan = fit_to_joints(start, RELEASE, LIMITS, cfg.arm, seed, cfg.joint_rate_limits, RIM_BAND)
    assert plan.band == RIM_BAND and len(plan._legs) == 3
    check_band_plan(plan, ABOVE, RELEASE, RIM_BAND)
    assert plan._legs[1].duration == pytest.approx(0.01 / RIM_BAND.speed, rel=1e-6)  # 10 mm at 10 mm/s


def test_a_band_needs_a_plan_from_rest_to_a_goal() -> None:
    moving = CartesianState(ABOVE, np.array([0.0, 0.0, -0.1, 0.0, 0.0]), np.zeros(5))
    with pytest.raises(ValueError, match="starts at rest"):
        LinePlan(moving, RELEASE, LIMITS, band=RIM_BAND)
    with pytest.raises(ValueError, match="starts at rest"):
        LinePlan(moving, None, LIMITS, brake=True, band=RIM_BAND)


# The goal's fields -----------------------------------------------------------------------------------------


def band_goal(scale: float, start: float, end: float, path: str = "linear"):
    return parse_goal(tuple(RELEASE[:3]), 0.0, 0.0, path, 0.5, "bt", band_speed_scale=scale, band_start=start,
                      band_end=end)


def test_a_goal_with_band_fields_carries_its_band_and_zeros_mean_none() -> None:
    goal = band_goal(0.01, 0.059, 0.049)
    assert goal.banded and goal.slow_band(CartesianLimits()) == RIM_BAND  # 0.01 of 1 m/s
    assert goal.slow_band(CartesianLimits(linear_velocity=0.5)).speed == pytest.approx(0.005)
    none = band_goal(0.0, 0.0, 0.0)
    assert not none.banded and none.slow_band(CartesianLimits()) is None


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ((math.nan, 0.059, 0.049), "band_speed_scale must lie in"),
        ((0.005, 0.059, 0.049), "band_speed_scale must lie in"),
        ((1.5, 0.059, 0.049), "band_speed_scale must lie in"),
        ((-0.01, 0.059, 0.049), "band_speed_scale must lie in"),
        ((0.01, math.inf, 0.049), "band_start and band_end must lie in"),
        ((0.01, 0.059, -0.001), "band_start and band_end must lie in"),
        ((0.01, 1e6, 0.049), "band_start and band_end must lie in"),
        ((0.01, 0.049, 0.059), "must lie beyond"),
        ((0.01, 0.05, 0.05), "must lie beyond"),
        ((0.0, 0.059, 0.049), "without a band_speed_scale"),
    ],
)
def test_a_malformed_band_is_rejected(fields: tuple[float, float, float], match: str) -> None:
    with pytest.raises(GoalRejected, match=match):
        band_goal(*fields)


def test_a_band_on_a_joint_goal_is_rejected() -> None:
    with pytest.raises(GoalRejected, match="only a linear goal"):
        band_goal(0.01, 0.059, 0.049, path="joint")
