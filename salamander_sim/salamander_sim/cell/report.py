"""The cell's outcomes and state as plain data: what `/salamander/cell/state` carries (JSON).

`Placement` (where a can came to rest), `CellEvent` (what happened) and `OUTCOME_TEXT` are the values
both engines report; `state_dict` renders an engine's state in the format below.

One JSON object per message::

    {
      "t": 12.34,                    # seconds since the simulator started (monotonic)
      "vacuum": true,                # vacuum switched on (the pad may still be holding after "off")
      "held": "can_0",               # id of the can on the pad, or null
      "contact": "can_0",            # can whose top the pad is on (gripping in progress or held), or null
      "box": {"xy": [0.381, -0.179],  # the box's TRUE pose (base_link, m, rad): the configured
              "yaw": 0.002},         # box_x, box_y, box_yaw plus the drawn and the fixed error
                                     # (cell/uncertainty.py); the tree's targets use the configured one
      "cans": [
        {
          "id": "can_0",
          "position": [0.3, 0.18, -0.18],   # bottom centre of the can, base_link, m
          "attached": true,                 # on the pad
          "on": "gripper",                  # "gripper", "table", "floor", a wall ("wall -y",
                                            # "divider 0|1", ...), another can's id, or "moving"
                                            # (physics: left the pad or was pushed, not at rest yet)
          "outcome": null                   # the last placement, null at the start and while held:
        }                                   # {"result", "text", "compartment", "clearance_mm",
      ]                                     #  "knocked_off_by"}
    }

`outcome.result` is one of "in_box_clear" ("in box, clear of walls"), "in_box_touching" ("touched a
wall"), "on_rim", "on_can", "on_table", and from the physics engine also "tipped" (lying or leaning
more than `physics.TIPPED_TILT` from upright, wherever) and "dropped" (came off the pad without a
release and rests on the table: dropped in transit); `knocked_off_by` names what the can hit when it
came off the pad without a release (null after a release, or when it was torn off by its own
inertia); `position` is the centre of the can's bottom face, also for a tilted can. `clearance_mm`
maps the compartment's sides in the box frame ("-x", "+x", "-y", "+y"; the box frame is base_link's
turned by box_yaw, the TRUE box's) to the gap in mm (for a tilted can: the part below the rim), and
`compartment` is the compartment's index, both only for the in_box results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from salamander_sim.cell.config import CellLayout
from salamander_sim.cell.geometry import Point

OUTCOME_TEXT = {
    "in_box_clear": "in box, clear of walls",
    "in_box_touching": "touched a wall",
    "on_rim": "on the box rim",
    "on_can": "on top of another can",
    "on_table": "on the table",
    "tipped": "tipped over",
    "dropped": "dropped in transit, on the table",
}
"""Placement results and how the cell reports them ("tipped" and "dropped" only from the physics engine)."""


@dataclass(frozen=True)
class Placement:
    """Where a can came to rest after it left the pad.

    Attributes:
        result: a key of OUTCOME_TEXT.
        position: the can's bottom centre after landing (base_link, m).
        support: what it stands on ("table", "floor", a wall's name, a can's id).
        compartment: index of the compartment it is in (in_box_*), else None.
        clearance: gap to each compartment wall, box frame "-x", "+x", "-y", "+y" (m), for in_box_*.
        knocked_off_by: the solid that knocked it off the pad, or None after a normal release.
    """

    result: str
    position: Point
    support: str
    compartment: int | None = None
    clearance: dict[str, float] | None = None
    knocked_off_by: str | None = None

    @property
    def text(self) -> str:
        """One line for logs and the state topic."""
        words = OUTCOME_TEXT[self.result]
        if self.result == "on_can":
            words = f"on top of {self.support}"
        if self.result == "on_rim":
            words = f"on the box rim ({self.support})"
        if self.compartment is not None and self.clearance is not None:
            gaps = ", ".join(f"{k} {v * 1000:.2f}" for k, v in self.clearance.items())
            words += f" (compartment {self.compartment}; clearance mm: {gaps})"
        if self.knocked_off_by:
            words = f"knocked off by {self.knocked_off_by}, {words}"
        return words


@dataclass(frozen=True)
class CellEvent:
    """Something that happened (one log line).

    `kind` is "vacuum", "gripped", "knocked_off", "released", "fell" (either engine), "left_pad",
    "moved" (physics) or "skipped" (time passed without simulation: the engines' `skip`).
    """

    t: float
    kind: str
    can: str | None
    text: str
    placement: Placement | None = None



class Reported(Protocol):
    """What the state report reads of an engine (both engines are one; `engine.CellEngine`)."""

    layout: CellLayout
    t: float
    vacuum: bool

    @property
    def held(self) -> str | None:
        """The can on the pad, or None."""

    @property
    def contact(self) -> str | None:
        """The can whose top the pad is on, or None."""

    def positions(self) -> dict[str, Point]:
        """Each can's bottom centre (base_link, m)."""

    def placement(self, can: str) -> Placement | None:
        """A can's last placement."""

    def support(self, can: str) -> str:
        """What a can stands on."""



def placement_dict(placement: Placement | None) -> dict[str, Any] | None:
    """A Placement as JSON-ready data (positions in m to 10 um, clearances in mm to 1 um)."""
    if placement is None:
        return None
    clearance = None
    if placement.clearance is not None:
        clearance = {side: round(gap * 1000.0, 3) for side, gap in placement.clearance.items()}
    return {
        "result": placement.result,
        "text": placement.text,
        "compartment": placement.compartment,
        "clearance_mm": clearance,
        "knocked_off_by": placement.knocked_off_by,
    }


def state_dict(model: Reported) -> dict[str, Any]:
    """The model's state in the documented format."""
    held, lay = model.held, model.layout
    return {
        "t": round(model.t, 3),
        "vacuum": model.vacuum,
        "held": held,
        "contact": model.contact,
        "box": {"xy": [round(lay.box_x, 6), round(lay.box_y, 6)], "yaw": round(lay.box_yaw, 6)},
        "cans": [
            {
                "id": cid,
                "position": [round(v, 5) for v in pos],
                "attached": cid == held,
                "on": model.support(cid),
                "outcome": placement_dict(model.placement(cid)),
            }
            for cid, pos in model.positions().items()
        ],
    }
