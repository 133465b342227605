"""Executing a Cartesian plan: IK every control cycle, retarget, brake, re-check.

`plan_checked` plans (`cartesian.plan`) and checks (`cartesian.path`) a motion before anything moves;
`LinearMotion` then samples it at the control clock and solves the IK each cycle, seeded with the
previous cycle's joints, and turns retargets and stops into new plans from the current commanded state.

Pure Python + ruckig + the kinematics library, no rclpy.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from salamander_control.cartesian.path import (
    SNAP_TOL,
    PathCheck,
    PathSampling,
    check_line,
    check_poses,
    jump_status,
    on_branch,
    relaxed,
)
from salamander_control.cartesian.plan import (
    DOFS,
    CartesianLimits,
    CartesianState,
    JointRateLimits,
    LinePlan,
    PlanningError,
    SlowBand,
    fit_to_joints,
    joint_rate_ratios,
)
from salamander_control.kinematics import (
    ArmParams,
    IkResult,
    IkStatus,
    solve_ik_pitched,
    within_limits,
)
from salamander_control.trajectory.clamp import clamp_joints

_VELOCITY_PROBE = 1e-3
"""s; joint velocities are the central IK difference between the poses this much earlier and later.

Central, not forward: a forward difference is off by half the joint acceleration times the probe
(~1e-3 rad/s), which the trajectory generator, interpolating the stream through positions and these
velocities, turns into acceleration kinks of ~12 * error / period at every sample (measured: jerk 10x
its limit); the central difference is off by ~probe^2 * jerk / 6, ~5e-6 rad/s."""


def plan_checked(
    start: CartesianState,
    goal: Any,
    limits: CartesianLimits,
    params: ArmParams,
    seed: Any,
    sampling: PathSampling,
    joint_limits: JointRateLimits | None = None,
    band: SlowBand | None = None,
) -> tuple[LinePlan | None, PathCheck]:
    """Plan from `start` to `goal` and check it; the plan is None when the check fails.

    The straight line from the start pose to the goal is checked first (the path the operator asked
    for). From a moving start the planned blend is not that line, so its own samples are checked too.
    With `joint_limits` the plan is slowed down until the joints can follow it (`fit_to_joints`). A
    `band` (from rest only) is crossed at its own speed (`cartesian.plan.SlowBand`).
    """
    check = check_line(start.pose, goal, params, seed, sampling)
    if not check.ok:
        return None, check
    plan = fit_to_joints(start, goal, limits, params, seed, joint_limits, band)
    if not start.is_at_rest:
        blend = check_poses(plan.sample_poses(0.0, sampling), params, seed, sampling, "along the blend")
        if not blend.ok:
            return None, blend
    return plan, check


class MotionStep(NamedTuple):
    """One control cycle of a `LinearMotion`.

    Attributes:
        joints: the joint target to send, or None (failed: hold the last one).
        joint_velocities: joint velocities at that target, rad/s.
        state: the commanded Cartesian state.
        finished: the plan has reached its end (goal or stop).
        failure: (status, message) when the IK failed or jumped this cycle.
    """

    joints: tuple[float, ...] | None
    joint_velocities: tuple[float, ...] | None
    state: CartesianState
    finished: bool
    failure: tuple[IkStatus, str] | None


def _snap_ik(pose: np.ndarray, params: ArmParams, seed: Any, branch: str) -> tuple[float, ...] | None:
    """The IK within SNAP_TOL of the limits on `branch`, clamped back onto them; None when even that fails."""
    res = solve_ik_pitched(pose[:3], pose[3], pose[4], relaxed(params, SNAP_TOL), seed=seed, branch=branch)
    if not res.ok:
        return None
    q = clamp_joints(res.q, params, res.q).q
    return q if within_limits(q, params) else None


def _probe_ik(pose: np.ndarray, params: ArmParams, seed: Any, branch: str) -> tuple[float, ...] | None:
    """A velocity probe's IK on `branch`: strict, else snapped onto the limits (`_snap_ik`); or None."""
    res = solve_ik_pitched(pose[:3], pose[3], pose[4], params, seed=seed, branch=branch)
    return res.q if res.ok else _snap_ik(pose, params, seed, branch)


