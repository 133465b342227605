"""Online trajectory generation for the five joints: a NaN-proof wrapper over Ruckig.

Ruckig turns "go to q" (position interface) or "come to rest" (velocity interface, used when the arm
lease expires) into one jerk-limited sample per control cycle. The wrapper adds what the control loop
needs on top: validated inputs, limits that change only between two steps, and an error path that
returns the previous state with an error flag instead of raising or handing out NaN.

Phase synchronisation is used: from rest to rest Ruckig then moves all joints on the straight line in
joint space. The (q1, q2) feasible set is convex, so a straight line between two feasible points stays
feasible and the post-clamp has nothing to do in the common case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ruckig import (
    ControlInterface,
    InputParameter,
    OutputParameter,
    Result,
    Ruckig,
    RuckigError,
    Synchronization,
)

from salamander_control.kinematics import NUM_JOINTS
from salamander_control.kinematics._validate import finite_vector

_ZERO = (0.0,) * NUM_JOINTS
TARGET_NUDGE = 1e-10
"""rad; how far a target Ruckig failed on is moved towards the current position for one retry."""


@dataclass(frozen=True)
class MotionLimits:
    """Per-joint kinematic limits of the generated trajectory (motor order).

    Attributes:
        max_velocity: rad/s, one per joint, > 0.
        max_acceleration: rad/s^2, one per joint, > 0.
        max_jerk: rad/s^3, one per joint, > 0.
    """

    max_velocity: tuple[float, ...] = (1.5, 1.0, 1.0, 2.0, 2.0)
    max_acceleration: tuple[float, ...] = (4.0, 3.0, 3.0, 6.0, 6.0)
    max_jerk: tuple[float, ...] = (40.0, 30.0, 30.0, 60.0, 60.0)

    def __post_init__(self) -> None:
        """Reject wrong lengths and non-positive or non-finite values (Ruckig would refuse them later)."""
        for name in ("max_velocity", "max_acceleration", "max_jerk"):
            values = finite_vector(getattr(self, name), NUM_JOINTS, f"MotionLimits.{name}")
            if any(v <= 0.0 for v in values):
                raise ValueError(f"MotionLimits.{name} must be > 0 for every joint, got {values}")
            object.__setattr__(self, name, values)


class OtgSample(NamedTuple):
    """One control-cycle sample.

    Attributes:
        position: rad, motor order.
        velocity: rad/s.
        acceleration: rad/s^2.
        calculation_us: Ruckig's own calculation duration for this step, microseconds (0 on error).
        finished: the trajectory has reached its end (at the target, or at rest after `stop()`).
        error: "" when fine; otherwise Ruckig's complaint, and the other fields are the previous state.
    """

    position: tuple[float, ...]
    velocity: tuple[float, ...]
    acceleration: tuple[float, ...]
    calculation_us: float
    finished: bool
    error: str


class Otg:
    """Jerk-limited online trajectory generator for the five joints.

    Args:
        limits: the motion limits to start with.
        delta_time: control period, s.
        position: the state to start from (at rest); the generator holds it until given a target.
    """

    def __init__(self, limits: MotionLimits, delta_time: float, position: Sequence[float]) -> None:
        if not (math.isfinite(delta_time) and delta_time > 0.0):
            raise ValueError(f"delta_time must be a positive number of seconds, got {delta_time}")
        self._ruckig = Ruckig(NUM_JOINTS, delta_time)
        self._inp = InputParameter(NUM_JOINTS)
        self._out = OutputParameter(NUM_JOINTS)
        self._inp.synchronization = Synchronization.Phase
        self._limits: MotionLimits | None = None
        self._pending_limits = limits
        self._apply_limits()
        self._target: tuple[float, ...] | None = None
        self._last = OtgSample(_ZERO, _ZERO, _ZERO, 0.0, True, "")
        self.reset(position)

    @property
    def delta_time(self) -> float:
        """Control period, s."""
        return self._ruckig.delta_time

    @property
    def limits(self) -> MotionLimits:
        """The limits the next step uses (a pending change included)."""
        return self._pending_limits

    @property
    def target(self) -> tuple[float, ...] | None:
        """The position target, or None while stopping (velocity interface)."""
        return self._target

    @property
    def last(self) -> OtgSample:
        """The most recent sample (the current state of the generator)."""
        return self._last

    def reset(
        self,
        position: Sequence[float],
        velocity: Sequence[float] = _ZERO,
        acceleration: Sequence[float] = _ZERO,
    ) -> None:
        """Put the generator at a state and hold its position there (target = `position`).

        Raises:
            ValueError: a vector of the wrong length or with NaN/inf; nothing changes then.
        """
        self.resync(position, velocity, acceleration)
        self.set_target(position)

    def resync(
        self,
        position: Sequence[float],
        velocity: Sequence[float] = _ZERO,
        acceleration: Sequence[float] = _ZERO,
    ) -> None:
        """Replace the current state, keeping the target; the next step plans from this state.

        The trajectory core calls this after the post-clamp moved a sample, so the planner never drifts
        away from the command actually sent.

        Raises:
            ValueError: a vector of the wrong length or with NaN/inf; nothing changes then.
        """
        p = finite_vector(position, NUM_JOINTS, "position")
        v = finite_vector(velocity, NUM_JOINTS, "velocity")
        a = finite_vector(acceleration, NUM_JOINTS, "acceleration")
        self._inp.current_position = list(p)
        self._inp.current_velocity = list(v)
        self._inp.current_acceleration = list(a)
        self._last = OtgSample(p, v, a, 0.0, self._last.finished, "")

    def set_limits(self, limits: MotionLimits) -> None:
        """Use new limits from the next step on (never in the middle of one)."""
        self._pending_limits = limits

    def set_target(self, position: Sequence[float]) -> None:
        """Plan to `position` at rest (position interface) from the next step on.

        Raises:
            ValueError: wrong length or NaN/inf; the previous target stays.
        """
        target = finite_vector(position, NUM_JOINTS, "target")
        self._inp.control_interface = ControlInterface.Position
        self._inp.target_position = list(target)
        self._inp.target_velocity = list(_ZERO)
        self._inp.target_acceleration = list(_ZERO)
        self._target = target

    def stop(self) -> None:
        """Decelerate to zero velocity within the limits (velocity interface), then hold there."""
        self._inp.control_interface = ControlInterface.Velocity
        self._inp.target_velocity = list(_ZERO)
        self._inp.target_acceleration = list(_ZERO)
        self._target = None

    def step(self) -> OtgSample:
        """Advance one control period and return the new sample.

        On a Ruckig error (result code or exception) the state does not advance: the previous sample is
        returned with `error` set, so the caller can hold or brake; the output is never NaN.
        """
        self._apply_limits()
        try:
            try:
                result = self._ruckig.update(self._inp, self._out)
            except RuckigError:
                if not self._nudge_target():
                    raise
                self._ruckig.reset()
                result = self._ruckig.update(self._inp, self._out)
        except RuckigError as exc:  # the Python binding raises for invalid input
            text = str(exc).strip()
            return self._failed(text.splitlines()[0].rstrip(": ") if text else "RuckigError")
        except ValueError as exc:  # a result code the binding's enum does not know (e.g. -101)
            return self._failed(f"ruckig: {exc}")
        if result not in (Result.Working, Result.Finished):
            return self._failed(f"ruckig returned {result.name}")
        out = self._out
        position, velocity, acceleration = (
            tuple(out.new_position),
            tuple(out.new_velocity),
            tuple(out.new_acceleration),
        )
        if not all(math.isfinite(v) for v in (*position, *velocity, *acceleration)):
            return self._failed("ruckig produced a non-finite sample")
        out.pass_to_input(self._inp)
        if result == Result.Finished:
            # Land exactly on the target (and at rest): Ruckig's sums leave ~1e-16 of rounding, which
            # would leave a goal that lies on a limit a hair outside it, or a stopped arm creeping.
            position = self._target if self._target is not None else position
            velocity, acceleration = _ZERO, _ZERO
            self._inp.current_position = list(position)
            self._inp.current_velocity = list(velocity)
            self._inp.current_acceleration = list(acceleration)
            if self._target is not None:
                self._inp.target_position = list(self._target)  # undo a nudge: hold exactly here
        calc = out.calculation_duration if out.new_calculation else 0.0
        self._last = OtgSample(position, velocity, acceleration, calc, result == Result.Finished, "")
        return self._last

    def _nudge_target(self) -> bool:
        """Move Ruckig's target `TARGET_NUDGE` closer to the current position; False if nothing to nudge.

        Ruckig 0.19.4 fails in its step 1 on distances that sit exactly on the boundary between two
        profile shapes, within rounding: from rest, 2 a^3 / j^2 (0.06 rad at a = 3, j = 30, e.g.
        0.06000000000000005 fails, 0.06 does not; salamander_control/test/trajectory/test_otg.py). A
        target 1e-10 rad closer is off the boundary; the step that finishes still lands on the exact
        target (`step`).
        """
        if self._target is None:
            return False
        current = self._inp.current_position
        nudged = [
            t - math.copysign(TARGET_NUDGE, t - c) if abs(t - c) > TARGET_NUDGE else t
            for t, c in zip(self._target, current, strict=True)
        ]
        if nudged == list(self._inp.target_position):
            return False
        self._inp.target_position = nudged
        return True

    def _failed(self, why: str) -> OtgSample:
        # A failed calculation can leave Ruckig's stored trajectory half-written while its record of the
        # last input stays the old one: without a reset, going back to the old target would replay it.
        self._ruckig.reset()
        return self._last._replace(calculation_us=0.0, finished=False, error=why)

    def _apply_limits(self) -> None:
        limits = self._pending_limits
        if limits is self._limits:
            return
        self._inp.max_velocity = list(limits.max_velocity)
        self._inp.max_acceleration = list(limits.max_acceleration)
        self._inp.max_jerk = list(limits.max_jerk)
        self._limits = limits
