"""What the cell looks like: shapes and colours for rviz, without any message type.

The node turns each `Shape` into a visualization_msgs/Marker in base_link (ns and id are stable, so
rviz replaces each one in place). Colours tell a can's state at a glance:

| can | colour |
|---|---|
| standing where it started, or on the table | silver |
| on the pad | yellow |
| in a compartment, clear of the walls | green |
| in a compartment, touching a wall | orange |
| on the rim, on another can | red |

Each can also has a text label above it with its id and, after a placement, the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from salamander_sim.cell.engine import CellEngine

RGBA = tuple[float, float, float, float]

SILVER: RGBA = (0.75, 0.75, 0.78, 1.0)
YELLOW: RGBA = (1.0, 0.85, 0.1, 1.0)
GREEN: RGBA = (0.2, 0.8, 0.2, 1.0)
ORANGE: RGBA = (1.0, 0.55, 0.0, 1.0)
RED: RGBA = (0.9, 0.1, 0.1, 1.0)
BOX: RGBA = (0.55, 0.4, 0.25, 1.0)
FLOOR: RGBA = (0.45, 0.32, 0.2, 1.0)
TABLE: RGBA = (0.35, 0.35, 0.38, 1.0)
TEXT: RGBA = (1.0, 1.0, 1.0, 1.0)

TABLE_SIZE = 1.2
"""Side of the drawn table slab (m); the simulated table itself is unbounded."""
TABLE_SLAB = 0.01
"""Thickness of the drawn table slab (m), just below the surface."""


@dataclass(frozen=True)
class Shape:
    """One drawable: kind is "cylinder", "cube" or "text"; position is the centre, base_link."""

    ns: str
    id: int
    kind: str
    position: tuple[float, float, float]
    yaw: float
    size: tuple[float, float, float]
    rgba: RGBA
    text: str = ""
    quat: tuple[float, float, float, float] | None = None
    """The attitude (w, x, y, z) when it is not a turn about +z by `yaw` (a tilted can)."""


def can_colour(model: CellEngine, can: str) -> RGBA:
    """The colour of a can in its current state (see the module table)."""
    if model.held == can:
        return YELLOW
    placement = model.placement(can)
    if placement is None or placement.result == "on_table":
        return SILVER
    return {"in_box_clear": GREEN, "in_box_touching": ORANGE}.get(placement.result, RED)


def static_shapes(model: CellEngine) -> list[Shape]:
    """The table slab, the box floor and walls (they never move)."""
    lay = model.layout
    shapes = [
        Shape(
            "table",
            0,
            "cube",
            (0.0, 0.0, lay.table_z - TABLE_SLAB / 2),
            0.0,
            (TABLE_SIZE, TABLE_SIZE, TABLE_SLAB),
            TABLE,
        ),
    ]
    for i, prism in enumerate(model.geometry.prisms):
        x, y = lay.from_box_frame(prism.u, prism.v)
        colour = FLOOR if prism.kind == "floor" else BOX
        shapes.append(
            Shape(
                "box",
                i,
                "cube",
                (x, y, (prism.z0 + prism.z1) / 2),
                lay.box_yaw,
                (2 * prism.hu, 2 * prism.hv, prism.z1 - prism.z0),
                colour,
            )
        )
    return shapes


def can_shapes(model: CellEngine) -> list[Shape]:
    """A cylinder and a label per can, coloured by state."""
    lay = model.layout
    d, h = lay.can_diameter, lay.can_height
    shapes = []
    for i, (cid, (x, y, z)) in enumerate(model.positions().items()):
        quat = model.orientation(cid)
        w, qx, qy, qz = quat
        # The centre: the bottom centre plus half the height along the can's axis (R(q) * z).
        ax, ay, az = 2 * (qx * qz + w * qy), 2 * (qy * qz - w * qx), 1 - 2 * (qx * qx + qy * qy)
        centre = (round(x + ax * h / 2, 5), round(y + ay * h / 2, 5), round(z + az * h / 2, 5))
        upright = abs(qx) < 1e-4 and abs(qy) < 1e-4
        shapes.append(
            Shape(
                "cans",
                i,
                "cylinder",
                centre,
                0.0,
                (d, d, h),
                can_colour(model, cid),
                quat=None if upright else tuple(round(v, 4) for v in quat),  # type: ignore[arg-type]
            )
        )
        placement = model.placement(cid)
        label = cid if model.held == cid or placement is None else f"{cid}: {placement.text.split(' (')[0]}"
        shapes.append(Shape("labels", i, "text", (x, y, z + h + 0.03), 0.0, (0.0, 0.0, 0.02), TEXT, label))
    return shapes


def scene(model: CellEngine) -> list[Shape]:
    """Everything to draw."""
    return static_shapes(model) + can_shapes(model)