class LinearMotion:
    """A plan being executed: samples it at the control clock and solves the IK every cycle.

    Args:
        plan: the checked plan.
        t0: the clock time (s, monotonic) the plan starts at, or None: at its first `step`. A plan from
            rest starts there, so its first joint target is its start at rest, exactly: the trajectory
            generator anchors the stream of targets on it, and the curve it follows through them
            starts without an acceleration kink (a first target already moving would need a guessed
            join from the arm's state, measured to kink the joints' jerk past the generator's bound).
            The node steps a plan from rest on a grid that began `goal.START_LEAD_S` back, so that
            first step lies in the past and the generator starts at once (`goal.stream_start`).
        joints: the joints at the plan's start (the IK seed of the first cycle).
        sampling: path sampling, for the per-cycle jump bound.
    """

    def __init__(self, plan: LinePlan, t0: float | None, joints: Any, sampling: PathSampling) -> None:
        self.plan = plan
        self.t0 = t0
        self.joints = tuple(float(v) for v in joints)
        self.sampling = sampling
        self.failed = False
        self._last_pose = plan.start.pose.copy()

    @property
    def braking(self) -> bool:
        """Whether the motion is stopping instead of heading for a goal."""
        return self.plan.brake

    def elapsed(self, now: float) -> float:
        """Time into the plan at clock time `now`, s (0 until a deferred start's first step)."""
        return 0.0 if self.t0 is None else now - self.t0

    def state(self, now: float) -> CartesianState:
        """The commanded Cartesian state at clock time `now`."""
        return self.plan.state_at(self.elapsed(now))

    def step(self, now: float, params: ArmParams) -> MotionStep:
        """Sample the plan at `now` and solve the IK, seeded with the last cycle's joints, on their branch.

        A failed or jumping IK (the limits narrowed under a running motion) stops the motion for good:
        no target is produced, so the last sent target, which was feasible, is where the arm stops.
        """
        if self.t0 is None:
            self.t0 = now
        state = self.state(now)
        finished = self.plan.ended(self.elapsed(now))
        if self.failed:
            return MotionStep(None, None, state, finished, None)
        pose = state.pose
        allowed = self.sampling.max_joint_step * self.sampling.steps_for(pose - self._last_pose)
        branch = on_branch(self.joints)  # a line never changes branch (`path.on_branch`)
        res = solve_ik_pitched(pose[:3], pose[3], pose[4], params, seed=self.joints, branch=branch)
        failure = res.status if not res.ok else jump_status(self.joints, res.q, pose, params, allowed)
        if failure is not IkStatus.OK:
            # A hair outside a limit (or a yaw exactly at +-pi flipping to the other end): snap back.
            snapped = _snap_ik(pose, params, self.joints, branch)
            smooth = snapped is not None and jump_status(self.joints, snapped, pose, params, allowed)
            if smooth is IkStatus.OK:
                res, failure = IkResult(IkStatus.OK, snapped, res.branch), IkStatus.OK
        if failure is not IkStatus.OK:
            self.failed = True
            where = f"({pose[0]:.4f}, {pose[1]:.4f}, {pose[2]:.4f}) m"
            return MotionStep(
                None, None, state, finished, (failure, f"{failure.reason} at TCP {where} while moving")
            )
        qd = (0.0,) * DOFS
        if np.any(state.velocity):
            step = state.velocity * _VELOCITY_PROBE
            # A probe a hair outside a limit snaps back onto it, as the target does: on a path starting
            # at a stop the strict IK fails on both sides, and zero velocities under moving targets ask
            # the generator for jerks it refuses (docs/design/cartesian_plan.md, "Between the samples").
            ahead = _probe_ik(pose + step, params, res.q, branch)
            behind = _probe_ik(pose - step, params, res.q, branch)
            # One-sided where the other probe leaves the workspace (a path starting on a limit).
            hi = res.q if ahead is None else ahead
            lo = res.q if behind is None else behind
            span = _VELOCITY_PROBE * ((ahead is not None) + (behind is not None))
            if span:
                # remainder: a yaw at +-pi may come back in its other representation; that is no motion.
                pairs = zip(hi, lo, strict=True)
                qd = tuple(math.remainder(a - b, 2.0 * math.pi) / span for a, b in pairs)
        self.joints = res.q
        self._last_pose = pose
        return MotionStep(res.q, qd, state, finished, None)

    def retarget(
        self,
        goal: Any,
        now: float,
        limits: CartesianLimits,
        params: ArmParams,
        joint_limits: JointRateLimits | None = None,
    ) -> PathCheck:
        """Continue from the current commanded state to `goal` if that path is feasible.

        Returns:
            The check; only when it is Ok has the motion switched (at `now`) to the new plan.
        """
        # Start from the running plan's limits (already fitted to the joints): a nudge needs no more.
        limits = limits.minimum(self.plan.limits)
        plan, check = plan_checked(
            self.state(now), goal, limits, params, self.joints, self.sampling, joint_limits
        )
        if plan is not None:
            # From rest (the old plan had ended) the new one starts at its first cycle, like a new goal.
            self.plan, self.t0 = plan, None if plan.start.is_at_rest else now
        return check

    def brake(
        self,
        now: float,
        harder: CartesianLimits | None = None,
        params: ArmParams | None = None,
        joint_limits: JointRateLimits | None = None,
    ) -> None:
        """Stop on the current line (cancel, a path that became infeasible, a guarded move's contact).

        With the running plan's limits, i.e. those already slowed down for the joints: braking harder
        than the motion was allowed to accelerate could outrun the joints. With `harder` (a guarded stop:
        a goal's speed_scale shrinks its acceleration and jerk as much as its speed, so a slow descent
        braked with its own limits runs on for millimetres) the brake uses those limits instead, lowered
        until the joints fit `joint_limits` (`params`: the arm), when that stops sooner.
        """
        if self.braking:
            return
        state, rotation = self.state(now), self.plan.rotation
        plan = LinePlan(state, None, self.plan.limits, brake=True, rotation=rotation)
        if harder is not None and params is not None and joint_limits is not None:
            hard = _fitted_brake(state, rotation, harder, params, self.joints, joint_limits)
            if hard is not None and hard.duration < plan.duration:
                plan = hard
        self.plan = plan
        self.t0 = now

    def remaining_check(self, now: float, params: ArmParams) -> PathCheck:
        """Check what is left of the plan against `params` (after a live change of the arm limits)."""
        poses = self.plan.sample_poses(self.elapsed(now), self.sampling)
        return check_poses(poses, params, self.joints, self.sampling, "along the rest of the path")


_BRAKE_FIT_ROUNDS = 4
"""Rounds of lowering a harder brake's limits until its joint motion fits (`_fitted_brake`)."""


def _fitted_brake(
    state: CartesianState,
    rotation: np.ndarray,
    limits: CartesianLimits,
    params: ArmParams,
    seed: Any,
    joint_limits: JointRateLimits,
) -> LinePlan | None:
    """A brake from `state` on its line under `limits`, lowered until the joints fit; None if none does."""
    for _ in range(_BRAKE_FIT_ROUNDS):
        try:
            plan = LinePlan(state, None, limits, brake=True, rotation=rotation)
        except PlanningError:
            return None
        ratios = joint_rate_ratios(plan, params, seed, joint_limits)
        if max(ratios) <= 1.0:
            return plan
        limits = limits.reduced(*(1.05 * r for r in ratios))
    return None
