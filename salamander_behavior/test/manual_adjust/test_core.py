"""ManualAdjust's integrator, without ROS: every bound of the manual placement (docs/interfaces.md)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_behavior.manual_adjust.core import AdjustLimits, AdjustOutcome, ManualAdjustIntegrator

LIMITS = AdjustLimits()


def jog(integ: ManualAdjustIntegrator, vx: float, vy: float, t0: float, t1: float, rate: float = 20) -> None:
    """Publish a twist at `rate` from t0 to t1 and tick at 50 Hz, like ros2 topic pub -r 20."""
    t, next_pub = t0, t0
    while t < t1 - 1e-12:
        if t >= next_pub - 1e-12:
            integ.on_twist(vx, vy, t)
            next_pub += 1.0 / rate
        t = round(t + 0.02, 10)
        integ.update(t)


def test_twenty_mm_per_second_for_one_second_gives_twenty_mm() -> None:
    integ = ManualAdjustIntegrator(LIMITS, start_time=10.0)
    jog(integ, 0.02, 0.0, 10.5, 11.5)
    integ.update(13.0)  # the last twist goes stale 0.3 s after it arrived: no creep afterwards
    x, y = integ.offset
    assert y == 0.0
    # 1 s of 20 Hz twists plus the last one's 0.3 s validity tail = up to 1.25 s of motion.
    assert 0.020 <= x <= 0.020 + 0.02 * 0.3 + 1e-9
    assert integ.on_confirm(True, 13.2)
    assert integ.outcome is AdjustOutcome.CONFIRMED
    assert integ.summary("place_can_1", 20.0) == (
        f"ManualAdjust[place_can_1]: confirmed, offset [{x * 1000:.1f}, 0.0, 0.0] mm after 3.2 s"
    )


def test_stale_twist_counts_as_zero() -> None:
    integ = ManualAdjustIntegrator(LIMITS, start_time=0.0)
    integ.on_twist(0.02, 0.0, received=1.0)
    integ.update(5.0)  # one update long after: only the 0.3 s of validity count
    assert integ.offset[0] == pytest.approx(0.02 * 0.3)


def test_speed_and_offset_are_clamped() -> None:
    integ = ManualAdjustIntegrator(LIMITS, start_time=0.0)
    integ.on_twist(0.3, 0.4, received=0.0)  # 0.5 m/s requested
    integ.update(0.2)
    assert math.hypot(*integ.offset) == pytest.approx(0.05 * 0.2)  # 50 mm/s cap, direction kept
    assert integ.offset[1] / integ.offset[0] == pytest.approx(4.0 / 3.0)
    jog(integ, 0.05, 0.0, 0.2, 10.0)
    assert math.hypot(*integ.offset) == pytest.approx(0.030)  # 30 mm radius cap


def test_confirm_before_the_wait_began_is_ignored() -> None:
    integ = ManualAdjustIntegrator(LIMITS, start_time=5.0)
    assert not integ.on_confirm(True, received=4.9)
    assert integ.update(6.0) is AdjustOutcome.WAITING
    assert not integ.on_twist(0.02, 0.0, received=4.0)


def test_false_aborts_and_timeout_fails() -> None:
    integ = ManualAdjustIntegrator(LIMITS, start_time=0.0)
    integ.on_confirm(False, 1.0)
    assert integ.outcome is AdjustOutcome.ABORTED
    assert not integ.on_confirm(True, 2.0)  # decided: nothing changes it
    slow = ManualAdjustIntegrator(AdjustLimits(timeout=2.0), start_time=0.0)
    assert slow.update(1.99) is AdjustOutcome.WAITING
    assert slow.update(2.5) is AdjustOutcome.TIMED_OUT
    assert slow.elapsed(100.0) == 2.0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_twist_is_refused(bad: float) -> None:
    integ = ManualAdjustIntegrator(LIMITS, start_time=0.0)
    assert not integ.on_twist(bad, 0.0, 0.1)
    integ.update(1.0)
    assert integ.offset == (0.0, 0.0) and integ.ignored_twists == 1


@pytest.mark.parametrize("field", ["max_offset", "max_speed", "stale_after", "timeout"])
def test_limits_validate(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        AdjustLimits(**{field: math.nan})


finite_speed = st.floats(-1.0, 1.0, allow_nan=False)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.tuples(finite_speed, finite_speed, st.floats(0.0, 0.5)), min_size=1, max_size=40))
def test_offset_never_exceeds_bounds_and_moves_no_faster_than_allowed(steps) -> None:  # noqa: ANN001
    integ = ManualAdjustIntegrator(LIMITS, start_time=0.0)
    t = 0.0
    prev = integ.offset
    for vx, vy, dt in steps:
        integ.on_twist(vx, vy, t)
        t += dt
        integ.update(t)
        assert math.hypot(*integ.offset) <= LIMITS.max_offset + 1e-12
        moved = math.dist(prev, integ.offset)
        assert moved <= LIMITS.max_speed * min(dt, LIMITS.stale_after) + 1e-12
        prev = integ.offset


# --- allow_z: the twist's z, within [-max_down_z, +max_offset_z] ---------------------------------------

Z_LIMITS = AdjustLimits(allow_z=True, max_down_z=0.12)  # place_above 120 mm over place_release


def test_without_allow_z_the_twists_z_is_not_used() -> None:
    integ = ManualAdjustIntegrator(LIMITS, start_time=0.0)
    assert integ.on_twist(0.0, 0.0, 0.0, vz=0.02) and integ.on_twist(0.01, 0.0, 0.1, vz=math.nan)
    integ.update(1.0)
    assert integ.offset_z == 0.0 and integ.offset3[2] == 0.0 and integ.ignored_twists == 0
    assert integ.offset[0] == pytest.approx(0.01 * 0.3)
    assert integ.summary("place_can_0", 1.0).endswith(", 0.0] mm after 1.0 s")


def test_with_allow_z_twenty_mm_per_second_up_for_one_second_gives_twenty_mm() -> None:
    integ = ManualAdjustIntegrator(Z_LIMITS, start_time=0.0)
    t = 0.0
    while t < 1.0 - 1e-9:
        integ.on_twist(0.0, 0.0, t, vz=0.02)
        t = round(t + 0.05, 10)
        integ.update(t)
    assert integ.offset_z == pytest.approx(0.020) and integ.offset == (0.0, 0.0)
    assert integ.on_confirm(True, 1.0)
    assert integ.summary("place_can_0", 1.0) == (
        "ManualAdjust[place_can_0]: confirmed, offset [0.0, 0.0, 20.0] mm after 1.0 s"
    )
    assert not ManualAdjustIntegrator(Z_LIMITS, 0.0).on_twist(0.0, 0.0, 0.0, vz=math.inf)  # refused


def test_z_stops_at_thirty_mm_up_and_at_the_release_height_down() -> None:
    integ = ManualAdjustIntegrator(Z_LIMITS, start_time=0.0)
    for i in range(40):
        integ.on_twist(0.0, 0.0, i * 0.05, vz=0.05)
        integ.update((i + 1) * 0.05)
    assert integ.offset_z == pytest.approx(0.030)
    # place_above only 10 mm over place_release: down stops 10 mm below the planned place_above.
    low = ManualAdjustIntegrator(AdjustLimits(allow_z=True, max_down_z=0.010), start_time=0.0)
    for i in range(40):
        low.on_twist(0.0, 0.0, i * 0.05, vz=-0.05)
        low.update((i + 1) * 0.05)
    assert low.offset_z == pytest.approx(-0.010)
    # Unknown release height (max_down_z 0): up only.
    up_only = ManualAdjustIntegrator(AdjustLimits(allow_z=True), start_time=0.0)
    up_only.on_twist(0.0, 0.0, 0.0, vz=-0.05)
    up_only.update(1.0)
    assert up_only.offset_z == 0.0


def test_the_speed_cap_is_on_the_whole_velocity_with_z() -> None:
    integ = ManualAdjustIntegrator(Z_LIMITS, start_time=0.0)
    integ.on_twist(0.3, 0.0, 0.0, vz=0.4)
    integ.update(0.2)
    assert math.dist((0.0, 0.0, 0.0), integ.offset3) == pytest.approx(0.05 * 0.2)
    assert integ.offset_z / integ.offset[0] == pytest.approx(4.0 / 3.0)


@pytest.mark.parametrize("bad", [-0.001, math.nan, math.inf])
def test_a_bad_max_down_z_is_refused(bad) -> None:
    with pytest.raises(ValueError, match="max_down_z"):
        AdjustLimits(allow_z=True, max_down_z=bad)


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.tuples(finite_speed, finite_speed, finite_speed, st.floats(0.0, 0.5)), min_size=1, max_size=40
    ),
    st.floats(0.0, 0.2),
)
def test_with_allow_z_the_offset_stays_in_bounds_and_moves_no_faster_than_allowed(steps, down) -> None:  # noqa: ANN001
    limits = AdjustLimits(allow_z=True, max_down_z=down)
    integ = ManualAdjustIntegrator(limits, start_time=0.0)
    t = 0.0
    prev = integ.offset3
    for vx, vy, vz, dt in steps:
        integ.on_twist(vx, vy, t, vz=vz)
        t += dt
        integ.update(t)
        assert math.hypot(*integ.offset) <= limits.max_offset + 1e-12
        assert -min(down, 0.030) - 1e-12 <= integ.offset_z <= 0.030 + 1e-12
        moved = math.dist(prev, integ.offset3)
        assert moved <= limits.max_speed * min(dt, limits.stale_after) + 1e-12
        prev = integ.offset3
