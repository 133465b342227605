"""Render the arm's reachable workspace in the (r, z) plane for given coupled limits, to a PNG.

The region is the image of the feasible (q1, q2) polygon (`polygon_vertices`) under the FK: each edge is
mapped through `forward_kinematics_batch` and coloured by the limit it lies on, so an operator tuning
``alpha_max``/``beta_max`` sees which limit shapes which part of the reach. The point shown is the TCP with
the pad straight down (tool pitch 0), what pick-and-place targets use (``--frame wrist``: the wrist axis).
``--compare-alpha-max``/``--compare-beta-max`` overlay a second setting: hatched is what it loses, dotted
what it gains. Example::

    workspace_plot --compare-alpha-max 1.30 --out docs/workspace.png
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon
from matplotlib.path import Path as MplPath

from salamander_control.kinematics import (
    REST_POSTURE,
    ArmParams,
    Bound,
    forward_kinematics_batch,
    polygon_vertices,
    violated_bounds,
)

COLLINEAR = "collinear"
"""Label of a piece edge on q1 - q2 = +-pi/2 (links in line): a seam between elbow branches, not a limit."""
SPEC_POINTS: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("rest (0, -45°, 33.8°)", REST_POSTURE),
    ("spec point (0, 80°, 30°)", (0.0, math.radians(80.0), math.radians(30.0), 0.0, 0.0)),
)
"""The reference postures of docs/arm_model.md; TCP at about (0.0787, 0, 0.0374) and (0.5986, 0, -0.1029)."""
STYLE: dict[str, tuple[str, str]] = {  # colour, legend text (formatted with the ArmParams fields)
    Bound.Q1_MIN.value: ("#1f77b4", "q1_min = {q1_min:+.2f}: shoulder fully back"),
    Bound.Q1_MAX.value: ("#17becf", "q1_max = {q1_max:+.2f}: shoulder fully forward"),
    Bound.Q2_MIN.value: ("#2ca02c", "q2_min = {q2_min:+.2f}: beam at its highest"),
    Bound.Q2_MAX.value: ("#9467bd", "q2_max = {q2_max:+.2f}: beam at its lowest"),
    Bound.ALPHA_MAX.value: ("#d62728", "alpha_max = {alpha_max:.2f}: q2 - q1 (coupled; beam low, arm back)"),
    Bound.BETA_MAX.value: ("#ff7f0e", "beta_max = {beta_max:.2f}: q1 - q2 (coupled; beam high, arm fwd)"),
    COLLINEAR: ("#7f7f7f", "links in line (not a limit; elbow-branch seam)"),
}
LabelledVertex = tuple[float, float, str]
"""(q1, q2, bound of the polygon edge from this vertex to the next)."""
_FILL, _LOST = "#dce8f4", "#b22222"


class Segment(NamedTuple):
    """One boundary edge of the region: the bound it lies on and its (r, z) polyline, m."""

    bound: str
    r: np.ndarray
    z: np.ndarray


def labelled_polygon(params: ArmParams) -> list[LabelledVertex]:
    """`polygon_vertices` with each edge's bound (the one its midpoint crosses when nudged outwards)."""
    verts = polygon_vertices(params)  # counter-clockwise, so the outward normal is (dq2, -dq1)
    out = []
    for (a1, a2), (b1, b2) in zip(verts, verts[1:] + verts[:1], strict=True):
        length = math.hypot(b1 - a1, b2 - a2)
        if length > 1e-9:
            nudge = 1e-7 / length
            mid = (0.5 * (a1 + b1) + nudge * (b2 - a2), 0.5 * (a2 + b2) - nudge * (b1 - a1))
            out.append((a1, a2, violated_bounds(*mid, params)[0].value))
    return out


def _clip(poly: list[LabelledVertex], a1: float, a2: float, rhs: float) -> list[LabelledVertex]:
    """Keep the part of a convex labelled polygon where a1*q1 + a2*q2 <= rhs; the cut edge is COLLINEAR."""
    out = []
    for (x0, y0, label), (x1, y1, _) in zip(poly, poly[1:] + poly[:1], strict=True):
        f0, f1 = a1 * x0 + a2 * y0 - rhs, a1 * x1 + a2 * y1 - rhs
        if f0 <= 0.0:
            out.append((x0, y0, label))
        if (f0 <= 0.0) != (f1 <= 0.0):
            t = f0 / (f0 - f1)
            out.append((x0 + t * (x1 - x0), y0 + t * (y1 - y0), COLLINEAR if f0 <= 0.0 else label))
    return out


