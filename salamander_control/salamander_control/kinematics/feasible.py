"""The feasible (q1, q2) polygon and the exact projection onto it.

Per-joint boxes and the two coupled half-planes (``q2 - q1 <= alpha_max``, ``q1 - q2 <= beta_max``)
bound a convex polygon. The trajectory generator's post-clamp and the teleop's joint jog project onto
it, so whatever bypasses the IK still never reaches the housing.
"""

from __future__ import annotations

import math
from enum import StrEnum
from functools import lru_cache
from typing import NamedTuple

from salamander_control.kinematics._validate import finite_scalar
from salamander_control.kinematics.model import ArmParams


class Bound(StrEnum):
    """A bound of the (q1, q2) polygon; the value is the parameter's name, for logs."""

    Q1_MIN = "q1_min"
    Q1_MAX = "q1_max"
    Q2_MIN = "q2_min"
    Q2_MAX = "q2_max"
    ALPHA_MAX = "alpha_max"
    BETA_MAX = "beta_max"


class Projection(NamedTuple):
    """Result of `project_to_feasible`.

    Attributes:
        q1: projected shoulder pitch.
        q2: projected beam pitch.
        clamped: whether the input was outside the polygon (and so moved).
        active: the bounds the input violated (empty when not clamped).
        distance: how far the point moved, rad.
    """

    q1: float
    q2: float
    clamped: bool
    active: tuple[Bound, ...]
    distance: float


# Each bound as a half-plane a1*q1 + a2*q2 <= b.
def _half_planes(p: ArmParams) -> tuple[tuple[Bound, float, float, float], ...]:
    return (
        (Bound.Q1_MIN, -1.0, 0.0, -p.q1_min),
        (Bound.Q1_MAX, 1.0, 0.0, p.q1_max),
        (Bound.Q2_MIN, 0.0, -1.0, -p.q2_min),
        (Bound.Q2_MAX, 0.0, 1.0, p.q2_max),
        (Bound.ALPHA_MAX, -1.0, 1.0, p.alpha_max),
        (Bound.BETA_MAX, 1.0, -1.0, p.beta_max),
    )


def violated_bounds(q1: float, q2: float, params: ArmParams) -> tuple[Bound, ...]:
    """The polygon's bounds that (q1, q2) crosses (exact float comparison, no tolerance)."""
    return tuple(b for b, a1, a2, rhs in _half_planes(params) if a1 * q1 + a2 * q2 > rhs)


@lru_cache(maxsize=64)
def polygon_vertices(params: ArmParams) -> tuple[tuple[float, float], ...]:
    """Vertices of the feasible polygon, counter-clockwise (box clipped by both half-planes)."""
    poly = [(params.q1_min, params.q2_min), (params.q1_max, params.q2_min),
            (params.q1_max, params.q2_max), (params.q1_min, params.q2_max)]
    for _, a1, a2, rhs in _half_planes(params)[4:]:
        clipped: list[tuple[float, float]] = []
        for i, cur in enumerate(poly):
            prev = poly[i - 1]
            f_cur = a1 * cur[0] + a2 * cur[1] - rhs
            f_prev = a1 * prev[0] + a2 * prev[1] - rhs
            if (f_cur <= 0.0) != (f_prev <= 0.0):
                t = f_prev / (f_prev - f_cur)
                clipped.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
            if f_cur <= 0.0:
                clipped.append(cur)
        poly = clipped
    return tuple(poly)


def project_to_feasible(q1: float, q2: float, params: ArmParams) -> Projection:
    """Nearest point of the feasible (q1, q2) polygon, reporting which bounds were crossed.

    A point inside is returned unchanged. Outside, the result is the Euclidean projection onto the
    polygon's boundary, then nudged by at most a few ulps so that the exact checks hold: callers may
    rely on ``violated_bounds(result) == ()``.

    Raises:
        ValueError: q1 or q2 is NaN or inf (there is no safe point to map it to; callers keep their
            last safe value instead).
    """
    q1 = finite_scalar(q1, "q1")
    q2 = finite_scalar(q2, "q2")
    crossed = violated_bounds(q1, q2, params)
    if not crossed:
        return Projection(q1, q2, False, (), 0.0)
    verts = polygon_vertices(params)
    best = (math.inf, q1, q2)
    for i, (ax, ay) in enumerate(verts):
        bx, by = verts[(i + 1) % len(verts)]
        ex, ey = bx - ax, by - ay
        length2 = ex * ex + ey * ey
        t = 0.0 if length2 == 0.0 else min(1.0, max(0.0, ((q1 - ax) * ex + (q2 - ay) * ey) / length2))
        px, py = ax + t * ex, ay + t * ey
        dist = math.hypot(q1 - px, q2 - py)  # hypot: a huge finite request cannot overflow
        if dist < best[0]:
            best = (dist, px, py)
    p1, p2 = _nudge_inside(best[1], best[2], params)
    return Projection(p1, p2, True, crossed, math.hypot(q1 - p1, q2 - p2))


def _nudge_inside(q1: float, q2: float, params: ArmParams) -> tuple[float, float]:
    """Move a point that rounding left a hair outside the boundary onto the feasible side.

    A crossed box bound is met by setting the joint onto it. A crossed coupled bound is met by solving
    it for one joint (q2 preferred; q1 where q2 would leave its box) and stepping that joint by single
    ulps until the float check holds. Moving one joint at a time keeps the steps at one ulp, so even a
    polygon thinner than an ulp (alpha_max = 0 with a subnormal beta_max: the line q1 = q2) is met.
    """
    p = params
    for _ in range(8):
        crossed = violated_bounds(q1, q2, p)
        if not crossed:
            return q1, q2
        q1 = min(max(q1, p.q1_min), p.q1_max)
        q2 = min(max(q2, p.q2_min), p.q2_max)
        if q2 - q1 > p.alpha_max:  # q2 <= q1 + alpha, else q1 >= q2 - alpha
            c = _solve(q1 + p.alpha_max, q1, 1.0, p.alpha_max)
            if p.q2_min <= c <= p.q2_max:
                q2 = c
            else:
                q1 = _solve(q2 - p.alpha_max, q2, -1.0, p.alpha_max)
        elif q1 - q2 > p.beta_max:  # q2 >= q1 - beta, else q1 <= q2 + beta
            c = _solve(q1 - p.beta_max, q1, -1.0, p.beta_max)
            if p.q2_min <= c <= p.q2_max:
                q2 = c
            else:
                q1 = _solve(q2 + p.beta_max, q2, 1.0, p.beta_max)
    raise AssertionError(f"could not place ({q1}, {q2}) inside the feasible polygon")  # pragma: no cover


def _solve(value: float, other: float, sign: float, bound: float) -> float:
    """Make ``sign * (value - other) <= bound`` hold by moving `value` one ulp at a time.

    `value` is the bound solved for one joint, off by rounding only, so this takes a step or two.
    """
    direction = -math.inf * sign
    while sign * (value - other) > bound:
        value = math.nextafter(value, direction)
    return value
