"""Following a stream of joint targets (position + velocity per sample): run a fixed delay behind it.

`StreamFollower` keeps the recent samples and evaluates the cubic Hermite curve through their positions
and velocities `delay` seconds behind the newest one (exact for the piecewise-cubic path of a
jerk-limited sender):

- Start: the curve joins the first sample with the command's own velocity and acceleration, so the
  command continues without a jump; a position offset fades out by a quintic blend (`_join`).
- Late sample: beyond the newest sample the curve is extrapolated with the newest segment's end
  velocity and acceleration (continuous), until a new sample arrives (the extrapolation's error is then
  faded out by a blend) or the caller's timeout ends it.
- End: a sample with zero velocity ends the stream: the curve arrives there at rest and holds it.

`stream_limit_problem` says when a followed command breaks the velocity, acceleration or (beyond
`STREAM_JERK_SLACK`) jerk limits; the trajectory core then hands the arm to Ruckig. Pure Python, no
rclpy, no clock: times are the caller's (the trajectory core's cycle clock), in seconds. Why Ruckig does
not follow such streams, and the measurements: docs/design/stream_following.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from salamander_control.trajectory.otg import MotionLimits

MIN_GAP = 1e-4
"""s; a sample this close after the previous one replaces it (two in one cycle: only the newer counts)."""
STREAM_JERK_SLACK = 4.0
"""A followed stream's jerk may reach this multiple of the jerk limit for one cycle. A jerk-limited path
switches its jerk from -j to +j at phase ends; the cubic through samples 10 ms apart turns such a switch
into an acceleration kink at the samples (docs/design/stream_following.md has its measured size). A
stream whose velocities contradict its positions kinks by orders of magnitude more: that is what the
bound refuses."""


class StreamSample(NamedTuple):
    """One streamed target: when it is valid (caller's clock, s), positions (rad) and velocities (rad/s)."""

    time: float
    position: tuple[float, ...]
    velocity: tuple[float, ...]


class FollowPoint(NamedTuple):
    """The followed curve at one time.

    Attributes:
        position: rad.
        velocity: rad/s.
        acceleration: rad/s^2.
        late: the time lies beyond the newest sample (extrapolated, or held at a final rest sample).
        at_rest: the newest sample has zero velocity and the curve has arrived there: the stream is done.
    """

    position: tuple[float, ...]
    velocity: tuple[float, ...]
    acceleration: tuple[float, ...]
    late: bool
    at_rest: bool


def hermite(a: StreamSample, b: StreamSample, t: float) -> tuple[list[float], list[float], list[float]]:
    """Position, velocity and acceleration at time `t` of the cubic Hermite segment from `a` to `b`."""
    h = b.time - a.time
    s = t - a.time
    pos, vel, acc = [], [], []
    for p0, p1, v0, v1 in zip(a.position, b.position, a.velocity, b.velocity, strict=True):
        d = p1 - p0
        c2 = (3.0 * d - (2.0 * v0 + v1) * h) / (h * h)
        c3 = (-2.0 * d + (v0 + v1) * h) / (h * h * h)
        pos.append(p0 + s * (v0 + s * (c2 + s * c3)))
        vel.append(v0 + s * (2.0 * c2 + 3.0 * s * c3))
        acc.append(2.0 * c2 + 6.0 * s * c3)
    return pos, vel, acc


class StreamFollower:
    """The curve through a stream's samples, evaluated `delay` seconds behind the stream.

    Args:
        delay: how far behind the samples' times the curve is evaluated, s (> 0).
        now: the caller's time of the current command, s.
        position: the current command, rad (the curve starts there, so joining the stream never jumps).
        velocity: its velocity, rad/s.
    """

    def __init__(
        self,
        delay: float,
        now: float,
        position: Sequence[float],
        velocity: Sequence[float],
        acceleration: Sequence[float],
        limits: MotionLimits,
    ) -> None:
        if not delay > 0.0:
            raise ValueError(f"delay must be > 0 s, got {delay}")
        self._delay = delay
        self._start = (now, tuple(position), tuple(velocity), tuple(acceleration))
        self._limits = limits
        self._samples: list[StreamSample] = []
        self._blends: list[tuple[float, float, list[list[float]]]] = []  # (start, duration, quintics)
        self._last: tuple[float, FollowPoint] | None = None  # the last evaluation (stream time, curve)

    @property
    def delay(self) -> float:
        """How far behind the stream the curve runs, s."""
        return self._delay

    def push(self, time: float, position: Sequence[float], velocity: Sequence[float]) -> None:
        """Add a sample valid at `time` (caller's clock, s); the caller validated and limited it."""
        sample = StreamSample(time, tuple(position), tuple(velocity))
        if not self._samples:
            self._samples = [self._join(sample), sample]
            return
        last = self._samples[-1]
        if time <= last.time + MIN_GAP:  # same instant (or older): the newer message wins, at the old time
            sample = sample._replace(time=last.time)
            self._samples[-1] = sample
        else:
            self._samples.append(sample)
        if self._last is not None and self._last[1].late:
            # The curve was extrapolated past the previous sample (this one came late): from here the
            # curve through the new sample differs by the extrapolation's error; fade that out.
            te, before = self._last
            after = self._curve(te)
            self._add_blend(
                te,
                [x - y for x, y in zip(before.position, after.position, strict=True)],
                [x - y for x, y in zip(before.velocity, after.velocity, strict=True)],
                [x - y for x, y in zip(before.acceleration, after.acceleration, strict=True)],
            )
            self._last = (te, after)  # what the curve part is now (several late samples in one cycle)

    def _join(self, first: StreamSample) -> StreamSample:
        """The curve's start before the first sample, and the blend of the command's offset from it.

        The start is where the cubic to the first sample leaves with the command's velocity and
        acceleration; the command is off it only in position (by the sender's tolerance at most, when
        the arm was still settling from the previous goal: the sender starts at the measured joints),
        and that offset fades out by a blend (`_add_blend`). A stream that starts where the command is
        has an offset of ~1e-6 rad.
        """
        now, q, v, a = self._start
        t0 = now - self._delay
        h = max(first.time - t0, MIN_GAP)
        t0 = first.time - h
        x = tuple(
            p1 - (0.5 * a0 * h * h + (2.0 * v0 + v1) * h) / 3.0
            for p1, v0, v1, a0 in zip(first.position, v, first.velocity, a, strict=True)
        )
        zero = [0.0] * len(q)
        self._add_blend(now - self._delay, [c - s for c, s in zip(q, x, strict=True)], zero, zero)
        return StreamSample(t0, x, v)

    def _add_blend(self, start: float, dp: list[float], dv: list[float], da: list[float]) -> None:
        """Fade an offset (position, velocity, acceleration) from the curve to 0, from stream time `start`.

        A quintic per joint over one common duration (so the joints converge together), the shortest
        (doubling from 2 ms) whose jerk stays within BLEND_JERK_SHARE of every joint's limit and whose
        acceleration never exceeds the larger of its start and BLEND_JERK_SHARE / 10 of the limit.
        """
        if not (any(dp) or any(dv) or any(da)):
            return
        duration = 0.002
        limits = self._limits
        for _ in range(12):
            coeffs = [_fade(p, v, a, duration) for p, v, a in zip(dp, dv, da, strict=True)]
            fits = zip(coeffs, da, limits.max_acceleration, limits.max_jerk, strict=True)
            if all(
                _max_jerk(c, duration) <= BLEND_JERK_SHARE * j
                and _max_acceleration(c, duration) <= max(abs(a0), 0.1 * BLEND_JERK_SHARE * amax)
                for c, a0, amax, j in fits
            ):
                break
            duration *= 2.0
        self._blends.append((start, duration, coeffs))

    def evaluate(self, t: float) -> FollowPoint:
        """The curve at `t - delay` (t: the time of the command being computed), blends included."""
        te = t - self._delay
        point = self._curve(te)
        self._last = (te, point)
        self._blends = [b for b in self._blends if te < b[0] + b[1]]
        if not self._blends:
            return point
        pos, vel, acc = list(point.position), list(point.velocity), list(point.acceleration)
        for start, _, coeffs in self._blends:
            p, v, a = _poly(coeffs, max(te - start, 0.0))
            for i in range(len(pos)):
                pos[i] += p[i]
                vel[i] += v[i]
                acc[i] += a[i]
        return FollowPoint(tuple(pos), tuple(vel), tuple(acc), point.late, False)

    def _curve(self, te: float) -> FollowPoint:
        """The curve through the samples at stream time `te`."""
        samples = self._samples
        if not samples:  # nothing received yet: hold the start
            _, q, _, _ = self._start
            zero = (0.0,) * len(q)
            return FollowPoint(q, zero, zero, True, False)
        while len(samples) > 2 and samples[1].time <= te:  # keep the segment containing te
            samples.pop(0)
        newest = samples[-1]
        if te <= newest.time:
            pos, vel, acc = hermite(samples[0], samples[1], max(te, samples[0].time))
            return FollowPoint(tuple(pos), tuple(vel), tuple(acc), False, False)
        zero = (0.0,) * len(newest.position)
        if not any(newest.velocity):  # arrived at a final rest sample: hold it exactly
            return FollowPoint(newest.position, zero, zero, True, True)
        _, _, end_acc = hermite(samples[-2], newest, newest.time)
        tau = te - newest.time
        moving = zip(newest.position, newest.velocity, end_acc, strict=True)
        pos = tuple(p + tau * (v + 0.5 * tau * a) for p, v, a in moving)
        vel = tuple(v + tau * a for v, a in zip(newest.velocity, end_acc, strict=True))
        return FollowPoint(pos, vel, tuple(end_acc), True, False)


BLEND_JERK_SHARE = 0.5
"""A blend's jerk stays within this share of each joint's jerk limit (the rest is the curve's)."""


def _fade(p: float, v: float, a: float, T: float) -> list[float]:  # noqa: N803 - the usual name
    """Quintic coefficients from (p, v, a) at 0 to (0, 0, 0) at T."""
    return [
        p, v, a / 2.0,
        (-10.0 * p - 6.0 * v * T - 1.5 * a * T * T) / T**3,
        (15.0 * p + 8.0 * v * T + 1.5 * a * T * T) / T**4,
        (-6.0 * p - 3.0 * v * T - 0.5 * a * T * T) / T**5,
    ]


def _poly(coeffs: list[list[float]], s: float) -> tuple[list[float], list[float], list[float]]:
    """Position, velocity, acceleration of quintics (one per joint) at `s`."""
    pos, vel, acc = [], [], []
    for c0, c1, c2, c3, c4, c5 in coeffs:
        pos.append(c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5)))))
        vel.append(c1 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5))))
        acc.append(2 * c2 + s * (6 * c3 + s * (12 * c4 + s * 20 * c5)))
    return pos, vel, acc


