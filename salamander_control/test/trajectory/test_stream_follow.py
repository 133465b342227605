"""The trajectory core following a stream of joint targets sampled from straight Cartesian lines.

The Cartesian motion core (`cartesian.goal.start_goal`, the node's own code) streams a joint target with
its joint velocities every 10 ms; the trajectory core runs at 500 Hz; the commanded joints are mapped
back to the TCP with the FK. A user notices the result as the TCP leaving the straight line: the place
descent has 1.95 mm of side clearance, so it must stay within 1 mm. Point-to-point (each sample a goal at
rest, what goals without velocities still get) is measured alongside for comparison.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from salamander_control.cartesian.config import MotionConfig, parse_goal
from salamander_control.cartesian.goal import start_goal
from salamander_control.cartesian.plan import CartesianLimits
from salamander_control.kinematics import (
    ArmParams,
    forward_kinematics,
    solve_ik_pitched,
    within_limits,
)
from salamander_control.trajectory.core import TrajectoryConfig, TrajectoryCore
from salamander_control.trajectory.otg import MotionLimits
from salamander_control.trajectory.stream_follow import StreamFollower, stream_limit_problem
from salamander_testing.kin_strategies import feasible_joints
from salamander_testing.line_metrics import line_deviation

LIMITS = MotionLimits()
CONFIG = TrajectoryConfig(ArmParams(), LIMITS)
DT = 0.002
SAMPLE_EVERY = 5  # cycles: the Cartesian node's 100 Hz against the generator's 500 Hz
TOL = 1 + 1e-9
# The pick-and-place descents (config/cell.yaml): pad straight down, 120 mm into each compartment.
DESCENTS = [((x, -0.18, 0.063), (x, -0.18, -0.057)) for x in (0.3069, 0.38, 0.4531)]
Q_START = (0.2, 0.1, 0.6, 0.1, 0.0)


def tcp(q) -> np.ndarray:
    return np.array(forward_kinematics(q).tcp)


def stream_line(q_start, target, speed, streamed=True, stop_after=None, latency=None, pitch=0.0, yaw=0.0):
    """Run a linear Cartesian goal through the trajectory core; returns (commands, outputs, sent samples).

    Args:
        speed: the TCP speed limit, m/s (the plan is slowed further to fit the joint limits).
        streamed: send the velocities (else: positions only, each a goal at rest).
        stop_after: stop sending after this many samples (the sender died).
        latency: callable -> cycles each sample is delivered late (its age is passed along).
    """
    cfg = MotionConfig(limits=CartesianLimits(linear_velocity=speed))
    run, early = start_goal(parse_goal(target, pitch, yaw, "linear", 1.0, "bt"), cfg, 0.0, q_start, None)
    assert early is None, early.message
    core = TrajectoryCore(CONFIG, q_start)
    q, outputs, sent, pending = tuple(q_start), [], [], []
    duration = run.motion.plan.duration
    for k in range(int((duration + 1.5) / DT)):
        if k % SAMPLE_EVERY == 0 and (stop_after is None or len(sent) < stop_after):
            cycle = run.step(k * DT, cfg, q)
            if cycle.target is not None:
                sent.append(cycle.target)
                delay = latency() if latency else 0
                pending.append((k + delay, k, cycle.target))
        while pending and pending[0][0] <= k:
            _, at, (joints, qd) = pending.pop(0)
            core.set_goal(joints, CONFIG.arm, qd if streamed else None, age=(k - at) * DT)
        out = core.step(CONFIG)
        outputs.append(out)
        q = out.position
    return np.array([o.position for o in outputs]), outputs, sent


def smoothstep(t: float, duration: float) -> tuple[float, float]:
    """0 -> 1 over `duration` with zero velocity and acceleration at both ends; (s, ds/dt)."""
    x = min(max(t / duration, 0.0), 1.0)
    return x**3 * (10 - 15 * x + 6 * x * x), 30 * x * x * (1 - x) ** 2 / duration


def assert_within_limits(commands: np.ndarray, start) -> None:
    prev = np.array(start)
    vmax = np.array(LIMITS.max_velocity)
    for q in commands:
        assert within_limits(tuple(q), CONFIG.arm)
        assert np.all(np.abs(q - prev) <= vmax * DT * TOL)
        prev = q


LINES = [
    pytest.param(*DESCENTS[0], 0.3, id="descent-compartment0-0.3m/s"),
    pytest.param(*DESCENTS[1], 0.1, id="descent-compartment1-0.1m/s"),
    pytest.param(*DESCENTS[2], 0.2, id="descent-compartment2-0.2m/s"),
    pytest.param(None, (0.35, -0.1, 0.0), 0.3, id="diagonal-0.3m/s"),
    pytest.param(None, (0.3, 0.12, 0.04), 0.3, id="across-0.3m/s"),
]


@pytest.mark.parametrize(("start", "target", "speed"), LINES)
def test_a_streamed_line_is_followed_within_a_millimetre_and_ends_exactly(start, target, speed) -> None:
    q_start = Q_START if start is None else solve_ik_pitched(start, 0.0, 0.0).q
    a, b = tcp(q_start), np.array(target)
    commands, outputs, sent = stream_line(q_start, target, speed)
    followed = line_deviation(np.array([tcp(q) for q in commands]), a, b)
    p2p_commands, _, _ = stream_line(q_start, target, speed, streamed=False)
    point_to_point = line_deviation(np.array([tcp(q) for q in p2p_commands]), a, b)
    print(
        f"max TCP deviation: followed {followed * 1e6:.4f} um, point-to-point {point_to_point * 1e3:.2f} mm"
    )
    assert followed <= 1e-3
    assert followed * 10 < point_to_point  # the improvement is the streaming, not an easy line
    final = sent[-1][0]
    assert tuple(commands[-1]) == final and outputs[-1].velocity == (0.0,) * 5  # exactly, at rest
    assert math.dist(tcp(commands[-1]), target) < 1e-9
    assert sum(o.streaming for o in outputs) > 0.8 * len(sent) * SAMPLE_EVERY  # really followed
    assert not any(o.stream_event for o in outputs) and not any(o.clamp.clamped for o in outputs)
    assert_within_limits(commands, q_start)


def test_late_samples_still_follow_the_line() -> None:
    """A loaded machine: every sample 0-8 ms late, one in five stalled up to 28 ms (beyond the delay)."""
    rng = np.random.default_rng(7)

    def latency() -> int:  # cycles
        return int(rng.integers(0, 5)) + (int(rng.integers(0, 10)) if rng.random() < 0.2 else 0)

    for start, target in DESCENTS:
        q_start = solve_ik_pitched(start, 0.0, 0.0).q
        commands, outputs, sent = stream_line(q_start, target, 0.3, latency=latency)
        deviation = line_deviation(np.array([tcp(q) for q in commands]), tcp(q_start), np.array(target))
        print(f"max TCP deviation with late samples: {deviation * 1e6:.2f} um")
        assert deviation <= 1e-3 and tuple(commands[-1]) == sent[-1][0]
        assert not any(o.stream_event for o in outputs)
        assert_within_limits(commands, q_start)


def test_a_stream_that_stops_midway_comes_to_rest_at_its_last_sample() -> None:
    start, target = DESCENTS[0]
    q_start = solve_ik_pitched(start, 0.0, 0.0).q
    commands, outputs, sent = stream_line(q_start, target, 0.3, stop_after=40)  # 0.4 s: at full speed
    last_q, last_qd = sent[-1]
    assert max(abs(v) for v in last_qd) > 0.2  # it stopped while moving
    events = [(i, o.stream_event) for i, o in enumerate(outputs) if o.stream_event]
    assert len(events) == 1 and events[0][1].startswith("timeout")
    # Last sample arrived at cycle 39 * 5; the timeout is 0.05 s after that.
    assert events[0][0] * DT == pytest.approx(39 * SAMPLE_EVERY * DT + CONFIG.stream_timeout, abs=2 * DT)
    assert tuple(commands[-1]) == last_q and outputs[-1].velocity == (0.0,) * 5  # at rest, exactly there
    assert_within_limits(commands, q_start)
    past = max(float(np.dot(tcp(q) - tcp(last_q), np.array(target) - np.array(start))) for q in commands)
    overshoot = past / np.linalg.norm(np.array(target) - np.array(start))
    print(f"TCP overshoot past the last sample before returning to it: {overshoot * 1e3:.1f} mm")
    # No runaway: per joint, no further past the last sample than coasting until the timeout and then a
    # jerk-limited stop from that speed (t = v/a + a/j) take it. It cannot stop on the spot at speed. The
    # stop brakes along the streamed TCP line (issue 13.2), whose Cartesian limits are what every joint
    # allows over the whole stretch, so no joint brakes at its own full rate: up to 1.25x the joint-space
    # stop's excursion (measured here: 1.05x on the shoulder).
    v = np.abs(np.array(last_qd))
    a, j = np.array(LIMITS.max_acceleration), np.array(LIMITS.max_jerk)
    bound = 1.25 * v * (CONFIG.stream_timeout + v / a + a / j)
    excursion = np.max(np.abs(commands - np.array(last_q)), axis=0)
    assert np.all(excursion <= bound + 1e-9), (excursion, bound)
    vmax = np.array(LIMITS.max_velocity)
    assert all(np.all(np.abs(o.velocity) <= vmax * TOL) for o in outputs)


def test_a_sample_outside_the_limits_is_reached_at_rest_on_them_not_at_speed() -> None:
    start, step = np.array((0.0, -0.5, 0.6, 0.0, 0.0)), np.array((0.0, -0.4, 0.3, 0.0, 0.0))
    core = TrajectoryCore(CONFIG, tuple(start))
    for k in range(1, 31):  # a smooth stream (smoothstep over 1 s) heading for alpha_max = q2 - q1 <= 1.40
        s_, ds = smoothstep(k * 0.01, 1.0)
        qd = tuple(step * ds)
        core.set_goal(tuple(start + step * s_), CONFIG.arm, qd)
        outputs = [core.step(CONFIG) for _ in range(SAMPLE_EVERY)]
        assert all(o.streaming for o in outputs)
    projected = core.set_goal((0.0, -1.0, 0.6, 0.0, 0.0), CONFIG.arm, qd)  # q2 - q1 = 1.6: projected
    assert projected.clamped and not core.streaming
    outputs = [core.step(CONFIG) for _ in range(1500)]
    assert outputs[-1].position == projected.q and outputs[-1].velocity == (0.0,) * 5
    assert all(within_limits(o.position, CONFIG.arm) for o in outputs)


def test_goals_without_velocities_and_zero_velocity_goals_are_still_reached_at_rest() -> None:
    for velocity in (None, (0.0,) * 5):
        core = TrajectoryCore(CONFIG, (0.0, 0.0, 0.5, 0.0, 0.0))
        core.set_goal((1.0, 0.0, 0.5, 0.0, 0.0), CONFIG.arm, velocity)
        assert not core.streaming
        outputs = [core.step(CONFIG) for _ in range(1000)]
        assert outputs[-1].position == (1.0, 0.0, 0.5, 0.0, 0.0)
        assert not any(o.streaming for o in outputs) and outputs[0].calculation_us > 0.0  # Ruckig's


def test_a_zero_velocity_sample_next_to_the_command_anchors_a_stream_that_ends_there_at_rest() -> None:
    start = (0.0, 0.0, 0.5, 0.0, 0.0)
    anchor = (0.0, 0.004, 0.5, 0.0, 0.0)  # within STREAM_ANCHOR: a sender's plan from the measured joints
    core = TrajectoryCore(CONFIG, start)
    core.set_goal(anchor, CONFIG.arm, (0.0,) * 5)
    assert core.streaming
    outputs = [core.step(CONFIG) for _ in range(600)]
    assert outputs[-1].position == anchor and outputs[-1].velocity == (0.0,) * 5 and not core.streaming
    assert not any(o.stream_event for o in outputs)
    assert_within_limits(np.array([o.position for o in outputs]), start)


def _drive(run, cfg, core, corrupt_sample: int | None = None) -> tuple[list, list, list]:
    """Step a Cartesian goal run (100 Hz, exact timing) into `core` (500 Hz) until the goal succeeds.

    The arm tracks the command exactly (the run measures `core.command`). `corrupt_sample` (1-based) is
    sent with velocities that contradict the path (x -10). Returns (the core's outputs, the joints sent,
    the run's events).
    """
    outputs, sent, events = [], [], []
    for k in range(int((run.motion.plan.duration + 5.0) / DT)):
        if k % SAMPLE_EVERY == 0:
            cycle = run.step(k * DT, cfg, core.command)
            events += [cycle.event] if cycle.event else []
            if cycle.target is not None:
                joints, qd = cycle.target
                sent.append(joints)
                if len(sent) == corrupt_sample:
                    qd = tuple(-10.0 * v for v in qd)
                core.set_goal(joints, CONFIG.arm, qd)
            if cycle.outcome is not None:  # within its tolerance: the core's last 0.5 s to rest
                assert cycle.outcome.result == "succeeded", cycle.outcome.message
                outputs += [core.step(CONFIG) for _ in range(250)]
                return outputs, sent, events
        outputs.append(core.step(CONFIG))
    raise AssertionError("the goal did not end")


def test_a_stream_that_breaks_off_brakes_on_its_line_and_the_goal_resumes_from_there() -> None:
    """A sample whose velocities contradict the path would kink the command past a limit: the stream is
    left there and the arm brakes along the streamed TCP line back to that newest sample (Ruckig in joint
    space left the line: 1.7 mm in a box with 1.95 mm of clearance). The rest of that stream moves nothing
    (re-joining it from a braking command would kink again); the Cartesian goal sees the arm stand short
    of its target and resumes from there with a new stream, followed to the end, on the same line."""
    start, target = DESCENTS[1]
    q_start = solve_ik_pitched(start, 0.0, 0.0).q
    cfg = MotionConfig(limits=CartesianLimits(linear_velocity=0.3))
    run, _ = start_goal(parse_goal(target, 0.0, 0.0, "linear", 1.0, "bt"), cfg, 0.0, q_start, None)
    core = TrajectoryCore(CONFIG, q_start)
    outputs, sent, resumed = _drive(run, cfg, core, corrupt_sample=30)  # not followable from there on
    events = [o.stream_event for o in outputs if o.stream_event]
    assert "cannot be followed" in events[0] and "its TCP line" in events[0], events
    assert len(events) == 2 and "ignoring the rest of the stream that broke off" in events[1], events
    assert len(resumed) == 1 and "resuming along a new line" in resumed[0], resumed
    broke = next(i for i, o in enumerate(outputs) if o.stream_event)
    stood = next(i for i in range(broke, len(outputs)) if outputs[i].streaming)  # the resumed stream
    # At rest at the newest sample when it broke off (the curve reaches the corrupt 30th sample
    # stream_delay after it arrived: a few later ones have come by then).
    rest = np.array(outputs[stood - 1].position)
    assert min(float(np.max(np.abs(rest - np.array(q)))) for q in sent[29:40]) < 1e-6
    tcps = np.array([forward_kinematics(o.position).tcp for o in outputs])
    assert line_deviation(tcps, np.array(start), np.array(target)) < 1e-4  # on the line throughout
    assert outputs[-1].position == sent[-1]  # the target, reached by the resumed stream
    assert_within_limits(np.array([o.position for o in outputs]), q_start)


def test_a_refused_stream_command_says_which_limit_and_by_how_much() -> None:
    zero = (0.0,) * 5
    jump = (0.0, 0.004, 0.0, 0.0, 0.0)  # 4 mm-rad in one 2 ms cycle: 2 rad/s, with a velocity of 0.2
    why = stream_limit_problem(jump, (0.0, 0.2, 0.0, 0.0, 0.0), zero, zero, zero, LIMITS, DT)
    assert why == "joint 1 moves 0.00400 rad in one cycle, 2.000 rad/s, over its limit 1.0"
    why = stream_limit_problem(zero, (0.0, 0.0, 1.2, 0.0, 0.0), zero, zero, zero, LIMITS, DT)
    assert why == "joint 2 velocity 1.200 rad/s over its limit 1.0"
    assert stream_limit_problem(zero, zero, zero, zero, zero, LIMITS, DT) == ""


def test_bad_velocities_and_stream_settings_are_refused() -> None:
    core = TrajectoryCore(CONFIG, (0.0, 0.0, 0.5, 0.0, 0.0))
    for bad in ((math.nan, 0.0, 0.0, 0.0, 0.0), (0.1,) * 4, (math.inf,) * 5):
        with pytest.raises(ValueError):
            core.set_goal((0.1, 0.0, 0.5, 0.0, 0.0), CONFIG.arm, bad)
    assert core.goal == (0.0, 0.0, 0.5, 0.0, 0.0) and not core.streaming  # nothing changed
    with pytest.raises(ValueError, match="shorter than stream_timeout"):
        replace(CONFIG, stream_delay=0.05, stream_timeout=0.05)
    with pytest.raises(ValueError, match="stream_timeout"):
        replace(CONFIG, stream_timeout=math.nan)
    with pytest.raises(ValueError, match="delay"):
        StreamFollower(0.0, 0.0, (0.0,) * 5, (0.0,) * 5, (0.0,) * 5, LIMITS)


# --- properties ------------------------------------------------------------------------------------


@st.composite
def feasible_lines(draw: st.DrawFn):
    """A start posture (pad straight down), a TCP line from it (5-25 cm), a speed (0.1-0.3 m/s)."""
    q = list(draw(feasible_joints()))
    q[3], q[4] = 0.0, 0.0
    start = tcp(q)
    direction = np.array(draw(st.tuples(*[st.floats(-1.0, 1.0)] * 3)))
    if np.linalg.norm(direction) < 0.1:
        direction = np.array([0.0, 0.0, -1.0])
    length = draw(st.floats(0.05, 0.25))
    target = start + direction / np.linalg.norm(direction) * length
    return tuple(q), tuple(float(v) for v in target), draw(st.floats(0.1, 0.3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(line=feasible_lines(), stop_after=st.one_of(st.none(), st.integers(1, 60)))
# Found by this test (2026-12-07, at ten times its examples): lines that start 57 mm from the base axis
# with the shoulder on its stop. Between the path check's samples, 2 mm apart, the shoulder (the beam)
# leaves its range by 1.2e-4 (7e-5) rad in the first 2 mm, more than the per-cycle IK may snap back; the
# velocity probes failed on both sides and streamed zero velocities under moving targets, and the stream
# broke off. The check now looks between its samples near a limit and refuses both lines
# (docs/design/cartesian_plan.md, "Between the samples").
@example(
    line=((0.0, -1.35, 0.03125, 0.0, 0.0), (0.05711210812180001, 0.22360679774997896, 0.18656968510803779),
          0.25),
    stop_after=None,
)
@example(
    line=((0.0, -1.35, 0.0, 0.0, 0.0), (0.05728299265200226, 0.24951314462072213, 0.10129657766670756), 0.25),
    stop_after=None,
)
def test_random_feasible_lines_are_followed_inside_the_limits(line, stop_after) -> None:
    q_start, target, speed = line
    cfg = MotionConfig(limits=CartesianLimits(linear_velocity=speed))
    run, early = start_goal(parse_goal(target, 0.0, 0.0, "linear", 1.0, "bt"), cfg, 0.0, q_start, None)
    if early is not None:
        return  # an infeasible line: the Cartesian node refuses it before streaming anything
    commands, outputs, sent = stream_line(q_start, target, speed, stop_after=stop_after)
    assert np.all(np.isfinite(commands))
    assert_within_limits(commands, q_start)
    assert tuple(commands[-1]) == sent[-1][0] and outputs[-1].velocity == (0.0,) * 5
    if stop_after is None and not any(o.stream_event for o in outputs):
        deviation = line_deviation(np.array([tcp(q) for q in commands]), tcp(q_start), np.array(target))
        assert deviation <= 1e-3


joint = st.floats(-4.0, 4.0, allow_nan=False)
rate = st.floats(-20.0, 20.0, allow_nan=False)
message = st.tuples(
    st.lists(joint, min_size=5, max_size=5),
    st.one_of(st.none(), st.lists(rate, min_size=5, max_size=5)),
    st.integers(0, 30),  # cycles until the next message
    st.floats(-0.2, 0.2),  # age, s (negative: stamped in the future)
)


@settings(max_examples=800, deadline=None)
@given(start=st.lists(joint, min_size=5, max_size=5), messages=st.lists(message, min_size=1, max_size=12))
def test_any_stream_keeps_every_command_finite_inside_the_limits_and_slow_enough(start, messages) -> None:
    """Garbage streams included: jumps, velocities that contradict the positions, far targets, stalls."""
    arm = CONFIG.arm
    core = TrajectoryCore(CONFIG, tuple(min(max(v, lo), hi) for v, lo, hi in zip(
        (start[0], 0.0, 0.5, start[3] % 1.5, start[4] % 3.0), arm.joint_lower, arm.joint_upper, strict=True
    )))
    vmax, amax = np.array(LIMITS.max_velocity), np.array(LIMITS.max_acceleration)
    prev = np.array(core.command)
    for positions, velocities, gap, age in messages:
        core.set_goal(positions, arm, velocities, age)
        for _ in range(gap + 1):
            out = core.step(CONFIG)
            q, v = np.array(out.position), np.array(out.velocity)
            assert np.all(np.isfinite(q)) and np.all(np.isfinite(v)) and not out.error
            assert within_limits(out.position, arm)
            assert np.all(np.abs(q - prev) <= vmax * DT * TOL + 1e-12)
            assert np.all(np.abs(v) <= vmax * TOL + 1e-12)
            if out.streaming:  # a followed command is also within the acceleration limits
                acc = core._acceleration  # noqa: SLF001 - the follower's own acceleration
                assert np.all(np.abs(acc) <= amax * TOL)
            prev = q
