"""The simulated operator's behaviour against a small world: ManualAdjust's rules and a cell that reports.

`World` plays ManualAdjust and the cell as the operator meets them: the offset integrates the jog
twists (each valid until the next one, zero once 0.3 s old, speed capped at 50 mm/s, radius at 30 mm:
docs/interfaces.md, "Manual placement"), the arm follows the offset with a lag, the cell reports the can
every 0.25 s (its default 4 Hz) and the tree its snapshot every 0.5 s (2 Hz).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_sim.operator.core import MAX_OFFSET, STALE_S, Confirm, Jog, Phase, Say, SimOperator
from salamander_sim.operator.params import OperatorSettings
from salamander_sim.operator.perception import PlacementError, Wait

CLEARANCE = 0.00195  # the box's side clearance: a can confirmed closer than this to the centre goes in clear
DT = 0.05  # the node's timer at 20 Hz
SETTINGS = OperatorSettings()


class World:
    """ManualAdjust + arm + cell, stepped with the operator's timer (see the module docstring)."""

    def __init__(self, error0: tuple[float, float], lag_s: float = 0.2, wait_from: float = 0.0) -> None:
        self.error0 = error0  # true can -> centre vector at offset 0
        self.lag_s = lag_s
        self.wait_from = wait_from
        self.offset = [0.0, 0.0]
        self.can = [0.0, 0.0]  # where the arm has the can (follows the offset)
        self.twist = (0.0, 0.0)
        self.twist_t = -math.inf
        self.last = 0.0
        self.pressed: list[tuple[float, bool, float]] = []  # (time, value, true error then)
        self.jogs: list[tuple[float, Jog]] = []

    def error(self) -> PlacementError:
        return PlacementError(1, self.error0[0] - self.can[0], self.error0[1] - self.can[1])

    def integrate(self, now: float) -> None:
        lo, hi = max(self.last, self.twist_t), min(now, self.twist_t + STALE_S)
        if hi > lo:
            vx, vy = self.twist
            speed = math.hypot(vx, vy)
            if speed > 0.05:
                vx, vy = vx * 0.05 / speed, vy * 0.05 / speed
            ox, oy = self.offset[0] + vx * (hi - lo), self.offset[1] + vy * (hi - lo)
            r = math.hypot(ox, oy)
            if r > MAX_OFFSET:
                ox, oy = ox * MAX_OFFSET / r, oy * MAX_OFFSET / r
            self.offset = [ox, oy]
        step = min(1.0, (now - self.last) / self.lag_s) if self.lag_s > 0 else 1.0
        self.can = [c + (o - c) * step for c, o in zip(self.can, self.offset, strict=True)]
        self.last = now

    def apply(self, actions, now: float) -> None:
        for action in actions:
            if isinstance(action, Jog):
                self.integrate(now)
                self.twist, self.twist_t = (action.vx, action.vy), now
                self.jogs.append((now, action))
            elif isinstance(action, Confirm):
                self.integrate(now)
                self.pressed.append((now, action.value, self.error().norm))


def run(op: SimOperator, world: World, until: float = 60.0) -> World:
    """Step operator and world until the operator pressed (the wait then ends) or `until`."""
    ticks = round(until / DT)
    for i in range(ticks + 1):
        now = i * DT
        world.integrate(now)
        if i % 5 == 0:
            wait = Wait("place_can_1", (*world.offset, 0.0)) if now >= world.wait_from else None
            if world.pressed and now - world.pressed[-1][0] > 0.2:
                wait = None  # the tree took the press: the wait line is gone
            world.apply(op.see_wait(wait, now), now)
        if i % 5 == 0 or i % 5 == 2:  # 4 Hz-ish: every 0.25 s on average
            op.see_scene(world.error(), now)
        world.apply(op.tick(now), now)
        if world.pressed and op.phase is Phase.IDLE:
            break
    return world


def test_a_four_millimetre_error_is_corrected_and_confirmed_clear_of_the_walls():
    op = SimOperator(SETTINGS)
    world = run(op, World((0.004, 0.0)))
    assert len(world.pressed) == 1
    when, value, true_error = world.pressed[0]
    assert value is True and true_error < CLEARANCE
    record = op.records[-1]
    assert record.outcome == "confirmed" and record.strokes >= 1 and record.looks == record.strokes + 1
    assert 1.0 < when < 15.0  # a person: reactions, strokes, looks
    assert math.hypot(*world.offset) == pytest.approx(0.004, abs=CLEARANCE)


def test_nothing_is_published_without_a_wait_and_the_first_act_comes_a_reaction_after_the_can_rests():
    op = SimOperator(SETTINGS)
    for i in range(40):
        op.see_scene(PlacementError(0, 0.003, 0.0), i * DT)
        assert op.tick(i * DT) == []
    world = run(op, World((0.003, 0.0), wait_from=1.0))
    first = world.jogs[0][0]
    # The wait is seen at 1.0; the can reported twice after it (at rest) by ~1.35; then 0.3-0.5 s.
    assert 1.0 + SETTINGS.reaction_time_min_s < first <= 1.0 + 0.5 + SETTINGS.reaction_time_max_s + DT


