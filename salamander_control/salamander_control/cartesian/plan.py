"""Ruckig plans of the TCP in the frame of a straight line, fitted to the joints' limits.

Each plan rotates base_link so that its first axis points from the start to the goal; x, y, z in that
frame plus tool pitch and yaw are five Ruckig DoFs, phase-synchronised. From rest the two deviation axes
stay exactly 0: the TCP moves on the straight 5-D segment that `path.check_line` checked, with the
first axis' limits as the path's speed, acceleration and jerk limits. A retarget plans from the current
commanded state in the frame of the new line (no jump; the TCP blends onto the new line, the caller
checks the blend). `fit_to_joints` slows a plan down until its joint motion fits a fraction of the
trajectory generator's joint limits, so the generator can follow the stream of targets.

A plan from rest may have a `SlowBand`: a stretch of the line it crosses at a given speed (the release
descent's pass over the rim). It is then up to three Ruckig legs on the same line: to the band's start,
arriving at the band's speed; through the band at that speed; from its end to the goal, at rest. The
legs join with the same velocity and zero acceleration, so the motion never stops at the band.

Pure Python + ruckig + the kinematics library, no rclpy. Why a line frame, the retarget blend and the
fit: docs/design/cartesian_plan.md.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
from ruckig import ControlInterface, InputParameter, Result, Ruckig, RuckigError, Synchronization, Trajectory

from salamander_control.cartesian.path import PathSampling, as_pose, on_branch, relaxed
from salamander_control.kinematics import ArmParams, solve_ik_batch

DOFS = 5
_RATE_TOL = 1e-3
"""rad; limits widened by this much when estimating joint rates (an estimate, not a feasibility check)."""
_FIT_MARGIN = 1.02
"""Extra slow-down when fitting a plan to the joint limits: sampled peaks can miss the true ones a little."""
END_TOLERANCE_S = 1e-6
"""s: an instant this close before a plan's end is its end (`LinePlan.ended`).

