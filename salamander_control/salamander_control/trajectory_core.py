"""The trajectory generator's control cycle without ROS: goal projection, Ruckig, post-clamp.

One `TrajectoryCore.step(config)` per control period:

1. The goal is projected onto the current limits (per-joint box and the coupled (q1, q2) polygon)
   before planning, so Ruckig always plans to a reachable end.
2. Ruckig produces the next sample (jerk-limited, phase-synchronised: straight lines from rest).
3. The sample is post-clamped onto the limits *relaxed just enough to contain the previous command*.
   When the limits have not changed under the arm, that relaxed region is the limits themselves and
   the command never leaves them. When an operator narrows `alpha_max` while the arm sits beyond the
   new value, the command may not jump onto the new bound: the region shrinks with every command that
   moves inwards, so the violation can only decrease, while Ruckig carries the arm to the projected
   goal within its velocity, acceleration and jerk limits.
4. When the clamp moved the sample, Ruckig is re-synchronised to the command actually sent (position,
   and the velocity that command really had), so the planner never drifts away from the arm.

Why the command stays within the velocity limits through a clamp: the previous command lies inside
this cycle's region, so projecting the new sample is non-expansive relative to it; per joint, the
projection onto the coupled half-plane moves q1 and q2 by amounts between their two unclamped steps.
The step is therefore bounded by the larger of the q1 and q2 velocity limits (equal by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from salamander_control.clamp import JOINT_BOUND_NAMES, ClampResult, clamp_joints
from salamander_control.kinematics import ALPHA_BETA_RANGE, NUM_JOINTS, ArmParams, within_limits
from salamander_control.kinematics._validate import finite_vector
from salamander_control.otg import MotionLimits, Otg

_ZERO = (0.0,) * NUM_JOINTS
ROUNDING = 1e-9
"""rad; a post-clamp correction this small is floating-point residue of Ruckig's arithmetic on a sample
that ends on a limit. It is applied (the command stays exactly inside) but not reported as a clamp."""
# ArmParams refuses yaw bounds beyond +-2pi; a relaxed region never needs to go further.
_YAW_LIMIT = 2.0 * math.pi
_RANGE_LIMITED = {"yaw_min", "yaw_max", "wrist_yaw_min", "wrist_yaw_max"}


@dataclass(frozen=True)
class TrajectoryConfig:
    """The trajectory generator's parameter snapshot, swapped atomically and read once per cycle.

    Attributes:
        arm: geometry and the limits the commands must satisfy.
        limits: per-joint velocity, acceleration and jerk limits of the trajectory.
        control_rate_hz: control rate; fixed for the life of a core (it is Ruckig's time step).
    """

    arm: ArmParams
    limits: MotionLimits
    control_rate_hz: float = 500.0

    def __post_init__(self) -> None:
        """Reject a rate that is not a finite positive number."""
        if not (math.isfinite(self.control_rate_hz) and self.control_rate_hz > 0.0):
            raise ValueError(f"control_rate_hz must be a positive number, got {self.control_rate_hz}")


class CycleOutput(NamedTuple):
    """What one control cycle produced.

    Attributes:
        position: the joint command to send, rad (finite; inside the limits unless `outside` > 0).
        velocity: its velocity, rad/s (Ruckig's, or the clamped command's actual rate of change).
        requested: Ruckig's sample before the post-clamp.
        clamp: what the post-clamp did (`clamp.clamped` false on an ordinary cycle, and for a rounding-size
            correction below `ROUNDING`, which is applied all the same).
        outside: how far the command still lies outside the limits, rad; > 0 only while returning
            inside after the limits were narrowed under the arm (or after starting outside them).
        calculation_us: Ruckig's calculation duration this cycle, us.
        error: "" or why Ruckig failed this cycle (the command then holds the previous position).
        stop_finished: a `stop()` brought the arm to rest this cycle; the goal is now where it stopped.
    """

    position: tuple[float, ...]
    velocity: tuple[float, ...]
    requested: tuple[float, ...]
    clamp: ClampResult
    outside: float
    calculation_us: float
    error: str
    stop_finished: bool


def relax_to_include(params: ArmParams, q: Sequence[float]) -> ArmParams:
    """`params` with each bound that `q` crosses moved out to `q` exactly (others unchanged).

    Returns `params` itself when `q` satisfies every limit, so the common case costs one check.
    """
    if within_limits(q, params):
        return params
    changes: dict[str, float] = {}
    lower, upper = params.joint_lower, params.joint_upper
    for i, (lo_name, hi_name) in enumerate(JOINT_BOUND_NAMES):
        if q[i] < lower[i]:
            changes[lo_name] = q[i]
        elif q[i] > upper[i]:
            changes[hi_name] = q[i]
    for name in _RANGE_LIMITED.intersection(changes):
        changes[name] = min(max(changes[name], -_YAW_LIMIT), _YAW_LIMIT)
    if q[2] - q[1] > params.alpha_max:
        changes["alpha_max"] = min(q[2] - q[1], ALPHA_BETA_RANGE[1])
    if q[1] - q[2] > params.beta_max:
        changes["beta_max"] = min(q[1] - q[2], ALPHA_BETA_RANGE[1])
    return params.with_changes(**changes)


class TrajectoryCore:
    """Goal -> limited, clamped joint command, one control cycle at a time (no ROS, no clock).

    Args:
        config: the parameter snapshot to start with.
        start: the measured joint positions to start from (the arm is assumed at rest there); the
            first command equals it, so starting never makes the arm jump.

    Raises:
        ValueError: `start` is not five finite numbers.
    """

    def __init__(self, config: TrajectoryConfig, start: Sequence[float]) -> None:
        q = finite_vector(start, NUM_JOINTS, "start")
        self._dt = 1.0 / config.control_rate_hz
        self._otg = Otg(config.limits, self._dt, q)
        self._limits = config.limits
        self._command = q
        self._velocity = _ZERO
        self._goal = q
        self._goal_arm: ArmParams | None = None  # the limits the goal was last projected onto
        self._stopping = False

    @property
    def delta_time(self) -> float:
        """Control period, s."""
        return self._dt

    @property
    def goal(self) -> tuple[float, ...]:
        """The accepted goal, projected onto the limits it was last checked against."""
        return self._goal

    @property
    def command(self) -> tuple[float, ...]:
        """The last command (positions), motor order."""
        return self._command

    @property
    def stopping(self) -> bool:
        """Whether a `stop()` is bringing the arm to rest."""
        return self._stopping

    def set_goal(self, goal: Sequence[float], arm: ArmParams) -> ClampResult:
        """Accept a complete five-joint goal; it is projected onto `arm`'s limits right away.

        Cancels a stop in progress: a goal accepted after the lease expired takes over from wherever
        the arm is, within the limits (Ruckig plans from the current state, so there is no jump).

        Returns:
            the projection (log `clamped`/`active`/`amount`: the sender asked for something infeasible).

        Raises:
            ValueError: `goal` is not five finite numbers; nothing changes then.
        """
        q = finite_vector(goal, NUM_JOINTS, "goal")
        projected = clamp_joints(q, arm, self._goal)
        self._goal, self._goal_arm = projected.q, arm
        self._stopping = False
        return projected

    def stop(self) -> None:
        """Decelerate to rest within the motion limits and hold there; the goal becomes that point."""
        self._stopping = True
        self._otg.stop()

    def step(self, config: TrajectoryConfig) -> CycleOutput:
        """Run one control cycle with this cycle's parameter snapshot."""
        arm = config.arm
        if config.limits is not self._limits:
            self._otg.set_limits(config.limits)
            self._limits = config.limits
        if not self._stopping:
            if arm is not self._goal_arm:  # limits changed since the goal was projected
                self._goal = clamp_joints(self._goal, arm, self._command).q
                self._goal_arm = arm
            if self._otg.target != self._goal:
                self._otg.set_target(self._goal)
        sample = self._otg.step()
        if sample.error:
            return self._on_error(sample.error, arm)
        region = relax_to_include(arm, self._command)
        clamp = clamp_joints(sample.position, region, self._command)
        if clamp.clamped and clamp.amount > ROUNDING:
            velocity = tuple((b - a) / self._dt for a, b in zip(self._command, clamp.q, strict=True))
            self._otg.resync(clamp.q, velocity)
        else:
            velocity = sample.velocity
            if clamp.clamped:
                clamp = ClampResult(clamp.q, False, (), 0.0)
        self._command, self._velocity = clamp.q, velocity
        stop_finished = False
        if self._stopping and sample.finished:
            self._stopping = False
            self._goal, self._goal_arm = self._command, None  # re-projected next cycle (if outside)
            self._otg.reset(self._command)
            stop_finished = True
        outside = 0.0 if region is arm else clamp_joints(self._command, arm, self._command).amount
        outside = outside if outside > ROUNDING else 0.0
        return CycleOutput(
            clamp.q, velocity, sample.position, clamp, outside, sample.calculation_us, "", stop_finished
        )

    def _on_error(self, why: str, arm: ArmParams) -> CycleOutput:
        """Ruckig failed: hold this cycle, then brake (or, if braking failed too, hold for good)."""
        if self._stopping:
            self._otg.reset(self._command)  # even the brake failed: hold exactly where the command is
            self._stopping = False
            self._goal, self._goal_arm = self._command, None
        else:
            self._otg.resync(self._command, self._velocity)
            self.stop()
        self._velocity = _ZERO
        outside = clamp_joints(self._command, arm, self._command).amount
        outside = outside if outside > ROUNDING else 0.0
        untouched = ClampResult(self._command, False, (), 0.0)
        return CycleOutput(self._command, _ZERO, self._command, untouched, outside, 0.0, why, False)
