"""What a MoveCartesian goal and the Cartesian motion node's parameters may be, as frozen values.

`parse_goal` turns a goal's fields into a `CartesianGoal` or says why it is malformed (the node's goal
callback rejects it with that reason). `MotionConfig` is the node's parameter snapshot; the parameters
themselves and the function that builds the snapshot from their values are in `cartesian.params`.

Pure Python, no rclpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from salamander_control.cartesian.path import PathSampling
from salamander_control.cartesian.plan import CartesianLimits, JointRateLimits, SlowBand
from salamander_control.kinematics import ArmParams
from salamander_control.trajectory.otg import MotionLimits

PATH_LINEAR = "linear"
PATH_JOINT = "joint"
DEFAULT_SPEED_SCALE = 0.5
MIN_SPEED_SCALE = 0.01
"""Slowest speed_scale a goal may ask for (0 means the default): below it the plans' limits shrink
towards zero, and a subnormal one (5e-324) made Ruckig raise inside the goal's execution."""
MAX_ABS_TCP = 10.0
"""Largest |x|, |y|, |z| of a TCP target (m): the arm reaches well under 1 m, so more is bad input."""
MAX_ABS_TOOL_ANGLE = 1000.0
"""Largest |tool_pitch|, |tool_yaw| (rad): angles wrap, but a huge one is bad input (it once made the
yaw unwrapping allocate terabytes)."""
MAX_GUARD_FORCE = 1000.0
"""Largest guard_force (N): the arm lifts a few newtons, so more is bad input, not a guard."""
MAX_HANDOFF_DISTANCE = 10.0
"""Largest handoff_distance (m): far beyond the arm's reach, so more is bad input."""
MAX_BAND = 10.0
"""Largest band_start and band_end (m before the target): far beyond the arm's reach, so bad input."""


class GoalRejected(ValueError):
    """A malformed goal; the message is the logged reason."""


@dataclass(frozen=True)
class CartesianGoal:
    """A validated MoveCartesian goal: pose (x, y, z, pitch, yaw), path, speed scale, client id, branch.

    `branch` is the elbow branch of the end pose: "" (the solution nearest the current joints, either
    branch), "up" or "down" (`cartesian.goal.start_goal` says how each path honours it). `guard_force`
    (N): > 0 makes a guarded linear goal that stops at the first contact (`cartesian.contact`); 0: none.
    `handoff_distance` (m): > 0: the node sends a feedback at once when the measured TCP first comes
    this close to the target (the client hands on there); 0: only the periodic feedback. A band
    (`band_speed_scale` > 0): the stretch from `band_start` to `band_end` m before the target is crossed
    as a goal at `band_speed_scale` would, and a guarded goal feels for contact only there (0: the whole
    line at `speed_scale`, guarded throughout).
    """

    pose: tuple[float, float, float, float, float]
    path: str
    speed_scale: float
    client_id: str
    branch: str = ""
    lease_token: str = field(default="", repr=False)  # sent as the targets' frame_id; never logged
    guard_force: float = 0.0
    handoff_distance: float = 0.0
    band_speed_scale: float = 0.0
    band_start: float = 0.0
    band_end: float = 0.0

    @property
    def guarded(self) -> bool:
        """Whether the goal stops at the first contact."""
        return self.guard_force > 0.0

    @property
    def banded(self) -> bool:
        """Whether the goal has a slow band."""
        return self.band_speed_scale > 0.0

    def slow_band(self, limits: CartesianLimits) -> SlowBand | None:
        """The band in m/s for the node's (unscaled) Cartesian `limits`; None without one."""
        if not self.banded:
            return None
        return SlowBand(limits.linear_velocity * self.band_speed_scale, self.band_start, self.band_end)


BRANCHES = ("", "up", "down")
"""MoveCartesian's branch field: "" = nearest the current joints, or one elbow branch."""


def _number_within(value: Any, high: float) -> bool:
    """Whether `value` is a finite number in [0, `high`]."""
    return isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= high


def pose_problem(tcp: Any, tool_pitch: Any, tool_yaw: Any) -> str:
    """Why a target pose (a goal's or a retarget's) is refused, or "" when it is not.

    Refused: not finite, or out of any sensible range (a path to a pose a million radians away would be
    sampled for minutes, in the node's only executor).
    """
    values = (*tcp, tool_pitch, tool_yaw)
    if len(values) != 5 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        return f"pose must be finite, got tcp={tuple(tcp)} tool_pitch={tool_pitch} tool_yaw={tool_yaw}"
    if any(abs(v) > MAX_ABS_TCP for v in values[:3]) or any(abs(v) > MAX_ABS_TOOL_ANGLE for v in values[3:]):
        return (
            f"pose out of any sensible range (|tcp| <= {MAX_ABS_TCP:g} m, |angles| <= {MAX_ABS_TOOL_ANGLE:g} "
            f"rad), got tcp={tuple(tcp)} tool_pitch={tool_pitch} tool_yaw={tool_yaw}"
        )
    return ""


