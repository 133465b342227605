"""The post-clamp: every joint command is forced inside the per-joint and coupled limits.

This is the backstop for whatever bypasses the IK (gamepad joint jog, posture presets, a Ruckig sample
that cuts a corner of the polygon). Like ros2_control's joint limiters it reports what it did, and it
replaces a non-finite command with the last safe one instead of passing it on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from salamander_control.kinematics import REST_POSTURE, ArmParams, project_to_feasible

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
    """

    q: tuple[float, ...]
    clamped: bool
    active: tuple[str, ...]
    amount: float


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
    proj = project_to_feasible(out[1], out[2], params)
    if proj.clamped:
        out[1], out[2] = proj.q1, proj.q2
        active.extend(b.value for b in proj.active)
    if not active:
        return ClampResult(tuple(q), False, (), 0.0)
    amount = math.hypot(*(a - b for a, b in zip(q, out, strict=True)))  # never overflows: inf at worst
    return ClampResult(tuple(out), True, tuple(active), amount)


def _finite(values: Sequence[float]) -> bool:
    return all(math.isfinite(v) for v in values)


def rest_in_limits(params: ArmParams) -> tuple[float, ...]:
    """The rest posture projected into the current limits: the fallback of last resort."""
    proj = project_to_feasible(REST_POSTURE[1], REST_POSTURE[2], params)
    return (0.0, proj.q1, proj.q2, 0.0, 0.0)
