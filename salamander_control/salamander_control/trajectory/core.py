"""The trajectory generator's control cycle without ROS: goal projection, Ruckig, post-clamp.

One `TrajectoryCore.step(config)` per control period:

1. The goal is projected onto the current limits (per-joint box and the coupled (q1, q2) polygon), so
   Ruckig always plans to a reachable end.
2. Ruckig produces the next sample (jerk-limited, phase-synchronised); a goal with velocities is part
   of a stream and is followed instead (`stream_follow.StreamFollower`, `stream_delay` behind it).
3. The sample is post-clamped onto the limits relaxed just enough to contain the previous command
   (`relax_to_include`), so the command never leaves unchanged limits, and after limits were narrowed
   under the arm the violation only decreases while Ruckig brings the arm back inside. The post-clamp
   keeps the shoulder and cuts the beam back onto the crossed bound (`clamp.post_clamp_joints`).
4. When the clamp moved the sample, Ruckig is re-synchronised to the command actually sent.

Invariants: every command is finite; it satisfies every limit unless `CycleOutput.outside` > 0 (only
while returning inside narrowed limits); its step stays within the velocity limits through a clamp. A
stream whose command would break a limit, whose sample had to be projected, or whose next sample is
`stream_timeout` late is handed to Ruckig, which takes the arm to rest within the limits.

Design and measurements: docs/design/trajectory_generator.md and docs/design/stream_following.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from salamander_control.joint_state import joints_text
from salamander_control.kinematics import ALPHA_BETA_RANGE, NUM_JOINTS, ArmParams, within_limits
from salamander_control.kinematics._validate import finite_vector
from salamander_control.trajectory.clamp import (
    JOINT_BOUND_NAMES,
    ClampResult,
    clamp_joints,
    post_clamp_joints,
)
from salamander_control.trajectory.line_brake import LineBrake, StreamLine, stream_line
from salamander_control.trajectory.otg import MotionLimits, Otg
from salamander_control.trajectory.path_brake import PathBrake
from salamander_control.trajectory.stream_follow import StreamFollower, sample_interval, stream_limit_problem

_ZERO = (0.0,) * NUM_JOINTS
STREAM_ANCHOR = 0.01
"""rad; a zero-velocity sample this close to the command (every joint) anchors a stream
(docs/design/stream_following.md).
A sender's motion from rest starts at the measured joints, which trail the command by the sender's
tolerance: 1 mm of TCP is ~3e-3 rad. Farther away, a goal at rest is Ruckig's to reach."""
AT_REST = 1e-9
"""rad/s (and rad/s^2): a command this slow rests (an anchor backdated up to the delay needs no join)."""
STREAM_HISTORY = 32
"""Streamed samples kept for the line a stop brakes along (`line_brake.stream_line`): 0.32 s at 100 Hz."""
STAMP_JUMP = 1.0
"""s; two consecutive samples of a stream whose stamps lie further apart (or go backwards) mean the
sender's clock jumped: the later one is placed at its arrival. Any shorter interval is the path's own
timing, however long: a machine that starves the sender and the generator together delivers the next
sample `stall` s of plan time later to a generator whose cycle clock has not seen the silence (below
stream_timeout on its clock, so the stream goes on)."""
STREAM_CLAMP = 1e-5
"""rad; a post-clamp correction of a followed stream up to this size (a curve between two samples on a
limit bulging across it) keeps following; a larger one hands the arm to Ruckig."""
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
        stream_timeout: s; a stream (goals with velocities) whose next sample is this late has stopped:
            the arm comes to rest at its newest sample.
        stream_delay: s; how far behind a stream its curve is followed (set when a stream starts). It
            must exceed the sender's period plus its latency, or the curve is extrapolated.
        joint_state_timeout: s; no measured joint state for this long (of the generator's own running
            time): hold, send nothing (goals wait), and re-anchor at the measurement when it is back
            (`measurement_watch.MeasurementWatch`).
        joint_state_tolerance: rad; a measurement this far outside the range of the recent commands
            (on any joint) disagrees with the command: re-anchor at it.
        hold_command_rate_hz: while the command stands still, it is sent again this often (a keep-alive;
            every cycle when >= control_rate_hz); any change is sent at once (`output_rates`). Node only.
        monitor_rate_hz: the measured joint states are republished for monitors at most this often
            (`output_rates.MonitorGate`, names.JOINT_STATES_MONITOR). Node only.
    """

    arm: ArmParams
    limits: MotionLimits
    control_rate_hz: float = 500.0
    stream_timeout: float = 0.06
    stream_delay: float = 0.03
    joint_state_timeout: float = 0.5
    joint_state_tolerance: float = 0.05
    hold_command_rate_hz: float = 50.0
    monitor_rate_hz: float = 25.0

    def __post_init__(self) -> None:
        """Reject a rate, times or a tolerance that are not positive finite numbers, or delay >= timeout."""
        for name in ("control_rate_hz", "hold_command_rate_hz", "monitor_rate_hz"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be a positive number, got {value}")
        for name in ("stream_timeout", "stream_delay", "joint_state_timeout", "joint_state_tolerance"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                unit = "rad" if name == "joint_state_tolerance" else "seconds"
                raise ValueError(f"{name} must be a positive number of {unit}, got {value}")
        if self.stream_delay >= self.stream_timeout:
            raise ValueError(
                f"stream_delay ({self.stream_delay} s) must be shorter than stream_timeout "
                f"({self.stream_timeout} s): a stream followed that far behind would always time out"
            )


STOP_PAST = 1e-6
"""m: a stop's own brake along a stream's line that would end farther than this past the stream's final
sample at rest (a line's tail) follows the stream to it instead (`TrajectoryCore.stop`)."""


class CycleOutput(NamedTuple):
    """What one control cycle produced.

    Attributes:
        position: the joint command to send, rad (finite; inside the limits unless `outside` > 0).
        velocity: its velocity, rad/s (Ruckig's, or the clamped command's actual rate of change).
        requested: Ruckig's sample before the post-clamp (cut to the velocity limits: `rate_limited`).
        clamp: what the post-clamp did (`clamp.clamped` false on an ordinary cycle, and for a rounding-size
            correction below `ROUNDING`, which is applied all the same).
        outside: how far the command still lies outside the limits, rad; > 0 only while returning
            inside after the limits were narrowed under the arm (or after starting outside them).
        calculation_us: Ruckig's calculation duration this cycle, us.
        error: "" or why Ruckig failed this cycle (the command then holds the previous position).
        stop_finished: a `stop()` brought the arm to rest this cycle; the goal is now where it stopped.
        streaming: the command follows a stream of goals with velocities (`StreamFollower`).
        stream_event: "" or why a stream was handed to Ruckig this cycle ("timeout: ...", a limit, ...).
    """

    position: tuple[float, ...]
    velocity: tuple[float, ...]
    requested: tuple[float, ...]
    clamp: ClampResult
    outside: float
    calculation_us: float
    error: str
    stop_finished: bool
    streaming: bool = False
    stream_event: str = ""


def coupled_pair_limits(limits: MotionLimits) -> MotionLimits:
    """`limits` with the shoulder (q1) and beam (q2) velocity limits both lowered to the smaller of them.

    Ruckig plans with these. The post-clamp keeps the shoulder and cuts the beam back onto a coupled
    bound, which then moves with the shoulder: the beam's step is bounded by the shoulder's, so a
    shoulder faster than the beam would drag the beam past its own limit. Planning the pair within the
    smaller limit keeps every joint's commanded speed within its own limit (the measurement:
    docs/design/trajectory_generator.md, "Coupled pair: one velocity limit for shoulder and beam").
    Returns `limits` itself when the two are equal (the shipped configuration).
    """
    v = limits.max_velocity
    pair = min(v[1], v[2])
    if v[1] == v[2]:
        return limits
    return MotionLimits((v[0], pair, pair, *v[3:]), limits.max_acceleration, limits.max_jerk)


def rate_limited(
    q: Sequence[float],
    previous: Sequence[float],
    velocity: Sequence[float],
    max_velocity: Sequence[float],
    dt: float,
) -> tuple[float, ...]:
    """`q` with each joint's step from `previous` cut to its velocity limit times `dt`.

    The backstop of the command's speed: Ruckig keeps its velocity limits, except where it takes over a
    state it cannot brake in time (a stream's brake handed over at full acceleration just below the
    velocity limit overshoots it by a fraction of a percent; found by test_command_speed.py). A step
    over by no more than rounding (Ruckig cruising at its limit) is left as it is, and so is a joint
    already faster than its limit (`velocity`, the last cycle's): a limit lowered live is Ruckig's to
    brake down to within its acceleration limit, not this cut's in one cycle.
    """
    out = []
    for x, p, v, cap in zip(q, previous, velocity, max_velocity, strict=True):
        step = max(cap, abs(v)) * dt
        out.append(x if abs(x - p) <= step * (1.0 + 1e-9) + 1e-12 else p + math.copysign(step, x - p))
    return tuple(out)


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
        self._otg = Otg(coupled_pair_limits(config.limits), self._dt, q)
        self._limits = config.limits
        self._config = config
        self._command = q
        self._velocity = _ZERO
        self._acceleration = _ZERO
        self._goal = q
        self._goal_arm: ArmParams | None = None  # the limits the goal was last projected onto
        self._stopping = False
        self._time = 0.0  # the cycle clock: time of the last command, s
        self._stream: StreamFollower | None = None
        self._stream_arrival = 0.0  # cycle-clock time the newest goal arrived (of a stream: its sample)
        self._stream_velocity = _ZERO  # its velocity: a stream that ended at rest cannot time out
        # The stream's newest sample: (cycle-clock time, its stamp or arrival, position, velocity).
        self._stream_last: tuple[float, float, tuple[float, ...], tuple[float, ...]] | None = None
        self._stream_refused = False  # the running stream was handed to Ruckig: no re-join until it ends
        self._stream_dead = False  # the stream timed out or broke off: the rest is ignored (`set_goal`)
        self._stream_dead_note = ""  # said once, with the first ignored sample
        self._brake: LineBrake | PathBrake | None = None  # a stop along the streamed path
        self._brake_note = ""  # what the brake brakes along, for the stream event
        self._brake_event = ""  # a stop's warning, reported by the next cycle (`stream_event`)
        self._stream_samples: list[tuple[float, ...]] = []  # the stream's newest positions, oldest first

    @property
    def delta_time(self) -> float:
        """Control period, s."""
        return self._dt

    @property
    def goal(self) -> tuple[float, ...]:
        """The accepted goal (of a stream: its newest sample), projected onto the limits last checked."""
        return self._goal

    @property
    def command(self) -> tuple[float, ...]:
        """The last command (positions), motor order."""
        return self._command

    @property
    def stopping(self) -> bool:
        """Whether a `stop()` is bringing the arm to rest."""
        return self._stopping

    @property
    def streaming(self) -> bool:
        """Whether the command follows a stream of goals with velocities."""
        return self._stream is not None

    def set_goal(
        self,
        goal: Sequence[float],
        arm: ArmParams,
        velocity: Sequence[float] | None = None,
        age: float = 0.0,
        stamp: float | None = None,
    ) -> ClampResult:
        """Accept a complete five-joint goal; it is projected onto `arm`'s limits right away.

        Cancels a stop in progress: a goal accepted after the lease expired takes over from wherever
        the arm is, within the limits (Ruckig plans from the current state, so there is no jump).

        Args:
            goal: joint positions, rad.
            arm: the limits to project onto.
            velocity: the joint velocities the goal moves with (a streamed sample of a path), rad/s, or
                None for a goal to reach at rest. Clipped to the velocity limits. A goal with velocities
                is followed as part of a stream (docs/design/stream_following.md) unless its position had
                to be projected (then it is reached at rest) or all are zero and no stream runs.
            age: how long ago the goal was valid (its stamp's age), s; clipped to [0, stream_timeout].
            stamp: the sender's time of the goal (its header stamp), s, or None. Within a stream the
                samples are spaced by their stamps (else by their arrival, which carries this loop's
                jitter), except where their own motion proves a stamp wrong
                (`stream_follow.sample_interval`: a loaded sender's stamps were seen 90 us off).

        Returns:
            the projection (log `clamped`/`active`/`amount`: the sender asked for something infeasible).

        Raises:
            ValueError: `goal` or `velocity` is not five finite numbers; nothing changes then.
        """
        q = finite_vector(goal, NUM_JOINTS, "goal")
        v = None if velocity is None else finite_vector(velocity, NUM_JOINTS, "velocity")
        projected = clamp_joints(q, arm, self._goal)
        if self._stream_dead:
            if v is not None:
                # The timed-out stream goes on (or ends: a sample at rest): none of it moves the arm, after
                # any pause (a sender stalled twice: its samples lie on its plan, ahead of where the arm
                # stopped, and a stream started there joined them off the path: 3 mm in
                # test_stream_stop_on_path.py). A new stream begins at rest at the arm: its first sample
                # is lost, the next one starts it.
                self._stream_arrival = self._time
                self._stream_dead = any(v)
                if self._stream_dead_note:
                    self._brake_event, self._stream_dead_note = self._stream_dead_note, ""
                return projected
            self._stream_dead = False
        self._goal, self._goal_arm = projected.q, arm
        self._stopping = False
        self._brake = None  # Ruckig (kept in step with every brake cycle) or a new stream takes over
        moved = projected.clamped and projected.amount > ROUNDING
        if self._stream_refused and (
            v is None or not any(v) or self._time - self._stream_arrival > self._config.stream_timeout
        ):
            self._stream_refused = False  # the refused stream ended: the next one may be followed
        followed = v is not None and (any(v) or self._stream is not None or self._anchors(projected.q))
        if moved or self._stream_refused or not followed:
            self._stream = None  # reached at rest by Ruckig, from the state it is kept in step with
            self._stream_arrival = self._time
            return projected
        vmax = self._limits.max_velocity
        v = tuple(min(max(x, -m), m) for x, m in zip(v, vmax, strict=True))
        cfg = self._config
        if self._stream is None:
            self._stream_last = None
            self._stream_samples = []
            self._stream = StreamFollower(
                cfg.stream_delay, self._time, self._command, self._velocity, self._acceleration,
                self._limits,
            )
        age = min(max(age, 0.0), cfg.stream_timeout) if math.isfinite(age) else 0.0
        arrival = self._time - age
        ref = arrival if stamp is None or not math.isfinite(stamp) else stamp
        # The first sample places the stream on the cycle clock (the rest keep their stamps' spacing from
        # it): at its arrival, but never less than half the delay ahead of the point the curve is evaluated
        # at. One older than the delay lay behind it already, and the join from rest had to reach it within
        # the minimum gap: a kink of thousands of rad/s^3 (a sender's grid lag plus a loaded transport).
        # An anchor (at rest where the command rests) needs no join: it may lie up to the whole delay back,
        # so a sender that streams its motion from rest the delay ahead starts the command at once
        # (`cartesian.goal.stream_start`; docs/design/stream_following.md, "Anchored start").
        if self._stream_last is None:
            back = cfg.stream_delay if self._rests_at(v) else 0.5 * cfg.stream_delay
            when = max(arrival, self._time - back)
        else:
            last_when, last_ref, last_q, last_v = self._stream_last
            nominal = ref - last_ref
            if 0.0 <= nominal <= STAMP_JUMP:
                # Spaced by the sender's stamps, wherever the cycle clock is: it falls behind them by the
                # cycles a loaded process drops beyond its catch-up (the curve then runs that much further
                # behind the stream). Placing a sample at its arrival instead put it before the previous
                # one, and the curve kinked by thousands of rad/s^2 (docs/design/stream_following.md).
                when = last_when + sample_interval(last_q, last_v, projected.q, v, nominal, self._limits)
            else:  # the sender's clock jumped: this sample is placed at its arrival, never before the last
                when = max(arrival, last_when)
        self._stream_last = (when, ref, projected.q, v)
        self._stream_samples.append(projected.q)
        del self._stream_samples[:-STREAM_HISTORY]
        self._stream.push(when, projected.q, v)
        self._stream_arrival, self._stream_velocity = self._time, v
        return projected

    def _rests_at(self, velocity: tuple[float, ...]) -> bool:
        """Whether a sample with `velocity` anchors the stream at a command that rests (no join to make)."""
        still = (*self._velocity, *self._acceleration)
        return not any(velocity) and all(abs(x) <= AT_REST for x in still)

    def _anchors(self, goal: tuple[float, ...]) -> bool:
        """Whether a zero-velocity sample at `goal` starts a stream (docs/design/stream_following.md)."""
        return all(abs(g - c) <= STREAM_ANCHOR for g, c in zip(goal, self._command, strict=True))

    def stop(self) -> None:
        """Decelerate to rest within the motion limits and hold there; the goal becomes that point.

        A followed stream (or a brake along it) brakes along the streamed path (`_start_brake`): a
        joint-space stop would leave the path (docs/design/stream_following.md). A brake that cannot
        follow the stream's TCP line says so in the next cycle's `stream_event`.
        """
        self._stopping = True
        stream = self._stream
        along_path = stream is not None or self._brake is not None
        self._stream = None
        self._brake = None
        if not along_path:
            self._otg.stop()
        elif not self._start_brake(None) or not isinstance(self._brake, LineBrake):
            self._brake_event = f"stop: braking {self._brake_note}"
            if self._brake is None:
                self._otg.stop()
        elif stream is not None and not any(self._stream_velocity) and self._brake.stop_at > STOP_PAST:
            # The sender's whole deceleration is in hand (a line's tail, ending at rest: linear_goal)
            # and a brake of our own, with limits that hold over all it covers, would pass its end: the
            # stream itself is the stop, to its end (docs/design/stream_following.md).
            past = self._brake.stop_at
            self._brake, self._stream = None, stream
            self._brake_event = (
                "stop: following the stream's final deceleration to its end (a brake of its own would "
                f"pass it by {past * 1000:.2f} mm)"
            )

    def reanchor(self, position: Sequence[float]) -> None:
        """Start again from a measured position, at rest, holding it: the goal becomes that position.

        For a measurement that disagrees with the command (a restarted driver, a pushed arm): the next
        command is `position` itself, so nothing jumps; a running stream, brake or stop is dropped.

        Raises:
            ValueError: `position` is not five finite numbers; nothing changes then.
        """
        q = finite_vector(position, NUM_JOINTS, "position")
        self._otg.reset(q)
        self._command, self._velocity, self._acceleration = q, _ZERO, _ZERO
        self._goal, self._goal_arm = q, None  # re-projected next cycle (if outside)
        self._stopping = False
        self._stream = None
        self._stream_refused = False
        self._stream_velocity = _ZERO
        self._brake = None
        self._stream_dead = False

    def _start_brake(self, back_to: tuple[float, ...] | None, line_first: bool = True) -> bool:
        """Brake along the path to `back_to` (the stream's newest sample) at rest, or to rest anywhere.

        Along the stream's TCP line (`line_brake.LineBrake`) if its newest samples lie on one; else (or
        if that brake cannot start) along the current motion's joint-space curve (`path_brake.PathBrake`);
        False if neither can (Ruckig stops in joint space then). `_brake_note` says which and why.
        """
        why = "not tried"
        if line_first:
            line = stream_line(self._stream_samples, self._config.arm)
            why = line if isinstance(line, str) else ""
            if isinstance(line, StreamLine):
                try:
                    self._brake = LineBrake(
                        self._command, self._velocity, self._acceleration, line, self._config.arm,
                        self._limits, self._dt, back_to is not None,
                    )
                    self._brake_note = "along the streamed path (its TCP line)"
                    return True
                except ValueError as exc:
                    why = str(exc)
        try:
            self._brake = PathBrake(
                self._command, self._velocity, self._acceleration, self._limits, self._dt, back_to
            )
            self._brake_note = f"along the streamed path's joint-space curve, not its TCP line ({why})"
        except ValueError as exc:
            self._brake = None
            self._brake_note = f"in joint space: not along the TCP line ({why}) nor its joint curve ({exc})"
        return self._brake is not None

    def step(self, config: TrajectoryConfig) -> CycleOutput:
        """Run one control cycle with this cycle's parameter snapshot."""
        arm = config.arm
        self._config = config
        if config.limits is not self._limits:
            self._otg.set_limits(coupled_pair_limits(config.limits))
            self._limits = config.limits
        self._time += self._dt
        event = ""
        if not self._stopping:
            if arm is not self._goal_arm:  # limits changed since the goal was projected
                projected = clamp_joints(self._goal, arm, self._command)
                if self._stream is not None and projected.amount > ROUNDING:
                    event = self._end_stream("the new limits exclude the stream's newest sample")
                self._goal, self._goal_arm = projected.q, arm
            if self._stream is not None:
                out, event = self._follow(config)
                if out is not None:
                    return out
        elif self._stream is not None:  # a stop that follows the stream's final deceleration (`stop`)
            out, event = self._follow(config)
            if out is not None:
                if self._stream is None:  # arrived at its final sample, at rest: the stop is done
                    self._stopping = False
                    self._goal, self._goal_arm = self._command, None
                    out = out._replace(stop_finished=True)
                if self._brake_event:
                    out = out._replace(stream_event=self._brake_event)
                    self._brake_event = ""
                return out
        if self._brake_event:
            event = f"{event}; {self._brake_event}" if event else self._brake_event
            self._brake_event = ""
        if self._brake is not None:
            out, why = self._brake_cycle(config, event)
            if out is not None:
                return out
            event = why
        if not self._stopping and self._otg.target != self._goal:
            self._otg.set_target(self._goal)
        sample = self._otg.step()
        if sample.error:
            return self._on_error(sample.error, arm)
        region = relax_to_include(arm, self._command)
        position = rate_limited(
            sample.position, self._command, self._velocity, self._otg.limits.max_velocity, self._dt
        )
        clamp = post_clamp_joints(position, region, self._command)  # q1 kept, q2 cut back
        if clamp.clamped and clamp.amount <= ROUNDING:
            clamp = ClampResult(clamp.q, False, (), 0.0)
        acceleration = sample.acceleration
        if clamp.clamped or position != sample.position:
            velocity = tuple((b - a) / self._dt for a, b in zip(self._command, clamp.q, strict=True))
            acceleration = _ZERO
            self._otg.resync(clamp.q, velocity)
        else:
            velocity = sample.velocity
        self._command, self._velocity, self._acceleration = clamp.q, velocity, acceleration
        stop_finished = False
        if self._stopping and sample.finished:
            self._stopping = False
            self._goal, self._goal_arm = self._command, None  # re-projected next cycle (if outside)
            self._otg.reset(self._command)
            stop_finished = True
        outside = 0.0 if region is arm else clamp_joints(self._command, arm, self._command).amount
        outside = outside if outside > ROUNDING else 0.0
        return CycleOutput(
            clamp.q, velocity, position, clamp, outside, sample.calculation_us, "", stop_finished, False,
            event,
        )

    def _follow(self, config: TrajectoryConfig) -> tuple[CycleOutput | None, str]:
        """One cycle of a followed stream; (None, why) hands the arm to Ruckig this very cycle."""
        assert self._stream is not None
        waited = self._time - self._stream_arrival
        point = self._stream.evaluate(self._time)
        if waited > config.stream_timeout and any(self._stream_velocity):
            why = f"timeout: no streamed goal for {waited:.3f} s (stream_timeout {config.stream_timeout} s); "
            return None, self._brake_stream(why, "timed out")

        problem = stream_limit_problem(
            point.position, point.velocity, point.acceleration, self._command, self._acceleration,
            config.limits, self._dt,
        )
        region = relax_to_include(config.arm, self._command)
        clamp = post_clamp_joints(point.position, region, self._command)
        if not problem and clamp.clamped and clamp.amount > STREAM_CLAMP:
            problem = f"it would need a clamp of {clamp.amount:.2e} rad ({', '.join(clamp.active)})"
        if problem:
            where = "past its newest sample (late)" if point.late else "between samples"
            why = f"the stream cannot be followed {where}: {problem}; "
            return None, self._brake_stream(why, "broke off")
        if clamp.clamped and clamp.amount <= ROUNDING:
            clamp = ClampResult(clamp.q, False, (), 0.0)
        self._command, self._velocity, self._acceleration = clamp.q, point.velocity, point.acceleration
        self._otg.resync(clamp.q, point.velocity, point.acceleration)  # Ruckig takes over from here
        if point.at_rest:  # arrived at the final sample: hold it as an ordinary goal at rest
            self._stream = None
            self._otg.reset(self._command)
        outside = 0.0 if region is config.arm else clamp_joints(clamp.q, config.arm, clamp.q).amount
        outside = outside if outside > ROUNDING else 0.0
        out = CycleOutput(
            clamp.q, point.velocity, point.position, clamp, outside, 0.0, "", False, True, ""
        )
        return out, ""

    def _brake_cycle(self, config: TrajectoryConfig, event: str) -> tuple[CycleOutput | None, str]:
        """One cycle of a brake along the path; (None, why) hands the arm to Ruckig this very cycle."""
        assert self._brake is not None
        try:
            point = self._brake.step()
            problem = stream_limit_problem(
                point.position, point.velocity, point.acceleration, self._command, self._acceleration,
                config.limits, self._dt,
            )
        except ValueError as exc:
            point, problem = None, str(exc)
        region = relax_to_include(config.arm, self._command)
        if point is not None:
            clamp = clamp_joints(point.position, region, self._command)
            if not problem and clamp.clamped and clamp.amount > STREAM_CLAMP:
                problem = f"it would need a clamp of {clamp.amount:.2e} rad ({', '.join(clamp.active)})"
        if problem or point is None:
            if isinstance(self._brake, LineBrake):  # next safest: along the motion's joint-space curve
                failed = f"braking along the streamed TCP line failed ({problem})"
                if self._start_brake(None if self._stopping else self._goal, line_first=False):
                    why = f"{failed}: braking along its joint-space curve from here"
                    return self._brake_cycle(config, f"{event}; {why}" if event else why)
                problem = f"{problem}; {self._brake_note}"
            self._brake = None
            if self._stopping:
                self._otg.stop()
            why = f"braking along the streamed path failed ({problem}): coming to rest in joint space"
            return None, f"{event}; {why}" if event else why
        if clamp.clamped and clamp.amount <= ROUNDING:
            clamp = ClampResult(clamp.q, False, (), 0.0)
        self._command, self._velocity, self._acceleration = clamp.q, point.velocity, point.acceleration
        self._otg.resync(clamp.q, point.velocity, point.acceleration)  # Ruckig can take over any cycle
        stop_finished = False
        if point.finished:
            self._brake = None
            self._otg.reset(self._command)  # a residue to the newest sample is Ruckig's (micro-radians)
            if self._stopping:
                self._stopping = False
                self._goal, self._goal_arm = self._command, None
                stop_finished = True
        outside = 0.0 if region is config.arm else clamp_joints(clamp.q, config.arm, clamp.q).amount
        outside = outside if outside > ROUNDING else 0.0
        out = CycleOutput(
            clamp.q, point.velocity, point.position, clamp, outside, 0.0, "", stop_finished, False, event
        )
        return out, ""

    def _brake_stream(self, why: str, ended: str) -> str:
        """Leave the running stream and brake along its path back to its newest sample; `why` + what.

        A stream that stopped (timed out) or broke off (its next command would break a limit) is over:
        samples that come after all are not followed (from a braking command they could only be rejoined
        with a detour off the path), until a sample at rest or a goal without velocities, after any pause.
        The sender sees the arm stand short of its target and starts again from there
        (the Cartesian node: `linear_goal.LinearGoalRun`). Ruckig takes the arm to the newest sample in
        joint space only if neither brake can start.
        """
        self._end_stream("")
        self._stream_dead, self._stream_arrival = True, self._time
        self._stream_dead_note = (
            f"ignoring the rest of the stream that {ended}, its end included (the arm stays where it "
            "stopped on its path; a sample at rest or a goal without velocities ends this)"
        )
        if self._start_brake(self._goal):
            return why + f"braking {self._brake_note}, back to its newest sample {joints_text(self._goal)}"
        return why + f"coming to rest at its newest sample {self._brake_note}"

    def _end_stream(self, why: str) -> str:
        """Leave the stream; Ruckig takes the arm (from the state it is kept in step with) to the goal.

        Ruckig keeps the rest of this stream (docs/design/stream_following.md).
        """
        self._stream = None
        self._stream_refused = True
        return why

    def _on_error(self, why: str, arm: ArmParams) -> CycleOutput:
        """Ruckig failed: hold this cycle, then brake (or, if braking failed too, hold for good)."""
        if self._stopping:
            self._otg.reset(self._command)  # even the brake failed: hold exactly where the command is
            self._stopping = False
            self._goal, self._goal_arm = self._command, None
        else:
            self._otg.resync(self._command, self._velocity, self._acceleration)
            self.stop()
        self._velocity, self._acceleration = _ZERO, _ZERO
        outside = clamp_joints(self._command, arm, self._command).amount
        outside = outside if outside > ROUNDING else 0.0
        untouched = ClampResult(self._command, False, (), 0.0)
        return CycleOutput(self._command, _ZERO, self._command, untouched, outside, 0.0, why, False)

