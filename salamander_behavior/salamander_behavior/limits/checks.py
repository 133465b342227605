"""Limit checks on one joint state: pure functions, no rclpy, no py_trees.

Every check returns a `CheckResult` whose `slack` says how far the state is inside the check's rule, in
the check's own units (negative: the rule is broken). The py_trees conditions put a `Hysteresis` on
that slack, so each check is written once and judged the same way everywhere:

- `check_positions`: every joint at least `margin` from both its limits (rad);
- `joint_near_limit`: which joint is nearest a limit, on which side, how far (and whether within margin);
- `check_velocity_effort`: |velocity| and |effort| within a fraction of the URDF limits, where the joint
  state carries them (slack in fractions of the limit);
- `check_coupled`: ``q2 - q1 <= alpha_max - margin`` and ``q1 - q2 <= beta_max - margin`` (rad);
- `check_singularity`: manipulability and/or condition number of the arm Jacobian against thresholds
  (relative slack).

The combined index over all joints is in `salamander_behavior.limits.combined`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from salamander_behavior.limits.sample import JointSample
from salamander_behavior.limits.urdf_limits import JointLimit
from salamander_control.joint_state import JointStateError
from salamander_control.kinematics import JOINT_NAMES, ArmParams, condition_number, manipulability

SHOULDER = JOINT_NAMES[1]
"""q1 of the coupled limits (shoulder_pitch)."""
BEAM = JOINT_NAMES[2]
"""q2 of the coupled limits (beam_pitch)."""


@dataclass(frozen=True)
class JointProximity:
    """How close one joint is to its nearer limit.

    Attributes:
        joint: the joint's name.
        side: "lower" or "upper": the limit it is nearer to.
        distance: from the position to that limit, inwards positive (negative: beyond the limit).
    """

    joint: str
    side: str
    distance: float

    def describe(self) -> str:
        """E.g. "beam_pitch 0.010 rad from its upper limit" or "... 0.020 rad beyond its lower limit"."""
        if self.distance < 0.0:
            return f"{self.joint} {-self.distance:.3f} rad beyond its {self.side} limit"
        return f"{self.joint} {self.distance:.3f} rad from its {self.side} limit"


@dataclass(frozen=True)
class CheckResult:
    """Verdict of one check.

    Attributes:
        ok: whether the rule holds (``slack >= 0``).
        slack: distance inside the rule in the check's units; negative when broken.
        message: one line with the numbers behind the verdict (for feedback messages and logs).
        worst: the joint or bound that set the slack ("" when nothing was checked).
        proximity: for the position checks, the nearest joint limit.
    """

    ok: bool
    slack: float
    message: str
    worst: str = ""
    proximity: JointProximity | None = None


class NearLimit(NamedTuple):
    """Answer of `joint_near_limit`: whether the nearest joint is within `margin`, and where it is."""

    near: bool
    proximity: JointProximity
    margin: float


def require_nonnegative(name: str, value: float) -> float:
    """`value` as a float if finite and >= 0.

    Raises:
        ValueError: otherwise (the message names `name`).
    """
    value = float(value)
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def require_positive(name: str, value: float) -> float:
    """`value` as a float if finite and > 0.

    Raises:
        ValueError: otherwise (the message names `name`).
    """
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def _watched(limits: Sequence[JointLimit], joints: Collection[str] | None) -> list[JointLimit]:
    if joints is None:
        return list(limits)
    known = {lim.name for lim in limits}
    unknown = [j for j in joints if j not in known]
    if unknown:
        raise ValueError(f"no limits for {', '.join(unknown)}; limited joints are {', '.join(sorted(known))}")
    return [lim for lim in limits if lim.name in joints]


def proximities(
    limits: Sequence[JointLimit], sample: JointSample, joints: Collection[str] | None = None
) -> tuple[JointProximity, ...]:
    """Each watched joint's distance to its nearer limit (ties count as the lower one).

    Args:
        limits: the per-joint limits (e.g. from the URDF).
        sample: the joint state.
        joints: names to watch; None watches every joint in `limits`.

    Raises:
        JointStateError: the joint state lacks a watched joint.
        ValueError: `joints` names a joint without limits.
    """
    watched = _watched(limits, joints)
    sample.vector(lim.name for lim in watched)  # raises naming every missing joint
    out = []
    for lim in watched:
        q = sample.positions[lim.name]
        to_lower, to_upper = q - lim.lower, lim.upper - q
        side, distance = ("lower", to_lower) if to_lower <= to_upper else ("upper", to_upper)
        out.append(JointProximity(lim.name, side, distance))
    return tuple(out)


def nearest_limit(
    limits: Sequence[JointLimit], sample: JointSample, joints: Collection[str] | None = None
) -> JointProximity:
    """The watched joint nearest one of its limits (first in `limits` order on ties).

    Raises:
        JointStateError: the joint state lacks a watched joint.
        ValueError: nothing to watch, or `joints` names a joint without limits.
    """
    found = proximities(limits, sample, joints)
    if not found:
        raise ValueError("no joint limits to check")
    return min(found, key=lambda p: p.distance)


def joint_near_limit(
    limits: Sequence[JointLimit], sample: JointSample, margin: float, joints: Collection[str] | None = None
) -> NearLimit:
    """Whether a watched joint is closer than `margin` to a limit (or beyond it), and which.

    A joint exactly `margin` from its limit is not near.

    Raises:
        JointStateError, ValueError: see `nearest_limit`; ValueError also for a negative or non-finite margin.
    """
    margin = require_nonnegative("margin", margin)
    prox = nearest_limit(limits, sample, joints)
    return NearLimit(prox.distance < margin, prox, margin)


def check_positions(
    limits: Sequence[JointLimit], sample: JointSample, margin: float, joints: Collection[str] | None = None
) -> CheckResult:
    """Every watched joint at least `margin` inside its limits: ``lower + margin <= q <= upper - margin``.

    Slack: the nearest joint's distance to its limit minus `margin`, rad.

    Raises:
        JointStateError, ValueError: see `joint_near_limit`.
    """
    near, prox, margin = joint_near_limit(limits, sample, margin, joints)
    slack = prox.distance - margin
    if not near:
        message = f"all joints >= {margin:.3f} rad inside their limits; nearest: {prox.describe()}"
    else:
        message = f"{prox.describe()} (margin {margin:.3f})"
    return CheckResult(not near, slack, message, prox.joint, prox)


def check_velocity_effort(
    limits: Sequence[JointLimit],
    sample: JointSample,
    velocity_fraction: float = 1.0,
    effort_fraction: float = 1.0,
) -> CheckResult:
    """|velocity| <= velocity_fraction * limit and |effort| <= effort_fraction * limit, joint by joint.

    Only what both sides carry is checked: a joint state without velocities (or efforts), or a URDF
    joint without that limit, has nothing to check there; with nothing at all the check holds (slack
    +inf) and says so. Slack: the smallest ``fraction - |value| / limit``, in fractions of the limit.

    Raises:
        JointStateError: the joint state lacks a joint that has limits.
        ValueError: a fraction that is not finite and > 0.
    """
    fractions = {
        "velocity": require_positive("velocity_fraction", velocity_fraction),
        "effort": require_positive("effort_fraction", effort_fraction),
    }
    sample.vector(lim.name for lim in limits)
    worst: tuple[float, str, str] | None = None
    for lim in limits:
        for kind, measured in (("velocity", sample.velocities), ("effort", sample.efforts)):
            bound = getattr(lim, kind)
            if bound is None or lim.name not in measured:
                continue
            value = measured[lim.name]
            slack = fractions[kind] - abs(value) / bound
            if worst is None or slack < worst[0]:
                text = (
                    f"{lim.name} {kind} {abs(value):.3f} is {abs(value) / bound:.0%} of its limit "
                    f"{bound:g} (allowed {fractions[kind]:.0%})"
                )
                worst = (slack, lim.name, text)
    if worst is None:
        return CheckResult(True, math.inf, "no velocities or efforts with limits to check")
    slack, name, text = worst
    return CheckResult(slack >= 0.0, slack, text, name)


def coupled_slacks(q1: float, q2: float, arm: ArmParams) -> tuple[float, float]:
    """(alpha_max - (q2 - q1), beta_max - (q1 - q2)): how far inside each coupled limit, rad."""
    return arm.alpha_max - (q2 - q1), arm.beta_max - (q1 - q2)


def check_coupled(sample: JointSample, arm: ArmParams, margin: float) -> CheckResult:
    """``q2 - q1 <= alpha_max - margin`` and ``q1 - q2 <= beta_max - margin`` (q1 shoulder, q2 beam).

    Slack: the smaller of ``(alpha_max - margin) - (q2 - q1)`` and ``(beta_max - margin) - (q1 - q2)``,
    rad; it is >= 0 exactly when both inequalities hold (float subtraction keeps the sign).

    Raises:
        JointStateError: the joint state lacks shoulder_pitch or beam_pitch.
        ValueError: a negative or non-finite margin.
    """
    margin = require_nonnegative("margin", margin)
    q1, q2 = sample.vector((SHOULDER, BEAM))
    d = q2 - q1
    alpha = (arm.alpha_max - margin) - d
    beta = (arm.beta_max - margin) - (q1 - q2)
    if alpha <= beta:
        bound, slack, text = "alpha_max", alpha, f"q2 - q1 = {d:.3f} rad vs alpha_max {arm.alpha_max:.3f}"
        inside = arm.alpha_max - d
    else:
        bound, slack, text = "beta_max", beta, f"q1 - q2 = {-d:.3f} rad vs beta_max {arm.beta_max:.3f}"
        inside = arm.beta_max + d
    where = f"{inside:.3f} rad inside" if inside >= 0.0 else f"{-inside:.3f} rad BEYOND"
    return CheckResult(slack >= 0.0, slack, f"{text}: {where} (margin {margin:.3f})", bound)


def check_singularity(
    sample: JointSample,
    arm: ArmParams,
    min_manipulability: float | None = None,
    max_condition: float | None = None,
) -> CheckResult:
    """Distance from a positional singularity of the arm (kinematics.manipulability / condition_number).

    Holds when ``manipulability >= min_manipulability`` and ``condition_number <= max_condition`` (either
    threshold may be None to skip it). Slack is relative so that the two can be combined: the smaller of
    ``w / min_manipulability - 1`` and ``max_condition / cond - 1`` (-1 at an exact singularity).

    Raises:
        JointStateError: the joint state lacks one of the five arm joints.
        ValueError: no threshold given, or a threshold that is not finite and > 0 (max_condition >= 1).
    """
    if min_manipulability is None and max_condition is None:
        raise ValueError("check_singularity needs min_manipulability and/or max_condition")
    q = sample.vector(JOINT_NAMES)
    w, cond = manipulability(q, arm), condition_number(q, arm)
    parts: list[tuple[float, str, str]] = []
    if min_manipulability is not None:
        w_min = require_positive("min_manipulability", min_manipulability)
        parts.append((w / w_min - 1.0, "manipulability", f"manipulability {w:.5f} (min {w_min:g})"))
    if max_condition is not None:
        c_max = require_positive("max_condition", max_condition)
        if c_max < 1.0:
            raise ValueError(f"max_condition must be >= 1 (a condition number is), got {c_max}")
        parts.append((c_max / cond - 1.0, "condition_number", f"condition number {cond:.2f} (max {c_max:g})"))
    slack, worst, _ = min(parts)
    return CheckResult(slack >= 0.0, slack, "; ".join(p[2] for p in parts), worst)


__all__ = [
    "BEAM",
    "SHOULDER",
    "CheckResult",
    "JointProximity",
    "NearLimit",
    "JointStateError",
    "check_coupled",
    "check_positions",
    "check_singularity",
    "check_velocity_effort",
    "coupled_slacks",
    "joint_near_limit",
    "nearest_limit",
    "proximities",
    "require_nonnegative",
    "require_positive",
]