def joint_pieces(params: ArmParams) -> list[list[LabelledVertex]]:
    """The feasible polygon split where the links fall in line (q1 - q2 = +-pi/2).

    Each piece lies on one elbow branch, where the FK is one-to-one, so its boundary maps onto the
    boundary of its image. With alpha_max, beta_max < pi/2 (the defaults) there is a single piece.
    """
    hp = 0.5 * math.pi  # pieces: q1 - q2 <= -pi/2, |q1 - q2| <= pi/2, q1 - q2 >= pi/2
    pieces = []
    for planes in (((1.0, -1.0, -hp),), ((-1.0, 1.0, hp), (1.0, -1.0, hp)), ((-1.0, 1.0, -hp),)):
        piece = labelled_polygon(params)
        for a1, a2, rhs in planes:
            piece = _clip(piece, a1, a2, rhs) if len(piece) >= 3 else []
        if len(piece) >= 3 and _area(np.array([(x, y) for x, y, _ in piece])) > 1e-12:
            pieces.append(piece)
    return pieces


def plane_points(q1: np.ndarray, q2: np.ndarray, params: ArmParams, frame: str = "tcp") -> np.ndarray:
    """(N, 2) points (r, z) of the TCP with tool pitch 0 (``frame="tcp"``) or of the wrist axis."""
    q = np.zeros((len(q1), 5))
    q[:, 1], q[:, 2] = q1, q2
    tcp = forward_kinematics_batch(q, params).tcp
    return np.column_stack((tcp[:, 0], tcp[:, 2] + (params.tool_drop if frame == "wrist" else 0.0)))


def _piece_segments(params: ArmParams, frame: str, step: float) -> list[list[Segment]]:
    out = []
    for piece in joint_pieces(params):
        segs = []
        for (a1, a2, bound), (b1, b2, _) in zip(piece, piece[1:] + piece[:1], strict=True):
            if (length := math.hypot(b1 - a1, b2 - a2)) > 1e-9:
                n = max(2, math.ceil(length / step) + 1)
                pts = plane_points(np.linspace(a1, b1, n), np.linspace(a2, b2, n), params, frame)
                segs.append(Segment(bound, pts[:, 0], pts[:, 1]))
        out.append(segs)
    return out


def boundary_segments(params: ArmParams, frame: str = "tcp", step: float = 0.005) -> list[Segment]:
    """The region's boundary as per-bound (r, z) polylines, sampled every `step` rad in joint space."""
    return [seg for piece in _piece_segments(params, frame, step) for seg in piece]


def region_outlines(params: ArmParams, frame: str = "tcp", step: float = 0.005) -> list[np.ndarray]:
    """Closed (M, 2) outlines whose union is the reachable region (one per elbow-branch piece)."""
    pieces = _piece_segments(params, frame, step)
    return [np.vstack([np.column_stack((s.r, s.z)) for s in segs]) for segs in pieces]


