"""The gamepad controller's state machine: Joy samples in, actions out (pure, no rclpy).

Two modes. **Manual** (the start): stick deflection jogs joints; the target is integrated from the last
commanded one and always kept inside every limit, so anything the node publishes on /arm/joint_target is
feasible. **Auto** (the behaviour tree drives the arm): holding the `place_jog` deadman turns the left
stick into a base_link twist for the manual placement; letting go sends one zero twist. In auto mode
`run_start` asks the behaviour server for a pick-and-place run (`RunStart`); `run_cancel` cancels the
running one in either mode (`RunCancel`: a stop is always at hand); `new_box` tells the behaviour
server a new box is in (`NewBox`, either mode). Each acts once per press.

Timing: `feed` handles a Joy sample at once (edges, and an output right away unless the Joy-driven
outputs exceed `joy_rate_limit_hz` on average, bursts of JOY_BURST allowed); `tick` runs on the node's timer,
keeps a held jog flowing at `target_rate_hz`, and is the watchdog: when the newest accepted Joy is older
than `joy_timeout_s` the jog stops (a zero twist in auto mode), so a dead gamepad or a stalled driver never
leaves the arm moving.

Bad input changes nothing: a Joy with arrays too short for the mapping, non-finite axes, a stamp older
than `joy_timeout_s`, not newer than the last accepted one or ahead of the clock is answered with a single
`Rejected(kind, reason)` for the node's throttled log. A stamp ahead of the clock by at most
`joy_timeout_s` (clock skew) is accepted as received now, so it never makes the Joys after it look out of
order (a clean press after a Joy fuzz is a press; test_core's fuzz property).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from salamander_control.kinematics import REST_POSTURE, ArmParams, violated_bounds
from salamander_control.operator_commands import Confirm, Jog
from salamander_control.trajectory.clamp import clamp_joints
from salamander_teleop.controller.mapping import JoyMapping, apply_deadzone

MAX_STEP_DT = 0.1
"""Longest time integrated in one jog step, s: a stalled executor never turns into a jump."""
JOY_BURST = 5
"""Joy-driven outputs allowed back to back before `joy_rate_limit_hz` applies (a backlog after a stall)."""
TICK_SLACK = 0.9
"""The timer emits when the last output is at least this fraction of a period old (timer jitter)."""


class Mode(StrEnum):
    """Controller mode; the value is what the node publishes and logs."""

    MANUAL = "manual"
    AUTO = "auto"


@dataclass(frozen=True)
class JoySample:
    """One Joy message: axes, buttons and header stamp (s, on the node's clock)."""

    axes: tuple[float, ...]
    buttons: tuple[int, ...]
    stamp: float


@dataclass(frozen=True)
class Measured:
    """The measured joints (motor order) and when they arrived (s, node clock)."""

    q: tuple[float, ...]
    stamp: float


@dataclass(frozen=True)
class JointTarget:
    """Publish `q` on /arm/joint_target (anonymous sender); `why` is "jog" or "preset:rest"."""

    q: tuple[float, ...]
    why: str


@dataclass(frozen=True)
class RunStart:
    """Send a RunPickPlace goal (every can not yet placed) to the behaviour server."""


@dataclass(frozen=True)
class RunCancel:
    """Cancel the running RunPickPlace goal(s)."""


@dataclass(frozen=True)
class NewBox:
    """Tell the behaviour server a new box is in (it forgets its box estimate)."""


@dataclass(frozen=True)
class ModeChange:
    """The mode changed to `mode`."""

    mode: Mode


@dataclass(frozen=True)
class Rejected:
    """An input was refused or a jog stopped, for the node's log (throttled per `kind`).

    Attributes:
        kind: "joy_malformed" (arrays too short, NaN/inf, no stamp), "joy_stale" (stale, out of order
            or ahead of the clock), "joint_states" (jog without a fresh measurement), "watchdog" (the
            Joy stream went stale while jogging) or "mode" (a control of the other mode pressed).
        reason: the sentence to log.
    """

    kind: str
    reason: str


Action = JointTarget | Jog | Confirm | RunStart | RunCancel | NewBox | ModeChange | Rejected


class Controller:
    """Gamepad state machine; all times are seconds on one clock (the node's), passed in.

    Args:
        mapping: bindings, rates and timeouts.
        arm: the limits every joint target is kept inside.
    """

    def __init__(self, mapping: JoyMapping, arm: ArmParams) -> None:
        self._map = mapping
        self._arm = arm
        self._need = mapping.needs()
        self._mode = Mode.MANUAL
        self._last: JoySample | None = None  # newest accepted Joy
        self._tokens = float(JOY_BURST)  # token bucket of the Joy-driven outputs (rate limit)
        self._tokens_time = -math.inf
        self._last_out = -math.inf  # when anything last produced a jog output (timer fill-in)
        # Auto mode: the place jog.
        self._twist = (0.0, 0.0)
        self._twist_on = False
        # Manual mode: the joint jog.
        self._velocity = (0.0,) * len(REST_POSTURE)
        self._jogging = False
        self._target: tuple[float, ...] | None = None  # last commanded target
        self._target_time = 0.0  # time the target was integrated up to
        self._jog_end = -math.inf
        self._may_resume = False  # False after presets and mode changes: next jog starts from measured
        self._latched = True  # at start (a respawn too), after a preset, entering manual: sticks centre first

    @property
    def mode(self) -> Mode:
        """Current mode."""
        return self._mode

    @property
    def jogging(self) -> bool:
        """Whether a joint jog (manual) or a place jog (auto) is running."""
        return self._jogging or self._twist_on

    def configure(self, mapping: JoyMapping, arm: ArmParams) -> None:
        """Swap in new parameter snapshots (the node's on-set callback); the state is kept."""
        self._map, self._arm, self._need = mapping, arm, mapping.needs()

    # ----------------------------------------------------------------------------------- Joy input
    def feed(self, joy: JoySample, now: float, measured: Measured | None) -> list[Action]:
        """Handle one Joy sample received at `now`; returns what to publish, in order."""
        problem = self._check(joy, now)
        if problem:
            return [Rejected(*problem)]
        # A stamp a little ahead of this clock (another host's clock, within joy_timeout_s) counts as
        # received now: kept as it came, it would refuse every correctly stamped Joy after it as out of
        # order, a clean press included, until this clock caught up with it.
        joy = replace(joy, stamp=min(joy.stamp, now))
        prev = self._last
        # Edges count only against a recent sample: after a gap (start-up, a reconnect) the buttons
        # already held are the baseline, so a thumb resting on SQUARE does not confirm anything.
        fresh_prev = prev is not None and joy.stamp - prev.stamp <= self._map.joy_timeout_s
        self._last = joy

        def edge(control_name: str) -> bool:
            control = self._map.controls()[control_name]
            return (fresh_prev and control.pressed(joy.axes, joy.buttons)
                    and not control.pressed(prev.axes, prev.buttons))

        out: list[Action] = []
        to_auto, to_manual = edge("auto_mode"), edge("manual_mode")
        if to_auto and not to_manual and self._mode is Mode.MANUAL:
            self._stop_joint_jog(now)
            self._may_resume = False
            self._mode = Mode.AUTO
            out.append(ModeChange(Mode.AUTO))
        elif to_manual and not to_auto and self._mode is Mode.AUTO:
            out.extend(self._stop_twist(now))
            # The sticks were steering the placement: they must come back to centre before they jog joints.
            self._may_resume, self._latched = False, True
            self._mode = Mode.MANUAL
            out.append(ModeChange(Mode.MANUAL))
        if edge("confirm"):
            out.append(Confirm(True))
        if edge("abort"):
            out.append(Confirm(False))
        if edge("run_cancel"):
            out.append(RunCancel())
        if edge("new_box"):
            out.append(NewBox())
        if edge("run_start"):
            if self._mode is Mode.AUTO:
                out.append(RunStart())
            else:
                out.append(Rejected("mode", f"run_start ({self._map.run_start}) starts a run in auto mode "
                                            f"only: switch with auto_mode ({self._map.auto_mode}) first"))
        if self._mode is Mode.AUTO:
            out.extend(self._feed_auto(joy, now))
        else:
            out.extend(self._feed_manual(joy, now, measured, edge("rest_preset")))
        return out

    def _check(self, joy: JoySample, now: float) -> tuple[str, str] | None:
        """(kind, reason) when the sample must be refused, else None."""
        n_axes, n_buttons = self._need
        if len(joy.axes) < n_axes or len(joy.buttons) < n_buttons:
            return "joy_malformed", (
                f"Joy has {len(joy.axes)} axes and {len(joy.buttons)} buttons, the mapping needs at "
                f"least {n_axes} and {n_buttons}: check the indices in config/teleop.yaml")
        if not all(math.isfinite(a) for a in joy.axes):
            return "joy_malformed", f"Joy axes are not finite: {joy.axes}"
        if not math.isfinite(joy.stamp) or joy.stamp <= 0.0:
            return "joy_malformed", f"Joy stamp {joy.stamp} is not a time: the publisher must stamp Joys"
        age, timeout = now - joy.stamp, self._map.joy_timeout_s
        if age > timeout:
            return "joy_stale", f"Joy is stale: stamped {age:.3f} s ago (joy_timeout_s {timeout} s)"
        if age < -timeout:
            return "joy_stale", f"Joy stamp is {-age:.3f} s ahead of this clock: clocks out of sync?"
        if self._last is not None and joy.stamp <= self._last.stamp:
            last = self._last.stamp
            return "joy_stale", f"Joy out of order: stamp {joy.stamp:.6f} not newer than {last:.6f}"
        return None

    def _may_emit_for_joy(self, now: float) -> bool:
        """Token bucket: `joy_rate_limit_hz` outputs per second on average, bursts of JOY_BURST.

        A burst allowance (not a minimum spacing) matters when the executor was held up and a backlog
        of Joys is handled at once: the newest of them must still be answered.
        """
        elapsed = now - self._tokens_time if math.isfinite(self._tokens_time) else math.inf
        self._tokens = min(float(JOY_BURST), self._tokens + max(elapsed, 0.0) * self._map.joy_rate_limit_hz)
        self._tokens_time = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def _emitted(self, now: float) -> None:
        self._last_out = now

    # ------------------------------------------------------------------------------------ auto mode
    def _feed_auto(self, joy: JoySample, now: float) -> list[Action]:
        m = self._map
        if not m.place_jog_enable.pressed(joy.axes, joy.buttons):
            return self._stop_twist(now)
        self._twist = place_twist(joy.axes, m)
        self._twist_on = True
        if self._may_emit_for_joy(now):
            self._emitted(now)
            return [Jog(*self._twist)]
        return []

    def _stop_twist(self, now: float) -> list[Action]:
        if not self._twist_on:
            return []
        self._twist_on, self._twist = False, (0.0, 0.0)
        self._emitted(now)
        return [Jog(0.0, 0.0)]

    # ---------------------------------------------------------------------------------- manual mode
    def _feed_manual(
        self, joy: JoySample, now: float, measured: Measured | None, preset: bool
    ) -> list[Action]:
        if preset:
            self._stop_joint_jog(now)
            q = clamp_joints(REST_POSTURE, self._arm, REST_POSTURE).q
            self._target, self._target_time = q, now
            self._latched, self._may_resume = True, False
            return [JointTarget(q, "preset:rest")]
        velocity = joint_velocity(joy.axes, self._map)
        moving = any(v != 0.0 for v in velocity)
        if self._latched:
            if moving:
                return []
            self._latched = False
        if not moving:
            self._stop_joint_jog(now)
            return []
        out: list[Action] = []
        if not self._jogging:
            problem = self._start_joint_jog(now, measured)
            if problem:
                return [Rejected("joint_states", problem)]
        else:
            problem = self._measured_problem(now, measured)
            if problem:
                self._stop_joint_jog(now)
                return [Rejected("joint_states", f"{problem}: jog stopped")]
            # Integrate the old velocity up to now before the new one takes over.
            self._target = self._step(now, measured)
        self._velocity = velocity
        if self._may_emit_for_joy(now):
            self._emitted(now)
            out.append(JointTarget(self._target, "jog"))
        return out

    def _start_joint_jog(self, now: float, measured: Measured | None) -> str | None:
        problem = self._measured_problem(now, measured)
        if problem:
            return problem
        recent = now - self._jog_end <= self._map.jog_resume_window_s
        resume = self._may_resume and self._target is not None and recent
        seed = self._target if resume else measured.q
        self._target = clamp_joints(seed, self._arm, seed if resume else REST_POSTURE).q
        self._target_time = now
        self._jogging = True
        return None

    def _measured_problem(self, now: float, measured: Measured | None) -> str | None:
        if measured is None:
            return "joint jog needs the measured joints: no /joint_states received yet"
        if now - measured.stamp > self._map.joint_state_timeout_s:
            age = now - measured.stamp
            return (f"joint jog needs the measured joints: the last /joint_states is {age:.2f} s old"
                    f" (joint_state_timeout_s {self._map.joint_state_timeout_s} s)")
        return None

    def _stop_joint_jog(self, now: float) -> None:
        if self._jogging:
            self._jogging = False
            self._jog_end = now
            self._may_resume = True
        self._velocity = (0.0,) * len(self._velocity)

    def _step(self, now: float, measured: Measured | None) -> tuple[float, ...]:
        """The target integrated from `_target_time` to `now`, inside the lead window and every limit."""
        assert self._target is not None
        dt = min(max(now - self._target_time, 0.0), MAX_STEP_DT)
        self._target_time = now
        prev = self._target
        q = [p + v * dt for p, v in zip(prev, self._velocity, strict=True)]
        if measured is not None:
            lead = self._map.max_lead
            q = [min(max(x, m - lead), m + lead) for x, m in zip(q, measured.q, strict=True)]
        return limit_step(prev, q, self._arm)

    # ----------------------------------------------------------------------------------------- timer
    def tick(self, now: float, measured: Measured | None) -> list[Action]:
        """The timer: stop a jog whose Joy stream went stale, otherwise keep a held jog flowing."""
        if not self.jogging:
            return []
        last = self._last
        if last is None or now - last.stamp > self._map.joy_timeout_s:
            age = math.inf if last is None else now - last.stamp
            reason = f"no fresh Joy for {age:.2f} s (joy_timeout_s {self._map.joy_timeout_s} s): jog stopped"
            if self._twist_on:
                return [*self._stop_twist(now), Rejected("watchdog", reason)]
            self._stop_joint_jog(now)
            return [Rejected("watchdog", reason)]
        if now - self._last_out < TICK_SLACK / self._map.target_rate_hz:
            return []
        if self._twist_on:
            self._emitted(now)
            return [Jog(*self._twist)]
        problem = self._measured_problem(now, measured)
        if problem:
            self._stop_joint_jog(now)
            return [Rejected("joint_states", f"{problem}: jog stopped")]
        self._target = self._step(now, measured)
        self._emitted(now)
        return [JointTarget(self._target, "jog")]


def place_twist(axes: Sequence[float], mapping: JoyMapping) -> tuple[float, float]:
    """The `place_jog` twist (vx, vy) in m/s for these axes; its norm never exceeds the speed."""
    m = mapping
    sx = apply_deadzone(axes[m.place_jog_axis_x], m.deadzone) if m.place_jog_axis_x >= 0 else 0.0
    sy = apply_deadzone(axes[m.place_jog_axis_y], m.deadzone) if m.place_jog_axis_y >= 0 else 0.0
    sx, sy = (-sx if m.place_jog_invert_x else sx), (-sy if m.place_jog_invert_y else sy)
    norm = math.hypot(sx, sy)
    if norm > 1.0:  # a diagonal is not faster than straight ahead
        sx, sy = sx / norm, sy / norm
    return sx * m.place_jog_speed, sy * m.place_jog_speed


def joint_velocity(axes: Sequence[float], mapping: JoyMapping) -> tuple[float, ...]:
    """Commanded joint velocities (rad/s, motor order) for these axes."""
    return tuple(
        apply_deadzone(axes[a], mapping.deadzone) * speed if a >= 0 else 0.0
        for a, speed in zip(mapping.joint_axes, mapping.joint_speeds, strict=True)
    )


def limit_step(prev: Sequence[float], q: Sequence[float], arm: ArmParams) -> tuple[float, ...]:
    """Move from `prev` towards `q` but stop at the limits instead of sliding along them.

    Each joint is boxed; a (q1, q2) step that would cross a coupled limit is shortened to end on it (a
    joint jog stops at the housing, it does not drag the other link along). `clamp_joints` is the final
    backstop, so the result is inside every limit even when `prev` was not (a seed just outside).
    """
    lower, upper = arm.joint_lower, arm.joint_upper
    out = [min(max(x, lo), hi) for x, lo, hi in zip(q, lower, upper, strict=True)]
    if violated_bounds(out[1], out[2], arm) and not violated_bounds(prev[1], prev[2], arm):
        d1, d2 = out[1] - prev[1], out[2] - prev[2]
        t = 1.0
        # Half-planes q2 - q1 <= alpha_max and q1 - q2 <= beta_max; the boxes hold on the whole segment.
        for a1, a2, rhs in ((-1.0, 1.0, arm.alpha_max), (1.0, -1.0, arm.beta_max)):
            rate = a1 * d1 + a2 * d2
            if rate > 0.0:
                t = min(t, max(0.0, (rhs - (a1 * prev[1] + a2 * prev[2])) / rate))
        out[1], out[2] = prev[1] + t * d1, prev[2] + t * d2
    return clamp_joints(out, arm, prev).q