The Cartesian node samples a plan on a grid of summed periods, which lands a few ns short of an end that
lies on it. The plan's speed there is below what the IK's velocity probe resolves, so that sample's joint
velocities came out exactly zero: a sample at rest one period before the end's own. A stream the generator
was ignoring (its sender stalled) ended at the first and took the second as a goal, reached by Ruckig in
joint space, off the line (docs/design/stream_following.md, "Two samples at rest")."""
TAIL_LEAD_S = 0.2
"""s: a line's final deceleration is sent to the trajectory generator whole, from this long before it
begins (`LinePlan.tail_from`; the Cartesian node's stream then ends with it).

The generator brakes a stream that stops (its sender died or stalled past `stream_timeout_s`) along the
line with all of the joint limits, but only 30 ms after its command passed the newest sample: a plan
that decelerates as steeply as it accelerates leaves that brake no room, and a stop just before its
deceleration carried the TCP up to 20 mm beyond the line's end (into the box floor on a place descent).
Until 2026-12-05 every line that did not rise decelerated with 0.55 of its acceleration limit for that
room (~9 % of each line). Now the generator holds the whole deceleration before it begins: a stream
that stops after that still ends at the line's end, at rest; one that stops before it stops at least
this long of the plan's motion before the deceleration, which covers the 30 ms the brake starts late
and the extrapolation's speed-up (docs/design/stream_following.md, "Along the line")."""

BAND_ENTRY_DECEL_SHARE = 0.55
"""A leg into a slow band (the release descent's fast approach to the rim band) decelerates with this
share of its acceleration limit. The motors trail the command by their lag: the harder the command
slows into the band, the faster the measured arm still moves as it enters, and the farther it trails
(a guarded goal's lead check, `goal.GUARD_LEAD_S`, measured up to 5.6 mm against 5.0 at all of it). At
0.55 (every line's share before `TAIL_LEAD_S`) the guarded pass is as it was; it costs ~0.02 s."""
_TAIL_SCAN_S = 0.004
"""s: the last leg is sampled this finely for where its speed peaks (`LinePlan.tail_from`)."""

RAMP_FLOOR = 0.1
"""A goal's accelerations and jerks are scaled by at least this, whatever its `speed_scale`.

Scaled as much as its speed, the guarded pass through the rim band (`speed_scale` 0.01: 10 mm/s) took
0.35 s to reach its speed and as long to stop (0.04 m/s^2, 0.4 m/s^3), a quarter of the band's second;
at 0.1 (0.4 m/s^2, 4 m/s^3) it takes 0.1 s, and the search's short legs gain the same. The held can feels
0.14 N of that acceleration, far below a guard's 5 N; the speed, which sets how hard a contact presses, is
unchanged."""


class PlanningError(RuntimeError):
    """Ruckig refused the input (only for inputs outside its documented domain)."""


@dataclass(frozen=True)
class CartesianLimits:
    """Limits of the TCP along the line (m/s, m/s^2, m/s^3) and of tool pitch/yaw (rad/s, ...)."""

    linear_velocity: float = 1.0
    linear_acceleration: float = 4.0
    linear_jerk: float = 40.0
    angular_velocity: float = 1.5
    angular_acceleration: float = 6.0
    angular_jerk: float = 60.0

    def __post_init__(self) -> None:
        """Every limit must be a positive finite number."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"CartesianLimits.{f.name} must be a finite number, got {value!r}")
            if value <= 0.0:
                raise ValueError(f"CartesianLimits.{f.name} must be > 0, got {value}")

    def scaled(self, speed_scale: float) -> CartesianLimits:
        """The limits of a goal at `speed_scale` (its fraction of full speed, in (0, 1]).

        Velocities times `speed_scale`; accelerations and jerks times max(`speed_scale`, `RAMP_FLOOR`).
        """
        if not (math.isfinite(speed_scale) and 0.0 < speed_scale <= 1.0):
            raise ValueError(f"speed_scale must lie in (0, 1], got {speed_scale}")
        ramps = max(speed_scale, RAMP_FLOOR)
        return CartesianLimits(
            self.linear_velocity * speed_scale,
            self.linear_acceleration * ramps,
            self.linear_jerk * ramps,
            self.angular_velocity * speed_scale,
            self.angular_acceleration * ramps,
            self.angular_jerk * ramps,
        )

    def time_scaled(self, k: float) -> CartesianLimits:
        """Limits of the same motion run `k` times slower: velocity / k, acceleration / k^2, jerk / k^3.

        From rest, Ruckig then plans the same path stretched in time, so every joint's velocity,
        acceleration and jerk along it shrink by k, k^2 and k^3.
        """
        return self.reduced(k, k, k)

    def reduced(self, velocity: float, acceleration: float, jerk: float) -> CartesianLimits:
        """Velocity limits / `velocity`, acceleration limits / `acceleration`^2, jerk limits / `jerk`^3.

        A factor <= 1 leaves its limits alone (the joints are within bounds for that derivative).
        """
        v, a, j = (1.0 / max(velocity, 1.0)), 1.0 / max(acceleration, 1.0) ** 2, 1.0 / max(jerk, 1.0) ** 3
        return CartesianLimits(
            self.linear_velocity * v,
            self.linear_acceleration * a,
            self.linear_jerk * j,
            self.angular_velocity * v,
            self.angular_acceleration * a,
            self.angular_jerk * j,
        )

    def minimum(self, other: CartesianLimits) -> CartesianLimits:
        """The element-wise smaller limits of the two."""
        return CartesianLimits(*(min(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)))

    def per_dof(self) -> tuple[list[float], list[float], list[float]]:
        """Ruckig's velocity, acceleration and jerk limits for (line, cross, cross, pitch, yaw)."""
        v, a, j = self.linear_velocity, self.linear_acceleration, self.linear_jerk
        w, dw, ddw = self.angular_velocity, self.angular_acceleration, self.angular_jerk
        return [v, v, v, w, w], [a, a, a, dw, dw], [j, j, j, ddw, ddw]


class CartesianState(NamedTuple):
    """Pose, velocity and acceleration of the TCP and tool attitude in base_link, each (5,)."""

    pose: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def at_rest(cls, pose: Any) -> CartesianState:
        """A standing state at `pose`."""
        return cls(np.asarray(as_pose(pose), dtype=float), np.zeros(DOFS), np.zeros(DOFS))

    @property
    def is_at_rest(self) -> bool:
        """Exactly zero velocity and acceleration (then a plan is the straight segment)."""
        return not (np.any(self.velocity) or np.any(self.acceleration))


def line_frame(direction: np.ndarray) -> np.ndarray:
    """Rotation (3x3, rows = axes) whose first axis is `direction`; any frame when it is ~0."""
    n = float(np.linalg.norm(direction))
    e1 = direction / n if n > 1e-12 else np.array([1.0, 0.0, 0.0])
    helper = np.eye(3)[int(np.argmin(np.abs(e1)))]  # the world axis least parallel to e1
    e2 = np.cross(e1, helper)
    e2 /= np.linalg.norm(e2)
    return np.vstack((e1, e2, np.cross(e1, e2)))


class SlowBand(NamedTuple):
    """A stretch of a line crossed no faster than `speed` (m/s): from `start` to `end` m before its goal.

    `start` > `end` >= 0. The part of it behind a plan's start is ignored; a plan that starts inside it
    starts at the band's speed limit (its ramps scaled as a goal at that speed: `CartesianLimits.scaled`).
    """

    speed: float
    start: float
    end: float


_LEG_MIN = 1e-5
"""m: a leg shorter than this is left out (the band starts at the plan's start or ends at its goal)."""


def _input(current: tuple[list[float], list[float], list[float]], limits: CartesianLimits) -> InputParameter:
    """Ruckig's input from (position, velocity, acceleration) under `limits`, ending at acceleration 0."""
    inp = InputParameter(DOFS)
    inp.current_position, inp.current_velocity, inp.current_acceleration = current
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = limits.per_dof()
    inp.target_acceleration = [0.0] * DOFS
    return inp


def _leg(
    current: tuple[list[float], list[float], list[float]],
    target: tuple[list[float], list[float]],
    limits: CartesianLimits,
) -> Trajectory:
    """One Ruckig leg from (position, velocity, acceleration) to (position, velocity), acceleration 0.

    A leg that ends moving (into a slow band) decelerates with `BAND_ENTRY_DECEL_SHARE` of the limit.
    """
    inp = _input(current, limits)
    inp.target_position, inp.target_velocity = target
    inp.synchronization = Synchronization.Phase  # falls back to Time when not collinear
    if any(target[1]):
        _gentle_deceleration(inp)
    return _calculate(inp)


def _gentle_deceleration(inp: InputParameter) -> None:
    """Limit each DoF's acceleration against its direction of travel to `BAND_ENTRY_DECEL_SHARE`.

    A DoF that moves up decelerates with negative acceleration (`min_acceleration`), one that moves down
    with positive (`max_acceleration`); one that ends where it starts keeps both. The shape is the same
    for every DoF moving the same way, so phase synchronisation (the straight 5-D segment) still holds.
    """
    high, low = list(inp.max_acceleration), [-a for a in inp.max_acceleration]
    for i, (start, goal) in enumerate(zip(inp.current_position, inp.target_position, strict=True)):
        if goal > start:
            low[i] *= BAND_ENTRY_DECEL_SHARE
        elif goal < start:
            high[i] *= BAND_ENTRY_DECEL_SHARE
    inp.max_acceleration, inp.min_acceleration = high, low


def _calculate(inp: InputParameter) -> Trajectory:
    trajectory = Trajectory(DOFS)
    try:
        result = Ruckig(DOFS).calculate(inp, trajectory)
    except (ValueError, RuckigError) as exc:  # the binding raises for codes its enum lacks (e.g. -101)
        raise PlanningError(f"Ruckig could not plan the Cartesian motion: {exc}") from exc
    if result not in (Result.Working, Result.Finished):
        raise PlanningError(f"Ruckig could not plan the Cartesian motion: {result}")
    return trajectory


class LinePlan:
    """Ruckig trajectories in the frame of the line from `start` to `goal`: one, or up to three with a band.

    Args:
        start: the commanded state the plan continues from.
        goal: target pose (x, y, z, pitch, yaw); the yaw is reached the short way round.
        limits: the (already speed-scaled) limits.
        brake: instead of going to `goal`, stop as fast as the limits allow (velocity interface);
            `goal` is ignored and `rotation` keeps the current plan's frame, so a straight motion
            brakes on its own line.
        rotation: frame to plan in (brake only).
        band: a stretch crossed at its own speed (`SlowBand`); only from rest and not with `brake`.

    Raises:
        PlanningError: Ruckig rejected the input.
        ValueError: a band with a moving start or a brake.
    """

    def __init__(
        self,
        start: CartesianState,
        goal: Any,
        limits: CartesianLimits,
        brake: bool = False,
        rotation: np.ndarray | None = None,
        band: SlowBand | None = None,
    ) -> None:
        self.start = start
        self.limits = limits
        self.band = band
        self.origin = start.pose[:3].copy()
        p0 = start.pose
        if brake:
            self.rotation = rotation if rotation is not None else line_frame(start.velocity[:3])
            self.goal = None
        else:
            g = np.asarray(as_pose(goal), dtype=float)
            g[4] = p0[4] + math.remainder(g[4] - p0[4], 2.0 * math.pi)
            self.goal = g
            self.rotation = line_frame(g[:3] - self.origin)
        r = self.rotation
        current = (
            [0.0, 0.0, 0.0, float(p0[3]), float(p0[4])],
            [*(r @ start.velocity[:3]), *start.velocity[3:]],
            [*(r @ start.acceleration[:3]), *start.acceleration[3:]],
        )
        self.brake = brake
        if band is not None and (brake or not start.is_at_rest):
            raise ValueError("a plan with a slow band starts at rest and goes to a goal")
        if brake:
            inp = _input(current, limits)
            inp.target_velocity = [0.0] * DOFS
            inp.control_interface = ControlInterface.Velocity
            inp.synchronization = Synchronization.Time
            self._legs = [_calculate(inp)]
        else:
            assert self.goal is not None
            target = [*(r @ (self.goal[:3] - self.origin)), float(self.goal[3]), float(self.goal[4])]
            self._legs = self._plan_legs(current, target, limits, band)
        self._begins = list(np.cumsum([0.0] + [float(leg.duration) for leg in self._legs[:-1]]))
        self.duration = self._begins[-1] + float(self._legs[-1].duration)

    @staticmethod
    def _plan_legs(
        current: tuple[list[float], list[float], list[float]],
        target: list[float],
        limits: CartesianLimits,
        band: SlowBand | None,
    ) -> list[Trajectory]:
        """The legs to `target` (line frame): one without a band, else to, through and out of the band.

        Each leg must move forward only, within its stretch of the line: Ruckig reaches a join's speed
        by backing up, or overshoots the next join, when the stretch is too short for it. Such a join's
        speed is halved (a slower crossing is never wrong), that of the join before it when the leg
        starts too fast, until every leg fits; a join at rest always does.
        """
        length = float(np.linalg.norm(target[:3]))
        slow = limits if band is None else limits.scaled(min(band.speed / limits.linear_velocity, 1.0))
        if band is None or slow == limits or length <= _LEG_MIN:  # no band, or none slower than the line
            return [_leg(current, (target, [0.0] * DOFS), limits)]
        direction = (np.asarray(target) - np.asarray(current[0])) / length  # per metre along the line
        # The join speed along the line: within every DoF's velocity limit (the angles move in proportion).
        v_max = np.asarray(slow.per_dof()[0])
        moving = np.abs(direction) > 1e-12
        speed = float(np.min(v_max[moving] / np.abs(direction[moving]))) * (1.0 - 1e-9)
        into, out_of = length - band.start, length - band.end
        # (where a leg ends along the line, its limits, the speed it ends at)
        joins: list[list] = []
        if into > _LEG_MIN:
            joins.append([into, limits, speed])
        if out_of > _LEG_MIN:
            last = out_of >= length - _LEG_MIN
            joins.append([length if last else out_of, slow, 0.0 if last else speed])
        if not joins or joins[-1][0] < length:
            joins.append([length, limits, 0.0])
        legs: list[Trajectory] = []
        i = 0
        for _ in range(200):
            if i == len(joins):
                return legs
            s0, v0 = (0.0, None) if i == 0 else (joins[i - 1][0], joins[i - 1][2])
            state = current if v0 is None else (
                list(np.asarray(current[0]) + direction * s0), list(direction * v0), [0.0] * DOFS
            )
            s1, leg_limits, v1 = joins[i]
            end = (target, [0.0] * DOFS) if s1 >= length else (
                list(np.asarray(current[0]) + direction * s1), list(direction * v1)
            )
            leg = _leg(state, end, leg_limits)
            reach = leg.position_extrema[0]
            if reach.min >= s0 - 1e-12 and reach.max <= s1 + 1e-12:
                del legs[i:]
                legs.append(leg)
                i += 1
            elif v1 > 0.0:
                joins[i][2] = v1 * 0.5 if v1 > 1e-6 else 0.0
            elif i > 0 and joins[i - 1][2] > 0.0:
                v = joins[i - 1][2]
                joins[i - 1][2] = v * 0.5 if v > 1e-6 else 0.0
                i -= 1
            else:
                break
        raise PlanningError(f"Ruckig could not plan the legs of a line with a slow band: {band}")

    def ended(self, t: float) -> bool:
        """Whether `t` seconds into the plan is its end (`END_TOLERANCE_S`)."""
        return t >= self.duration - END_TOLERANCE_S

    def state_at(self, t: float) -> CartesianState:
        """The commanded state `t` seconds into the plan (held at the end after `duration`).

        At and after the end it is exactly the goal at rest, not Ruckig's end state, which can be ~1e-8
        off: a goal with a joint exactly at its limit must not end a hair outside it.
        """
        if self.ended(t):
            if self.goal is not None:
                return CartesianState(self.goal.copy(), np.zeros(DOFS), np.zeros(DOFS))
            t = self.duration
        t = min(max(t, 0.0), self.duration)
        i = bisect.bisect_right(self._begins, t) - 1
        p, v, a = self._legs[i].at_time(min(t - self._begins[i], float(self._legs[i].duration)))
        rt = self.rotation.T
        pose = np.concatenate((self.origin + rt @ np.asarray(p[:3]), p[3:]))
        vel = np.concatenate((rt @ np.asarray(v[:3]), v[3:]))
        acc = np.concatenate((rt @ np.asarray(a[:3]), a[3:]))
        return CartesianState(pose, vel, acc)

    @functools.cached_property
    def tail_from(self) -> float:
        """Time into the plan (s) from which the rest of it is sent whole (`TAIL_LEAD_S`).

        The last leg's final deceleration begins where its speed along the line last peaks; this is the
        lead before that. A leg's speed rises, may hold, and falls to rest at its end, so the scan walks
        back from the end while the speed still rises: it costs the final deceleration's length, not the
        leg's, in a line's first control cycle (docs/design/cartesian_plan.md). A brake (no goal) has no
        tail: it is all deceleration.
        """
        if self.goal is None:
            return self.duration
        leg, begin = self._legs[-1], self._begins[-1]
        v_lim = np.asarray(self.limits.per_dof()[0])
        n = max(2, math.ceil(float(leg.duration) / _TAIL_SCAN_S) + 1)
        step = float(leg.duration) / (n - 1)  # the peak lies within a step of the sampled one

        def speed(i: int) -> float:
            return float(np.max(np.abs(np.asarray(leg.at_time(i * step)[1])) / v_lim))

        peak, later = n - 1, speed(n - 1)
        while peak > 0:
            earlier = speed(peak - 1)
            if earlier <= later * (1.0 + 1e-9):  # no longer rising backwards: the last peak
                break
            peak, later = peak - 1, earlier
        return max(begin + peak * step - step - TAIL_LEAD_S, 0.0)

    @property
    def end_pose(self) -> np.ndarray:
        """Where the plan stops (the goal, or the braking point)."""
        return self.goal if self.goal is not None else self.state_at(self.duration).pose

    def sample_poses(self, t_from: float, sampling: PathSampling) -> np.ndarray:
        """Poses (N, 5) from `t_from` to the end, no two farther apart than the sampling allows."""
        t_from = min(max(t_from, 0.0), self.duration)
        v_lim, _, _ = self.limits.per_dof()
        v0 = self.start.velocity
        # Ruckig keeps every DoF within max(limit, |initial velocity|): a bound on the sample spacing.
        v_bound = math.sqrt(3.0) * max(v_lim[0], float(np.max(np.abs(v0[:3]))))
        w_bound = max(v_lim[3], float(np.max(np.abs(v0[3:]))))
        dt = min(sampling.spacing / v_bound, sampling.angle_spacing / w_bound)
        n = max(sampling.min_samples - 1, math.ceil((self.duration - t_from) / dt))
        return np.array([self.state_at(t).pose for t in np.linspace(t_from, self.duration, n + 1)])


class JointRateLimits(NamedTuple):
    """Per-joint velocity, acceleration and jerk bounds (rad/s, rad/s^2, rad/s^3), motor order."""

    velocity: tuple[float, ...]
    acceleration: tuple[float, ...]
    jerk: tuple[float, ...]


def joint_rate_ratios(
    plan: LinePlan, params: ArmParams, seed: Any, joint_limits: JointRateLimits
) -> tuple[float, float, float]:
    """How far the joint motion of `plan` exceeds `joint_limits`, per derivative; 1.0 is at the limits.

    Returns (max |dq/dt| / v_max, sqrt(max |d2q/dt2| / a_max), cbrt(max |d3q/dt3| / j_max)) over all
    joints, from finite differences of the IK along the plan (every 4 ms, at most 300 samples). Each is
    the factor by which a time scaling would have to slow the motion down for that derivative to fit.
    """
    if plan.duration <= 0.0:
        return 0.0, 0.0, 0.0
    n = min(max(8, math.ceil(plan.duration / 0.004) + 1), 300)
    h = plan.duration / (n - 1)
    poses = np.array([plan.state_at(i * h).pose for i in range(n)])
    # Relaxed limits: on a path along a limit, rounding must not blank out the rows where it moves.
    loose, branch = relaxed(params, _RATE_TOL), on_branch(seed)  # the branch the line runs on
    q = solve_ik_batch(poses[:, :3], poses[:, 3], poses[:, 4], loose, seeds=seed, branch=branch).q
    q[:, 0], q[:, 4] = np.unwrap(q[:, 0]), np.unwrap(q[:, 4])  # a representation switch is not motion
    out = []
    for order, bound in ((1, joint_limits.velocity), (2, joint_limits.acceleration), (3, joint_limits.jerk)):
        deriv = np.abs(np.diff(q, n=order, axis=0)) / h**order
        peak = np.max(np.where(np.isfinite(deriv), deriv, 0.0), axis=0)  # rows the IK missed: NaN
        out.append(float(np.max(peak / np.asarray(bound))) ** (1.0 / order))
    return out[0], out[1], out[2]


def fit_to_joints(
    start: CartesianState,
    goal: Any,
    limits: CartesianLimits,
    params: ArmParams,
    seed: Any,
    joint_limits: JointRateLimits | None,
    band: SlowBand | None = None,
) -> LinePlan:
    """The plan to `goal` under `limits`, slowed down until the joints stay within `joint_limits`.

    The Cartesian limits alone ask the joints for whatever the geometry needs (near the base axis the
    base turns at v / r). Joint targets faster than the trajectory generator's joint limits make it lag
    and cut across in joint space, off the straight line.

    First each Cartesian limit is lowered by the factor its own joint derivative is over (velocity by
    the velocity ratio, acceleration by the acceleration ratio squared, ...), which keeps the ramps as
    short as the joints allow; a few rounds of that usually fit. What still does not fit is then slowed
    down uniformly in time (`CartesianLimits.time_scaled`), which from rest is exact: the same path,
    stretched in time, with every joint's velocity / k, acceleration / k^2, jerk / k^3. The path itself
    never changes, only its timing.

    From a moving start (retarget, preemption) the current velocity and acceleration cannot be scaled,
    so the fit is best effort: a few gentle rounds. A brief excess is then absorbed by the trajectory
    generator, which keeps its own joint limits (and the clamp keeps every position limit regardless).

    A `band` keeps its speed; its ramps follow the fitted limits (`LinePlan`).
    """
    plan = LinePlan(start, goal, limits, band=band)
    if joint_limits is None:
        return plan
    moving = not start.is_at_rest
    for round_no in range(4 if moving else 8):
        ratios = joint_rate_ratios(plan, params, seed, joint_limits)
        worst = max(ratios)
        if worst <= 1.0:
            break
        if moving:  # the current velocity and acceleration stay; shrink gently or Ruckig needs ages
            candidate = limits.reduced(*(min(r * _FIT_MARGIN, 1.5) for r in ratios))
        elif round_no < 4:
            candidate = limits.reduced(*(r * _FIT_MARGIN for r in ratios))
        else:
            candidate = limits.time_scaled(worst * _FIT_MARGIN)
        try:
            plan, limits = LinePlan(start, goal, candidate, band=band), candidate
        except PlanningError:
            break  # keep the last plan Ruckig could make
    return plan
