"""Ruckig wrapper and the trajectory generator's per-cycle pipeline (goal projection, Ruckig, post-clamp).

The property tests drive thousands of random goal sequences (NaN, out of range, alpha/beta changed
under the arm, stops) through `TrajectoryCore` and hold every command to the limits: finite, inside
the joint limits (or, right after a narrowing, never further outside than the previous command) and
no faster than the velocity limits.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import REST_POSTURE, ArmParams, project_to_feasible, within_limits
from salamander_control.trajectory.clamp import BEAM_CUT_BACK, PROJECTION, beam_within_limits
from salamander_control.trajectory.core import (
    ROUNDING,
    TrajectoryConfig,
    TrajectoryCore,
    relax_to_include,
)
from salamander_control.trajectory.otg import MotionLimits, Otg, OtgSample

DT = 0.002
LIMITS = MotionLimits()
DEFAULT = TrajectoryConfig(ArmParams(), LIMITS, 500.0)
VEL_TOL = 1e-6  # relative; Ruckig's profiles meet their limits to ~1e-12, the finite differences to ~1e-9


def run_to_end(otg: Otg, max_steps: int = 20000) -> list[OtgSample]:
    samples = []
    for _ in range(max_steps):
        sample = otg.step()
        assert not sample.error
        samples.append(sample)
        if sample.finished:
            return samples
    raise AssertionError("trajectory did not finish")


def assert_within_motion_limits(samples: list[OtgSample], limits: MotionLimits) -> None:
    for s in samples:
        for i in range(5):
            assert abs(s.velocity[i]) <= limits.max_velocity[i] * (1 + VEL_TOL)
            assert abs(s.acceleration[i]) <= limits.max_acceleration[i] * (1 + VEL_TOL)


# --- Otg ---------------------------------------------------------------------------------------------


def test_reaches_the_target_exactly_on_a_straight_line_within_the_limits() -> None:
    start, target = REST_POSTURE, (1.0, 0.3, 0.4, -0.5, 2.0)
    otg = Otg(LIMITS, DT, start)
    otg.set_target(target)
    samples = run_to_end(otg)
    assert samples[-1].position == target and samples[-1].velocity == (0.0,) * 5
    assert_within_motion_limits(samples, LIMITS)
    # Phase synchronisation: every sample lies on the segment start -> target (so inside a convex set).
    span = [t - s for s, t in zip(start, target, strict=True)]
    for s in samples:
        frac = (s.position[4] - start[4]) / span[4]
        assert s.position == pytest.approx([a + frac * d for a, d in zip(start, span, strict=True)], abs=1e-9)
    assert samples[0].calculation_us > 0.0  # Ruckig's own timing of the first (planning) step


def test_stop_decelerates_within_the_limits_then_holds() -> None:
    otg = Otg(LIMITS, DT, (0.0,) * 5)
    otg.set_target((10.0, 0.0, 0.0, 0.0, 0.0))
    for _ in range(1000):
        moving = otg.step()
    assert moving.velocity[0] == pytest.approx(LIMITS.max_velocity[0])
    otg.stop()
    assert otg.target is None
    samples = run_to_end(otg)
    assert_within_motion_limits(samples, LIMITS)
    speeds = [s.velocity[0] for s in samples]
    assert all(b <= a + 1e-12 for a, b in zip(speeds, speeds[1:], strict=False))  # only slows down
    # Jerk-limited braking from 1.5 rad/s: v/a + a/j = 0.475 s, about 0.36 rad; far short of the goal.
    assert len(samples) * DT == pytest.approx(0.475, abs=0.01)
    stopped = samples[-1].position
    assert stopped[0] == pytest.approx(moving.position[0] + 0.36, abs=0.01)
    held = [otg.step() for _ in range(50)]
    assert all(s.position == pytest.approx(stopped, abs=1e-12) and s.velocity[0] == 0.0 for s in held)


def test_new_limits_apply_from_the_next_step_only() -> None:
    otg = Otg(LIMITS, DT, (0.0,) * 5)
    otg.set_target((3.0, 0.0, 0.0, 0.0, 0.0))
    for _ in range(1000):
        otg.step()
    slow = MotionLimits(max_velocity=(0.5, 1.0, 1.0, 2.0, 2.0))
    otg.set_limits(slow)
    assert otg.last.velocity[0] == pytest.approx(1.5)  # nothing happens between steps
    samples = run_to_end(otg)
    speeds = [s.velocity[0] for s in samples]
    assert speeds[0] < 1.5
    assert all(b <= a + 1e-12 for a, b in zip(speeds, speeds[1:], strict=False) if b > 0.5)
    assert max(speeds[200:]) <= 0.5 * (1 + VEL_TOL)  # braked to the new limit (1 rad/s at 3 rad/s^2: 0.4 s)
    assert samples[-1].position[0] == 3.0


def test_a_velocity_limit_lowered_while_cruising_is_braked_down_to_within_the_acceleration_limit() -> None:
    """The generator's rate backstop leaves a joint already faster than a new limit to Ruckig's braking."""
    core = TrajectoryCore(DEFAULT, REST_POSTURE)
    core.set_goal((3.0, *REST_POSTURE[1:]), DEFAULT.arm)
    for _ in range(1000):  # cruising at base_yaw's 1.5 rad/s
        core.step(DEFAULT)
    slow = TrajectoryConfig(DEFAULT.arm, MotionLimits(max_velocity=(0.3, 1.0, 1.0, 2.0, 2.0)), 500.0)
    speeds = [core.step(slow).velocity[0] for _ in range(400)]
    assert speeds[0] > 1.49  # no jump down in one cycle ...
    steps = [(a - b) / DT for a, b in zip(speeds, speeds[1:], strict=False)]
    assert max(steps) <= LIMITS.max_acceleration[0] * (1 + VEL_TOL)  # ... it brakes at most at 4 rad/s^2
    assert speeds[-1] <= 0.3 * (1 + VEL_TOL)


def test_bad_targets_and_states_are_refused_and_change_nothing() -> None:
    otg = Otg(LIMITS, DT, REST_POSTURE)
    for bad in ((math.nan, 0.0, 0.0, 0.0, 0.0), (0.0,) * 4, (math.inf,) * 5):
        with pytest.raises(ValueError):
            otg.set_target(bad)
        with pytest.raises(ValueError):
            otg.resync(bad)
    assert otg.target == REST_POSTURE
    assert otg.step().position == REST_POSTURE
    with pytest.raises(ValueError, match="> 0"):
        MotionLimits(max_velocity=(1.0, 1.0, 0.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="finite"):
        MotionLimits(max_jerk=(1.0, 1.0, math.nan, 1.0, 1.0))


def test_a_ruckig_error_returns_the_previous_state_with_a_flag_never_nan() -> None:
    otg = Otg(LIMITS, DT, (0.0,) * 5)
    otg.set_target((0.5, 0.0, 0.0, 0.0, 0.0))
    for _ in range(100):
        before = otg.step()
    for target in (1e12, 1e5):  # Ruckig raises for one, returns an unknown result code (-101) for the other
        otg.set_target((target,) * 5)
        failed = otg.step()
        assert failed.error and not failed.finished
        assert (failed.position, failed.velocity, failed.acceleration) == (
            before.position, before.velocity, before.acceleration,
        )
    otg.set_target((0.5, 0.0, 0.0, 0.0, 0.0))
    assert run_to_end(otg)[-1].position == (0.5, 0.0, 0.0, 0.0, 0.0)  # and it carries on from there


def test_a_distance_on_ruckigs_profile_boundary_is_planned_and_reached_exactly() -> None:
    """Ruckig 0.19.4 raises in its step 1 for 0.06000000000000005 rad at a = 3, j = 30 (= 2 a^3 / j^2)."""
    start, target = (0.0, 0.0, 0.5, 0.0, 0.0), (0.0, 0.06000000000000005, 1.309, 0.0, 0.0)
    otg = Otg(LIMITS, DT, start)
    otg.set_target(target)
    samples = run_to_end(otg)
    assert samples[-1].position == target and samples[-1].velocity == (0.0,) * 5
    assert_within_motion_limits(samples, LIMITS)
    held = [otg.step() for _ in range(50)]  # at rest exactly on the target: no creeping back and forth
    assert all(h.position == target and h.velocity == (0.0,) * 5 and not h.error for h in held)


# --- TrajectoryCore: deterministic cases --------------------------------------------------------------


def run_core(core: TrajectoryCore, config: TrajectoryConfig, steps: int) -> list:
    return [core.step(config) for _ in range(steps)]


def max_rates(outputs: list, start: tuple[float, ...], dt: float) -> list[float]:
    rates, prev = [0.0] * 5, start
    for out in outputs:
        rates = [max(r, abs(b - a) / dt) for r, a, b in zip(rates, prev, out.position, strict=True)]
        prev = out.position
    return rates


def test_first_command_is_the_measured_start_and_goals_beyond_the_limits_are_projected() -> None:
    core = TrajectoryCore(DEFAULT, REST_POSTURE)
    assert core.step(DEFAULT).position == REST_POSTURE  # starting never jumps
    projected = core.set_goal((0.5, -1.0, 1.0, 0.0, 0.0), DEFAULT.arm)  # q2 - q1 = 2.0 > alpha_max
    assert projected.active == ("alpha_max",) and projected.q[2] - projected.q[1] <= 1.40
    outputs = run_core(core, DEFAULT, 1500)
    assert outputs[-1].position == projected.q  # exactly on the bound, not a hair beyond
    assert not any(out.clamp.clamped for out in outputs)  # a straight line inside a convex set


def test_narrowing_alpha_under_the_arm_returns_it_smoothly_within_the_limits() -> None:
    core = TrajectoryCore(DEFAULT, REST_POSTURE)
    core.set_goal((0.0, -1.0, 0.4, 0.0, 0.0), DEFAULT.arm)  # q2 - q1 = 1.4, on the default bound
    at_bound = run_core(core, DEFAULT, 1500)[-1].position
    narrowed = TrajectoryConfig(ArmParams(alpha_max=1.2), LIMITS)
    outputs = run_core(core, narrowed, 1500)
    assert outputs[0].outside == pytest.approx(0.2 / math.sqrt(2), abs=1e-3)  # was outside: no jump
    rates = max_rates(outputs, at_bound, DT)
    assert all(r <= v * (1 + VEL_TOL) for r, v in zip(rates, LIMITS.max_velocity, strict=True))
    diffs = [out.position[2] - out.position[1] for out in outputs]
    assert all(b <= a for a, b in zip(diffs, diffs[1:], strict=False))  # never moves further out
    settled = next(i for i, out in enumerate(outputs) if out.outside == 0.0)
    assert settled * DT < 1.0
    assert all(within_limits(out.position, narrowed.arm) for out in outputs[settled:])


def test_narrowing_while_moving_outwards_brakes_at_the_wall_then_returns() -> None:
    core = TrajectoryCore(DEFAULT, (0.0, -0.5, 0.3, 0.0, 0.0))
    core.set_goal((0.0, -1.3, 0.1, 0.0, 0.0), DEFAULT.arm)  # q2 - q1 grows from 0.8 towards 1.4
    before = run_core(core, DEFAULT, 300)[-1]
    assert 1.0 < before.position[2] - before.position[1] < 1.2 and abs(before.velocity[1]) > 0.5
    narrowed = TrajectoryConfig(ArmParams(alpha_max=1.1), LIMITS)
    outputs = run_core(core, narrowed, 2000)
    walls = [out for out in outputs if out.clamp.clamped]
    assert walls and all(out.clamp.amount > 0 for out in walls)  # Ruckig overshot
    # At the wall the beam is cut back onto alpha_max and the shoulder kept (the operating notes' rule);
    # sliding down the wall, the arm can overshoot the corner (q1 = -1.1, q2 = 0), where no q2 fits q1
    # and the projection takes over.
    alpha_walls = [out for out in walls if out.clamp.active == ("alpha_max",)]
    assert alpha_walls and all(
        out.clamp.rule == BEAM_CUT_BACK and out.position[1] == out.requested[1] for out in alpha_walls
    )
    assert all(out in alpha_walls or (out.clamp.active == ("q2_min",) and out.clamp.rule == PROJECTION
                                      and out.position[1:3] == (-1.1, 0.0)) for out in walls)
    worst = max(out.position[2] - out.position[1] for out in outputs)
    assert worst <= max(1.1, before.position[2] - before.position[1])  # never further out than it was
    rates = max_rates(outputs, before.position, DT)
    assert all(r <= v * (1 + VEL_TOL) for r, v in zip(rates, LIMITS.max_velocity, strict=True))
    assert within_limits(outputs[-1].position, narrowed.arm) and outputs[-1].outside == 0.0
    assert outputs[-1].position == core.goal


def test_stop_brakes_and_the_goal_becomes_where_it_stopped() -> None:
    core = TrajectoryCore(DEFAULT, (0.0, 0.0, 0.5, 0.0, 0.0))
    core.set_goal((2.5, 0.0, 0.5, 0.0, 0.0), DEFAULT.arm)
    moving = run_core(core, DEFAULT, 800)[-1]
    core.stop()
    assert core.stopping
    outputs = run_core(core, DEFAULT, 400)
    finished = [i for i, out in enumerate(outputs) if out.stop_finished]
    assert len(finished) == 1 and not core.stopping
    rest = outputs[finished[0]].position
    assert rest[0] < 2.5 and core.goal == rest
    assert all(out.position == rest and out.velocity == (0.0,) * 5 for out in outputs[finished[0]:])
    speeds = [out.velocity[0] for out in outputs[: finished[0] + 1]]
    assert speeds[0] <= moving.velocity[0]
    assert all(b <= a + 1e-12 for a, b in zip(speeds, speeds[1:], strict=False))


def test_a_ruckig_failure_holds_one_cycle_then_brakes(monkeypatch: pytest.MonkeyPatch) -> None:
    core = TrajectoryCore(DEFAULT, (0.0, 0.0, 0.5, 0.0, 0.0))
    core.set_goal((2.5, 0.0, 0.5, 0.0, 0.0), DEFAULT.arm)
    last = run_core(core, DEFAULT, 800)[-1]
    real_step = Otg.step
    monkeypatch.setattr(Otg, "step", lambda self: real_step(self)._replace(error="injected"))
    failed = core.step(DEFAULT)
    monkeypatch.setattr(Otg, "step", real_step)
    assert failed.error == "injected" and failed.position == last.position and failed.velocity == (0.0,) * 5
    assert core.stopping  # braking from the state it had, not from zero velocity
    outputs = run_core(core, DEFAULT, 400)
    assert any(out.stop_finished for out in outputs)
    rates = max_rates(outputs, failed.position, DT)
    assert rates[0] <= LIMITS.max_velocity[0] * (1 + VEL_TOL)


def test_relax_to_include_only_widens_the_crossed_bounds() -> None:
    arm = ArmParams(alpha_max=1.2)
    assert relax_to_include(arm, (0.0, -1.0, 0.5, 0.0, 0.0)) == arm.with_changes(alpha_max=1.5)
    assert relax_to_include(arm, (0.0, 0.0, 0.3, 0.0, 0.0)) is arm
    wide = relax_to_include(arm, (7.0, 0.0, 0.3, 0.0, -7.0))
    assert wide.yaw_max == 2 * math.pi and wide.wrist_yaw_min == -2 * math.pi  # ArmParams' own range


# --- TrajectoryCore: properties over random goal sequences ---------------------------------------------

finite = st.floats(-4.0, 4.0, allow_nan=False)
coordinate = st.one_of(finite, st.sampled_from([math.nan, math.inf, -math.inf, 10.0, -10.0]))
steps = st.integers(1, 60)
action = st.one_of(
    st.tuples(st.just("goal"), st.lists(coordinate, min_size=5, max_size=5), steps),
    st.tuples(st.just("alpha"), st.floats(0.0, 2.7), steps),
    st.tuples(st.just("beta"), st.floats(0.0, 2.7), steps),
    st.tuples(st.just("stop"), st.none(), steps),
)
limit_values = st.tuples(st.floats(0.2, 3.0), st.floats(0.5, 20.0), st.floats(5.0, 300.0))


def start_inside(q: list[float], arm: ArmParams) -> tuple[float, ...]:
    p = project_to_feasible(q[1], q[2], arm)
    return (min(max(q[0], -3.1), 3.1), p.q1, p.q2, min(max(q[3], -1.5), 1.5), q[4] % 3.0)


@settings(max_examples=1200, deadline=None)
@given(
    start=st.lists(finite, min_size=5, max_size=5),
    per_joint=st.lists(limit_values, min_size=5, max_size=5),
    rate=st.sampled_from([50.0, 100.0, 250.0, 500.0, 1000.0]),
    actions=st.lists(action, min_size=1, max_size=6),
)
def test_every_command_is_finite_limited_and_inside_the_limits(start, per_joint, rate, actions) -> None:
    limits = MotionLimits(*zip(*per_joint, strict=True))
    config = TrajectoryConfig(ArmParams(), limits, rate)
    dt = 1.0 / rate
    core = TrajectoryCore(config, start_inside(start, config.arm))
    # Projecting onto the coupled half-planes trades motion between q1 and q2 (never more than either).
    vmax = list(limits.max_velocity)
    vmax[1] = vmax[2] = max(vmax[1], vmax[2])
    prev = core.command
    for kind, value, n in actions:
        if kind == "goal":
            if all(math.isfinite(v) for v in value):
                core.set_goal(value, config.arm)
            else:
                with pytest.raises(ValueError):
                    core.set_goal(value, config.arm)
        elif kind == "stop":
            core.stop()
        else:
            config = TrajectoryConfig(config.arm.with_changes(**{f"{kind}_max": value}), limits, rate)
        for _ in range(n):
            region = relax_to_include(config.arm, prev)  # the limits, or as far out as the last command
            out = core.step(config)
            q = out.position
            assert not out.error
            assert all(math.isfinite(v) for v in (*q, *out.velocity))
            assert within_limits(q, region)
            if region is config.arm:
                assert within_limits(q, config.arm) and out.outside == 0.0
            for i in range(5):
                assert abs(q[i] - prev[i]) <= vmax[i] * dt * (1 + VEL_TOL) + 1e-12
                assert abs(out.velocity[i]) <= vmax[i] * (1 + VEL_TOL) + 1e-12
            # The post-clamp keeps the shoulder wherever a beam angle fits it (the operating notes' rule).
            r1, r2 = out.requested[1], out.requested[2]
            if region.q1_min <= r1 <= region.q1_max and beam_within_limits(r1, r2, region) is not None:
                assert q[1] == r1, (out.requested, q, out.clamp)
            prev = q


@settings(max_examples=200, deadline=None)
@given(
    start=st.lists(finite, min_size=5, max_size=5),
    goal=st.lists(st.floats(-10.0, 10.0), min_size=5, max_size=5),
    alpha=st.floats(0.0, 2.7),
    beta=st.floats(0.0, 2.7),
)
def test_the_arm_ends_exactly_at_the_projected_goal_even_after_a_narrowing(start, goal, alpha, beta) -> None:
    core = TrajectoryCore(DEFAULT, start_inside(start, DEFAULT.arm))
    projected = core.set_goal(goal, DEFAULT.arm).q
    run_core(core, DEFAULT, 50)  # under way when the limits change
    config = TrajectoryConfig(ArmParams(alpha_max=alpha, beta_max=beta), LIMITS)
    for _ in range(10000):
        out = core.step(config)
        if out.position == core.goal and out.velocity == (0.0,) * 5:
            break
    assert within_limits(out.position, config.arm) and out.outside == 0.0
    assert out.position == pytest.approx(project_with(projected, config.arm), abs=ROUNDING)
    assert core.step(config).position == out.position  # and holds there


def project_with(q: tuple[float, ...], arm: ArmParams) -> tuple[float, ...]:
    p = project_to_feasible(q[1], q[2], arm)
    return (q[0], p.q1, p.q2, q[3], q[4])
