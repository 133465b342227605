"""Solid geometry of the cell: the box's walls and floor, the table, cans as upright cylinders.

Everything a can can hit is convex (a wall or the floor is a rectangular prism, another can a
cylinder, the table a half-space), and so is a can. For a can whose bottom centre is at p, the cell
defines a *clearance* c(p) per obstacle: the signed gap between the two solids (max of the horizontal
and vertical gaps), negative when they overlap. It is convex in p, so along a straight move
p(s) = p0 + s (p1 - p0) the overlapping part is one interval of s. That is what lets `sweep` find the
first contact of a move of any length exactly (no tunnelling through a 3 mm wall, however far the
TCP jumped between two joint states), with a minimum search on a convex function and a bisection.

Two solids that only touch (gap 0) do not intersect: every test allows `EPS`, so a can may stand on
a wall top or slide down a wall at zero clearance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from salamander_control.cell.layout import CellLayout

EPS = 1e-9
"""Overlap below this (m) is contact, not intersection: floating-point noise of a can at rest."""
_FAR = 1e9
_MAX_SEARCH = 200
"""Ternary steps at most: (2/3)^200 of a move is far below rounding, so only touching ends the search."""

Point = tuple[float, float, float]


@dataclass(frozen=True)
class Prism:
    """A box-frame axis-aligned rectangle (centre u, v; half sizes) extruded from z0 to z1 in base_link."""

    name: str
    kind: str  # "wall" or "floor"
    u: float
    v: float
    hu: float
    hv: float
    z0: float
    z1: float


def rect_distance(u: float, v: float, prism: Prism) -> float:
    """Signed distance from (u, v) to the prism's rectangle (negative inside), m."""
    du = abs(u - prism.u) - prism.hu
    dv = abs(v - prism.v) - prism.hv
    outside = math.hypot(max(du, 0.0), max(dv, 0.0))
    return outside + min(max(du, dv), 0.0)


def box_prisms(layout: CellLayout) -> tuple[Prism, ...]:
    """The box: floor, two long walls, and the end walls and dividers between compartments."""
    t, inner = layout.wall_thickness, layout.compartment_inner
    half_l, half_w = layout.box_length / 2, layout.box_width / 2
    z0, floor, rim = layout.table_z, layout.floor_top, layout.rim_z
    prisms = [
        Prism("floor", "floor", 0.0, 0.0, half_l, half_w, z0, floor),
        Prism("wall -y", "wall", 0.0, -half_w + t / 2, half_l, t / 2, z0, rim),
        Prism("wall +y", "wall", 0.0, half_w - t / 2, half_l, t / 2, z0, rim),
    ]
    n = layout.compartments
    for k in range(n + 1):
        u = -half_l + t / 2 + k * (inner + t)
        name = "wall -x" if k == 0 else "wall +x" if k == n else f"divider {k - 1}|{k}"
        prisms.append(Prism(name, "wall", u, 0.0, t / 2, inner / 2, z0, rim))
    return tuple(prisms)


def _z_gap(zb: float, height: float, z0: float, z1: float) -> float:
    """Vertical gap between a can spanning [zb, zb + height] and the slab [z0, z1]; < 0 when overlapping."""
    return max(z0 - (zb + height), zb - z1)


