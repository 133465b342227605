"""The tree's hand-offs over the shipped cell: a joint path bent out of a moving line keeps the pad high.

Two lines hand on to a joint path (salamander_behavior/tree.py): the lift, with the can on the pad, to the
carry (`lift_handoff`, once the can clears `plan.lift_clear_level`; to place_above, or low over the
compartment, `plan.low_carry_end`), and the rise,
with the pad empty, to the next can's transit (`rise_handoff`), which
ends at the can's approach, approach_dz above its top (`plan.transit_end`). The
trajectory generator's Ruckig then continues from the line's moving state to the joint target. Here that
is replayed without ROS: the Cartesian node's plan of the line (`start_goal`) sampled where the tree hands
on (its distance remaining; the measured pad trails the command, so the command is at least that far
along), the joints' state there from the IK, then the generator's `Otg` to the joint path's target, every
2 ms sample through the forward kinematics.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from salamander_behavior.plan import (
    LIFT_CLEAR_M,
    LOW_CARRY_ABOVE_RIM,
    carry_plan,
    clear_of_cans,
    low_carry_end,
    transit_end,
    transit_starts,
)
from salamander_behavior.ports import CartesianTarget
from salamander_behavior.tree import lift_handoff, rise_handoff
from salamander_control.cartesian.config import parse_goal
from salamander_control.cartesian.goal import start_goal
from salamander_control.kinematics import REST_POSTURE, forward_kinematics_batch, solve_ik_pitched
from salamander_control.trajectory.otg import MotionLimits, Otg
from salamander_testing import REPO

sys.path.insert(0, str(REPO / "bench"))

import cycle_bound as cb  # noqa: E402  (the shipped parameter files, read as the nodes read them)

CFG, _, SETTINGS = cb._load(cb.CELL, cb.BEHAVIOR)
JOBS = cb.load_jobs(cb.CELL)
DT = cb.DT


def ik(target: CartesianTarget, seed) -> np.ndarray:
    res = solve_ik_pitched(target.position, target.tool_pitch, target.tool_yaw, CFG.arm, seed=tuple(seed))
    assert res.ok, target
    return np.asarray(res.q)


def handed_on(start: CartesianTarget, line_end: CartesianTarget, scale: float, ahead: float,
              joint_target: CartesianTarget) -> tuple[float, np.ndarray]:  # fmt: skip
    """The TCP z where the line hands on, and the TCP along the joint path that follows (N, 3)."""
    q0 = ik(start, REST_POSTURE)
    goal = parse_goal(line_end.position, line_end.tool_pitch, line_end.tool_yaw, "linear", scale, "test")
    run, early = start_goal(goal, CFG, 0.0, tuple(q0), None)
    assert early is None
    plan = run.motion.plan
    times = np.arange(0.0, plan.duration, DT)
    left = [np.linalg.norm(np.asarray(line_end.position) - plan.state_at(t).pose[:3]) for t in times]
    t = times[next(i for i, d in enumerate(left) if d <= ahead)]
    q = [ik(CartesianTarget(*plan.state_at(t + k * DT).pose), q0) for k in (-1, 0, 1)]
    velocity, acceleration = (q[2] - q[0]) / (2 * DT), (q[2] - 2 * q[1] + q[0]) / DT**2
    otg = Otg(MotionLimits(*CFG.joint_limits), DT, tuple(q[1]))
    otg.reset(tuple(q[1]), tuple(velocity), tuple(acceleration))
    otg.set_target(tuple(ik(joint_target, q[1])))
    samples = [otg.step() for _ in range(5000)]
    assert samples[-1].finished and not any(s.error for s in samples)
    path = forward_kinematics_batch(np.array([s.position for s in samples]), CFG.arm).tcp
    return float(plan.state_at(t).pose[2]), path


def lift_ahead(k: int) -> tuple[float, float]:
    """(the level the lift clears, its hand-off distance) of `JOBS[k]` in a run in order, as `build_tree`."""
    job = JOBS[k]
    _, clear = carry_plan(job, JOBS, JOBS[k + 1:], CFG.arm)
    assert clear is not None
    return clear, lift_handoff(job, clear)(SETTINGS)


@pytest.mark.parametrize("k", [0, 1, 2], ids=[j.can for j in JOBS])
def test_the_carry_bent_out_of_the_lift_keeps_the_can_above_its_hand_off_and_off_the_cans(k: int) -> None:
    """To place_above (the operator's carry). can_0's lift clears the cans' tops first (its straight joint
    path from lower sweeps over can_1's spot); can_1's and can_2's leave the pick row away from every
    other spot and hand on once their can clears the rim: 52 mm sooner."""
    job = JOBS[k]
    clear, ahead = lift_ahead(k)
    assert clear == pytest.approx(job.lift_clear_z if k == 0 else job.rim_pass_z)
    assert ahead == pytest.approx(0.025 if k == 0 else 0.077)  # of the 150 mm lift
    start_z, path = handed_on(job.contact, job.above, SETTINGS.approach_speed, ahead, job.place_above)
    assert start_z == pytest.approx(clear + LIFT_CLEAR_M, abs=0.5e-3)
    assert path[:, 2].min() >= start_z - 1e-4  # the joint path never lowers the can below the hand-off
    spots = [(o.contact.x, o.contact.y) for o in JOBS if o is not job]
    assert clear_of_cans(path, job, spots, [o.planned_xy for o in JOBS[:k]])
    assert path[-1] == pytest.approx(job.place_above.position, abs=1e-4)


@pytest.mark.parametrize("k", [0, 1, 2], ids=[j.can for j in JOBS])
def test_the_low_carry_out_of_the_lift_keeps_clear_of_the_rim_and_every_can_that_may_stand(k: int) -> None:
    job = JOBS[k]
    low = low_carry_end(job, JOBS, JOBS[k + 1:], CFG.arm)  # a run in order: the later compartments empty
    assert low is not None and low.z == pytest.approx(job.rim_pass_z + LOW_CARRY_ABOVE_RIM)
    clear, ahead = lift_ahead(k)
    start_z, path = handed_on(job.contact, job.above, SETTINGS.approach_speed, ahead, low)
    assert path[:, 2].min() >= min(start_z, low.z) - 1e-4  # never below the hand-off nor the low end, so
    assert path[:, 2].min() >= job.rim_pass_z + LIFT_CLEAR_M - 1e-4  # 10 mm over the rim wherever the box is
    spots = [(o.contact.x, o.contact.y) for o in JOBS if o is not job]
    assert clear_of_cans(path, job, spots, [o.planned_xy for o in JOBS[:k]])  # the filled compartments
    assert path[-1] == pytest.approx(low.position, abs=1e-4)
    if k < 2:  # it passes low over the next compartment: with a can there it would not end low
        assert not clear_of_cans(path, job, spots, [JOBS[k + 1].planned_xy])
        assert low_carry_end(job, JOBS, (), CFG.arm) is None


@pytest.mark.parametrize("k", [0, 1], ids=["can_0 to can_1", "can_1 to can_2"])
def test_the_transit_bent_out_of_the_rise_keeps_the_pad_above_its_lower_end(k: int) -> None:
    job, nxt = JOBS[k], JOBS[k + 1]
    ahead = rise_handoff(job)(SETTINGS)
    end = transit_end(nxt, transit_starts(JOBS, CFG.arm), CFG.arm)
    assert end == nxt.approach  # the shipped cell: the pad comes down to approach_dz above the can top
    start_z, path = handed_on(job.place_release, job.place_above, SETTINGS.approach_speed, ahead, end)
    assert path[:, 2].min() >= min(start_z, end.z) - 1e-4  # so >= approach_dz above the standing cans
    assert path[-1] == pytest.approx(end.position, abs=1e-4)
