"""Cartesian motion core: straight, within the scaled limits, smooth retargets, safe under random goals."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.cartesian.config import GoalRejected, MotionConfig, parse_goal
from salamander_control.cartesian.goal import start_goal
from salamander_control.cartesian.goal_common import MAX_RESUMES, RESUME_STILL_S
from salamander_control.cartesian.joint_goal import JointGoalRun
from salamander_control.cartesian.linear_goal import LinearGoalRun
from salamander_control.cartesian.motion import plan_checked
from salamander_control.cartesian.params import build_config
from salamander_control.cartesian.plan import (
    RAMP_FLOOR,
    TAIL_LEAD_S,
    CartesianLimits,
    CartesianState,
    LinePlan,
)
from salamander_control.kinematics import (
    JOINT_NAMES,
    ArmParams,
    IkStatus,
    branch_of,
    forward_kinematics,
    solve_ik_pitched,
    within_limits,
)
from salamander_control.trajectory.otg import MotionLimits
from salamander_testing.kin_strategies import feasible_joints
from salamander_testing.line_metrics import line_deviation

CFG = MotionConfig()
LIMITS = CartesianLimits()
Q_START = (0.2, 0.1, 0.6, 0.1, 0.0)
DT = 0.01


def pose_of(q, params=CFG.arm):
    fk = forward_kinematics(q, params)
    return np.array([*fk.tcp, fk.tool_pitch, fk.tool_yaw])


def run_to_end(run, cfg=CFG, q=Q_START, t=0.0, limit=20.0, on_cycle=None, dt=DT):
    """Step `run` every dt (100 Hz) with a perfectly tracking arm. Returns (targets, outcome, end time)."""
    targets = []
    while t < limit:
        t += dt
        if on_cycle is not None:
            on_cycle(t, run)
        cycle = run.step(t, cfg, q)
        if cycle.target is not None:
            q = cycle.target[0]
            targets.append(q)
        if cycle.outcome is not None:
            return targets, cycle.outcome, t
    raise AssertionError("goal did not finish")


def dense(plan, dt=1e-3):
    ts = np.arange(0.0, plan.duration + dt, dt)
    states = [plan.state_at(t) for t in ts]
    return (
        np.array([s.pose for s in states]),
        np.array([s.velocity for s in states]),
        np.array([s.acceleration for s in states]),
    )


@pytest.mark.parametrize("scale", [1.0, 0.5, 0.1])
def test_plan_from_rest_is_straight_and_within_the_scaled_limits(scale):
    start = CartesianState.at_rest((0.1, 0.25, 0.2, 0.0, 0.3))
    goal = np.array([0.45, -0.2, -0.1, 0.4, -0.2])
    plan = LinePlan(start, goal, LIMITS.scaled(scale))
    pos, vel, acc = dense(plan)
    assert line_deviation(pos[:, :3], start.pose[:3], goal[:3]) < 1e-4  # the spec's 0.1 mm; really ~1e-16
    assert line_deviation(pos[:, :3], start.pose[:3], goal[:3]) < 1e-12
    assert np.max(np.linalg.norm(vel[:, :3], axis=1)) <= scale * 1.0 * (1 + 1e-9)
    assert np.max(np.linalg.norm(acc[:, :3], axis=1)) <= scale * 4.0 * (1 + 1e-9)
    jerk = np.linalg.norm(np.diff(acc[:, :3], axis=0), axis=1) / 1e-3
    assert np.max(jerk) <= scale * 40.0 * (1 + 1e-6)
    assert np.max(np.abs(vel[:, 3:])) <= scale * LIMITS.angular_velocity * (1 + 1e-9)
    # Phase synchronisation: tool attitude moves in proportion to the distance travelled (one 5-D line).
    frac = np.linalg.norm(pos[:, :3] - start.pose[:3], axis=1) / np.linalg.norm(goal[:3] - start.pose[:3])
    assert np.max(np.abs(pos[:, 3] - (0.0 + frac * 0.4))) < 1e-9
    np.testing.assert_allclose(plan.state_at(plan.duration).pose, goal, atol=1e-12)
    # A full-speed plan reaches the velocity limit on a long line: the limit is really used.
    if scale == 1.0:
        assert np.max(np.linalg.norm(vel[:, :3], axis=1)) > 0.99


def test_speed_scale_slows_the_whole_motion():
    start = CartesianState.at_rest((0.3, 0.0, 0.1, 0.0, 0.0))
    fast = LinePlan(start, (0.3, 0.3, 0.1, 0.0, 0.0), LIMITS)
    slow = LinePlan(start, (0.3, 0.3, 0.1, 0.0, 0.0), LIMITS.scaled(0.25))
    # Velocity, acceleration and jerk limits are all multiplied by speed_scale (not a time scaling).
    assert slow.duration > 0.3 / 0.25 and fast.duration > 0.3 / 1.0
    assert slow.duration > 2.0 * fast.duration


def test_a_slow_goal_keeps_its_speed_and_ramps_at_the_floor() -> None:
    """speed_scale 0.01 (the guarded band): 10 mm/s, reached in 0.1 s (RAMP_FLOOR), not 0.35 s."""
    limits = LIMITS.scaled(0.01)
    assert limits.linear_velocity == pytest.approx(0.01)
    assert limits.linear_acceleration == pytest.approx(LIMITS.linear_acceleration * RAMP_FLOOR)
    assert limits.angular_jerk == pytest.approx(LIMITS.angular_jerk * RAMP_FLOOR)
    band = LinePlan(CartesianState.at_rest((0.3, 0.0, 0.1, 0.0, 0.0)), (0.3, 0.0, 0.09, 0.0, 0.0), limits)
    assert 1.0 < band.duration < 1.12  # 10 mm at 10 mm/s plus one 0.1 s ramp (it was 1.35 s)
    halved = {f: getattr(LIMITS, f) * 0.5 for f in LIMITS.__dataclass_fields__}
    assert LIMITS.scaled(0.5) == replace(LIMITS, **halved)  # above the floor: all six scaled


def test_every_line_decelerates_with_all_of_its_acceleration_and_its_tail_begins_a_lead_before():
    """Every line brakes into its end as hard as it accelerates (no `DECEL_SHARE` since 2026-12-05): the
    stop-on-the-line guarantee comes from its final deceleration being sent whole (`LinePlan.tail_from`,
    `plan.TAIL_LEAD_S` before it begins; tested through the generator in test_stream_stop_on_path.py)."""
    low, high = (0.3, 0.0, 0.0, 0.0, 0.0), (0.3, 0.0, 0.15, 0.0, 0.0)
    down = LinePlan(CartesianState.at_rest(high), low, LIMITS)
    up = LinePlan(CartesianState.at_rest(low), high, LIMITS)
    level = LinePlan(CartesianState.at_rest(low), (0.3, 0.15, 0.0, 0.0, 0.0), LIMITS)
    accel = LIMITS.linear_acceleration
    for plan, axis, sign in ((down, 2, -1.0), (up, 2, 1.0), (level, 1, 1.0)):
        ts = np.linspace(0.0, plan.duration, 2001)
        along = [sign * plan.state_at(t).acceleration[axis] for t in ts]
        assert min(along) == pytest.approx(-accel, rel=1e-3)  # brakes with all of it
        speed = [sign * plan.state_at(t).velocity[axis] for t in ts]
        peak = max(t for t, v in zip(ts, speed, strict=True) if v >= max(speed) * (1 - 1e-6))
        # The tail starts the lead before the speed's peak (within the 4 ms scan), never after it.
        assert peak - TAIL_LEAD_S - 0.0095 <= plan.tail_from <= peak - TAIL_LEAD_S + 1e-9
        assert all(v < max(speed) * (1 - 1e-6) or t <= plan.tail_from + TAIL_LEAD_S + 0.0095
                   for t, v in zip(ts, speed, strict=True))
    assert down.duration == pytest.approx(up.duration)
    brake = LinePlan(down.state_at(0.3), None, LIMITS, brake=True, rotation=down.rotation)
    assert brake.tail_from == brake.duration  # a brake has no tail: it is all deceleration


def joint_peaks(plan, params, seed, dt=1e-3):
    """Peak |joint velocity| and |joint acceleration| (5,) of a plan, from IK every dt."""
    ts = np.arange(0.0, plan.duration + dt, dt)
    q = []
    for t in ts:
        pose = plan.state_at(t).pose
        seed = solve_ik_pitched(pose[:3], pose[3], pose[4], params, seed=seed).q
        q.append(seed)
    q = np.array(q)
    vel = np.max(np.abs(np.diff(q, axis=0)), axis=0) / dt
    return vel, np.max(np.abs(np.diff(q, 2, axis=0)), axis=0) / dt**2


def test_plans_are_slowed_down_until_the_joints_can_follow_them():
    # Sideways past the base at 12 cm: at 1 m/s the base would have to turn at ~8 rad/s.
    a, b = (0.12, 0.15, 0.05, 0.0, 0.0), (0.12, -0.15, 0.05, 0.0, 0.0)
    seed = solve_ik_pitched(a[:3], 0.0, 0.0).q
    start = CartesianState.at_rest(a)
    fast = LinePlan(start, b, LIMITS)
    vel, _ = joint_peaks(fast, CFG.arm, seed)
    assert vel[0] > 5.0  # the Cartesian limits alone ask far too much of base_yaw (limit 1.5 rad/s)
    plan, check = plan_checked(start, b, LIMITS, CFG.arm, seed, CFG.sampling, CFG.joint_rate_limits)
    assert check.ok
    vel, acc = joint_peaks(plan, CFG.arm, seed)
    bounds = CFG.joint_rate_limits
    assert np.all(vel <= np.array(bounds.velocity) * 1.01)
    assert np.all(acc <= np.array(bounds.acceleration) * 1.05)
    assert max(vel / np.array(bounds.velocity)) > 0.9  # slowed down just enough, not more
    pos, _, _ = dense(plan)
    assert line_deviation(pos[:, :3], np.array(a[:3]), np.array(b[:3])) < 1e-12  # still the same line


def test_goal_run_publishes_joint_targets_whose_tcp_stays_on_the_line_and_ends_at_the_goal():
    goal = parse_goal((0.35, -0.1, 0.0), 0.0, 0.5, "linear", 1.0, "bt")
    run, early = start_goal(goal, CFG, 0.0, Q_START, None)
    assert early is None and isinstance(run, LinearGoalRun)
    targets, outcome, _ = run_to_end(run)
    tcps = np.array([pose_of(q)[:3] for q in targets])
    assert line_deviation(tcps, pose_of(Q_START)[:3], np.array(goal.pose[:3])) < 1e-4
    assert all(within_limits(q, CFG.arm) for q in targets)
    assert outcome.result == "succeeded" and outcome.status is IkStatus.OK
    assert math.dist(outcome.final_tcp, goal.pose[:3]) < CFG.position_tolerance
    np.testing.assert_allclose(pose_of(targets[-1]), goal.pose, atol=1e-9)
    assert len(targets) > 30  # a target every cycle, not one jump


def test_joint_velocities_sent_with_the_targets_match_how_the_targets_move():
    goal = parse_goal((0.35, -0.1, 0.0), 0.0, 0.5, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    q, velocities, t = Q_START, [], 0.0
    positions = []
    while True:
        t += DT
        cycle = run.step(t, CFG, q)
        if cycle.target is not None:
            q = cycle.target[0]
            positions.append(q)
            velocities.append(cycle.target[1])
        if cycle.outcome is not None:
            break
    positions, velocities = np.array(positions), np.array(velocities)
    central = (positions[2:] - positions[:-2]) / (2 * DT)
    np.testing.assert_allclose(velocities[1:-1], central, atol=0.02)
    assert np.max(np.abs(velocities)) > 0.2 and np.all(velocities[-1] == 0.0)  # moving, then at rest


def test_a_line_along_the_shoulders_stop_streams_the_velocities_its_targets_move_with():
    # Within SNAP_TOL of the stop the strict IK fails on both sides of each target near the start: the
    # velocity probes snap back onto the stop as the targets do (zero velocities under moving targets
    # ask the generator for jerks it refuses, and the stream broke off).
    q_stop = (0.0, -1.35, 0.03125, 0.0, 0.0)
    start = np.array(pose_of(q_stop))
    goal = start[:3] + 0.1 * np.array((0.0, 1.0, 0.25)) / math.hypot(1.0, 0.25)
    run, early = start_goal(parse_goal(tuple(goal), 0.0, 0.0, "linear", 1.0, "bt"), CFG, 0.0, q_stop, None)
    assert early is None, early.message
    positions, t, velocities = [q_stop], 0.0, []
    while (cycle := run.step(t := t + DT, CFG, positions[-1])).outcome is None:
        if cycle.target is not None:
            positions.append(cycle.target[0])
            velocities.append(cycle.target[1])
    assert cycle.outcome.result == "succeeded", cycle.outcome.message
    assert all(within_limits(q, CFG.arm) for q in positions)
    positions, velocities = np.array(positions[1:]), np.array(velocities)
    central = (positions[2:] - positions[:-2]) / (2 * DT)
    np.testing.assert_allclose(velocities[1:-1], central, atol=0.02)


def test_retarget_mid_motion_is_continuous_and_ends_at_the_new_target():
    goal = parse_goal((0.35, -0.1, 0.0), 0.0, 0.5, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    new_target = (0.3, 0.12, 0.05, 0.1, 0.2)
    t_retarget = round(0.4 * run.motion.plan.duration, 2)
    before = run.motion.plan.state_at(t_retarget - DT)  # the plan starts at the first cycle, t = DT
    assert np.linalg.norm(before.velocity[:3]) > 0.05  # really moving when it is retargeted

    def retarget_once(t, r):
        if abs(t - t_retarget) < DT / 2:
            ok, status, message = r.retarget(new_target, t_retarget, CFG)
            assert ok and status is IkStatus.OK, message

    targets, outcome, _ = run_to_end(run, on_cycle=retarget_once)
    after = run.motion.plan.state_at(0.0)
    np.testing.assert_allclose(after.pose, before.pose, atol=1e-12)
    np.testing.assert_allclose(after.velocity, before.velocity, atol=1e-12)
    np.testing.assert_allclose(after.acceleration, before.acceleration, atol=1e-9)
    # No jump anywhere on the new plan: velocity changes at most by the (per-axis) acceleration bound.
    pos, vel, _ = dense(run.motion.plan)
    assert np.max(np.linalg.norm(np.diff(vel[:, :3], axis=0), axis=1)) <= math.sqrt(3) * 4.0 * 1e-3 * 1.0001
    assert np.max(np.linalg.norm(np.diff(pos[:, :3], axis=0), axis=1)) <= math.sqrt(3) * 1.0 * 1e-3 * 1.0001
    assert outcome.result == "succeeded"
    np.testing.assert_allclose(pose_of(targets[-1]), new_target, atol=1e-9)
    steps = np.max(np.abs(np.diff(np.array(targets), axis=0)), axis=1)
    assert np.max(steps) < 0.1  # joint targets 10 ms apart never jump


def test_a_retarget_after_the_plan_ended_starts_with_a_target_at_rest_where_it_ended():
    """The generator anchors a stream on a target at rest (trajectory.core.STREAM_ANCHOR); a new plan from
    rest must start with one, or its first moving target needs a guessed join that kinks the joints."""
    goal = parse_goal((0.35, -0.1, 0.0), 0.0, 0.0, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    first = run.step(0.5, CFG, Q_START).target
    assert first is not None and first[1] == (0.0,) * 5  # a new goal from rest: its start, at rest
    t, last = 0.5, first
    while t < 0.5 + run.motion.plan.duration + 0.05:  # to the end; the measured arm "never arrives"
        t += DT
        cycle = run.step(t, CFG, Q_START)
        last = cycle.target or last
        assert cycle.outcome is None
    ok, _, message = run.retarget((0.33, -0.08, 0.02, 0.0, 0.0), t, CFG)
    assert ok, message
    anchor = run.step(t + 0.004, CFG, Q_START).target
    assert anchor is not None and anchor[1] == (0.0,) * 5
    np.testing.assert_allclose(anchor[0], last[0], atol=1e-12)
    moving = run.step(t + 0.014, CFG, Q_START).target
    assert moving is not None and any(moving[1])


def test_infeasible_retarget_is_refused_and_the_motion_continues_to_the_old_target():
    goal = parse_goal((0.3, 0.12, 0.04), 0.0, 0.0, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)

    def bad_retarget(t, r):
        if abs(t - 0.1) < DT / 2:
            ok, status, message = r.retarget((0.06, 0.0, 0.04, 0.0, 0.0), t, CFG)
            assert not ok and status is IkStatus.COUPLED_LIMIT
            assert "motion continues to the old target" in message and "coupled_limit at" in message

    targets, outcome, _ = run_to_end(run, on_cycle=bad_retarget)
    assert outcome.result == "succeeded"
    np.testing.assert_allclose(pose_of(targets[-1])[:3], goal.pose[:3], atol=1e-9)


def test_early_fail_reports_the_first_infeasible_point_and_never_starts():
    # The arm stands at one end of a line whose middle runs into the housing (test_path.py).
    seed = solve_ik_pitched((0.06, 0.12, 0.04), 0.0, 0.0).q
    goal = parse_goal((0.06, -0.12, 0.04), 0.0, 0.0, "linear", 1.0, "bt")
    run, outcome = start_goal(goal, CFG, 0.0, seed, None)
    assert run is None  # nothing to step: no joint target can ever be produced for this goal
    assert outcome.result == "aborted" and outcome.status is IkStatus.COUPLED_LIMIT
    assert "early fail" in outcome.message and "mm of 240.0 mm" in outcome.message


def test_cancel_brakes_on_the_line_without_a_jump_and_stops_short_of_the_goal():
    goal = parse_goal((0.35, -0.2, 0.0), 0.0, 0.0, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    start = pose_of(Q_START)

    def cancel_once(t, r):
        if abs(t - 0.15) < DT / 2:
            r.cancel(t, CFG)

    targets, outcome, _ = run_to_end(run, on_cycle=cancel_once)
    assert outcome.result == "canceled"
    pos, vel, acc = dense(run.motion.plan)
    assert np.linalg.norm(vel[-1]) == pytest.approx(0.0, abs=1e-12)
    assert np.max(np.linalg.norm(acc[:, :3], axis=1)) <= 4.0 * (1 + 1e-9)
    tcps = np.array([pose_of(q)[:3] for q in targets])
    assert line_deviation(tcps, start[:3], np.array(goal.pose[:3])) < 1e-4
    assert math.dist(tcps[-1], goal.pose[:3]) > 0.01


def test_narrowing_alpha_mid_motion_brakes_before_the_housing_and_aborts_with_its_status():
    rest_tcp = pose_of((0.0, math.radians(-45), math.radians(33.8), 0.0, 0.0))
    goal = parse_goal(tuple(rest_tcp[:3]), 0.0, 0.0, "linear", 0.3, "bt")
    start_q = (0.0, 0.0, 0.5, 0.0, 0.0)
    run, early = start_goal(goal, CFG, 0.0, start_q, None)
    assert early is None
    narrowed = CFG.__class__(**{**CFG.__dict__, "arm": CFG.arm.with_changes(alpha_max=1.30)})
    cfgs = {"now": CFG}
    after = []

    def narrow(t, r):
        if abs(t - 0.2) < DT / 2:
            cfgs["now"] = narrowed
            assert r.on_params(t, narrowed) is not None

    q, t = start_q, 0.0
    outcome = None
    while outcome is None and t < 10:
        t += DT
        narrow(t, run)
        cycle = run.step(t, cfgs["now"], q)
        if cycle.target is not None:
            q = cycle.target[0]
            if t > 0.2:
                after.append(q)
        outcome = cycle.outcome
    assert outcome.result == "aborted" and outcome.status is IkStatus.COUPLED_LIMIT
    assert "braked to a stop" in outcome.message
    assert after and all(within_limits(q, narrowed.arm) for q in after)
    assert math.dist(pose_of(q)[:3], rest_tcp[:3]) > 0.005  # stopped short of the goal


def test_preempting_goal_continues_from_the_running_motion_without_a_jump():
    first = parse_goal((0.35, -0.1, 0.0), 0.0, 0.0, "linear", 1.0, "bt")
    run, _ = start_goal(first, CFG, 0.0, Q_START, None)
    q = Q_START
    for i in range(1, 16):
        q = run.step(i * DT, CFG, q).target[0]
    moving = run.motion.state(0.155)
    second = parse_goal((0.25, 0.1, 0.1), 0.0, 0.0, "linear", 1.0, "bt")
    new, early = start_goal(second, CFG, 0.155, q, run)
    assert early is None
    np.testing.assert_allclose(new.motion.plan.state_at(0.0).velocity, moving.velocity, atol=1e-12)
    _, outcome, _ = run_to_end(new, q=q, t=0.155)
    assert outcome.result == "succeeded"


def test_linear_goal_aborts_when_the_arm_never_arrives():
    goal = parse_goal((0.3, 0.0, 0.05), 0.0, 0.0, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    t = 0.0
    while True:
        t += DT
        cycle = run.step(t, CFG, Q_START)  # the measured joints never move
        if cycle.outcome is not None:
            break
    assert cycle.outcome.result == "aborted" and cycle.outcome.message.startswith("timeout:")
    assert t > run.motion.plan.duration + CFG.settle_timeout_s


def test_a_stall_of_the_node_past_the_settle_timeout_is_excused_and_the_goal_resumes():
    """The node stopped (SIGSTOP, a starved process) half way down a line, until long after the plan's
    end: the cycles it catches up on run with no fresh measurement. With the stall excused they do not
    end the goal; once measured again, the arm stands short and the goal resumes and arrives. Not
    excused, the first catch-up cycle past the settle timeout aborts it."""
    goal = parse_goal((0.35, -0.1, 0.0), 0.0, 0.5, "linear", 1.0, "bt")
    outcomes = {}
    for excused in (True, False):
        run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
        stall = 0.5 * run.motion.plan.duration
        wake = run.motion.plan.duration + CFG.settle_timeout_s + 1.0
        arm, t, outcome, events = Q_START, 0.0, None, []
        while outcome is None and t < wake + 10.0:
            t += DT
            if stall <= t < wake:  # caught up on waking, one stale measurement (None) for them all
                if excused and t - DT < stall:
                    run.stalls.excuse(stall, wake)
                cycle = run.step(t, CFG, None)
            else:
                cycle = run.step(t, CFG, arm)
                if cycle.target is not None and (t < stall or events):
                    arm = cycle.target[0]  # followed before the stall and after the resume
            events += [cycle.event] if cycle.event else []
            outcome = cycle.outcome
        outcomes[excused] = (outcome, t, events)
    (ok, t_ok, events), (failed, t_failed, _) = outcomes[True], outcomes[False]
    assert ok.result == "succeeded", ok.message
    assert len(events) == 1 and "resuming along a new line" in events[0]
    assert t_ok > wake
    assert failed.result == "aborted" and "no valid joint state" in failed.message and t_failed < wake


def test_a_stall_caught_up_over_several_calls_is_excused_once():
    """The node catches a long stall up over several timer calls (`MAX_CATCH_UP` cycles each), and each
    call excuses from its own start to now: the overlaps count once, so a goal that never measures the
    arm again still ends in the settle timeout, the stall's length later (not the stall's length times
    the number of calls)."""
    goal = parse_goal((0.3, 0.0, 0.05), 0.0, 0.0, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    end = run.motion.plan.duration
    stall_from, stall_to, calls = end - 0.5, end + 4.5, 10
    for k in range(calls):  # one late call per 0.5 s of catch-up, each excusing from its start to now
        run.stalls.excuse(stall_from + k * (stall_to - stall_from) / calls, stall_to)
    t, outcome = 0.0, None
    while outcome is None:
        t += DT
        measured = Q_START if t < stall_from else None  # never measured again
        outcome = run.step(t, CFG, measured, measured_at=min(t, stall_from)).outcome
    assert outcome.result == "aborted" and "no valid joint state" in outcome.message
    assert f"(the newest valid one came {t - stall_from:.2f} s before)" in outcome.message  # how stale
    assert stall_to + CFG.settle_timeout_s < t < stall_to + CFG.settle_timeout_s + 2 * DT


def test_a_joint_goals_timeout_leaves_out_a_stall_of_the_node_once():
    goal = parse_goal((0.3, 0.0, 0.05), 0.2, 0.0, "joint", 0.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    run.step(0.01, CFG, Q_START)
    stall = CFG.joint_path_timeout_s
    for start in (1.0, 1.5, 2.0):  # a stall caught up over three calls: excused once
        run.stalls.excuse(start, 1.0 + stall)
    assert run.step(stall + 0.5, CFG, None).outcome is None
    late = run.step(2 * stall + 0.01, CFG, None).outcome
    assert late is not None and late.result == "aborted" and late.message.startswith("timeout:")


def test_an_arm_left_standing_short_of_the_target_resumes_on_the_same_line_and_arrives():
    """The generator ended the stream midway (a pause over its stream_timeout): the rest of the plan's
    targets, the final one included, never moved the arm. Once it stands still after the plan, the goal
    plans the rest from where it stands: its targets start there at rest and stay on the same line."""
    goal = parse_goal((0.35, -0.1, 0.0), 0.0, 0.5, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    duration = run.motion.plan.duration
    arm, t, ignored, resumed, events = Q_START, 0.0, 0, [], []
    while True:
        t += DT
        cycle = run.step(t, CFG, arm)
        events += [cycle.event] if cycle.event else []
        if cycle.target is not None:
            if t < 0.5 * duration or events:
                arm = cycle.target[0]  # followed (before the stall, and the resumed stream)
                resumed += [arm] if events else []
            else:
                ignored += 1  # the stream the generator ended: the arm stays where it stopped
        if cycle.outcome is not None:
            break
    assert ignored > 5 and len(events) == 1 and run.resumes == 1, events
    assert "short of" in events[0] and "resuming along a new line" in events[0]
    assert cycle.outcome.result == "succeeded", cycle.outcome.message
    stop = pose_of(resumed[0])
    assert t < duration + CFG.settle_timeout_s  # before the settle timeout would have ended it
    tcps = np.array([pose_of(q)[:3] for q in resumed])
    assert line_deviation(tcps, pose_of(Q_START)[:3], np.array(goal.pose[:3])) < 1e-4  # the same line
    assert 0.0 < math.dist(stop[:3], pose_of(Q_START)[:3]) < math.dist(goal.pose[:3], pose_of(Q_START)[:3])


def test_an_arm_sweeping_through_the_target_is_not_taken_for_arrived():
    """After a stream the generator ended, its brake can carry the arm through the target at speed on the
    way back to its newest sample: within the tolerance for a moment, but not arrived."""
    goal = parse_goal((0.35, -0.1, 0.0), 0.0, 0.5, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    t = 0.0
    while t < run.motion.plan.duration:  # the plan runs out; the arm has not followed it
        t += DT
        assert run.step(t, CFG, Q_START).outcome is None
    end, seed = np.array(goal.pose[:3]), Q_START
    for k in range(-5, 6):  # 1 mm per 10 ms (0.1 m/s) along x, through the target
        res = solve_ik_pitched(tuple(end + np.array([k * 1e-3, 0.0, 0.0])), 0.0, 0.5, CFG.arm, seed=seed)
        seed = res.q
        t += DT
        assert run.step(t, CFG, res.q).outcome is None, k
    at_target = solve_ik_pitched(tuple(end), 0.0, 0.5, CFG.arm, seed=seed).q
    outcomes = [run.step(t + (i + 1) * DT, CFG, at_target).outcome for i in range(10)]
    assert any(o is not None and o.result == "succeeded" for o in outcomes)  # there and still: arrived


def test_a_resume_that_cannot_help_ends_in_the_settle_timeout_after_at_most_max_resumes():

    goal = parse_goal((0.3, 0.0, 0.05), 0.0, 0.0, "linear", 1.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    t, events = 0.0, []
    while True:
        t += DT
        cycle = run.step(t, CFG, Q_START)  # the arm never moves (no lease, say)
        events += [cycle.event] if cycle.event else []
        if cycle.outcome is not None:
            break
    assert len(events) == MAX_RESUMES == run.resumes
    assert cycle.outcome.result == "aborted" and cycle.outcome.message.startswith("timeout:")


def test_joint_goal_sends_one_target_and_succeeds_when_the_joints_arrive():
    goal = parse_goal((0.3, 0.0, 0.05), 0.2, 0.0, "joint", 0.0, "bt")
    run, early = start_goal(goal, CFG, 0.0, Q_START, None)
    assert early is None and isinstance(run, JointGoalRun)
    first = run.step(0.01, CFG, Q_START)
    assert first.target is not None and first.outcome is None
    second = run.step(0.02, CFG, Q_START)
    assert second.target is None and second.outcome is None
    done = run.step(0.03, CFG, first.target[0])
    assert done.outcome.result == "succeeded"
    np.testing.assert_allclose(pose_of(first.target[0]), goal.pose, atol=1e-9)
    bad = parse_goal((0.06, 0.0, 0.04), 0.0, 0.0, "joint", 0.0, "bt")
    run, early = start_goal(bad, CFG, 0.0, Q_START, None)
    assert run is None and early.status is IkStatus.COUPLED_LIMIT


@settings(max_examples=60, deadline=None)
@given(
    offset=st.tuples(*[st.floats(-0.004, 0.004, allow_nan=False) for _ in range(5)]),
    scale=st.sampled_from([1.0, 0.3, 0.1, 0.03]),
    command=st.sampled_from(["unknown", "at the goal", "elsewhere"]),
)
def test_a_joint_goal_succeeds_exactly_when_the_next_goal_may_start_from_its_end(offset, scale, command):
    # The tree sends its next goal when a joint goal succeeds; that goal starts at rest where the joint
    # goal left the command (its IK answer) only if the measured pose is within the tolerances of it (or
    # the generator's command rests there, the arm trailing it), else from the measured pose (a slanted
    # line). Success is that same test, so the two always agree.
    goal = parse_goal((0.3, 0.0, 0.05), 0.2, 0.0, "joint", 0.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    q_goal = run.step(DT, CFG, Q_START).target[0]
    resting = {"unknown": None, "at the goal": q_goal, "elsewhere": Q_START}[command]
    measured = tuple(q + scale * d for q, d in zip(q_goal, offset, strict=True))
    cycle = run.step(2 * DT, CFG, measured, resting=resting)
    succeeded = cycle.outcome is not None and cycle.outcome.result == "succeeded"
    after = parse_goal((0.3, 0.0, 0.03), 0.2, 0.0, "linear", 0.5, "bt")
    nxt, early = start_goal(
        after, CFG, 3 * DT, measured, None, rest=run.rest(3 * DT, CFG.arm), resting=resting
    )
    assert early is None
    from_end = np.allclose(nxt.motion.plan.start.pose, pose_of(q_goal), atol=1e-12)
    assert succeeded == from_end


def test_a_joint_goal_whose_arm_stands_still_away_from_it_sends_the_target_again():
    # The generator drops a goal when it takes a late measurement for a pushed arm; the arm holds, and
    # the joint goal used to wait its whole joint_path_timeout_s (30 s).
    goal = parse_goal((0.3, 0.0, 0.05), 0.2, 0.0, "joint", 0.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    q_goal = run.step(DT, CFG, Q_START).target[0]
    t, sent, events = DT, [], []
    for k in range(300):
        t += DT
        q = tuple(a + (b - a) * min(k / 100, 0.5) for a, b in zip(Q_START, q_goal, strict=True))
        cycle = run.step(t, CFG, q)  # halfway from k = 50 on: the generator dropped the goal there
        sent += [t] if cycle.target is not None else []
        events += [cycle.event] if cycle.event else []
    assert events and events[0].startswith("the arm stands still ") and "(1 of 3)" in events[0]
    assert sent and sent[0] == pytest.approx(0.52 + RESUME_STILL_S, abs=1.5 * DT)  # still from 0.52 s
    assert cycle.outcome is None
    done = run.step(t + DT, CFG, q_goal)
    assert done.outcome.result == "succeeded"
    assert len(events) == len(sent) == run.resumes == MAX_RESUMES  # 0.2 s apart while it stands


def test_a_joint_goal_sends_its_target_again_at_most_max_resumes_times():
    goal = parse_goal((0.3, 0.0, 0.05), 0.2, 0.0, "joint", 0.0, "bt")
    run, _ = start_goal(goal, CFG, 0.0, Q_START, None)
    t, sent = 0.0, 0
    while True:
        t += DT
        cycle = run.step(t, CFG, Q_START)  # the arm never moves (no lease, say)
        sent += cycle.target is not None
        if cycle.outcome is not None:
            break
    assert sent == 1 + MAX_RESUMES == 1 + run.resumes
    assert cycle.outcome.message.startswith("timeout:")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (((math.nan, 0.0, 0.0), 0.0, 0.0, "linear", 0.5), "finite"),
        (((0.3, 0.0, 0.0), math.inf, 0.0, "linear", 0.5), "finite"),
        (((0.3, 0.0, 0.0), 0.0, 0.0, "curvy", 0.5), "path must be"),
        (((0.3, 0.0, 0.0), 0.0, 0.0, "linear", 1.5), "speed_scale"),
        (((0.3, 0.0, 0.0), 0.0, 0.0, "linear", -0.1), "speed_scale"),
        (((0.3, 0.0, 0.0), 0.0, 0.0, "linear", math.nan), "speed_scale"),
        # Each of these once ended the goal with an empty message from inside its execution.
        (((0.3, 0.0, 0.0), 0.0, 0.0, "linear", 5e-324), "speed_scale"),
        (((1e308, 0.0, 0.0), 0.0, 0.0, "linear", 0.5), "out of any sensible range"),
        (((0.3, 0.0, 0.0), 0.0, 1e308, "linear", 0.5), "out of any sensible range"),
    ],
)
def test_malformed_goals_are_rejected(args, match):
    with pytest.raises(GoalRejected, match=match):
        parse_goal(*args, "bt")


@pytest.mark.parametrize("distance", [-0.01, math.nan, math.inf, -math.inf, 1e6])
def test_a_handoff_distance_that_is_nan_inf_negative_or_absurd_is_rejected(distance: float) -> None:
    with pytest.raises(GoalRejected, match="handoff_distance"):
        parse_goal((0.3, 0.0, 0.0), 0.0, 0.0, "joint", 0.5, "bt", handoff_distance=distance)
    goal = parse_goal((0.3, 0.0, 0.0), 0.0, 0.0, "joint", 0.5, "bt", handoff_distance=0.025)
    assert goal.handoff_distance == 0.025


def test_speed_scale_zero_means_the_default():
    assert parse_goal((0.3, 0.0, 0.0), 0.0, 0.0, "linear", 0.0, "").speed_scale == 0.5


def test_config_refuses_inconsistent_values():
    values = {
        "max_linear_velocity": 1.0,
        "max_linear_acceleration": 4.0,
        "max_linear_jerk": 40.0,
        "max_angular_velocity": 1.5,
        "max_angular_acceleration": 6.0,
        "max_angular_jerk": 60.0,
        "path_sample_spacing": 0.002,
        "path_angle_spacing": 0.01,
        "path_min_samples": 50,
        "max_joint_step": 0.2,
        "control_rate_hz": 100.0,
        "feedback_rate_hz": 10.0,
        "position_tolerance": 0.001,
        "angle_tolerance": 0.01,
        "settle_timeout_s": 3.0,
        "joint_path_timeout_s": 30.0,
        "joint_state_timeout_s": 1.0,
        "joint_limit_fraction": 0.9,
        "guard_debounce_samples": 2,
        "guard_baseline_samples": 5,
    }
    generator = MotionLimits()  # the trajectory generator's defaults are this node's defaults too
    for group in ("max_velocity", "max_acceleration", "max_jerk"):
        per_joint = zip(JOINT_NAMES, getattr(generator, group), strict=True)
        values.update({f"{group}.{n}": v for n, v in per_joint})
    assert build_config(values) == MotionConfig()
    cfg = build_config(values)
    assert cfg.joint_rate_limits.velocity == pytest.approx([0.9 * v for v in generator.max_velocity])
    with pytest.raises(ValueError, match="joint_limit_fraction"):
        build_config({**values, "joint_limit_fraction": 1.5})
    with pytest.raises(ValueError, match="linear_jerk"):
        build_config({**values, "max_linear_jerk": 0.0})
    with pytest.raises(ValueError, match="no feasible"):
        build_config({**values, "alpha_max": 0.0, "beta_max": 0.0, "q2_min": 0.5, "q1_max": 0.1})


def toward(a, b, f):
    """The joint vector a fraction f from a to b: feasible when both are (the limits are convex)."""
    return tuple(x + f * (y - x) for x, y in zip(a, b, strict=True))


near = st.one_of(st.floats(0.02, 0.3), st.just(1.0))  # mostly short moves, which are mostly feasible


@settings(max_examples=150, deadline=None)
@given(st.data(), near, near, st.floats(0.05, 1.0), st.floats(0.1, 0.9), st.floats(1.0, 1.6))
def test_random_goals_keep_every_joint_target_inside_every_limit_or_fail_early(
    data, f_goal, f_retarget, scale, when, alpha
):
    params = ArmParams(alpha_max=alpha)
    cfg = MotionConfig(arm=params)
    q_start, q_far, q_far2 = (data.draw(feasible_joints(params)) for _ in range(3))
    q_goal = toward(q_start, q_far, f_goal)
    g = pose_of(q_goal, params)
    goal = parse_goal(tuple(g[:3]), g[3], g[4], "linear", scale, "bt")
    run, early = start_goal(goal, cfg, 0.0, q_start, None)
    if run is None:
        assert early.result == "aborted" and early.status is not IkStatus.OK
        return
    target = goal.pose
    retarget_at = when * run.motion.plan.duration
    done = {"retarget": False}
    n_before = {"n": None, "cycles": 0}  # targets sent before the retarget

    def maybe_retarget(t, r):
        nonlocal target
        n_before["cycles"] += 1
        if not done["retarget"] and t >= retarget_at:
            done["retarget"] = True
            n_before["n"] = n_before["cycles"] - 1
            pose = pose_of(toward(q_goal, q_far2, f_retarget), params)
            ok, status, _ = r.retarget(tuple(pose), t, cfg)
            assert ok == (status is IkStatus.OK)
            if ok:
                target = tuple(pose)

    # Simulated time: a long move plus a long retarget at 5 % speed takes minutes, not seconds.
    limit = 60.0 / scale
    targets, outcome, _ = run_to_end(run, cfg=cfg, q=q_start, on_cycle=maybe_retarget, limit=limit, dt=0.02)
    assert all(within_limits(q, params) for q in targets)
    # Slow enough for the trajectory generator: joint targets do not outrun its joint velocity limits.
    steps = np.abs(np.diff(np.vstack((q_start, targets)), axis=0)) / 0.02
    ratio = np.max(steps / np.array(cfg.joint_limits.velocity), axis=1)
    if n_before["n"] is None:
        n_before["n"] = len(targets)
    # From rest the plan is fitted to joint_limit_fraction (0.9) of them. After a retarget from a moving
    # state the fit is best effort (the current velocity stays): up to 1.49x measured in 700 runs.
    assert np.all(ratio[: n_before["n"]] <= cfg.joint_limit_fraction * 1.05)
    assert outcome.result == "succeeded", outcome.message
    np.testing.assert_allclose(pose_of(targets[-1], params)[:3], target[:3], atol=1e-7)
    # A line never changes elbow branch (`path.on_branch`); at the fold itself the two coincide.
    branch = branch_of(q_start[1], q_start[2])
    assert all(branch_of(q[1], q[2]) is branch or abs(math.cos(q[1] - q[2])) < 1e-6 for q in targets)


FOLDED = (-math.pi, -1.35, 0.24375, 1.5708, math.pi)
"""Joints folded back at their stops (base and wrist yaw at -pi, the shoulder on its stop), the elbow
past pi/2 (q1 - q2 = -1.594): on the down branch, which alpha_max 1.59375 allows."""


def test_a_line_from_the_folded_corner_is_checked_and_run_on_the_arms_elbow_branch():
    # The random-goal property's folded corner at thirty times its examples: the up branch lies 0.1 rad
    # away. Solved on either branch, the path check passed this line, and the per-cycle IK, taking the
    # nearest solution, switched branch mid-line (the shoulder -1.35 -> -1.247 rad in one cycle, 7.1 times
    # the fitted joint speed) or stayed on the down branch until it left the shoulder's range ("... while
    # moving"). On the arm's own branch the line leaves that range within millimetres: refused at once.
    params = ArmParams(alpha_max=1.59375)
    cfg = MotionConfig(arm=params)
    q_goal = toward(FOLDED, (-math.pi, 1.35, 0.48, -1.5708, 0.0), 0.0625)
    g = pose_of(q_goal, params)
    run, early = start_goal(parse_goal(tuple(g[:3]), g[3], g[4], "linear", 0.5, "bt"), cfg, 0.0, FOLDED, None)
    assert run is None and early.status is IkStatus.Q1_OUT_OF_RANGE, early.message
    assert "along the line" in early.message