def _max_acceleration(c: list[float], duration: float) -> float:
    """Largest |acceleration| of one quintic over [0, duration] (sampled: only a bound to stay under)."""
    _, _, acc = _poly([c], 0.0)
    worst = abs(acc[0])
    for k in range(1, 33):
        worst = max(worst, abs(_poly([c], duration * k / 32)[2][0]))
    return worst


def _max_jerk(c: list[float], duration: float) -> float:
    """Largest |jerk| of one quintic over [0, duration] (its jerk is a quadratic in s)."""
    j0, j1, j2 = 6 * c[3], 24 * c[4], 60 * c[5]  # j(s) = j0 + j1 s + j2 s^2
    points = [0.0, duration]
    if j2 != 0.0 and 0.0 < -j1 / (2 * j2) < duration:
        points.append(-j1 / (2 * j2))
    return max(abs(j0 + s * (j1 + s * j2)) for s in points)

def sample_interval(
    q0: Sequence[float],
    v0: Sequence[float],
    q1: Sequence[float],
    v1: Sequence[float],
    nominal: float,
    limits: MotionLimits,
) -> float:
    """The time between two samples: `nominal` (their stamps), unless their own motion proves it wrong.

    A curve through samples misplaced in time kinks: at 1 rad/s, 10 us is 1e-5 rad, an acceleration
    kink of ~6 * 1e-5 / (10 ms)^2 = 0.6 rad/s^2. A loaded sender's stamp can be that far off (measured
    90 us: the process was preempted between sampling its path and reading the clock). The samples'
    motion tells the interval independently: q1 - q0 = (v0 + v1) / 2 * dt holds to jerk * dt^3 / 12, so
    least squares over the joints gives dt to within `jerk_norm * dt^3 / (12 * speed)`. Where that
    estimate and the stamps disagree by more than three times its error bound (+5 us), the stamp is the
    outlier and the estimate is used (while it agrees with the stamps within a quarter).
    """
    mean = [(a + b) / 2.0 for a, b in zip(v0, v1, strict=True)]
    speed = math.sqrt(sum(m * m for m in mean))
    if not nominal > 0.0 or speed == 0.0:
        return nominal
    estimate = sum((b - a) * m for a, b, m in zip(q0, q1, mean, strict=True)) / (speed * speed)
    jerk = math.sqrt(sum(j * j for j in limits.max_jerk))
    bound = jerk * nominal**3 / (12.0 * speed)
    off = abs(estimate - nominal)
    return estimate if 3.0 * bound + 5e-6 < off <= 0.25 * nominal else nominal