@settings(max_examples=200, deadline=None)  # each example simulates up to a minute of the loop
@given(
    seed=st.integers(0, 2**31 - 1),
    ex=st.floats(-0.012, 0.012),
    ey=st.floats(-0.012, 0.012),
    sigma=st.floats(0.0, 0.0005),
    lag=st.floats(0.0, 0.5),
)
def test_every_jog_is_within_the_stick_limits_and_every_confirm_is_clear(seed, ex, ey, sigma, lag):
    """Within 50 mm/s; no gap over 0.3 s while the stick is deflected; the shown offset stays within
    30 mm; confirmed only when the can is truly clear of the walls (the look noise is at most 0.5 mm)."""
    op = SimOperator(replace(SETTINGS, seed=seed, look_sigma_xy=sigma))
    world = run(op, World((ex, ey), lag_s=lag))
    assert world.pressed and world.pressed[-1][1] is True
    assert world.pressed[-1][2] < CLEARANCE
    for k, (t, jog) in enumerate(world.jogs):
        nxt = world.jogs[k + 1] if k + 1 < len(world.jogs) else None
        assert math.hypot(jog.vx, jog.vy) <= SETTINGS.jog_speed + 1e-12
        if jog.vx or jog.vy:  # deflected: the next twist (a zero at the end) comes before this one is stale
            assert nxt is not None and nxt[0] - t < STALE_S
    assert math.hypot(*world.offset) <= MAX_OFFSET + 1e-12


def test_the_same_seed_gives_the_same_operator_and_another_seed_another():
    def trace(seed: int) -> list:
        op = SimOperator(replace(SETTINGS, seed=seed))
        world = run(op, World((0.0035, -0.002)))
        return [(t, j) for t, j in world.jogs] + world.pressed

    assert trace(7) == trace(7)
    assert trace(7) != trace(8)


def test_a_centre_beyond_the_thirty_millimetre_bound_is_aborted_without_a_stroke():
    op = SimOperator(SETTINGS)
    world = run(op, World((0.045, 0.0)))
    assert [value for _, value, _ in world.pressed] == [False] and world.jogs == []
    assert op.records[-1].outcome == "aborted"


def test_strokes_are_shortened_to_keep_the_offset_within_thirty_millimetres():
    # 31 mm away (beyond the bound by less than the tolerance): it strokes to the bound, no further.
    op = SimOperator(replace(SETTINGS, look_sigma_xy=0.0, stroke_error=0.0))
    world = run(op, World((0.0304, 0.0)), until=8.0)
    assert world.jogs and math.hypot(*world.offset) <= MAX_OFFSET + 1e-12
    assert world.offset[0] == pytest.approx(MAX_OFFSET, abs=0.001)


def test_a_wait_that_ends_mid_stroke_stops_the_stick_with_zeros_for_the_staleness_then_silence():
    op = SimOperator(replace(SETTINGS, stroke_time_s=2.0, jog_speed=0.01))
    now = 0.0
    op.see_wait(Wait("place_can_0", (0.0, 0.0, 0.0)), now)
    while op.phase is not Phase.STROKE:
        now += DT
        op.see_scene(PlacementError(0, 0.01, 0.0), now)
        op.tick(now)
    assert any(isinstance(a, Jog) and a.vx > 0 for a in op.tick(now + DT))
    end = now + 2 * DT
    said = op.see_wait(None, end)  # e.g. the run was cancelled
    assert op.phase is Phase.IDLE and isinstance(said[0], Say) and op.records[-1].outcome == "ended"
    outputs = [(t, op.tick(t)) for t in (end + k * DT for k in range(1, 20))]
    zeros = [t for t, acts in outputs if acts == [Jog(0.0, 0.0)]]
    assert zeros and all(t - end < STALE_S + 1e-9 for t in zeros)
    assert all(acts == [] for t, acts in outputs if t - end >= STALE_S)


def test_a_can_that_never_rests_is_looked_at_after_the_settle_timeout():
    op = SimOperator(SETTINGS)
    op.see_wait(Wait("place_can_0", (0.0, 0.0, 0.0)), 0.0)
    acted = None
    for i in range(1, 200):
        now = i * DT
        op.see_scene(PlacementError(0, 0.002 + 0.001 * (i % 2), 0.0), now)  # swings 1 mm between reports
        if any(isinstance(a, (Jog, Confirm)) for a in op.tick(now)):
            acted = now
            break
    assert acted is not None
    low = SETTINGS.settle_timeout_s + SETTINGS.reaction_time_min_s
    assert low <= acted <= SETTINGS.settle_timeout_s + SETTINGS.reaction_time_max_s + 2 * DT


def test_a_press_that_does_not_end_the_wait_is_repeated_after_a_new_look():
    op = SimOperator(replace(SETTINGS, look_sigma_xy=0.0))
    wait = Wait("place_can_0", (0.0, 0.0, 0.0))
    op.see_wait(wait, 0.0)
    presses = []
    for i in range(1, 200):
        now = i * DT
        op.see_scene(PlacementError(0, 0.0001, 0.0), now)  # already centred
        op.see_wait(wait, now)  # the tree never takes the press (lost)
        presses += [now for a in op.tick(now) if isinstance(a, Confirm) and a.value]
    assert len(presses) >= 2
    assert presses[1] - presses[0] >= SETTINGS.reconfirm_s + SETTINGS.reaction_time_min_s


def test_a_new_wait_of_another_name_starts_over_and_closes_the_last():
    op = SimOperator(SETTINGS)
    op.see_wait(Wait("place_can_0", (0.0, 0.0, 0.0)), 0.0)
    said = op.see_wait(Wait("place_can_1", (0.0, 0.0, 0.0)), 1.0)
    assert [r.name for r in op.records] == ["place_can_0"] and op.current is not None
    assert op.current.name == "place_can_1" and op.phase is Phase.SETTLING and len(said) == 2
