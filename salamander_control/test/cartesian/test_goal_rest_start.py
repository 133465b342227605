"""A goal from rest starts where the previous goal left the command (`goal.RestStart`), not where the arm is.

Closed loop as in test_goal_guard.py: the goal's 100 Hz cycles stream to the trajectory generator's core
(500 Hz), whose commands the motors follow with the simulated hardware's 50 ms lag. The search's moves
at the band's top: a sideways move at 10 mm/s to the next probe, then the vertical descent through the
band. The sideways goal succeeds with the arm still settling (within `position_tolerance`); a descent
planned from the measured pose ran slanted, pulled back along the sideways move.
"""

from __future__ import annotations

import math

import numpy as np

from salamander_control.cartesian.config import MotionConfig, parse_goal
from salamander_control.cartesian.goal import RestStart, measured_pose, start_goal
from salamander_control.kinematics import ArmParams, forward_kinematics, solve_ik_pitched
from salamander_control.trajectory.core import TrajectoryConfig, TrajectoryCore
from salamander_control.trajectory.otg import MotionLimits

ARM = ArmParams()
CFG = MotionConfig()
PROBE_9 = np.array([0.3109, -0.18, 0.002])  # the band's top at probe 9 (compartment 0, +4 mm in x)
PROBE_10 = np.array([0.3069, -0.176, 0.002])  # probe 10: +4 mm in y (a 5.7 mm diagonal move)
DT = 0.002
MOTOR_TAU = 0.05


class Loop:
    """The generator's core and the motors, stepped at 500 Hz; goals are stepped every 10 ms."""

    def __init__(self, tcp: np.ndarray) -> None:
        ik = solve_ik_pitched(tuple(tcp), 0.0, 0.0, ARM)
        assert ik.ok
        self.cfg = TrajectoryConfig(ARM, MotionLimits(*CFG.joint_limits))
        self.core = TrajectoryCore(self.cfg, ik.q)
        self.q = np.array(ik.q)
        self.k = 0

    @property
    def t(self) -> float:
        return self.k * DT

    def run(self, target: np.ndarray, rest: RestStart | None) -> tuple[object, RestStart | None, list]:
        """One linear goal at 10 mm/s to `target`: (outcome, its rest, the measured TCPs meanwhile)."""
        goal = parse_goal(tuple(target), 0.0, 0.0, "linear", 0.01, "bt")
        run, early = start_goal(goal, CFG, self.t, tuple(self.q), None, None, rest)
        assert early is None, early
        tcps, outcome = [], None
        while outcome is None:
            if self.k % 5 == 0:
                cycle = run.step(self.t, CFG, tuple(self.q), self.t)
                if cycle.target is not None:
                    self.core.set_goal(cycle.target[0], ARM, cycle.target[1], stamp=self.t)
                outcome = cycle.outcome
            out = self.core.step(self.cfg)
            assert not out.error, out.error
            self.q = np.array(out.position) + (self.q - np.array(out.position)) * math.exp(-DT / MOTOR_TAU)
            tcps.append(np.array(forward_kinematics(self.q, ARM).tcp))
            self.k += 1
            assert self.t < 20.0, "the goal never ended"
        assert outcome.result == "succeeded", outcome
        return outcome, run.rest(self.t, ARM), tcps


def probe_descent(use_rest: bool) -> tuple[float, float]:
    """Sideways to probe 10, then 10 mm down: (the arm's distance from probe 10 when the sideways goal
    succeeded, the largest XY distance of the measured TCP from it over the descent's lower half)."""
    loop = Loop(PROBE_9)
    _, _, _ = loop.run(PROBE_9, None)  # at rest at probe 9
    _, rest, _ = loop.run(PROBE_10, None)
    settling = float(np.linalg.norm(forward_kinematics(loop.q, ARM).tcp - PROBE_10))
    _, _, tcps = loop.run(PROBE_10 - np.array([0.0, 0.0, 0.01]), rest if use_rest else None)
    low = [p for p in tcps if p[2] < PROBE_10[2] - 0.004]  # where the can meets the rim (5 mm down)
    return settling, max(float(np.hypot(*(p[:2] - PROBE_10[:2]))) for p in low)


def test_a_descent_after_a_sideways_goal_runs_vertical_at_the_sideways_goal_s_end() -> None:
    """Measured: the sideways goal succeeds with the arm 0.2-0.4 mm short; from the measured pose the descent
    passed the rim 0.1-0.2 mm off the probe's XY (a divider met that far off tore a can off in the
    placement benchmark); from the commanded end it is on the probe's XY to a few micrometres."""
    settling, off_measured = probe_descent(use_rest=False)
    _, off_rest = probe_descent(use_rest=True)
    print(f"\nsettling {settling * 1e3:.3f} mm; descent off XY: from measured {off_measured * 1e3:.3f} mm, "
          f"from the rest {off_rest * 1e3:.4f} mm")
    assert settling > 1e-4  # the case exists: the goal succeeded before the arm stood at its end
    assert off_measured > 5e-5  # the old start: slanted
    assert off_rest < 1e-5


def test_a_rest_the_arm_has_left_is_not_a_start() -> None:
    """The measured arm farther than position_tolerance from the rest (someone else moved it): start there."""
    loop = Loop(PROBE_9)
    _, rest, _ = loop.run(PROBE_9, None)
    assert rest is not None and np.allclose(rest.pose[:3], PROBE_9, atol=1e-9)
    moved = solve_ik_pitched(tuple(PROBE_9 + np.array([0.002, 0.0, 0.0])), 0.0, 0.0, ARM).q
    goal = parse_goal(tuple(PROBE_10), 0.0, 0.0, "linear", 0.01, "bt")
    run, _ = start_goal(goal, CFG, 0.0, moved, None, None, rest)
    assert np.allclose(run.motion.plan.start.pose, measured_pose(moved, ARM), atol=1e-9)
    near = solve_ik_pitched(tuple(PROBE_9 + np.array([0.0005, 0.0, 0.0])), 0.0, 0.0, ARM).q
    run, _ = start_goal(goal, CFG, 0.0, near, None, None, rest)
    assert np.allclose(run.motion.plan.start.pose, rest.pose, atol=1e-12)
    assert run.motion.joints == rest.joints


def test_a_cancelled_goal_leaves_no_rest() -> None:
    loop = Loop(PROBE_9)
    goal = parse_goal(tuple(PROBE_10), 0.0, 0.0, "linear", 0.01, "bt")
    run, _ = start_goal(goal, CFG, 0.0, tuple(loop.q), None)
    run.step(0.0, CFG, tuple(loop.q), 0.0)
    run.cancel(0.01, CFG, tuple(loop.q))
    assert run.rest(0.02, ARM) is None