def stream_limit_problem(
    position: Sequence[float],
    velocity: Sequence[float],
    acceleration: Sequence[float],
    previous: Sequence[float],
    previous_acceleration: Sequence[float],
    limits: MotionLimits,
    dt: float,
) -> str:
    """Why a followed stream's next command may not be sent ("" when it may).

    Velocity and acceleration within their limits, the step from the previous command within the
    velocity limit, the jerk within `STREAM_JERK_SLACK` times its limit, and the velocity reachable
    when the acceleration is brought to 0 at full jerk within the velocity limit: from such a state Ruckig
    can take over at any cycle and stay within every limit.
    """
    tol = 1.0 + 1e-9
    for i in range(len(position)):
        vmax, amax, jmax = limits.max_velocity[i], limits.max_acceleration[i], limits.max_jerk[i]
        v, a = velocity[i], acceleration[i]
        if abs(v) > vmax * tol:
            return f"joint {i} velocity {v:.3f} rad/s over its limit {vmax}"
        step = position[i] - previous[i]
        if abs(step) > vmax * dt * tol:  # the curve jumped (a blend, a late sample): as fast as step / dt
            rate = step / dt
            return f"joint {i} moves {step:.5f} rad in one cycle, {rate:.3f} rad/s, over its limit {vmax}"
        if abs(a) > amax * tol:
            return f"joint {i} acceleration {a:.3f} rad/s^2 over its limit {amax}"
        if abs(a - previous_acceleration[i]) > STREAM_JERK_SLACK * jmax * dt * tol:
            jerk = (a - previous_acceleration[i]) / dt
            return f"joint {i} jerk {jerk:.1f} rad/s^3 over {STREAM_JERK_SLACK:g} x its limit {jmax}"
        if abs(v + a * abs(a) / (2.0 * jmax)) > vmax * tol:
            return f"joint {i} would overshoot its velocity limit {vmax} while its acceleration ramps down"
    return ""