class CellGeometry:
    """The static solids of one layout, and the checks the cell model makes against them.

    Other cans are passed in by the caller (they move); the table and the box are fixed.
    """

    def __init__(self, layout: CellLayout) -> None:
        self.layout = layout
        self.prisms = box_prisms(layout)
        self.radius = layout.can_radius
        self.height = layout.can_height
        # Box-frame bounding half-size of the whole box, for a cheap first rejection.
        self._box_reach = math.hypot(layout.box_length / 2, layout.box_width / 2)

    # --- clearances (signed gaps; < -EPS means intersecting) -----------------------------------------

    def prism_clearance(self, p: Point, prism: Prism) -> float:
        """Gap between a can at `p` and `prism`."""
        u, v = self.layout.to_box_frame(p[0], p[1])
        horizontal = rect_distance(u, v, prism) - self.radius
        return max(horizontal, _z_gap(p[2], self.height, prism.z0, prism.z1))

    def table_clearance(self, p: Point) -> float:
        """Height of a can's bottom above the table (the table is the half-space below table_z)."""
        return p[2] - self.layout.table_z

    def can_clearance(self, p: Point, other: Point) -> float:
        """Gap between a can at `p` and another can at `other`."""
        horizontal = math.hypot(p[0] - other[0], p[1] - other[1]) - 2 * self.radius
        return max(horizontal, _z_gap(p[2], self.height, other[2], other[2] + self.height))

    def collisions(self, p: Point, others: dict[str, Point]) -> list[str]:
        """Names of everything a can at `p` intersects (empty when it is free)."""
        hits = [prism.name for prism in self.prisms if self.prism_clearance(p, prism) < -EPS]
        if self.table_clearance(p) < -EPS:
            hits.append("table")
        hits.extend(name for name, q in others.items() if self.can_clearance(p, q) < -EPS)
        return hits

    # --- moving a held can ---------------------------------------------------------------------------

    def sweep(self, p0: Point, p1: Point, others: dict[str, Point]) -> tuple[float, str | None]:
        """How far along the straight move p0 -> p1 a can gets before it hits something.

        Args:
            p0: start (free of every obstacle).
            p1: requested end.
            others: the other cans' positions by name.

        Returns:
            (s, name): the can may go to p0 + s (p1 - p0) without intersecting anything; `name` is the
            first obstacle hit, or None when the whole move is free (s = 1).
        """
        # Each candidate: (name, bottom of its solid, top of its solid, horizontal gap at the can's xy).
        checks: list[tuple[str, float, float, Callable[[float, float], float]]] = [
            ("table", -_FAR, self.layout.table_z, lambda x, y: -_FAR)
        ]
        if self._near_box(p0, p1):
            checks.extend(
                (prism.name, prism.z0, prism.z1, self._prism_gap_xy(prism)) for prism in self.prisms
            )
        r2 = 2 * self.radius
        lo_x, hi_x = min(p0[0], p1[0]) - r2, max(p0[0], p1[0]) + r2
        lo_y, hi_y = min(p0[1], p1[1]) - r2, max(p0[1], p1[1]) + r2
        for name, q in others.items():
            if lo_x <= q[0] <= hi_x and lo_y <= q[1] <= hi_y:
                checks.append((name, q[2], q[2] + self.height, _circle_gap_xy(q, r2)))
        best_s, best_name = 1.0, None
        length = math.dist(p0, p1)
        dz = p1[2] - p0[2]
        for name, z0, z1, horizontal in checks:
            # The can [zb, zb + H] overlaps [z0, z1] vertically only while zb in (z0 - H, z1): an interval
            # of s, since zb is linear in s. Outside it nothing can be hit; search only inside.
            span = _linear_interval(p0[2], dz, z0 - self.height, z1, best_s)
            if span is None:
                continue

            def gap(s: float, z0: float = z0, z1: float = z1, horizontal: Callable = horizontal) -> float:
                x, y, zb = _lerp(p0, p1, s)
                return max(horizontal(x, y), _z_gap(zb, self.height, z0, z1))

            s = _first_overlap(gap, span, length)
            if s is not None and s < best_s:
                best_s, best_name = s, name
        return best_s, best_name

    def _prism_gap_xy(self, prism: Prism) -> Callable[[float, float], float]:
        def gap(x: float, y: float) -> float:
            u, v = self.layout.to_box_frame(x, y)
            return rect_distance(u, v, prism) - self.radius

        return gap

    def _near_box(self, p0: Point, p1: Point) -> bool:
        """Whether the move's bounding circle can reach the box at all."""
        mid = ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2)
        half = math.hypot(p1[0] - p0[0], p1[1] - p0[1]) / 2
        dist = math.hypot(mid[0] - self.layout.box_x, mid[1] - self.layout.box_y)
        return dist <= half + self._box_reach + self.radius + 1e-6

    # --- dropping a released can ---------------------------------------------------------------------

    def support(self, p: Point, others: dict[str, Point]) -> tuple[float, str, str]:
        """What a can at `p` lands on when it drops straight down.

        Everything whose footprint overlaps the can's (by more than EPS) and whose top is not above the
        can's bottom is a candidate; the highest one wins. A free can (the invariant) has no overlapping
        solid above its bottom, so the fall passes through nothing.

        Returns:
            (z, kind, name): landing height of the can bottom; kind is "table", "floor", "wall" or "can";
            name the solid's name ("table", "floor", "wall -y", "can_2", ...).
        """
        best = (self.layout.table_z, "table", "table")
        u, v = self.layout.to_box_frame(p[0], p[1])
        for prism in self.prisms:
            if (
                prism.z1 <= p[2] + EPS
                and prism.z1 > best[0]
                and rect_distance(u, v, prism) < self.radius - EPS
            ):
                best = (prism.z1, prism.kind, prism.name)
        for name, q in others.items():
            top = q[2] + self.height
            if top <= p[2] + EPS and top > best[0]:
                if math.hypot(p[0] - q[0], p[1] - q[1]) < 2 * self.radius - EPS:
                    best = (top, "can", name)
        return best

    def compartment_of(self, p: Point) -> int | None:
        """Index of the compartment whose inner square holds the can's axis, or None."""
        u, v = self.layout.to_box_frame(p[0], p[1])
        half = self.layout.compartment_inner / 2
        if abs(v) > half:
            return None
        for k in range(self.layout.compartments):
            if abs(u - self.layout.compartment_u(k)) <= half:
                return k
        return None

    def side_clearances(self, p: Point, k: int) -> dict[str, float]:
        """Gap between the can and each wall of compartment k, box frame: keys "-x", "+x", "-y", "+y" (m)."""
        u, v = self.layout.to_box_frame(p[0], p[1])
        half, r = self.layout.compartment_inner / 2, self.radius
        du = u - self.layout.compartment_u(k)
        return {"-x": half + du - r, "+x": half - du - r, "-y": half + v - r, "+y": half - v - r}