def _area(outline: np.ndarray) -> float:
    x, y = outline[:, 0], outline[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def region_area(params: ArmParams, frame: str = "tcp") -> float:
    """Area of the region, m^2 (pieces summed: overlaps, possible only past pi/2, count twice)."""
    return sum(_area(o) for o in region_outlines(params, frame))


def contains(params: ArmParams, points: np.ndarray, frame: str = "tcp", margin: float = 0.0) -> np.ndarray:
    """Whether each (r, z) of `points` (N, 2) lies in the region or within `margin` m of its outline."""
    points = np.atleast_2d(points)
    inside = np.zeros(len(points), dtype=bool)
    for outline in region_outlines(params, frame, step=0.002):
        # matplotlib widens the outline by radius / 2, growing or shrinking it with the path's orientation.
        path = MplPath(outline)
        for radius in (2.0 * margin, -2.0 * margin):
            inside |= path.contains_points(points, radius=radius)
    return inside


def _setting(p: ArmParams) -> str:
    return f"alpha_max {p.alpha_max:.2f}, beta_max {p.beta_max:.2f}"


def _draw_regions(ax: Axes, params: ArmParams, compare: ArmParams | None, frame: str) -> list[Artist]:
    """Fill the region; with `compare`: hatch what it loses, dot what it gains, dash its outline."""
    a_patches = [ax.add_patch(Polygon(o, facecolor=_FILL, lw=0)) for o in region_outlines(params, frame)]
    what = "TCP, pad straight down" if frame == "tcp" else "wrist axis"
    handles: list[Artist] = [Patch(facecolor=_FILL, label=f"reachable {what}: {_setting(params)}")]
    if compare is None:
        return handles
    b_out, tag = region_outlines(compare, frame), f"compare {_setting(compare)}"
    for outline in b_out:  # dotted where `compare` reaches; the part both reach is repainted plain below
        ax.add_patch(Polygon(outline, facecolor="none", lw=0, hatch="..", hatchcolor="#333", zorder=2))
    for patch in a_patches:
        ax.add_patch(Polygon(patch.get_xy(), facecolor="none", lw=0, hatch="//", hatchcolor=_LOST, zorder=2))
        for outline in b_out:
            ax.add_patch(Polygon(outline, facecolor=_FILL, lw=0, zorder=3, clip_path=patch))
    for outline in b_out:
        ax.plot(*np.vstack((outline, outline[:1])).T, "k--", lw=1.3, zorder=5)
    handles.append(Line2D([], [], color="k", ls="--", label=f"outline of {tag}"))
    if compare.alpha_max < params.alpha_max or compare.beta_max < params.beta_max:
        handles.append(Patch(facecolor="white", hatch="//", edgecolor=_LOST, label=f"lost with {tag}"))
    if compare.alpha_max > params.alpha_max or compare.beta_max > params.beta_max:
        handles.append(Patch(facecolor="white", hatch="..", edgecolor="#333", label=f"gained with {tag}"))
    return handles


def _draw_edges(ax: Axes, params: ArmParams, frame: str) -> list[Artist]:
    """Draw the boundary coloured by bound; one legend handle per bound present, in STYLE order."""
    first: dict[str, Artist] = {}
    for seg in boundary_segments(params, frame):
        colour, text = STYLE[seg.bound]
        width = 3.2 if seg.bound in (Bound.ALPHA_MAX.value, Bound.BETA_MAX.value) else 2.0
        (line,) = ax.plot(seg.r, seg.z, color=colour, ls="--" if seg.bound == COLLINEAR else "-", lw=width,
                          zorder=6, label=text.format(**asdict(params)))
        first.setdefault(seg.bound, line)
    return [first[b] for b in STYLE if b in first]


def _draw_points(ax: Axes, params: ArmParams, compare: ArmParams | None, frame: str) -> list[Artist]:
    """The arm at rest (stick figure) and the reference points, naming the limits they violate."""
    _, q1, q2, _, _ = REST_POSTURE
    h, l1, l2 = params.base_height, params.upper_arm_length, params.beam_length
    elbow = (l1 * math.sin(q1), h + l1 * math.cos(q1))
    wrist = (elbow[0] + l2 * math.cos(q2), elbow[1] - l2 * math.sin(q2))
    pad = (wrist[0], wrist[1] - (params.tool_drop if frame == "tcp" else 0.0))
    arm = np.array([(0.0, 0.0), (0.0, h), elbow, wrist, pad])
    handles = ax.plot(*arm.T, "-o", color="#555", alpha=0.8, lw=2, ms=4, zorder=7, label="arm at rest")
    for (name, q), marker in zip(SPEC_POINTS, ("*", "D"), strict=True):
        pt = plane_points(np.array([q[1]]), np.array([q[2]]), params, frame)[0]
        bad = [", ".join(b.value for b in violated_bounds(q[1], q[2], p)) for p in (params, compare) if p]
        tags = ("", " with compare") if len(set(bad)) > 1 else ("",)
        parts = [f"outside {b}{t}" for b, t in zip(bad, tags, strict=False) if b]  # stops at the shorter
        note = ": " + "; ".join(parts) if parts else ""
        handles += ax.plot(*pt, marker=marker, ms=14 if marker == "*" else 8, mec="k", ls="none", zorder=8,
                           mfc="white" if any(bad) else "k", label=name + note)
    return handles


def draw(fig: Figure, params: ArmParams, compare: ArmParams | None = None, frame: str = "tcp") -> None:
    """Draw the workspace map of `params` (and the `compare` overlay) on `fig`."""
    ax = fig.add_subplot()
    handles = _draw_regions(ax, params, compare, frame) + _draw_edges(ax, params, frame)
    handles += _draw_points(ax, params, compare, frame)
    area = region_area(params, frame)
    lines = [f"area {area * 1e4:.0f} cm² with {_setting(params)}"]
    if compare is not None:
        area_b = region_area(compare, frame)
        change = (area_b / area - 1.0) * 100.0
        lines.append(f"area {area_b * 1e4:.0f} cm² ({change:+.1f} %) with {_setting(compare)}")
    rest_alpha = math.ceil((REST_POSTURE[2] - REST_POSTURE[1]) * 1000.0) / 1000.0
    lines.append(f"the rest posture needs alpha_max ≥ {rest_alpha:.3f} (its q2 - q1)")
    ax.text(0.01, 0.01, "\n".join(lines), transform=ax.transAxes, ha="left", va="bottom", fontsize=9,
            bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "#bbb"}, zorder=9)
    ax.axhline(0.0, color="#999", lw=0.8, zorder=0)
    ax.set_aspect("equal")
    ax.grid(True, color="#e5e5e5", zorder=0)
    what = "TCP with the pad straight down (tool pitch 0)" if frame == "tcp" else "wrist axis"
    ax.set_title(f"Salamander reachable workspace: {what}")
    ax.set_xlabel("r: horizontal distance from the base yaw axis [m] (the same at every base yaw)")
    ax.set_ylabel("z above base_link [m]")
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncol=2, frameon=False)


