"""The behaviour tree's place descent, streamed at speed_scale 0.5, is followed without Ruckig's fallback.

The place descent has 1.95 mm of side clearance to the box rim. When a streamed sample pair implies a
joint acceleration or jerk the trajectory generator cannot follow (acceleration over its limit, jerk over
`STREAM_JERK_SLACK` x its limit), the generator hands the arm to Ruckig, which cuts the corner 2-5 mm off
the line: a user sees the can hit the rim. The Cartesian plan is fitted (`fit_to_joints`) so that the
joints' velocity, acceleration and jerk stay within `joint_limit_fraction` x the generator's limits.
"""

from __future__ import annotations

import numpy as np

from salamander_control.cartesian_config import MotionConfig, parse_goal
from salamander_control.cartesian_goal import start_goal
from salamander_control.cartesian_plan import joint_rate_ratios
from salamander_control.cell.targets import load_cell_targets
from salamander_control.kinematics import ArmParams, forward_kinematics, solve_ik_pitched
from salamander_control.otg import MotionLimits
from salamander_control.trajectory_core import TrajectoryConfig, TrajectoryCore

DT = 0.002  # the generator's 500 Hz
SAMPLE_EVERY = 5  # cycles: the Cartesian node's 100 Hz
DESCENT = 0.145  # m
SPEED_SCALE = 0.5


def _descent() -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    """(place_above, the point DESCENT below it, the joints at place_above) for compartment 1."""
    above = np.array(load_cell_targets("config/cell.yaml").places[1].place_above, dtype=float)
    below = above - np.array([0.0, 0.0, DESCENT])
    ik = solve_ik_pitched(above, 0.0, 0.0, ArmParams())
    assert ik.ok
    return above, below, tuple(ik.q)


def _start(below: np.ndarray, cfg: MotionConfig, q0: tuple[float, ...]):
    """The node's goal run for the descent, started at rest at `q0` (the behaviour tree's goal)."""
    goal = parse_goal(tuple(below), 0.0, 0.0, "linear", SPEED_SCALE, "bt")
    run, early = start_goal(goal, cfg, 0.0, q0, None)
    assert early is None, early.message
    return run


def test_the_place_descent_plan_fits_the_joint_acceleration_and_jerk_limits() -> None:
    above, below, q0 = _descent()
    cfg = MotionConfig()
    run = _start(below, cfg, q0)
    ratios = joint_rate_ratios(run.motion.plan, cfg.arm, q0, cfg.joint_rate_limits)
    # velocity, sqrt(acceleration), cbrt(jerk) ratios to joint_limit_fraction x the generator's limits
    assert max(ratios) <= 1.0, ratios


def test_the_place_descent_stream_is_followed_on_the_line_without_falling_back() -> None:
    above, below, q0 = _descent()
    cfg = MotionConfig()
    arm, limits = cfg.arm, MotionLimits(*cfg.joint_limits)
    core_cfg = TrajectoryConfig(arm, limits)
    run = _start(below, cfg, q0)
    core = TrajectoryCore(core_cfg, q0)
    q, tcp, events, streamed = q0, [], [], 0
    for k in range(int((run.motion.plan.duration + 0.5) / DT)):
        if k % SAMPLE_EVERY == 0:
            cycle = run.step(k * DT, cfg, q)
            if cycle.target is not None:
                core.set_goal(cycle.target[0], arm, cycle.target[1], stamp=k * DT)
        out = core.step(core_cfg)
        assert not out.error, out.error
        if out.stream_event:
            events.append(out.stream_event)
        streamed += out.streaming
        q = out.position
        tcp.append(forward_kinematics(q).tcp)
    assert events == []  # never handed to Ruckig
    assert streamed * DT >= 0.9 * run.motion.plan.duration  # the descent really was followed as a stream
    pts = np.array(tcp)
    d = (below - above) / DESCENT
    rel = pts - above
    off_line = np.linalg.norm(rel - np.outer(rel @ d, d), axis=1)
    assert float(np.max(off_line)) <= 5e-4
    assert float(np.linalg.norm(pts[-1] - below)) <= 1e-6
