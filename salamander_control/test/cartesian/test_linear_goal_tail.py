"""A line's tail: its final deceleration sent whole (`cartesian.linear_goal.LinearGoalRun`, `Cycle.ahead`).

Once a plan is within `plan.TAIL_LEAD_S` of its final deceleration the run hands the node the rest of its
samples at once; nothing may brake them afterwards, so a cancel lets the line finish, a retarget and a
preempting line start from its end after its last sample, and a guarded goal sends its tail only once
the measured TCP has left its band. The generator's side (a stream that stops, a lease expiry):
salamander_control/test/trajectory/test_stream_stop_on_path.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from salamander_control.cartesian.config import MotionConfig, parse_goal
from salamander_control.cartesian.contact import Efforts
from salamander_control.cartesian.goal import start_goal
from salamander_control.cartesian.linear_goal import MAX_TAIL, LinearGoalRun
from salamander_control.cartesian.plan import TAIL_LEAD_S
from salamander_control.kinematics import ArmParams, forward_kinematics, solve_ik_pitched

CFG = MotionConfig()
PERIOD = 1.0 / CFG.control_rate_hz
ABOVE = np.array([0.38, -0.18, 0.063])  # compartment 1's place descent (config/cell.yaml)
RELEASE = np.array([0.38, -0.18, -0.057])
Q_ABOVE = solve_ik_pitched(ABOVE, 0.0, 0.0, ArmParams()).q


def descent(speed_scale: float = 0.5, clock: float = 0.0, **band) -> LinearGoalRun:
    goal = parse_goal(tuple(RELEASE), 0.0, 0.0, "linear", speed_scale, "bt", **band)
    run, early = start_goal(goal, CFG, clock, Q_ABOVE, None)
    assert early is None and isinstance(run, LinearGoalRun)
    return run


def until_tail(run: LinearGoalRun, measured=None) -> tuple[float, tuple, list]:
    """Step `run` (a perfect arm at each target unless `measured`) until a cycle sends its tail."""
    q, sent = Q_ABOVE, []
    for k in range(1000):
        t = k * PERIOD
        cycle = run.step(t, CFG, measured if measured is not None else q, t, ahead=True)
        if cycle.target is not None:
            q = cycle.target[0]
            sent.append(t)
        if cycle.ahead:
            return t, cycle.ahead, sent
    raise AssertionError("no tail")


@pytest.mark.parametrize("speed_scale", [0.1, 0.5, 1.0])
def test_the_tail_is_the_rest_of_the_plan_on_the_grid_ending_at_rest_at_the_end(speed_scale: float) -> None:
    run = descent(speed_scale)
    plan = run.motion.plan
    t, tail, sent = until_tail(run)
    assert plan.tail_from <= t < plan.tail_from + PERIOD + 1e-9  # the first cycle due
    times = [s[0] for s in tail]
    np.testing.assert_allclose(np.diff([t, *times]), PERIOD, atol=1e-12)  # the grid goes on
    assert times[-1] >= plan.duration and len(tail) <= MAX_TAIL
    end_q, end_qd = tail[-1][1], tail[-1][2]
    assert not any(end_qd)
    np.testing.assert_allclose(forward_kinematics(end_q).tcp, RELEASE, atol=1e-9)
    # It holds the last TAIL_LEAD_S before the deceleration and the deceleration itself.
    assert times[-1] - t >= TAIL_LEAD_S
    # Nothing more is sent: the generator holds the rest.
    assert all(run.step(x, CFG, end_q, x, ahead=True).target is None for x in (*times, times[-1] + 0.1))
    assert run.sent_until == times[-1]


def test_without_ahead_a_run_streams_cycle_by_cycle_as_before() -> None:
    run = descent()
    q, targets = Q_ABOVE, 0
    for k in range(200):
        cycle = run.step(k * PERIOD, CFG, q, k * PERIOD)
        assert not cycle.ahead
        if cycle.target is not None:
            q, targets = cycle.target[0], targets + 1
    assert targets == math.ceil(run.motion.plan.duration / PERIOD) + 1 and run.sent_until == -math.inf


def test_a_cancel_inside_the_tail_lets_the_line_finish_and_ends_canceled_at_its_end() -> None:
    run = descent()
    t, tail, _ = until_tail(run)
    run.cancel(t + 2 * PERIOD, CFG)
    assert run.cancelling and not run.motion.braking  # nothing braked: the generator holds the rest
    end_q, outcome = tail[-1][1], None
    for k in range(1, 200):
        x = t + k * PERIOD
        cycle = run.step(x, CFG, end_q, x, ahead=True)
        assert cycle.target is None
        if cycle.outcome is not None:
            outcome = cycle.outcome
            break
    assert outcome is not None and outcome.result == "canceled", outcome
    assert "final deceleration" in outcome.message
    assert run.rest(x, CFG.arm) is None  # a cancelled goal leaves no rest to start from


def test_a_cancel_before_the_tail_brakes_on_the_line_as_before() -> None:
    run = descent()
    run.step(0.0, CFG, Q_ABOVE, 0.0, ahead=True)
    run.cancel(PERIOD, CFG)
    assert run.motion.braking and run.cancelling


def test_a_retarget_inside_the_tail_starts_from_its_end_after_its_last_sample() -> None:
    run = descent()
    t, tail, _ = until_tail(run)
    lower = (*RELEASE[:2], RELEASE[2] - 0.005, 0.0, 0.0)
    ok, _, message = run.retarget(lower, t + PERIOD, CFG)
    assert ok, message
    end_q, last = tail[-1][1], tail[-1][0]
    for k in range(1, 200):
        x = t + k * PERIOD
        cycle = run.step(x, CFG, end_q, x, ahead=True)
        if x <= last + 1e-9:
            assert cycle.target is None  # not before the tail's last sample
        elif cycle.target is not None:
            first = cycle.target[0]
            break
    # The new line leaves the old one's end, one period after its last sample, on the grid.
    assert x == pytest.approx(last + PERIOD)
    assert np.linalg.norm(np.array(forward_kinematics(first).tcp) - RELEASE) < 1e-4


def test_a_line_preempting_a_tail_starts_at_its_end_after_its_last_sample() -> None:
    run = descent()
    _, tail, _ = until_tail(run)
    goal = parse_goal((*RELEASE[:2], RELEASE[2] + 0.03), 0.0, 0.0, "linear", 0.5, "bt")
    after = run.sent_until  # the node continues a preempting line's grid from here
    new, early = start_goal(goal, CFG, after, tail[-1][1], run)
    assert early is None and isinstance(new, LinearGoalRun)
    assert new.motion.t0 == after and new.motion.plan.start.is_at_rest
    np.testing.assert_allclose(new.motion.plan.start.pose[:3], RELEASE, atol=1e-12)


def test_a_guarded_goal_sends_its_tail_only_once_the_measured_tcp_has_left_its_band() -> None:
    band = dict(band_speed_scale=0.01, band_start=0.07, band_end=0.06)
    # The measured arm still at the start (above the band): the whole plan goes cycle by cycle.
    guarded = parse_goal(tuple(RELEASE), 0.0, 0.0, "linear", 0.5, "bt", guard_force=5.0, **band)
    efforts = Efforts((0.0,) * 5)
    held, early = start_goal(guarded, CFG, 0.0, Q_ABOVE, None, efforts)
    assert early is None
    for k in range(int(held.motion.plan.duration / PERIOD) + 2):
        assert not held.step(k * PERIOD, CFG, Q_ABOVE, k * PERIOD, efforts, ahead=True).ahead
    # Measured below the band (55 mm before the end): the tail goes out when due.
    below = solve_ik_pitched((*RELEASE[:2], RELEASE[2] + 0.055), 0.0, 0.0, ArmParams()).q
    run = start_goal(guarded, CFG, 0.0, Q_ABOVE, None, efforts)[0]
    t, tail, _ = until_tail(run, measured=below)
    assert tail and t >= run.motion.plan.tail_from


@pytest.mark.parametrize("clock", [0.0, 1000.005, 98765.4321])
@pytest.mark.parametrize("speed_scale", [0.1, 0.2, 0.5])
@pytest.mark.parametrize("ahead", [False, True])
def test_a_line_sampled_on_a_summed_grid_sends_one_sample_at_rest_at_its_end(clock, speed_scale, ahead):
    """The node steps a line on a grid of summed periods from its monotonic clock, which lands a few ns
    short of an end lying on it (the descent into compartment 1 at 0.1 takes 155 periods exactly). That
    sample's joint velocities came out exactly zero, so the stream ended at rest twice, one period apart:
    a stream the generator ignored (its sender stalled) ended at the first, and it took the second as a
    goal, reached in joint space off the line (test_trajectory_streaming_ros.py, the stalled sender).
    The same holds for the samples a line's tail sends ahead."""
    run = descent(speed_scale, clock)
    t, at_rest, samples = clock, [], 0
    for _ in range(1000):
        cycle = run.step(t, CFG, run.motion.joints, t, ahead=ahead)
        sent = ([cycle.target] if cycle.target is not None else []) + [s[1:] for s in cycle.ahead]
        for _, qd in sent:
            samples += 1
            if not any(qd):
                at_rest.append(samples)
        if cycle.outcome is not None:
            break
        t += PERIOD
    assert cycle.outcome is not None and cycle.outcome.result == "succeeded", cycle.outcome
    assert at_rest == [1, samples]  # the start (an anchor) and the end, nothing in between


