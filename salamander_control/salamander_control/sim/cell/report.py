"""The cell's state as plain data: what `/salamander/cell/state` carries (std_msgs/String, JSON).

One JSON object per message::

    {
      "t": 12.34,                    # seconds since the simulator started (monotonic)
      "vacuum": true,                # vacuum switched on (the pad may still be holding after "off")
      "held": "can_0",               # id of the can on the pad, or null
      "contact": "can_0",            # can whose top the pad is on (gripping in progress or held), or null
      "box": {"xy": [0.381, -0.179],  # the box's TRUE pose (base_link, m, rad): the configured
              "yaw": 0.002},         # box_x, box_y, box_yaw plus the drawn and the fixed error
                                     # (sim/cell/uncertainty.py); the tree's targets use the configured one
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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from salamander_control.sim.cell.engine import CellEngine
    from salamander_control.sim.cell.model import Placement


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


def state_dict(model: CellEngine) -> dict[str, Any]:
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
