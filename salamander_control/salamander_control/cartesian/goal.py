"""MoveCartesian goals from start to result: early fail, control cycles, retarget, cancel, completion.

The Cartesian motion node is a thin shell around this module (and `cartesian.config`, which validates
goals before acceptance). Starting a goal checks the whole path (an infeasible one ends at once with
an `Outcome` and no joint target); then `step` runs once per control cycle, returning the joint target
to send, the feedback and, eventually, the outcome. The runs: `linear_goal.LinearGoalRun` (a line,
streamed sample by sample, guarded where it has a band) and `joint_goal.JointGoalRun` (one joint
target); what both share: `goal_common`.

Decisions documented here:
- A new goal preempts the active one only if its own path check passes; the active goal then ends
  ABORTED ("preempted") and the new one continues from the current commanded state without stopping.
  A new goal that fails its check leaves the active one running.
- A goal that does not preempt starts at rest. It starts where the previous goal left the command
  (`RestStart`: the end of a goal that succeeded, its pose and joints) when the measured arm is within
  `position_tolerance` / `angle_tolerance` of it, else at the measured pose. A goal succeeds with the
  measured arm up to `position_tolerance` (1 mm) short, still settling; a line planned from there
  started with the command pulled back to it (the generator blends its command onto the new stream's
  start) and ran slanted: a vertical guarded probe after a 5.7 mm sideways move met a divider 0.1 mm
  off the probe's XY and tore the can off (docs/design/guarded_moves.md).
- The goal's elbow `branch` ("" = nearest the current joints, "up", "down"): a joint goal solves the
  end pose on that branch only (its failure status is that branch's). A linear goal cannot change
  branch: the elbow branch flips only through the stretched/folded posture |q1 - q2| = pi/2, where a
  straight TCP line would need unbounded joint speed, and the path check already refuses such a jump.
  So a linear goal runs on the branch the arm is in: naming that branch changes nothing (the path's
  IK is seeded from, and stays on, it), naming the other one fails early with status Ok (not an IK
  answer) and a message saying to get there with a joint goal first.

Pure Python, no rclpy.
"""

from __future__ import annotations

from typing import Any

from salamander_control.cartesian.config import PATH_JOINT, PATH_LINEAR, CartesianGoal, MotionConfig
from salamander_control.cartesian.contact import ContactDetector, Efforts
from salamander_control.cartesian.goal_common import (
    EARLY_FAIL,
    Outcome,
    RestStart,
    at_end,
    fmt_m,
    measured_pose,
    tcp_of,
)
from salamander_control.cartesian.joint_goal import JointGoalRun
from salamander_control.cartesian.linear_goal import LinearGoalRun
from salamander_control.cartesian.motion import LinearMotion, plan_checked
from salamander_control.cartesian.plan import CartesianState, PlanningError
from salamander_control.kinematics import IkStatus, solve_ik_pitched
from salamander_control.kinematics.ik import branch_of

START_LEAD_S = 0.03
"""s: a linear goal from rest samples its plan on a grid that began this long before the goal (at most:
never at or before the previous goal's last sample). The trajectory generator follows a stream its
`stream_delay_s` (0.03 s) behind the newest sample; the first timer cycle then sends the start at rest
(which anchors the stream, stamped that far back) and the plan's first `START_LEAD_S`, so the command
starts at once instead of one delay later (`stream_start`; docs/design/stream_following.md, "Anchored
start"). A generator with a longer delay starts the command that much less early; one with a shorter
delay follows with this much look-ahead: both stay on the plan."""


GoalRun = LinearGoalRun | JointGoalRun


def stream_start(goal: CartesianGoal, now: float, last_sample: float, period: float) -> float:
    """The clock time a goal that does not preempt counts its control cycles from (the first: a period on).

    A joint goal starts `now`; a linear goal, which starts from rest, `START_LEAD_S` back, but after the
    last sample any goal sent (`last_sample`, clock time: the generator drops a sample stamped before the
    one it took last). A preempting goal continues the running goal's grid instead (the node's affair).
    """
    if goal.path != PATH_LINEAR:
        return now
    return max(now - START_LEAD_S, last_sample + period)