def render(
    out: Path, params: ArmParams, compare: ArmParams | None = None, frame: str = "tcp", dpi: int = 150
) -> None:
    """Draw the map and write it to `out` as a PNG (Agg canvas; pyplot's global state is not touched)."""
    fig = Figure(figsize=(10, 8.8), layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig, params, compare, frame)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi, format="png")


def _params(ap: argparse.ArgumentParser, base: ArmParams, alpha: float, beta: float, flags: str) -> ArmParams:
    """`base` with alpha_max/beta_max replaced; a ValueError becomes a usage error (exit status 2)."""
    try:
        return base.with_changes(alpha_max=alpha, beta_max=beta)
    except ValueError as exc:
        ap.error(f"invalid {flags}: {exc}")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (console script ``workspace_plot``); exits with status 2 on bad arguments."""
    parser = argparse.ArgumentParser(prog="workspace_plot", description=__doc__.split("\n\n")[0])
    add, defaults = parser.add_argument, ArmParams()
    add("--alpha-max", type=float, default=defaults.alpha_max, help="bound on q2 - q1, rad (%(default)s)")
    add("--beta-max", type=float, default=defaults.beta_max, help="bound on q1 - q2, rad (%(default)s)")
    add("--compare-alpha-max", type=float, help="overlay a second setting (its beta: --beta-max)")
    add("--compare-beta-max", type=float, help="overlay a second setting (its alpha: --alpha-max)")
    add("--frame", choices=("tcp", "wrist"), default="tcp", help="TCP with pad down (default) or wrist axis")
    add("--out", type=Path, default=Path("workspace.png"), help="PNG to write (default %(default)s)")
    add("--dpi", type=int, default=150)
    args = parser.parse_args(argv)
    params = _params(parser, defaults, args.alpha_max, args.beta_max, "--alpha-max/--beta-max")
    compare = None
    if args.compare_alpha_max is not None or args.compare_beta_max is not None:
        alpha = params.alpha_max if args.compare_alpha_max is None else args.compare_alpha_max
        beta = params.beta_max if args.compare_beta_max is None else args.compare_beta_max
        compare = _params(parser, params, alpha, beta, "--compare-alpha-max/--compare-beta-max")
    if args.dpi <= 0:
        parser.error("--dpi must be positive")
    for p in (params, compare):
        if p is not None and not p.admits_rest():
            print(f"workspace_plot: warning: {_setting(p)} locks out the rest posture", file=sys.stderr)
    try:
        render(args.out, params, compare, args.frame, args.dpi)
    except OSError as exc:
        print(f"workspace_plot: error: cannot write {args.out}: {exc}", file=sys.stderr)
        return 1
    print(f"workspace_plot: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
