"""The simulated arm: position-controlled motors and the housing's physical stops (pure, no ROS).

Each motor follows its commanded position as a first-order lag (time constant `time_constant`) with a
per-joint velocity limit. The exact discretisation is used, so the new position is a convex
combination of the old one and the command: a command sequence inside a convex set keeps the arm
inside it (as long as the velocity limit does not act, which is why the motors' limits sit above the
trajectory generator's).

Commands that carry velocities (the trajectory generator's do) are followed at no more than the
commanded pace (`advance`, `SPEED_WINDOW_S`): a command that arrives late and is then overtaken by a
burst of newer ones is caught up at the fastest recently commanded speed instead of the tick's, so
delivery jitter cannot make the motors outrun the command (docs/design/trajectory_generator.md, "Which
limit bounds which speed").

The physical stops sit a little beyond the limits the software enforces: each joint `stop_margin`
beyond its URDF limit, and the two coupled stops at `alpha_stop`/`beta_stop`, a little beyond the
default alpha_max/beta_max. A motion into a stop leaves the joints *at* the stop (the projection onto
the stop polygon) and is recorded: if the trajectory generator ever lets a command through the
software limits, the simulation says so instead of letting the arm pass through the housing.

The joint efforts a real arm's drives report (`joint_efforts`, `EffortSensor`): the external wrench on
the tool (what the cell's pad feels: the held can's weight, contacts on it) through the arm's
Jacobian, tau = Jv(q)^T F + Jw(q)^T M, plus Gaussian sensor noise (`SimConfig.effort_noise`). Only
the external load is modelled: the arm's own weight and inertia, which a real drive also carries, are
taken as compensated (a robot's effort-based contact sensing subtracts its model of them). More:
docs/interfaces.md ("Hardware contract": the effort field), docs/design/cell_model.md.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from salamander_control.kinematics import ALPHA_BETA_RANGE, NUM_JOINTS, REST_POSTURE, ArmParams
from salamander_control.kinematics._validate import finite_vector
from salamander_control.kinematics.fk import position_jacobian
from salamander_control.trajectory.clamp import JOINT_BOUND_NAMES, clamp_joints

_ZERO = (0.0,) * NUM_JOINTS
ROUNDING = 1e-9
"""rad: a joint whose move toward the newest command is this small per sub-step never caps the arm's move
(`_toward`). The trajectory generator commands a joint it holds with rounding-level offsets (1e-16 rad)
and, while it blends one out, velocities down to 1e-19 rad/s; as the fastest velocity of the window that
capped a 1e-16 rad move at 3e-21 rad per tick, and the whole arm's move with it: the arm stood 8 mm short
of a descent onto a can while fresh commands came, in about 1 start in 5 of the placement benchmark
(recorded: wrist_yaw capped at 3.2e-19 rad/s, its target 1.1e-16 rad off; docs/design/cycle.md, item
20)."""
SPEED_WINDOW_S = 1.0
"""s: `advance` moves the motors' target toward the newest command no faster than the fastest commanded
velocity of this long (per joint): a command that arrived late is caught up at the commanded pace
(while the command slows down and after it stopped), not in a burst."""


@dataclass(frozen=True)
class SimConfig:
    """Motor and stop model of the simulated arm.

    Attributes:
        time_constant: first-order lag of every motor, s.
        max_velocity: per-joint motor velocity limit, rad/s (above the trajectory generator's).
        stop_margin: how far beyond each per-joint limit of `limits` the physical stop sits, rad.
        alpha_stop: the physical stop of q2 - q1, rad.
        beta_stop: the physical stop of q1 - q2, rad.
        command_timeout: a command older than this is no longer followed: the motors hold, s.
        limits: the per-joint (URDF) limits the stops surround.
        publish_efforts: whether /joint_states carries the `effort` field (False: a robot whose drives
            report none).
        effort_noise: standard deviation of each joint's effort reading, N m. 0.03 N m: about 1 % of
            the rated torque of the small servo drives an arm of this size uses (3-4 N m; their current
            sensing resolves ~0.5 %, ripple and friction add as much again); the held can's weight is
            1.2 N m on the shoulder at 0.35 m reach, a 5 N contact 2 N m.
        effort_seed: seed of the noise (one stream per node start: a run is repeatable).
        wrench_timeout: a tool wrench from the cell older than this counts as none (zero external force), s.
    """

    time_constant: float = 0.05
    max_velocity: tuple[float, ...] = (2.0, 1.5, 1.5, 3.0, 3.0)  # the URDF's joint velocity limits
    stop_margin: float = 0.02
    alpha_stop: float = 1.45
    beta_stop: float = 0.92
    command_timeout: float = 0.5
    limits: ArmParams = field(default_factory=ArmParams)
    publish_efforts: bool = True
    effort_noise: float = 0.03
    effort_seed: int = 0
    wrench_timeout: float = 0.5

    def __post_init__(self) -> None:
        """Reject values the model cannot run with (and build the stop polygon once, to validate it)."""
        object.__setattr__(
            self, "max_velocity", finite_vector(self.max_velocity, NUM_JOINTS, "SimConfig.max_velocity")
        )
        if any(v <= 0.0 for v in self.max_velocity):
            raise ValueError(f"SimConfig.max_velocity must be > 0, got {self.max_velocity}")
        for name in ("time_constant", "command_timeout"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"SimConfig.{name} must be > 0, got {value}")
        if not (math.isfinite(self.effort_noise) and self.effort_noise >= 0.0):
            raise ValueError(f"SimConfig.effort_noise must be >= 0 N m, got {self.effort_noise}")
        if not (math.isfinite(self.wrench_timeout) and self.wrench_timeout > 0.0):
            raise ValueError(f"SimConfig.wrench_timeout must be > 0, got {self.wrench_timeout}")
        if not (math.isfinite(self.stop_margin) and 0.0 <= self.stop_margin <= 0.5):
            raise ValueError(f"SimConfig.stop_margin must lie in [0, 0.5] rad, got {self.stop_margin}")
        _ = self.stops  # raises ValueError for alpha/beta stops out of range

    @cached_property
    def stops(self) -> ArmParams:
        """The physical stop polygon as an ArmParams (per-joint stops and the coupled stops)."""
        lim, m = self.limits, self.stop_margin
        lo, hi = ALPHA_BETA_RANGE
        for name in ("alpha_stop", "beta_stop"):
            if not (math.isfinite(getattr(self, name)) and lo <= getattr(self, name) <= hi):
                raise ValueError(f"SimConfig.{name} must lie in [{lo}, {hi}] rad, got {getattr(self, name)}")
        changes = {}
        bounds = zip(JOINT_BOUND_NAMES, lim.joint_lower, lim.joint_upper, strict=True)
        for (lo_name, hi_name), lower, upper in bounds:
            changes[lo_name] = lower - m
            changes[hi_name] = upper + m
        for name in ("yaw_min", "wrist_yaw_min"):
            changes[name] = max(changes[name], -2.0 * math.pi)
        for name in ("yaw_max", "wrist_yaw_max"):
            changes[name] = min(changes[name], 2.0 * math.pi)
        return lim.with_changes(alpha_max=self.alpha_stop, beta_max=self.beta_stop, **changes)


def stop_name(bound: str) -> str:
    """The physical stop behind a limit's name: "alpha_max" -> "alpha_stop", "q2_max" -> "q2_max_stop"."""
    return {"alpha_max": "alpha_stop", "beta_max": "beta_stop"}.get(bound, f"{bound}_stop")


class StopEvent(NamedTuple):
    """Joints ran into one or more physical stops this step.

    Attributes:
        time: model time of the hit, s.
        stops: the stops newly touched (e.g. "alpha_stop", "q2_max_stop").
        overshoot: how far the motion would have carried the joints past the stops this step, rad.
        command_beyond: how far the command itself lies beyond the stops, rad.
    """

    time: float
    stops: tuple[str, ...]
    overshoot: float
    command_beyond: float


class SimModel:
    """Deterministic simulated arm; call `command()` whenever a command arrives and `step(dt)` to advance.

    Args:
        config: motors and stops.
        start: initial joint positions (at rest); the rest posture by default.
    """

    def __init__(self, config: SimConfig | None = None, start: Sequence[float] = REST_POSTURE) -> None:
        self._config = config or SimConfig()
        q = finite_vector(start, NUM_JOINTS, "start")
        self._q = clamp_joints(q, self._config.stops, q).q
        self._v = _ZERO
        self._target = self._q  # what the motors follow now
        self._goal = self._q  # the newest command (`advance` moves the target toward it)
        self._speeds: list[tuple[float, tuple[float, ...]]] = []  # (time, |commanded velocity|), recent
        self._age = 0.0
        self._holding = True  # no command yet: the motors hold where they are
        self._time = 0.0
        self._contact: frozenset[str] = frozenset()
        self._hits = 0

    @property
    def config(self) -> SimConfig:
        """The motor and stop model in use."""
        return self._config

    @property
    def position(self) -> tuple[float, ...]:
        """Joint positions, rad, motor order."""
        return self._q

    @property
    def velocity(self) -> tuple[float, ...]:
        """Joint velocities over the last step, rad/s."""
        return self._v

    @property
    def time(self) -> float:
        """Model time, s."""
        return self._time

    @property
    def stop_hits(self) -> int:
        """How many times a joint came into contact with a physical stop."""
        return self._hits

    @property
    def in_contact(self) -> frozenset[str]:
        """The stops the joints are pressed against now."""
        return self._contact

    @property
    def holding(self) -> bool:
        """Whether the motors hold position (no command yet, or the last one is older than the timeout)."""
        return self._holding

    def set_config(self, config: SimConfig) -> None:
        """Use a new motor/stop model from the next step on."""
        self._config = config

    def command(self, q: Sequence[float]) -> None:
        """A new position command for all five joints.

        Raises:
            ValueError: not five finite numbers; the previous command stays.
        """
        self._target = self._goal = finite_vector(q, NUM_JOINTS, "command")
        self._age = 0.0
        self._holding = False

    def advance(
        self,
        command: Sequence[float] | None,
        dt: float,
        substep: float,
        velocity: Sequence[float] | None = None,
    ) -> StopEvent | None:
        """Advance `dt` seconds toward the newest command `command` (None: no new one), commanded `velocity`.

        The shell's tick. The motors' target moves from where it is to the newest command in sub-steps of
        at most `substep`, as if every command in between had arrived on time: by the end of the tick,
        and, when the commands carry velocities, no faster than the fastest velocity commanded in the
        last `SPEED_WINDOW_S` (per joint; the move is scaled as a whole, so it stays on the commanded
        path). So neither a late tick nor a command that arrives late and is overtaken by a burst of
        newer ones makes the motors outrun the command (docs/design/trajectory_generator.md, "Which limit
        bounds which speed"). Joints commanded at zero velocity throughout (a re-anchor of the arm at
        rest) are not held back. `velocity` (the model's) is the mean over `dt`; the stop events of the
        sub-steps are merged.

        Raises:
            ValueError: `command` or `velocity` not five finite numbers, or `dt`/`substep` not positive;
                nothing changes.
        """
        if not (math.isfinite(substep) and substep > 0.0 and math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt and substep must be positive numbers of seconds, got {dt}, {substep}")
        end = None if command is None else finite_vector(command, NUM_JOINTS, "command")
        speed = None
        if velocity is not None:
            speed = tuple(abs(v) for v in finite_vector(velocity, NUM_JOINTS, "velocity"))
        if end is not None:
            self._goal, self._age, self._holding = end, 0.0, False
            if speed is not None:
                self._speeds.append((self._time, speed))
        self._speeds = [(t, v) for t, v in self._speeds if t >= self._time - SPEED_WINDOW_S]
        cap = [max(v[i] for _, v in self._speeds) for i in range(NUM_JOINTS)] if self._speeds else None
        n = max(1, math.ceil(dt / substep - 1e-9))
        h = dt / n
        q0, events = self._q, []
        for k in range(1, n + 1):
            ramp_from = None
            if self._goal != self._target and not self._holding:
                ramp_from = self._target
                self._target = _toward(self._target, self._goal, 1.0 / (n - k + 1), cap, h)
            event = self.step(h, ramp_from)
            if event is not None:
                events.append(event)
        self._v = tuple((b - a) / dt for a, b in zip(q0, self._q, strict=True))
        if not events:
            return None
        stops = tuple(sorted({name for e in events for name in e.stops}))
        overshoot = max(e.overshoot for e in events)
        return StopEvent(self._time, stops, overshoot, events[-1].command_beyond)

    def step(self, dt: float, ramp_from: Sequence[float] | None = None) -> StopEvent | None:
        """Advance the model by `dt` seconds; returns the stop hit of this step, if any.

        `ramp_from`: the target at the start of the step, moving linearly to the command over it (the
        exact solution of the lag for a ramp: the motor's speed never exceeds the ramp's, or its own at
        the start); None holds the command for the whole step.
        """
        if not (math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt must be a positive number of seconds, got {dt}")
        cfg = self._config
        self._time += dt
        self._age += dt
        if not self._holding and self._age > cfg.command_timeout:
            self._target, self._goal, self._holding = self._q, self._q, True
        decay = math.exp(-dt / cfg.time_constant)
        if ramp_from is None or self._holding:
            ramp_from = self._target
        else:
            ramp_from = finite_vector(ramp_from, NUM_JOINTS, "ramp_from")
        moved = []
        for q, start, target, vmax in zip(self._q, ramp_from, self._target, cfg.max_velocity, strict=True):
            if start == target:
                delta = (target - q) * (1.0 - decay)
            else:  # error e = target(t) - q: de/dt = s - e / tau for the ramp's slope s
                lag = (target - start) * cfg.time_constant / dt  # s * tau, the error the ramp settles to
                delta = target - q - (lag + (start - q - lag) * decay)
            limit = vmax * dt
            moved.append(q + min(max(delta, -limit), limit))
        stops = cfg.stops
        result = clamp_joints(moved, stops, self._q)
        new = result.q
        self._v = tuple((b - a) / dt for a, b in zip(self._q, new, strict=True))
        self._q = new
        contact = frozenset(stop_name(b) for b in result.active)
        fresh = contact - self._contact
        self._contact = contact
        if not fresh:
            return None
        self._hits += len(fresh)
        beyond = clamp_joints(self._target, stops, self._target).amount
        return StopEvent(self._time, tuple(sorted(fresh)), result.amount, beyond)


def _toward(
    here: tuple[float, ...], goal: tuple[float, ...], fraction: float, cap: Sequence[float] | None, h: float
) -> tuple[float, ...]:
    """`fraction` of the way from `here` to `goal`, shortened as a whole to the speed caps.

    No joint with a cap > 0 moves faster than its cap over `h` s, beyond `ROUNDING`; the move stays on the
    straight line. A joint that moves only by rounding caps nothing (`ROUNDING` says why).
    """
    scale = fraction
    if cap is not None:
        for a, b, c in zip(here, goal, cap, strict=True):
            if c > 0.0 and abs(b - a) * scale > max(c * h, ROUNDING):
                scale = c * h / abs(b - a)
    if scale >= 1.0:
        return goal
    return tuple(a + (b - a) * scale for a, b in zip(here, goal, strict=True))


def joint_efforts(
    q: Sequence[float], wrench: Sequence[float], params: ArmParams | None = None
) -> tuple[float, ...]:
    """The joint torques (N m, motor order) the external `wrench` on the tool exerts at joints `q`.

    `wrench`: (fx, fy, fz, mx, my, mz), force N and moment N m about the TCP, base_link. tau = Jv^T F +
    Jw^T M: Jv is the TCP's position Jacobian (`fk.position_jacobian`); the tool turns about base_link
    z with base_yaw and wrist_yaw and about the yawed y axis (-sin ty, cos ty, 0) with wrist_pitch, and
    not at all with the shoulder and beam (their parallelograms keep the wrist mount level).

    Raises:
        ValueError: `q` not five finite numbers or `wrench` not six finite numbers.
    """
    p = params or ArmParams()
    w = finite_vector(wrench, 6, "wrench")
    jv = position_jacobian(q, p)
    tau = jv.T @ np.array(w[:3])
    ty = q[0] + p.pad_mount_yaw + q[4]
    mx, my, mz = w[3:]
    tau[0] += mz
    tau[3] += -math.sin(ty) * mx + math.cos(ty) * my
    tau[4] += mz
    return tuple(float(t) for t in tau)


class EffortSensor:
    """The drives' effort readings: `joint_efforts` plus Gaussian noise of `sigma` N m, seeded."""

    def __init__(self, sigma: float, seed: int = 0) -> None:
        """`sigma` >= 0 N m (0: exact readings); `seed`: the noise stream's."""
        self.sigma = sigma
        self._rng = random.Random(seed)

    def read(
        self, q: Sequence[float], wrench: Sequence[float], params: ArmParams | None = None
    ) -> list[float]:
        """Efforts for joints `q` under `wrench` (see `joint_efforts`), each with its noise."""
        exact = joint_efforts(q, wrench, params)
        if self.sigma <= 0.0:
            return list(exact)
        return [t + self._rng.gauss(0.0, self.sigma) for t in exact]
