"""Bringing a moving command to rest along the curve it is moving on (no joint-space detour).

When a followed stream stops (its sender died, or its goal was preempted or cancelled) the command is
in mid-path at speed. A joint-space stop (Ruckig from that state to rest) is time-optimal per joint, and
in joint space that is not the path: millimetres sideways on a place descent, against 1.95 mm of side
clearance (docs/design/stream_following.md). `PathBrake` instead continues along the curve the command
is on and slows down on it:

- The curve is the command's second-order geometric expansion at the moment the brake starts:
  c(s) = q + T s + k s^2 / 2, s the joint-space arc length, T = v / |v| the direction of motion and
  k = (a - (a.T) T) / |v|^2 the curvature vector (the normal part of the acceleration). It agrees with
  the streamed path up to the third order in s; over a brake of a few centimetres of joint motion that
  is micro-radians, i.e. micrometres of TCP.
- One scalar, s, is driven by a one-axis Ruckig from (0, |v|, a.T) to rest, or to the point of the curve
  nearest `back_to` (the stream's newest sample, which lies behind the command on the same curve): the
  arm brakes, then returns along the curve to it. The joints follow c(s(t)): velocity c'(s) s',
  acceleration c'(s) s'' + k s'^2. The scalar limits are the joint limits divided by the tangent's
  components (over the distance the brake covers), less what the curvature takes.

The caller (`TrajectoryCore`) checks every command against the joint limits as for a followed stream
and falls back to a joint-space stop if one would break them. Pure Python + Ruckig, no ROS. Design and
measurements: docs/design/stream_following.md ("Stopping on the path").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ruckig import (
    ControlInterface,
    InputParameter,
    OutputParameter,
    Result,
    Ruckig,
    RuckigError,
    Trajectory,
)

from salamander_control.trajectory.otg import MotionLimits

MIN_SPEED = 1e-3
"""rad/s; below this joint-space speed the direction of motion is not known well enough to follow (and
a joint-space stop from it moves the arm by micro-radians)."""


class BrakePoint(NamedTuple):
    """One brake cycle: the joint command and its derivatives; `finished` at rest (at `back_to`'s point)."""

    position: tuple[float, ...]
    velocity: tuple[float, ...]
    acceleration: tuple[float, ...]
    finished: bool


def _checked(call: Callable[[], Result]) -> Result:
    """The result of a Ruckig call; an error it raises or returns becomes a ValueError."""
    try:
        result = call()
    except RuckigError as exc:
        raise ValueError(f"ruckig: {str(exc).strip()}") from exc
    if result not in (Result.Working, Result.Finished):
        raise ValueError(f"ruckig returned {result.name}")
    return result


def scalar_step(
    ruckig: Ruckig, inp: InputParameter, out: OutputParameter
) -> tuple[float, float, float, bool]:
    """One cycle of a one-axis Ruckig brake: (s, ds/dt, d2s/dt2, finished), rest exactly once finished.

    Raises:
        ValueError: Ruckig raised or returned an error (the caller falls back to a joint-space stop).
    """
    result = _checked(lambda: ruckig.update(inp, out))
    s, sd, sdd = out.new_position[0], out.new_velocity[0], out.new_acceleration[0]
    out.pass_to_input(inp)
    finished = result == Result.Finished
    return (s, 0.0, 0.0, True) if finished else (s, sd, sdd, False)


def plan_scalar_brake(
    ruckig: Ruckig,
    inp: InputParameter,
    span: tuple[float, float],
    peak: float,
    set_limits: Callable[[tuple[float, float], float], None],
) -> tuple[float, float]:
    """Plan a one-axis brake whose scalar limits depend on the stretch it covers and its top speed.

    The limits that keep every joint within its own depend on where along the curve the brake runs and
    how fast, which depend on the limits: `set_limits(span, peak)` sets them for a stretch and a speed,
    the plan is measured, and planned again over what it covers (at most 4 rounds).

    Returns:
        The (lowest, highest) position the planned brake covers.

    Raises:
        ValueError: Ruckig raised or returned an error.
    """
    for _ in range(4):
        set_limits(span, peak)
        trajectory = Trajectory(1)
        _checked(lambda: ruckig.calculate(inp, trajectory))  # noqa: B023 (called at once)
        covered, fastest = _extent(trajectory)
        if covered[0] >= span[0] and covered[1] <= span[1] and fastest <= peak:
            break
        margin = 0.05 * (covered[1] - covered[0]) + 1e-4
        span = (min(span[0], covered[0] - margin), max(span[1], covered[1] + margin))
        peak = max(peak, 1.02 * fastest)
    return covered


class PathBrake:
    """Decelerate along the curve of the current motion (see the module docstring).

    Args:
        position: the command, rad.
        velocity: its velocity, rad/s (|v| >= MIN_SPEED, else ValueError).
        acceleration: its acceleration, rad/s^2.
        limits: the joint motion limits.
        delta_time: control period, s.
        back_to: a point on (or within rounding of) the curve to come back to at rest, or None to stop
            where the brake ends.

    Raises:
        ValueError: too slow to have a direction, or a non-finite curve.
    """

    def __init__(
        self,
        position: Sequence[float],
        velocity: Sequence[float],
        acceleration: Sequence[float],
        limits: MotionLimits,
        delta_time: float,
        back_to: Sequence[float] | None = None,
    ) -> None:
        speed = math.sqrt(sum(x * x for x in velocity))
        if not (math.isfinite(speed) and speed >= MIN_SPEED):
            raise ValueError(f"joint speed {speed:.2e} rad/s: no direction to brake along")
        self._q = tuple(position)
        self._t = tuple(x / speed for x in velocity)
        a_t = sum(a * t for a, t in zip(acceleration, self._t, strict=True))
        self._k = tuple((a - a_t * t) / (speed * speed) for a, t in zip(acceleration, self._t, strict=True))
        target = None if back_to is None else self._nearest(back_to)
        self._ruckig = Ruckig(1, delta_time)
        self._inp, self._out = InputParameter(1), OutputParameter(1)
        inp = self._inp
        inp.current_position, inp.current_velocity, inp.current_acceleration = [0.0], [speed], [a_t]
        if target is None:
            inp.control_interface = ControlInterface.Velocity
            inp.target_velocity, inp.target_acceleration = [0.0], [0.0]
        else:
            inp.target_position, inp.target_velocity, inp.target_acceleration = [target], [0.0], [0.0]
        # The scalar limits depend on the stretch of curve the brake covers (the tangent's length varies by
        # k s) and on its speed (the curvature takes k ds^2), which depend on the limits: start from the
        # straight line at the start speed, plan, measure the plan, and plan again with what it covers.
        span = (min(target or 0.0, 0.0), max(target or 0.0, 0.0))

        def set_limits(span: tuple[float, float], peak: float) -> None:
            self._set_limits(limits, speed, a_t, span, peak)

        plan_scalar_brake(self._ruckig, inp, span, speed, set_limits)
        self._back_to = None if back_to is None else tuple(back_to)

    def _set_limits(
        self, limits: MotionLimits, speed: float, a_t: float, span: tuple[float, float], peak: float
    ) -> None:
        """Scalar limits that keep every joint within its own while s lies in `span` and |ds| <= `peak`.

        With ds, dds, d3s the derivatives of s: joint i moves with velocity g ds, acceleration
        g dds + k ds^2 and jerk g d3s + 3 k ds dds, where g = T + k s is at most `grow` over the span.
        """
        vmax, amax, jmax = limits.max_velocity, limits.max_acceleration, limits.max_jerk
        grow = [
            max(abs(t + k * span[0]), abs(t + k * span[1])) + 1e-12
            for t, k in zip(self._t, self._k, strict=True)
        ]
        v_lim = max(min(m / g for m, g in zip(vmax, grow, strict=True)), speed)
        peak = min(peak, v_lim)
        a_lim = min((m - abs(k) * peak * peak) / g for m, k, g in zip(amax, self._k, grow, strict=True))
        j_lim = min(
            (m - 3.0 * abs(k) * peak * max(a_lim, abs(a_t))) / g
            for m, k, g in zip(jmax, self._k, grow, strict=True)
        )
        if not (a_lim > 0.0 and j_lim > 0.0 and all(map(math.isfinite, (*self._k, v_lim, a_lim, j_lim)))):
            raise ValueError("the curve is too sharp to brake along within the limits")
        # Start inside the scalar limits (the joints' own were met): an accelerating command still gains
        # a_t^2 / (2 j) of speed while its acceleration ramps down.
        a_lim = max(a_lim, abs(a_t))
        v_lim = max(v_lim, speed + max(a_t, 0.0) ** 2 / (2.0 * j_lim) * (1.0 + 1e-9))
        self._inp.max_velocity, self._inp.max_acceleration, self._inp.max_jerk = [v_lim], [a_lim], [j_lim]

    @property
    def back_to(self) -> tuple[float, ...] | None:
        """The point the brake returns to, if any."""
        return self._back_to

    def curve(self, s: float) -> tuple[float, ...]:
        """The curve's point at arc length `s` (negative: behind the start)."""
        return tuple(q + s * (t + 0.5 * s * k) for q, t, k in zip(self._q, self._t, self._k, strict=True))

    def _nearest(self, p: Sequence[float]) -> float:
        """Arc length of the curve's point nearest `p` (Newton from the tangent's projection)."""
        s = sum((x - q) * t for x, q, t in zip(p, self._q, self._t, strict=True))
        for _ in range(3):
            c = self.curve(s)
            d = [t + s * k for t, k in zip(self._t, self._k, strict=True)]
            r = [ci - pi for ci, pi in zip(c, p, strict=True)]
            f = sum(ri * di for ri, di in zip(r, d, strict=True))
            df = sum(di * di for di in d) + sum(ri * k for ri, k in zip(r, self._k, strict=True))
            if df <= 0.0:
                break
            s -= f / df
        return s

    def step(self) -> BrakePoint:
        """The next cycle's command. Raises ValueError if Ruckig fails (the caller stops in joint space)."""
        s, sd, sdd, finished = scalar_step(self._ruckig, self._inp, self._out)
        tangent = [t + s * k for t, k in zip(self._t, self._k, strict=True)]
        position = self.curve(s)
        velocity = tuple(d * sd for d in tangent)
        acceleration = tuple(d * sdd + k * sd * sd for d, k in zip(tangent, self._k, strict=True))
        return BrakePoint(position, velocity, acceleration, finished)


def _extent(trajectory: Trajectory, samples: int = 48) -> tuple[tuple[float, float], float]:
    """((lowest, highest) position, highest |velocity|) of a one-axis Ruckig trajectory."""
    extrema = trajectory.position_extrema[0]
    duration = trajectory.duration
    fastest = max(abs(trajectory.at_time(duration * i / samples)[1][0]) for i in range(samples + 1))
    return (extrema.min, extrema.max), fastest