def start_goal(
    goal: CartesianGoal,
    cfg: MotionConfig,
    now: float,
    measured_q: Any,
    active: GoalRun | None,
    efforts: Efforts | None = None,
    rest: RestStart | None = None,
    resting: tuple[float, ...] | None = None,
) -> tuple[GoalRun | None, Outcome | None]:
    """Check and start `goal`; (run, None) when it may move, (None, outcome) when it fails at once.

    A linear goal continues from the active linear motion's commanded state (position, velocity,
    acceleration) so a preemption does not jerk the arm; otherwise it starts at rest: at `rest` (where the
    previous goal that succeeded left the command) when the measured arm is within the tolerances of it
    or the generator's command `resting` there with the arm trailing it (`arrived_by_command`), else at
    the measured pose (the module docstring says why). `efforts` are those of the measured sample: a
    guarded goal fails early when it carries none.
    """
    meas = measured_pose(measured_q, cfg.arm)
    if goal.guarded and (efforts is None or efforts.missing):
        msg = f"{EARLY_FAIL}: no efforts in /joint_states: a guarded move cannot run"
        return None, Outcome("aborted", IkStatus.OK, msg, tcp_of(meas))
    moving = isinstance(active, LinearGoalRun) and not active.motion.failed
    if moving and goal.banded:
        msg = (
            f"{EARLY_FAIL}: a goal with a slow band starts from rest; the active linear goal is still "
            f"moving (wait for its result, or cancel it)"
        )
        return None, Outcome("aborted", IkStatus.OK, msg, tcp_of(meas))
    if moving:
        start, seed = active.motion.state(now), active.motion.joints
    elif rest is not None and meas is not None and at_end(meas, rest.pose, rest.joints, cfg, resting):
        start, seed = CartesianState.at_rest(rest.pose), rest.joints
    else:
        start, seed = CartesianState.at_rest(meas), tuple(measured_q)
    if goal.path == PATH_JOINT:
        p = goal.pose
        res = solve_ik_pitched(p[:3], p[3], p[4], cfg.arm, seed=seed, branch=goal.branch or None)
        if not res.ok:
            on = f" on the {goal.branch} branch" if goal.branch else ""
            msg = (
                f"{EARLY_FAIL}: {res.status.reason}: goal {fmt_m(p)} cannot be solved{on} "
                f"({res.status.message})"
            )
            return None, Outcome("aborted", res.status, msg, tcp_of(meas))
        return JointGoalRun(goal, res.q, start.pose, now, cfg.arm), None
    current = branch_of(seed[1], seed[2]).value
    if goal.branch and goal.branch != current:
        msg = (
            f"{EARLY_FAIL}: branch {goal.branch!r} refused for a linear path: the arm is on the "
            f"{current!r} branch and a straight TCP line cannot change the elbow branch (it would pass "
            f"the stretched/folded posture); reach the {goal.branch!r} branch with a joint goal first"
        )
        return None, Outcome("aborted", IkStatus.OK, msg, tcp_of(meas))
    limits = cfg.limits.scaled(goal.speed_scale)
    try:
        plan, check = plan_checked(
            start, goal.pose, limits, cfg.arm, seed, cfg.sampling, cfg.joint_rate_limits,
            goal.slow_band(cfg.limits),
        )
    except PlanningError as exc:
        return None, Outcome("aborted", IkStatus.OK, f"{EARLY_FAIL}: {exc}", tcp_of(meas))
    if plan is None:
        return None, Outcome(
            "aborted",
            check.status,
            f"{EARLY_FAIL}: {check.message}",
            tcp_of(meas),
        )
    # From rest the plan starts at the first control cycle (its first target is the start, at rest);
    # a preemption continues the running motion from `now`.
    guard = None
    if goal.guarded:
        guard = ContactDetector(
            goal.guard_force, cfg.arm, now, cfg.guard_debounce_samples, cfg.guard_baseline_samples
        )
    motion = LinearMotion(plan, now if moving else None, seed, cfg.sampling)
    return LinearGoalRun(goal, motion, guard), None