def test_a_tokenless_goal_the_lease_was_taken_from_says_what_the_generator_does_with_the_arm() -> None:
    # `lease_taken` (the node ends the goal with it once it sees the lease held): mid-line the generator
    # brakes the stream it no longer takes; once the tail was sent it finishes it; a joint goal's one
    # target it took goes on.
    mid = descent()
    mid.step(0.1, CFG, Q_ABOVE, 0.1, ahead=True)
    tailed = descent()
    t, _tail, _sent = until_tail(tailed)
    joint_goal = parse_goal(tuple(RELEASE), 0.0, 0.0, "joint", 0.5, "jog")
    joint, early = start_goal(joint_goal, CFG, 0.0, Q_ABOVE, None)
    assert early is None
    taken = "the arm lease was taken by 'bt' while this goal of"
    for run, now, how in (
        (mid, 0.1, "it brakes the arm along the line"),
        (tailed, t + PERIOD, "it finishes the line's final deceleration, taken before"),
        (joint, 0.1, "the arm goes on to this goal's target, which it took before, until 'bt' sends another"),
    ):
        outcome = run.lease_taken(now, "bt", Q_ABOVE, CFG)
        assert outcome.result == "aborted" and taken in outcome.message and outcome.message.endswith(how)
        np.testing.assert_allclose(outcome.final_tcp, ABOVE, atol=1e-9)  # the measured TCP