def _lerp(p0: Point, p1: Point, s: float) -> Point:
    return (p0[0] + s * (p1[0] - p0[0]), p0[1] + s * (p1[1] - p0[1]), p0[2] + s * (p1[2] - p0[2]))


def _circle_gap_xy(centre: Point, distance: float) -> Callable[[float, float], float]:
    return lambda x, y: math.hypot(x - centre[0], y - centre[1]) - distance


def _linear_interval(z: float, dz: float, lo: float, hi: float, s_max: float) -> tuple[float, float] | None:
    """The s in [0, s_max] with lo <= z + s dz <= hi (widened by a hair for rounding), or None."""
    if dz == 0.0:
        return (0.0, s_max) if lo <= z <= hi else None
    a, b = (lo - z) / dz, (hi - z) / dz
    a, b = min(a, b) - 1e-9, max(a, b) + 1e-9
    a, b = max(a, 0.0), min(b, s_max)
    return (a, b) if a <= b else None


def _first_overlap(gap: Callable[[float], float], span: tuple[float, float], length: float) -> float | None:
    """Largest s such that gap < -EPS nowhere on [0, s], if gap < -EPS somewhere in `span`; else None.

    `gap` is convex in s and gap(0) >= -EPS (the start is free), so the overlap is one interval. A
    clearance is 1-Lipschitz in position, so on a bracket [a, b] gap >= min(gap(a), gap(b)) - (b - a)
    * length / 2: a solid farther away than the move is long costs two evaluations (the common case at
    50 Hz), and the minimum search stops as soon as its bracket cannot dip below -EPS.
    """
    a, b = span
    ga, gb = gap(a), gap(b)
    hit = b if gb < -EPS else a if ga < -EPS else None
    for _ in range(_MAX_SEARCH):
        if hit is not None:
            break
        if min(ga, gb) - (b - a) * length / 2 >= -EPS:
            return None
        m1, m2 = a + (b - a) / 3, b - (b - a) / 3
        g1, g2 = gap(m1), gap(m2)
        if g1 < -EPS or g2 < -EPS:
            hit = m1 if g1 < -EPS else m2
        elif g1 <= g2:
            b, gb = m2, g2
        else:
            a, ga = m1, g1
    if hit is None:
        return None  # the bracket shrank to rounding noise: the solids touch at most
    # Bisect between a free point and the hit, keeping lo on the free side.
    lo = span[0] if span[0] < hit and gap(span[0]) >= -EPS else 0.0
    while (hit - lo) * length > 1e-10:
        mid = (lo + hit) / 2
        if gap(mid) < -EPS:
            hit = mid
        else:
            lo = mid
    return lo
