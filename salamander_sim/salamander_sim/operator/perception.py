"""What the simulated operator sees: the ManualAdjust wait, and where the held can is over its compartment.

Two sources, both read-only views a person at the cell has:

- **The wait**, from the behaviour server's tree snapshot (`/salamander/behavior/tree`, the text the
  operator view shows): ManualAdjust waits while its line reads
  ``ManualAdjust[<name>] [*] -- waiting for the operator: offset [x, y, z] mm, ...``
  (`salamander_behavior.manual_adjust.behavior`; the layout is the server's `snapshot_text`, pinned
  against this reader by test/test_sim_operator_snapshot.py). After a confirmation the leaf still runs
  but reads "confirmed; finishing the nudge": that is no longer a wait.
- **The scene**, from the simulated cell's ground truth (`/salamander/cell/state`, JSON,
  `salamander_sim.cell.report`): which can is on the pad and its true bottom centre, and the
  true box pose (the top-level ``"box": {"xy": [x, y], "yaw": yaw}``). A state without ``"box"`` (a cell
  that models no box error) means the box stands where the cell config puts it.

`placement_error` turns a scene into what the person judges: the XY vector from the held can's axis to
the centre of the compartment it hangs over (the nearest one, in the true box), in base_link, which is
also the direction the place jog moves the can. The compartments' positions in the box come from the
cell config (`CellLayout`), the same file the cell and the tree read. Pure; bad text raises ValueError.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from salamander_control.cell.layout import CellLayout
from salamander_control.manual_wait import WAIT_OFFSET

_WAIT = re.compile(r"ManualAdjust\[(?P<name>[^\]\s]+)\] \[\*\] -- " + WAIT_OFFSET)


@dataclass(frozen=True)
class Wait:
    """A ManualAdjust waiting for the operator: its name (``place_can_0``) and the offset it shows (m)."""

    name: str
    offset: tuple[float, float, float]


def read_wait(snapshot: str) -> Wait | None:
    """The ManualAdjust waiting in a tree snapshot, or None when none waits."""
    match = _WAIT.search(snapshot)
    if match is None:
        return None
    offset = tuple(float(match[axis]) / 1000.0 for axis in "xyz")
    return Wait(match["name"], (offset[0], offset[1], offset[2]))


@dataclass(frozen=True)
class BoxPose:
    """The box footprint's centre (base_link, m) and its yaw about +z (rad)."""

    x: float
    y: float
    yaw: float

    def to_base(self, u: float, v: float) -> tuple[float, float]:
        """A box-frame point in base_link."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return (self.x + c * u - s * v, self.y + s * u + c * v)


@dataclass(frozen=True)
class CellView:
    """One ground-truth state of the cell, as far as the operator looks at it.

    Attributes:
        t: the cell's clock (s since it started).
        held: the can on the pad, or None.
        held_xy: that can's true bottom centre, XY in base_link (m), or None.
        box: the true box pose, or None when the state does not say (the box is where the config says).
    """

    t: float
    held: str | None
    held_xy: tuple[float, float] | None
    box: BoxPose | None


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def read_cell_state(text: str) -> CellView:
    """Parse one `/salamander/cell/state` message.

    Raises:
        ValueError: not JSON, or a field the operator reads is missing or malformed (the message says which).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"cell state is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("cell state must be a JSON object")
    t = _number(data.get("t"), "cell state 't'")
    held = data.get("held")
    if held is not None and not isinstance(held, str):
        raise ValueError(f"cell state 'held' must be a can id or null, got {held!r}")
    cans = data.get("cans")
    if not isinstance(cans, list):
        raise ValueError("cell state 'cans' must be a list")
    held_xy = None
    if held is not None:
        can = next((c for c in cans if isinstance(c, dict) and c.get("id") == held), None)
        if can is None:
            raise ValueError(f"cell state holds {held!r} but lists no such can")
        position = can.get("position")
        if not isinstance(position, list) or len(position) != 3:
            raise ValueError(f"cell state: {held} 'position' must be [x, y, z], got {position!r}")
        held_xy = (_number(position[0], f"{held} x"), _number(position[1], f"{held} y"))
    box = None
    if "box" in data:
        raw = data["box"]
        xy = raw.get("xy") if isinstance(raw, dict) else None
        if not isinstance(xy, list) or len(xy) != 2:
            raise ValueError(f"cell state 'box' must be {{'xy': [x, y], 'yaw': yaw}}, got {raw!r}")
        box = BoxPose(_number(xy[0], "box x"), _number(xy[1], "box y"), _number(raw.get("yaw"), "box yaw"))
    return CellView(t, held, held_xy, box)


@dataclass(frozen=True)
class PlacementError:
    """Where the held can hangs: the compartment under it and the XY vector from its axis to the centre."""

    compartment: int
    dx: float
    dy: float

    @property
    def norm(self) -> float:
        """Distance from the can's axis to the compartment's centre, m."""
        return math.hypot(self.dx, self.dy)


def placement_error(view: CellView, layout: CellLayout) -> PlacementError | None:
    """The true offset from the held can to the centre of the compartment it is over; None with no can held.

    The compartment is the nearest one of the true box (compartments are a can diameter and more apart,
    so over a compartment there is no doubt which one is meant).
    """
    if view.held_xy is None:
        return None
    box = view.box or BoxPose(layout.box_x, layout.box_y, layout.box_yaw)
    hx, hy = view.held_xy
    centres = [box.to_base(layout.compartment_u(k), 0.0) for k in range(layout.compartments)]
    k = min(range(len(centres)), key=lambda i: math.dist(centres[i], (hx, hy)))
    cx, cy = centres[k]
    return PlacementError(k, cx - hx, cy - hy)
