"""A line from rest starts at once: its grid begins a stream delay back, and the generator takes the anchor.

The generator follows a stream `stream_delay_s` (30 ms) behind its newest sample. A line from rest used
to send its start (the anchor, at rest) in its first cycle and the plan from there, so the command began
to move one delay after the anchor arrived: 30 ms at every line from rest, four per can. Now the
Cartesian node counts a line's cycles from `START_LEAD_S` before the goal (`cartesian.goal.stream_start`),
so its first cycle sends the anchor stamped that far back with the plan's first 30 ms, and the generator
places an anchor at a resting command up to the whole delay back (`TrajectoryCore.set_goal`): the command
follows the plan from the first cycle, exactly (docs/design/stream_following.md, "Anchored start").
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from salamander_control.cartesian.config import MotionConfig, parse_goal
from salamander_control.cartesian.goal import START_LEAD_S, start_goal, stream_start
from salamander_control.cell.targets import load_cell_targets
from salamander_control.kinematics import ArmParams, forward_kinematics, solve_ik_pitched
from salamander_control.trajectory.core import TrajectoryConfig, TrajectoryCore
from salamander_control.trajectory.otg import MotionLimits

DT = 0.002  # the generator's 500 Hz
PERIOD = 0.01  # the Cartesian node's 100 Hz
FOLLOW_TOL = 2e-6  # m: the commanded TCP off the plan at the same time (measured below 1e-6)


def _descent(compartment: int, depth: float) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    above = np.array(load_cell_targets("config/cell.yaml").places[compartment].place_above, dtype=float)
    ik = solve_ik_pitched(above, 0.0, 0.0, ArmParams())
    assert ik.ok
    return above, above - np.array([0.0, 0.0, depth]), tuple(ik.q)


def _stream(compartment: int, depth: float, speed: float, lead: float) -> tuple[list, object, float]:
    """Stream a line from rest as the node does, its grid starting `lead` before the goal (at t = 0).

    The node's timer runs every PERIOD from the goal on and sends every grid point due, each stamped
    with its own time; the generator runs every DT. Returns (per generator cycle: time, commanded TCP),
    the run, and the time of the first timer call (when the first samples arrive).
    """
    cfg = MotionConfig()
    start, end, q0 = _descent(compartment, depth)
    goal = parse_goal(tuple(end), 0.0, 0.0, "linear", speed, "bt")
    grid = -lead
    run, early = start_goal(goal, cfg, grid, q0, None)
    assert early is None, early.message
    core_cfg = TrajectoryConfig(cfg.arm, MotionLimits(*cfg.joint_limits))
    core = TrajectoryCore(core_cfg, q0)
    q, out, nxt = q0, [], grid + PERIOD
    first_call = PERIOD
    for k in range(int((run.motion.plan.duration + 0.3) / DT)):
        now = k * DT
        if k and k % round(PERIOD / DT) == 0:  # the node's timer: every grid point due by now
            while nxt <= now + 1e-9:
                cycle = run.step(nxt, cfg, q, now)
                if cycle.target is not None:
                    core.set_goal(cycle.target[0], cfg.arm, cycle.target[1], age=now - nxt, stamp=nxt)
                nxt += PERIOD
        o = core.step(core_cfg)
        assert not o.error and not o.stream_event, (o.error, o.stream_event)
        q = o.position
        # The core's step computes the command for the end of its cycle (its clock reads one DT on).
        out.append((now + DT, np.array(forward_kinematics(o.position).tcp)))
    return out, run, first_call


def _lag(out: list, run: object, first_call: float) -> float:
    """The largest distance between the commanded TCP at t and the plan's TCP at t - first_call, m."""
    plan = run.motion.plan
    return max(
        float(np.linalg.norm(tcp - plan.state_at(min(max(t - first_call, 0.0), plan.duration)).pose[:3]))
        for t, tcp in out
        if t >= first_call
    )


@pytest.mark.parametrize("compartment", [0, 2])
@pytest.mark.parametrize(("depth", "speed"), [(0.011, 0.5), (0.015, 0.3), (0.07, 0.5), (0.005, 0.01)])
def test_a_line_from_rest_is_followed_from_the_first_samples_arrival(
    compartment: int, depth: float, speed: float
) -> None:
    out, run, first_call = _stream(compartment, depth, speed, START_LEAD_S)
    lag = _lag(out, run, first_call)
    print(f"{depth * 1e3:.0f} mm at {speed}: the command off the plan by at most {lag * 1e6:.3f} um")
    assert lag < FOLLOW_TOL


def test_without_the_lead_the_command_trails_the_plan_by_the_delay() -> None:
    # The check above can fail: without the lead the command starts one stream delay after the anchor.
    out, run, first_call = _stream(1, 0.011, 0.5, 0.0)
    assert _lag(out, run, first_call) > 100 * FOLLOW_TOL
    moving = next(t for (t, a), (_, b) in zip(out, out[1:], strict=False) if np.linalg.norm(b - a) > 1e-9)
    assert moving >= first_call + 0.025


def test_a_line_starts_its_grid_one_lead_back_but_after_the_last_sample_sent() -> None:
    line = parse_goal((0.3, 0.0, 0.0), 0.0, 0.0, "linear", 0.5, "bt")
    joint = parse_goal((0.3, 0.0, 0.0), 0.0, 0.0, "joint", 0.5, "bt")
    assert stream_start(line, 10.0, -math.inf, PERIOD) == pytest.approx(10.0 - START_LEAD_S)
    assert stream_start(line, 10.0, 9.99, PERIOD) == pytest.approx(10.0)  # the last sample 10 ms ago
    assert stream_start(line, 10.0, 9.98, PERIOD) == pytest.approx(9.99)
    assert stream_start(line, 10.0, 10.5, PERIOD) == pytest.approx(10.51)  # after a tail sent ahead
    assert stream_start(joint, 10.0, -math.inf, PERIOD) == 10.0  # one target, no stream
