"""Bringing a followed Cartesian line to rest on the line itself: the TCP decelerates along it (IK per cycle).

When a followed stream stops (its sender died, its goal was preempted) or the lease expires during it,
the command is in mid-path at speed. The Cartesian motion node streams straight TCP lines with a
constant tool attitude (`cartesian/`), and a place descent has 1.95 mm of side clearance in the box,
so the stop must not leave that line. `LineBrake` brakes the TCP along it:

- `stream_line` finds the line from the forward kinematics of the newest streamed samples the core
  holds (direction = newest TCP - an earlier TCP on the same line, the tool attitude constant); a
  stream that is not such a line (a joint-space sender, a curved retarget blend) gives None, and the
  caller brakes along the joint-space curve instead (`path_brake.PathBrake`).
- The path is p(s) = p0 + (s - s0) u: the command's own TCP p0 moved along the line direction u, the
  tool attitude the command's, so the first point is the command itself (no jump; the command's
  micrometre-size offset from the line stays constant, it never grows). s is measured along u from
  the newest sample's TCP, so s = 0 is that sample (the end the stream had reached).
- One scalar, s, is driven by a one-axis Ruckig from the command's (s0, ds, dds) to rest at s = 0 (the
  newest sample; it comes back to it along the line if braking carried it past) or, for a `stop()`,
  to rest wherever braking ends. The scalar limits are the joint limits divided by dq/ds over the
  stretch the brake covers, less what the curvature d2q/ds2 takes (planned, measured, planned again).
  Braking uses all of the joint limits; the Cartesian node's plans use `joint_limit_fraction` of them.
- Each cycle: one closed-form IK of p(s) (seeded with the previous command, same elbow branch) for the
  position; dq/ds and d2q/ds2 come from a table of IK solutions over the brake's stretch, built once
  when the brake starts, for the velocity (dq/ds ds) and acceleration (dq/ds dds + d2q/ds2 ds^2).
- The command's velocity and acceleration are not exactly those of the line (the follower extrapolates
  in joint space once the stream is late): their difference fades out by a quintic over a few
  milliseconds (as `stream_follow` blends), so velocity and acceleration stay continuous; its position
  offset is micro-radians (micrometres of TCP).

Not guaranteed: that the brake ends before the newest sample. The command runs `stream_delay` behind
the stream and the stop is noticed `stream_timeout` after the newest sample arrived, so at speed the
arm has passed it before braking begins and braking takes further (see docs/design/stream_following.md,
"Stopping on the path", for the distances): it then stops as hard as the joint limits allow and comes
back along the line. An IK failure raises ValueError; the caller (`TrajectoryCore`) checks every
command against the limits as for a followed stream and falls back to a safer stop with a warning.
Pure Python + Ruckig, no ROS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from ruckig import ControlInterface, InputParameter, OutputParameter, Ruckig

from salamander_control.kinematics import ArmParams, branch_of, forward_kinematics, solve_ik_pitched
from salamander_control.trajectory.otg import MotionLimits
from salamander_control.trajectory.path_brake import BrakePoint, plan_scalar_brake, scalar_step
from salamander_control.trajectory.stream_follow import BLEND_JERK_SHARE, _fade, _max_jerk, _poly

LINE_TOLERANCE = 2e-5
"""m; streamed TCPs within this of the line through the newest and an earlier one lie on it (the
Cartesian node's samples are IK solutions of points on its line: their FK is on it to ~1e-12 m)."""
ATTITUDE_TOLERANCE = 1e-6
"""rad; tool pitch and yaw of the samples of one line agree to this (the node streams them constant)."""
MIN_LINE = 5e-5
"""m; a line shorter than this (a stream just started, or crawling) has no reliable direction."""
MIN_SPEED = 1e-4
"""m/s; below this TCP speed along the line there is nothing to brake: the caller stops in joint space."""
TABLE_STEP = 2e-3
"""m; spacing of the dq/ds table along the line (its interpolation error is ~1e-6 of dq/ds)."""


class StreamLine(NamedTuple):
    """The line a stream follows: the newest sample's TCP (m), the unit direction of motion along it."""

    origin: tuple[float, float, float]
    direction: tuple[float, float, float]


def stream_line(samples: Sequence[Sequence[float]], arm: ArmParams) -> StreamLine | str:
    """The TCP line through the newest samples (oldest first), or why they are not on one line.

    Walks back from the newest sample while the samples' TCPs stay on the line through the newest and
    the oldest one so far and their tool attitude stays the newest one's; the direction is the newest
    TCP minus the oldest such TCP.
    """
    if len(samples) < 2:
        return "fewer than two streamed samples"
    poses = [forward_kinematics(q, arm) for q in samples]
    newest = poses[-1]
    end = newest.tcp
    far = None
    accepted: list[tuple[float, float, float]] = []
    for pose in reversed(poses[:-1]):
        if (
            abs(pose.tool_pitch - newest.tool_pitch) > ATTITUDE_TOLERANCE
            or abs(math.remainder(pose.tool_yaw - newest.tool_yaw, 2.0 * math.pi)) > ATTITUDE_TOLERANCE
        ):
            break
        if any(_distance_from_line(p, end, pose.tcp) > LINE_TOLERANCE for p in accepted):
            break  # the samples between are not on the line through this one: a curve, or another line
        accepted.append(pose.tcp)
        if far is None or _norm(_sub(end, pose.tcp)) > _norm(_sub(end, far)):
            far = pose.tcp
    if far is None:
        return "the streamed tool attitude changes"
    d = _sub(end, far)
    length = _norm(d)
    if length < MIN_LINE:
        return f"the streamed samples span {length * 1e3:.3f} mm of straight line, too short for a direction"
    return StreamLine(end, (d[0] / length, d[1] / length, d[2] / length))


class LineBrake:
    """Decelerate the TCP along a streamed line (see the module docstring).

    Args:
        position, velocity, acceleration: the command and its derivatives (rad, rad/s, rad/s^2).
        line: the stream's line (`stream_line`).
        arm: the arm model (FK/IK).
        limits: the joint motion limits.
        delta_time: control period, s.
        back: come back to the newest sample (s = 0) at rest (stream ended), else rest where braking ends.

    Raises:
        ValueError: too slow along the line, an IK failure on the stretch, or a plan Ruckig refuses.
    """

    def __init__(
        self,
        position: Sequence[float],
        velocity: Sequence[float],
        acceleration: Sequence[float],
        line: StreamLine,
        arm: ArmParams,
        limits: MotionLimits,
        delta_time: float,
        back: bool,
    ) -> None:
        self._arm, self._limits = arm, limits
        q = tuple(position)
        pose = forward_kinematics(q, arm)
        self._p0, self._pitch, self._yaw = pose.tcp, pose.tool_pitch, pose.tool_yaw
        self._branch = branch_of(q[1], q[2])
        self._u = line.direction
        self._s0 = _dot(_sub(self._p0, line.origin), self._u)
        sd, sdd = self._rates_along(q, velocity, acceleration)
        if not (math.isfinite(sd) and abs(sd) >= MIN_SPEED):
            raise ValueError(f"TCP speed along the line {sd:.2e} m/s: nothing to brake")
        self._q = q  # the previous command: the IK seed
        self._ruckig = Ruckig(1, delta_time)
        self._inp, self._out = InputParameter(1), OutputParameter(1)
        inp = self._inp
        inp.current_position, inp.current_velocity, inp.current_acceleration = [self._s0], [sd], [sdd]
        if back:
            inp.target_position, inp.target_velocity, inp.target_acceleration = [0.0], [0.0], [0.0]
        else:
            inp.control_interface = ControlInterface.Velocity
            inp.target_velocity, inp.target_acceleration = [0.0], [0.0]
        # dq/ds depends on where on the line the brake runs, which depends on the limits it gives:
        # start from the stretch to the stopping point at the joint limits seen at the start, plan,
        # measure what the plan covers and plan again over that.
        reach = sd * sd / 2.0  # a first guess (1 m/s^2); the loop below measures what the plan covers
        ends = [self._s0, self._s0 + math.copysign(reach, sd)] + ([0.0] if back else [])

        def set_limits(span: tuple[float, float], peak: float) -> None:
            self._build_table(*span)
            self._set_limits(abs(sd), sdd, peak)

        c_lo, c_hi = plan_scalar_brake(self._ruckig, inp, (min(ends), max(ends)), abs(sd), set_limits)
        self.stop_at = c_hi if sd > 0 else c_lo
        """Where along the line (m from the newest sample) the brake's motion turns or ends."""
        g, k = self._derivatives(self._s0)
        dv = [x - y * sd for x, y in zip(velocity, g, strict=True)]
        da = [x - y * sdd - c * sd * sd for x, y, c in zip(acceleration, g, k, strict=True)]
        self._blend = _fade_out(dv, da, limits)
        self._t = 0.0
        self._dt = delta_time

    def _rates_along(
        self, q: Sequence[float], v: Sequence[float], a: Sequence[float], h: float = 1e-3
    ) -> tuple[float, float]:
        """TCP velocity and acceleration along the line of the joint motion (q, v, a), by FK at +-h s."""
        ahead = [x + h * (y + 0.5 * h * z) for x, y, z in zip(q, v, a, strict=True)]
        behind = [x - h * (y - 0.5 * h * z) for x, y, z in zip(q, v, a, strict=True)]
        pa = forward_kinematics(ahead, self._arm).tcp
        pb = forward_kinematics(behind, self._arm).tcp
        speed = _dot(_sub(pa, pb), self._u) / (2.0 * h)
        accel = (_dot(_sub(pa, self._p0), self._u) + _dot(_sub(pb, self._p0), self._u)) / (h * h)
        return speed, accel

    def _ik(self, s: float, seed: Sequence[float]) -> tuple[float, ...]:
        """Joints of the path's point at `s`, nearest `seed`, same elbow branch; ValueError if none."""
        p = tuple(x + (s - self._s0) * d for x, d in zip(self._p0, self._u, strict=True))
        ik = solve_ik_pitched(p, self._pitch, self._yaw, self._arm, seed=seed, branch=self._branch)
        if not ik.ok or ik.q is None:
            raise ValueError(f"no IK {(s - self._s0) * 1e3:+.2f} mm along the line ({ik.reason})")
        return ik.q

    def _build_table(self, lo: float, hi: float) -> None:
        """dq/ds and d2q/ds2 at points TABLE_STEP apart covering [lo, hi] (central differences of IK)."""
        n = max(2, math.ceil((hi - lo) / TABLE_STEP))
        step = (hi - lo) / n if hi > lo else TABLE_STEP
        self._t_lo, self._t_step = lo, step
        # march outwards from the command so every IK is seeded by its neighbour (no branch/turn jumps)
        k0 = min(max(round((self._s0 - lo) / step), 0), n)
        qs: dict[int, tuple[float, ...]] = {k0: self._ik(lo + k0 * step, self._q)}
        for k in range(k0 + 1, n + 2):
            qs[k] = self._ik(lo + k * step, qs[k - 1])
        for k in range(k0 - 1, -2, -1):
            qs[k] = self._ik(lo + k * step, qs[k + 1])
        self._g = [
            tuple((b - a) / (2.0 * step) for a, b in zip(qs[k - 1], qs[k + 1], strict=True))
            for k in range(n + 1)
        ]
        self._k = [
            tuple(
                (b - 2.0 * m + a) / (step * step) for a, m, b in zip(qs[k - 1], qs[k], qs[k + 1], strict=True)
            )
            for k in range(n + 1)
        ]

    def _derivatives(self, s: float) -> tuple[list[float], list[float]]:
        """dq/ds and d2q/ds2 at `s` (linear interpolation in the table; held beyond its ends)."""
        x = (s - self._t_lo) / self._t_step
        n = len(self._g) - 1
        k = min(max(int(math.floor(x)), 0), n - 1)
        f = min(max(x - k, 0.0), 1.0)
        g = [a + f * (b - a) for a, b in zip(self._g[k], self._g[k + 1], strict=True)]
        c = [a + f * (b - a) for a, b in zip(self._k[k], self._k[k + 1], strict=True)]
        return g, c

    def _set_limits(self, speed: float, sdd: float, peak: float) -> None:
        """Scalar limits keeping every joint within its own over the table's stretch, |ds| <= `peak`.

        Joint i moves with velocity g ds, acceleration g dds + k ds^2 and jerk g d3s + 3 k ds dds (+ the
        next term, k' ds^3, left to the core's per-cycle check), g = dq/ds and k = d2q/ds2.
        """
        lim = self._limits
        grow = [max(abs(g[i]) for g in self._g) + 1e-12 for i in range(len(lim.max_velocity))]
        bend = [max(abs(k[i]) for k in self._k) for i in range(len(lim.max_velocity))]
        v_lim = max(min(m / g for m, g in zip(lim.max_velocity, grow, strict=True)), speed)
        peak = min(peak, v_lim)
        a_lim = min(
            (m - b * peak * peak) / g for m, b, g in zip(lim.max_acceleration, bend, grow, strict=True)
        )
        j_lim = min(
            (m - 3.0 * b * peak * max(a_lim, abs(sdd))) / g
            for m, b, g in zip(lim.max_jerk, bend, grow, strict=True)
        )
        if not (a_lim > 0.0 and j_lim > 0.0 and all(map(math.isfinite, (v_lim, a_lim, j_lim)))):
            raise ValueError("the line bends too sharply in joint space to brake along within the limits")
        # Start inside the scalar limits (the joints' own were met): an accelerating command still gains
        # dds^2 / (2 j) of speed while its acceleration ramps down.
        a_lim = max(a_lim, abs(sdd))
        v_lim = max(v_lim, speed + max(sdd, 0.0) ** 2 / (2.0 * j_lim) * (1.0 + 1e-9))
        self._inp.max_velocity, self._inp.max_acceleration, self._inp.max_jerk = [v_lim], [a_lim], [j_lim]

    def tcp_at(self, s: float) -> tuple[float, float, float]:
        """The path's TCP at `s` (m from the newest sample along the line)."""
        return tuple(x + (s - self._s0) * d for x, d in zip(self._p0, self._u, strict=True))  # type: ignore[return-value]

    def step(self) -> BrakePoint:
        """The next cycle's command (one IK). Raises ValueError on an IK or Ruckig failure."""
        s, sd, sdd, finished = scalar_step(self._ruckig, self._inp, self._out)
        q = self._ik(s, self._q)
        self._q = q
        g, k = self._derivatives(s)
        velocity = [x * sd for x in g]
        acceleration = [x * sdd + c * sd * sd for x, c in zip(g, k, strict=True)]
        self._t += self._dt
        if self._blend is not None:
            duration, coeffs = self._blend
            if self._t < duration:
                dp, dv, da = _poly(coeffs, self._t)
                q = tuple(x + y for x, y in zip(q, dp, strict=True))
                velocity = [x + y for x, y in zip(velocity, dv, strict=True)]
                acceleration = [x + y for x, y in zip(acceleration, da, strict=True)]
                finished = False
            else:
                self._blend = None
        return BrakePoint(q, tuple(velocity), tuple(acceleration), finished)


def _fade_out(
    dv: Sequence[float], da: Sequence[float], limits: MotionLimits
) -> tuple[float, list[list[float]]] | None:
    """Quintics (one duration) taking a velocity and acceleration offset to 0, from no position offset.

    The shortest duration (doubling from 4 ms) whose jerk is within BLEND_JERK_SHARE of each joint's
    limit; None for no offset.
    """
    if not (any(dv) or any(da)):
        return None
    duration = 0.004
    for _ in range(10):
        coeffs = [_fade(0.0, v, a, duration) for v, a in zip(dv, da, strict=True)]
        jerks = zip(coeffs, limits.max_jerk, strict=True)
        if all(_max_jerk(c, duration) <= BLEND_JERK_SHARE * j for c, j in jerks):
            break
        duration *= 2.0
    return duration, coeffs


def _sub(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _norm(a: Sequence[float]) -> float:
    return math.sqrt(_dot(a, a))


def _distance_from_line(p: Sequence[float], a: Sequence[float], b: Sequence[float]) -> float:
    """Distance of `p` from the line through `a` and `b` (from `a` if they coincide)."""
    d = _sub(b, a)
    length = _norm(d)
    r = _sub(p, a)
    if length == 0.0:
        return _norm(r)
    t = _dot(r, d) / length
    return math.sqrt(max(_dot(r, r) - t * t, 0.0))
