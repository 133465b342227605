"""The post-clamp: every joint command is forced inside the per-joint and coupled limits.

This is the backstop for whatever bypasses the IK (gamepad joint jog, posture presets, a Ruckig sample
that cuts a corner of the polygon). Like ros2_control's joint limiters it reports what it did, and it
replaces a non-finite command with the last safe one instead of passing it on.

Two rules live here:

- `clamp_joints`: the exact projection onto the feasible set (nearest point of the (q1, q2) polygon).
  Goals are projected with it before planning, and it measures how far a command lies outside.
- `post_clamp_joints`: the trajectory generator's post-clamp, as the robot's operating notes describe
  it: the shoulder (q1) is kept (clipped to its own box only) and the beam (q2) is cut back onto the
  violated bound. Only where no q2 satisfies every limit at that q1 (a narrowed `alpha_max`/`beta_max`
  against the q2 box, e.g. `alpha_max` 1.30 at q1 = -1.35) does it fall back to the projection.

Invariant of both: the result is finite and passes the exact `within_limits` check. A post-clamp step
from a command inside the limits moves q1 no more than the request did and q2 no more than the larger of
the two joints' requested steps (docs/arm_model.md, "The post-clamp").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from salamander_control.kinematics import REST_POSTURE, ArmParams, project_to_feasible, violated_bounds

JOINT_BOUND_NAMES = (
    ("yaw_min", "yaw_max"),
    ("q1_min", "q1_max"),
    ("q2_min", "q2_max"),
    ("wrist_pitch_min", "wrist_pitch_max"),
    ("wrist_yaw_min", "wrist_yaw_max"),
)


class ClampResult(NamedTuple):
    """What the clamp did to one command.

    Attributes:
        q: the command to send (always finite and inside every limit).
        clamped: whether `q` differs from the request.
        active: names of the bounds that acted (e.g. "alpha_max", "q2_max", "non_finite").
        amount: Euclidean distance between request and result, rad (inf for a non-finite request).
        rule: how (q1, q2) were brought inside: `BEAM_CUT_BACK` (q1 kept, q2 cut back),
            `PROJECTION` (nearest feasible point), or "" (they needed nothing, or the request was not finite).
    """

    q: tuple[float, ...]
    clamped: bool
    active: tuple[str, ...]
    amount: float
    rule: str = ""


BEAM_CUT_BACK = "beam_cut_back"
"""`ClampResult.rule`: the shoulder (q1) was kept and the beam (q2) cut back onto the crossed bound."""
PROJECTION = "projection"
"""`ClampResult.rule`: (q1, q2) were projected onto the polygon (no q2 fits the shoulder's angle)."""
_NUDGE_STEPS = 8  # ulp steps that make a bound solved for q2 pass the exact float check


def clamp_joints(q: Sequence[float], params: ArmParams, last_safe: Sequence[float]) -> ClampResult:
    """Clamp a five-joint command onto the feasible set.

    Per-joint box first (base yaw and wrist joints are independent), then the exact projection of
    (q1, q2) onto the coupled polygon, which also enforces the q1/q2 boxes.

    Args:
        q: requested joints, motor order.
        params: the limits snapshot for this cycle.
        last_safe: what to send instead when `q` holds NaN or inf (the previous command).

    Raises:
        ValueError: `q` or `last_safe` does not have five elements.
    """
    if len(q) != 5 or len(last_safe) != 5:
        raise ValueError(f"clamp_joints needs five joints, got {len(q)} and {len(last_safe)}")
    if not _finite(q):
        fallback = tuple(last_safe) if _finite(last_safe) else rest_in_limits(params)
        # The limits may have narrowed since the last safe command was sent: clamp it as well.
        safe = clamp_joints(fallback, params, fallback)
        return ClampResult(safe.q, True, ("non_finite", *safe.active), math.inf)
    out, active = _clamp_independent(q, params)
    proj = project_to_feasible(out[1], out[2], params)
    if proj.clamped:
        out[1], out[2] = proj.q1, proj.q2
        active.extend(b.value for b in proj.active)
    return _result(q, out, active, PROJECTION if proj.clamped else "")


def post_clamp_joints(q: Sequence[float], params: ArmParams, last_safe: Sequence[float]) -> ClampResult:
    """The trajectory generator's post-clamp: keep the shoulder, cut the beam back onto the crossed bound.

    Per-joint box for base yaw and the wrist joints, then q1 clipped to its own box and kept; q2 is
    clipped into what every limit allows at that q1, ``[max(q2_min, q1 - beta_max), min(q2_max,
    q1 + alpha_max)]``. Where that interval is empty (narrowed coupled limits against the q2 box) the
    exact projection of `clamp_joints` takes over (`ClampResult.rule` says which rule acted).

    Args and errors as `clamp_joints` (a non-finite request is replaced by `last_safe`, projected).
    """
    if len(q) != 5 or len(last_safe) != 5 or not _finite(q):
        return clamp_joints(q, params, last_safe)
    out, active = _clamp_independent(q, params)
    crossed = violated_bounds(out[1], out[2], params)
    if not crossed:
        return _result(q, out, active, "")
    q1 = min(max(out[1], params.q1_min), params.q1_max)
    q2 = beam_within_limits(q1, out[2], params)
    if q2 is None:
        proj = project_to_feasible(out[1], out[2], params)
        out[1], out[2], rule = proj.q1, proj.q2, PROJECTION
    else:
        out[1], out[2], rule = q1, q2, BEAM_CUT_BACK
    active.extend(b.value for b in crossed)
    return _result(q, out, active, rule)


def beam_within_limits(q1: float, q2: float, params: ArmParams) -> float | None:
    """`q2` clipped into what every limit allows at shoulder angle `q1`, or None where nothing does.

    `q1` must lie in its own box. The clipped value passes the exact float checks (a bound solved for q2
    is stepped by single ulps where rounding would leave it a hair outside).
    """
    lo = max(params.q2_min, q1 - params.beta_max)
    hi = min(params.q2_max, q1 + params.alpha_max)
    value = min(max(q2, lo), hi)
    for _ in range(_NUDGE_STEPS):
        if value - q1 > params.alpha_max:
            value = math.nextafter(value, -math.inf)
        elif q1 - value > params.beta_max:
            value = math.nextafter(value, math.inf)
        else:
            break
    if violated_bounds(q1, value, params):
        return None
    return value


def describe_clamp(result: ClampResult) -> str:
    """One log line for a clamp: the bounds crossed, the rule and the amount (the generator's WARN)."""
    bounds = ", ".join(result.active)
    moved = f"{result.amount:.5f} rad ({math.degrees(result.amount):.3f} deg)"
    if result.rule == BEAM_CUT_BACK:
        return (
            f"post-clamp: {bounds} crossed: beam (q2) cut back by {moved} to {result.q[2]:.4f} rad, "
            f"shoulder (q1) kept at {result.q[1]:.4f} rad"
        )
    if result.rule == PROJECTION:
        return (
            f"post-clamp: {bounds} crossed and no beam (q2) angle fits that shoulder (q1) angle: "
            f"projected onto the limits, moved by {moved}"
        )
    return f"post-clamp: {bounds} moved the command by {moved}"


def _clamp_independent(q: Sequence[float], params: ArmParams) -> tuple[list[float], list[str]]:
    """Base yaw and the wrist joints clipped to their boxes (q1, q2 untouched), and the bounds that acted."""
    out = list(q)
    active: list[str] = []
    lower, upper = params.joint_lower, params.joint_upper
    for i in (0, 3, 4):
        if out[i] < lower[i]:
            out[i] = lower[i]
            active.append(JOINT_BOUND_NAMES[i][0])
        elif out[i] > upper[i]:
            out[i] = upper[i]
            active.append(JOINT_BOUND_NAMES[i][1])
    return out, active


def _result(q: Sequence[float], out: list[float], active: list[str], rule: str) -> ClampResult:
    if not active:
        return ClampResult(tuple(q), False, (), 0.0)
    amount = math.hypot(*(a - b for a, b in zip(q, out, strict=True)))  # never overflows: inf at worst
    return ClampResult(tuple(out), True, tuple(active), amount, rule)


def _finite(values: Sequence[float]) -> bool:
    return all(math.isfinite(v) for v in values)


def rest_in_limits(params: ArmParams) -> tuple[float, ...]:
    """The rest posture projected into the current limits: the fallback of last resort."""
    proj = project_to_feasible(REST_POSTURE[1], REST_POSTURE[2], params)
    return (0.0, proj.q1, proj.q2, 0.0, 0.0)