def parse_goal(
    tcp: Any,
    tool_pitch: float,
    tool_yaw: float,
    path: str,
    speed_scale: float,
    client_id: str,
    branch: str = "",
    lease_token: str = "",
    guard_force: float = 0.0,
    handoff_distance: float = 0.0,
    band_speed_scale: float = 0.0,
    band_start: float = 0.0,
    band_end: float = 0.0,
) -> CartesianGoal:
    """Validate a goal's fields.

    Raises:
        GoalRejected: NaN/inf or absurdly large pose, unknown path, speed_scale neither 0 (the default)
            nor in [MIN_SPEED_SCALE, 1], a branch other than "", "up" or "down", a guard_force that is
            NaN, inf or negative, or above MAX_GUARD_FORCE, a guarded joint goal (a joint move has no
            line to brake on), a handoff_distance that is NaN, inf, negative or above
            MAX_HANDOFF_DISTANCE, a band (`_band`) that is not finite, not ordered or on a joint goal.
    """
    if branch not in BRANCHES:
        raise GoalRejected(f"branch must be '', 'up' or 'down', got {branch!r}")
    if problem := pose_problem(tcp, tool_pitch, tool_yaw):
        raise GoalRejected(problem)
    if path not in (PATH_LINEAR, PATH_JOINT):
        raise GoalRejected(f"path must be {PATH_LINEAR!r} or {PATH_JOINT!r}, got {path!r}")
    if not (
        isinstance(speed_scale, (int, float))
        and math.isfinite(speed_scale)
        and (speed_scale == 0.0 or MIN_SPEED_SCALE <= speed_scale <= 1.0)
    ):
        raise GoalRejected(
            f"speed_scale must lie in [{MIN_SPEED_SCALE}, 1] (0 = default {DEFAULT_SPEED_SCALE}), "
            f"got {speed_scale}"
        )
    if not _number_within(guard_force, MAX_GUARD_FORCE):
        raise GoalRejected(
            f"guard_force must lie in [0, {MAX_GUARD_FORCE:g}] N (0 = unguarded), got {guard_force}"
        )
    if guard_force > 0.0 and path != PATH_LINEAR:
        raise GoalRejected(
            f"guard_force {guard_force:g} N on a {path!r} goal: only a linear goal can be guarded (a joint "
            f"move has no line to brake on)"
        )
    if not _number_within(handoff_distance, MAX_HANDOFF_DISTANCE):
        raise GoalRejected(
            f"handoff_distance must lie in [0, {MAX_HANDOFF_DISTANCE:g}] m (0 = none), got {handoff_distance}"
        )
    _check_band(band_speed_scale, band_start, band_end, path)
    scale = DEFAULT_SPEED_SCALE if speed_scale == 0.0 else float(speed_scale)
    pose = tuple(float(v) for v in (*tcp, tool_pitch, tool_yaw))
    return CartesianGoal(
        pose, path, scale, client_id, branch, lease_token, float(guard_force),  # type: ignore[arg-type]
        float(handoff_distance), float(band_speed_scale), float(band_start), float(band_end),
    )


def _check_band(scale: float, start: float, end: float, path: str) -> None:
    """A band's fields: all 0 (none), or a speed_scale in [MIN_SPEED_SCALE, 1] and start > end >= 0."""
    if not (_number_within(start, MAX_BAND) and _number_within(end, MAX_BAND)):
        raise GoalRejected(f"band_start and band_end must lie in [0, {MAX_BAND:g}] m, got {start}, {end}")
    if not (_number_within(scale, 1.0) and (scale == 0.0 or scale >= MIN_SPEED_SCALE)):
        raise GoalRejected(
            f"band_speed_scale must lie in [{MIN_SPEED_SCALE}, 1] (0 = no band), got {scale}"
        )
    if scale == 0.0:
        if start or end:
            raise GoalRejected(f"band_start {start} / band_end {end} without a band_speed_scale: set all 3")
        return
    if path != PATH_LINEAR:
        raise GoalRejected(f"a band on a {path!r} goal: only a linear goal has a line to slow down on")
    if not start > end:
        raise GoalRejected(f"band_start ({start} m before the target) must lie beyond band_end ({end} m)")


def _generator_defaults() -> JointRateLimits:
    d = MotionLimits()
    return JointRateLimits(d.max_velocity, d.max_acceleration, d.max_jerk)


@dataclass(frozen=True)
class MotionConfig:
    """The node's parameters as one frozen snapshot (names as the parameters: cartesian/params.py)."""

    arm: ArmParams = field(default_factory=ArmParams)
    limits: CartesianLimits = field(default_factory=CartesianLimits)
    sampling: PathSampling = field(default_factory=PathSampling)
    control_rate_hz: float = 100.0
    feedback_rate_hz: float = 10.0
    position_tolerance: float = 0.001
    angle_tolerance: float = 0.01
    settle_timeout_s: float = 3.0
    joint_path_timeout_s: float = 30.0
    joint_state_timeout_s: float = 1.0
    joint_limits: JointRateLimits = field(default_factory=_generator_defaults)
    joint_limit_fraction: float = 0.9
    guard_debounce_samples: int = 2
    guard_baseline_samples: int = 5

    @property
    def joint_rate_limits(self) -> JointRateLimits:
        """The joint limits Cartesian plans must stay within: the generator's, times the fraction.

        The fraction leaves the trajectory generator headroom to catch up with a moving target.
        """
        f = self.joint_limit_fraction
        return JointRateLimits(*(tuple(f * v for v in group) for group in self.joint_limits))
