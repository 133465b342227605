"""Guarded linear goals: parsing, the early fail without efforts, and a guarded descent onto a rim.

The descent runs closed-loop as the live stack does, without processes: the goal's 100 Hz cycles stream
to the trajectory generator's core (500 Hz), whose commands the motors follow with the simulated
hardware's 50 ms first-order lag; the efforts are those of the measured joints: the held can's weight and
the rim's spring force (a compliant pad on a rigid rim) through J^T, plus 0.03 N m of noise per joint.
These numbers are the ones docs/design/guarded_moves.md quotes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pytest

from salamander_control.cartesian.config import GoalRejected, MotionConfig, parse_goal
from salamander_control.cartesian.contact import Efforts
from salamander_control.cartesian.goal import start_goal
from salamander_control.cartesian.goal_common import EARLY_FAIL
from salamander_control.cartesian.linear_goal import LinearGoalRun
from salamander_control.kinematics import ArmParams, IkStatus, forward_kinematics, solve_ik_pitched
from salamander_control.kinematics.fk import position_jacobian
from salamander_control.trajectory.core import TrajectoryConfig, TrajectoryCore
from salamander_control.trajectory.otg import MotionLimits

ARM = ArmParams()
ABOVE = np.array([0.38, -0.18, 0.063])  # compartment 1's place_above (config/cell.yaml)
END = ABOVE - np.array([0.0, 0.0, 0.12])  # its release point
CAN = np.array([0.0, 0.0, -3.4])  # N, a held can's weight
NOISE = 0.03  # N m per joint
DT = 0.002  # the generator's 500 Hz
MOTOR_TAU = 0.05  # s, sim_hardware's motors


def q_at(tcp) -> tuple[float, ...]:
    ik = solve_ik_pitched(tuple(tcp), 0.0, 0.0, ARM)
    assert ik.ok
    return tuple(ik.q)


def efforts(q, force, rng) -> Efforts:
    tau = position_jacobian(q, ARM).T @ (CAN + force) + rng.normal(0.0, NOISE, 5)
    return Efforts(tuple(float(v) for v in tau))


# Goals ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("force", [-1.0, math.nan, math.inf, -math.inf, 1e6])
def test_a_guard_force_that_is_nan_inf_negative_or_absurd_is_rejected(force: float) -> None:
    with pytest.raises(GoalRejected, match="guard_force"):
        parse_goal(tuple(END), 0.0, 0.0, "linear", 0.5, "bt", guard_force=force)


def test_a_guarded_joint_goal_is_rejected_and_a_zero_guard_is_unguarded() -> None:
    with pytest.raises(GoalRejected, match="only a linear goal can be guarded"):
        parse_goal(tuple(END), 0.0, 0.0, "joint", 0.5, "bt", guard_force=2.0)
    assert not parse_goal(tuple(END), 0.0, 0.0, "joint", 0.5, "bt", guard_force=0.0).guarded
    assert parse_goal(tuple(END), 0.0, 0.0, "linear", 0.5, "bt", guard_force=2.0).guarded


def test_a_guarded_goal_without_efforts_fails_early_and_one_with_them_runs_guarded() -> None:
    cfg, q0 = MotionConfig(), q_at(ABOVE)
    goal = parse_goal(tuple(END), 0.0, 0.0, "linear", 0.5, "bt", guard_force=2.0)
    for missing in (Efforts(None), None):
        run, outcome = start_goal(goal, cfg, 0.0, q0, None, missing)
        assert run is None and outcome.result == "aborted" and outcome.status is IkStatus.OK
        assert outcome.message == f"{EARLY_FAIL}: no efforts in /joint_states: a guarded move cannot run"
    run, outcome = start_goal(goal, cfg, 0.0, q0, None, efforts(q0, np.zeros(3), np.random.default_rng(0)))
    assert outcome is None and isinstance(run, LinearGoalRun) and run.guard is not None
    # NaN efforts at the start are no early fail: the guard waits joint_state_timeout_s for usable ones.
    run, outcome = start_goal(goal, cfg, 0.0, q0, None, Efforts(None, "efforts not finite for shoulder=nan"))
    assert outcome is None and run.guard is not None


def test_an_unguarded_goal_has_no_guard_and_ignores_efforts() -> None:
    cfg, q0 = MotionConfig(), q_at(ABOVE)
    run, outcome = start_goal(parse_goal(tuple(END), 0.0, 0.0, "linear", 0.5, "bt"), cfg, 0.0, q0, None)
    assert outcome is None and run.guard is None


# A guarded descent onto the rim --------------------------------------------------------------------------


class Descent(NamedTuple):
    outcome: object  # the goal's Outcome
    t_touch: float  # s: the measured TCP reaches the rim
    t_force: float  # s: the rim's force exceeds guard_force
    t_trip: float  # s: the goal's cycle that tripped (brakes from there)
    measured_past: float  # m: deepest measured TCP below the rim (the pad's compression)
    target_past: float  # m: deepest joint target's TCP below the rim
    target_lowest: float  # m: z of the deepest joint target
    final: np.ndarray  # the measured TCP 0.5 s after the goal ended
    peak_force: float  # N
    brake_run: float  # m: from the joint target of the tripping cycle to the deepest one
    events: list[str]  # the lines the goal asked to log


def guarded_descent(
    speed: float, rim_drop: float = 0.03, guard_force: float = 2.0, stiffness: float = 1000.0,
    motor_tau: float = MOTOR_TAU, seed: int = 0, rim: bool = True, freeze: tuple[float, float] | None = None,
    band: tuple[float, float, float] = (0.0, 0.0, 0.0), push_above: tuple[float, float] = (math.inf, 0.0),
) -> Descent:
    """Descend from ABOVE towards END at `speed` m/s onto a rim `rim_drop` below ABOVE (N/m `stiffness`).

    `freeze` (from, to) s: the arm stands still meanwhile whatever the generator commands, then jumps to
    the command (a generator that stopped following the stream, then rejoined its newest sample).
    `band`: the goal's (band_speed, band_start, band_end). `push_above` (z, N): a sideways force on the
    tool while the TCP is above z (a load that is no contact, e.g. an arm's inertia while it brakes).
    """
    cfg = MotionConfig()
    rng = np.random.default_rng(seed)
    rim_z = ABOVE[2] - rim_drop if rim else -math.inf
    q0 = q_at(ABOVE)
    goal = parse_goal(tuple(END), 0.0, 0.0, "linear", speed / cfg.limits.linear_velocity, "bt",
                      guard_force=guard_force, band_speed_scale=band[0], band_start=band[1], band_end=band[2])
    run, early = start_goal(goal, cfg, 0.0, q0, None, efforts(q0, np.zeros(3), rng))
    assert early is None
    core_cfg = TrajectoryConfig(ARM, MotionLimits(*cfg.joint_limits))
    core = TrajectoryCore(core_cfg, q0)
    q = np.array(q0)
    t_touch = t_force = t_trip = math.nan
    deepest, lowest_target, peak, outcome, ended_at = -math.inf, math.inf, 0.0, None, math.inf
    trip_target, events = math.nan, []
    k = 0
    while k * DT < ended_at + 0.5:
        t = k * DT
        z = forward_kinematics(q, ARM).tcp[2]
        force = np.array([0.0, 0.0, stiffness * max(rim_z - z, 0.0)])
        peak = max(peak, float(force[2]))
        if z > push_above[0]:
            force = force + np.array([push_above[1], 0.0, 0.0])
        if z < rim_z and math.isnan(t_touch):
            t_touch = t
        if force[2] > guard_force and math.isnan(t_force):
            t_force = t
        deepest = max(deepest, rim_z - z)
        if k % 5 == 0 and outcome is None:
            cycle = run.step(t, cfg, tuple(q), t, efforts(q, force, rng))
            if cycle.event:
                events.append(cycle.event)
            if run.motion.braking and math.isnan(t_trip):
                t_trip = t
            if cycle.target is not None:
                core.set_goal(cycle.target[0], ARM, cycle.target[1], stamp=t)
                lowest_target = min(lowest_target, forward_kinematics(cycle.target[0], ARM).tcp[2])
                if t == t_trip:
                    trip_target = forward_kinematics(cycle.target[0], ARM).tcp[2]
            if cycle.outcome is not None:
                outcome, ended_at = cycle.outcome, t
        out = core.step(core_cfg)
        assert not out.error, out.error
        if freeze is None or not freeze[0] <= t < freeze[1]:
            q = np.array(out.position) + (q - np.array(out.position)) * math.exp(-DT / motor_tau)
        k += 1
        assert t < 30.0, "the descent never ended"
    final = np.array(forward_kinematics(q, ARM).tcp)
    return Descent(
        outcome, t_touch, t_force, t_trip, deepest, rim_z - lowest_target, lowest_target, final, peak,
        trip_target - lowest_target, events,
    )


@pytest.mark.parametrize("speed", [0.01, 0.02])
def test_a_guarded_descent_stops_at_the_rim_on_its_line_and_says_where(speed: float) -> None:
    """At 10 and 20 mm/s onto a rim 30 mm down, 1 N/mm pad, guard 2 N: stopped a few mm into the pad.

    Measured (seed 0): the guard trips 14 ms after the force passes 2 N (2 mm into the pad); the joint
    targets brake 0.33 / 0.93 mm further (10 / 20 mm/s) and reach 3.28 / 4.83 mm below the rim, the
    measured TCP the same (peak 3.3 / 4.8 N): past the trip point the arm runs on for the generator's
    stream delay (30 ms) and the motors' lag (50 ms) before the brake. With the goal's own (speed-scaled)
    limits the brake ran on to 4.70 / 7.40 mm.
    """
    d = guarded_descent(speed)
    out = d.outcome
    assert out is not None and out.result == "aborted" and out.status is IkStatus.OK and out.contact
    assert out.message.startswith("contact: ") and "mm after" in out.message
    assert np.linalg.norm(out.contact.force) > 2.0 and out.contact.force[2] > 1.8
    assert abs(out.contact.tcp[2] - (ABOVE[2] - 0.03)) < 0.004
    latency = d.t_trip - d.t_force
    print(
        f"\n{speed * 1000:.0f} mm/s: trip {latency * 1000:.0f} ms after the force passed 2 N "
        f"({(d.t_trip - d.t_touch) * 1000:.0f} ms after touching); brake {d.brake_run * 1000:.2f} mm; "
        f"joint targets {d.target_past * 1000:.2f} mm below the rim, measured TCP "
        f"{d.measured_past * 1000:.2f} mm, peak {d.peak_force:.2f} N; {out.message}"
    )
    assert 0.0 <= latency <= 0.03  # the debounce: 2 samples at 100 Hz (+ one cycle's phase)
    # Never past the line's end; the commanded line stops within a few mm of the rim, on the line.
    assert d.target_lowest > END[2]
    # The pad's compression at the threshold, then the detection delay (debounce), the generator's stream
    # delay and the motors' lag at speed, then the brake (under 1 mm from 20 mm/s).
    assert d.brake_run < 0.001
    assert d.target_past < 2.0 / 1000.0 + speed * (0.03 + 0.03 + 0.05) + 0.001
    assert np.hypot(*(d.final[:2] - ABOVE[:2])) < 1e-4  # at rest on the line
    assert d.final[2] > END[2]


RIM_BAND = (0.01, 0.059, 0.049)
"""10 mm/s from 4 mm above a rim 65 mm below ABOVE (55 mm before END) to 6 mm below it."""


def test_a_descent_with_a_band_stops_at_the_rim_inside_the_band_as_a_slow_one_does() -> None:
    """The release descent as one goal: fast (0.5 m/s) to the band, 10 mm/s through it; the rim is in it."""
    d = guarded_descent(0.5, rim_drop=0.065, band=RIM_BAND)
    out = d.outcome
    assert out is not None and out.result == "aborted" and out.contact is not None, out
    assert abs(out.contact.tcp[2] - (ABOVE[2] - 0.065)) < 0.004
    print(f"\nbanded: joint targets {d.target_past * 1000:.2f} mm below the rim, peak {d.peak_force:.2f} N")
    # As at 10 mm/s from rest (the test above): 2 mm to the threshold, the delays at 10 mm/s, the brake.
    assert d.target_past < 2.0 / 1000.0 + 0.01 * (0.03 + 0.03 + 0.05) + 0.001
    assert np.hypot(*(d.final[:2] - ABOVE[:2])) < 1e-4


def test_a_banded_guard_feels_only_inside_the_band() -> None:
    """A 5 N sideways load above the band (no rim) is ignored with a band, a contact without one."""
    band_top = ABOVE[2] - (0.12 - RIM_BAND[1])
    push = (band_top + 0.002, 5.0)  # ends 2 mm above the band: the measured TCP lags the command
    banded = guarded_descent(0.5, rim=False, band=RIM_BAND, push_above=push)
    assert banded.outcome.result == "succeeded", banded.outcome.message
    assert np.linalg.norm(banded.final - END) < 0.001
    whole = guarded_descent(0.5, rim=False, push_above=push)
    assert whole.outcome.result == "aborted" and whole.outcome.contact is not None


@pytest.mark.parametrize("motor_tau", [0.05, 0.1])
def test_an_arm_lagging_a_banded_descent_as_it_slows_into_its_band_is_no_stall(motor_tau: float) -> None:
    """Slowing from release speed into the band, the arm trails the command by what the command covered
    in the lag, far more than its present speed times the lag: that is the normal lead, not a generator
    that stopped following (a CI run at load paused there three times and aborted the pass)."""
    d = guarded_descent(0.5, rim=False, band=RIM_BAND, motor_tau=motor_tau)
    assert d.outcome.result == "succeeded" and d.events == [], d.events


def test_a_banded_goal_never_preempts_a_moving_one_and_keeps_its_target() -> None:
    cfg, q0 = MotionConfig(), q_at(ABOVE)
    sample = efforts(q0, np.zeros(3), np.random.default_rng(0))
    plain = parse_goal(tuple(END), 0.0, 0.0, "linear", 0.5, "bt")
    moving, _ = start_goal(plain, cfg, 0.0, q0, None)
    for k in range(1, 20):
        moving.step(k * 0.01, cfg, q0)
    banded = parse_goal(tuple(END), 0.0, 0.0, "linear", 0.5, "bt", guard_force=2.0, band_speed_scale=0.01,
                        band_start=0.059, band_end=0.049)
    run, early = start_goal(banded, cfg, 0.2, q0, moving, sample)
    assert run is None and early.message.startswith(EARLY_FAIL) and "starts from rest" in early.message
    run, early = start_goal(banded, cfg, 0.0, q0, None, sample)
    assert early is None
    ok, status, message = run.retarget((*END[:2], END[2] + 0.01, 0.0, 0.0), 0.1, cfg)
    assert not ok and status is None and "retarget refused" in message


def test_an_unguarded_descent_is_unchanged_by_efforts() -> None:
    """No rim, no guard: the goal reaches its end and succeeds as it always did."""
    d = guarded_descent(0.02, guard_force=0.0, rim=False)
    assert d.outcome.result == "succeeded" and d.outcome.contact is None


def test_a_command_running_ahead_of_a_standing_arm_pauses_and_resumes_from_where_it_stands() -> None:
    """The generator stops following for 1.2 s (a starved sender), then jumps to the newest sample.

    Measured: without the lead bound the command ran on 9 mm past the rim meanwhile and the arm jumped
    there at once (joint targets 9.4 mm below the rim, 9.4 N); with it the command brakes 6 mm ahead of
    the standing arm (3 mm + 20 mm/s x 0.15 s), the goal resumes from where the arm stands (twice here)
    and stops at the rim with contact as without the stall (4.75 mm).
    """
    d = guarded_descent(0.02, freeze=(0.8, 2.0))
    assert any("ahead of the measured TCP" in e and "braked to wait for the arm" in e for e in d.events)
    assert any("resuming along a new line" in e for e in d.events), d.events
    assert d.outcome.contact is not None, d.outcome.message
    assert d.target_past < 0.002 + 0.02 * 0.11 + 0.001, d.target_past


def _follow(run, cfg, until: float, sample) -> tuple[list, object]:
    """Step `run` at 100 Hz with an ideal arm (measured = the last target) until `until` s or an outcome.

    `sample(t, q)` gives that cycle's efforts. Returns (the targets' TCPs, the outcome or None).
    """
    q, tcps = run.motion.joints, []
    for k in range(int(until / 0.01)):
        t = 0.01 * k
        cycle = run.step(t, cfg, q, t, sample(t, q))
        if cycle.target is not None:
            q = cycle.target[0]
            tcps.append(forward_kinematics(q, ARM).tcp)
        if cycle.outcome is not None:
            return tcps, cycle.outcome
    return tcps, None


def test_a_guard_blind_for_the_joint_state_timeout_brakes_and_aborts_on_its_line() -> None:
    cfg, q0, rng = MotionConfig(), q_at(ABOVE), np.random.default_rng(1)
    goal = parse_goal(tuple(END), 0.0, 0.0, "linear", 0.05, "bt", guard_force=2.0)
    run, _ = start_goal(goal, cfg, 0.0, q0, None, efforts(q0, np.zeros(3), rng))
    bad = Efforts(None, "efforts not finite for shoulder_pitch=nan")
    tcps, outcome = _follow(run, cfg, 5.0, lambda t, q: efforts(q, np.zeros(3), rng) if t < 0.5 else bad)
    assert outcome is not None and outcome.result == "aborted" and outcome.contact is None
    assert outcome.message.startswith("guard blind: no usable efforts in /joint_states for 1.0")
    assert "shoulder_pitch=nan" in outcome.message
    z = [p[2] for p in tcps]
    assert min(z) > END[2] and abs(z[-1] - z[-2]) < 1e-6  # stopped on the line, short of its end
    assert 1.2 < (ABOVE[2] - min(z)) / 0.05 < 1.6  # 0.5 s good + 1 s blind at up to 50 mm/s, the brake


def test_a_cancel_during_a_guarded_pause_ends_the_goal_canceled() -> None:
    cfg, q0, rng = MotionConfig(), q_at(ABOVE), np.random.default_rng(2)
    goal = parse_goal(tuple(END), 0.0, 0.0, "linear", 0.02, "bt", guard_force=2.0)
    run, _ = start_goal(goal, cfg, 0.0, q0, None, efforts(q0, np.zeros(3), rng))
    # The arm never moves: the command runs ahead of it and the goal pauses.
    events = [run.step(0.01 * k, cfg, q0, 0.01 * k, efforts(q0, np.zeros(3), rng)).event for k in range(60)]
    assert any("braked to wait for the arm" in e for e in events) and not run.cancelling
    run.cancel(0.6, cfg, q0)
    assert run.cancelling
    outcome = None
    for k in range(61, 200):
        outcome = run.step(0.01 * k, cfg, q0, 0.01 * k, efforts(q0, np.zeros(3), rng)).outcome
        if outcome is not None:
            break
    assert outcome is not None and outcome.result == "canceled", outcome
