"""What the behaviour tree needs from the cell config: where to pick each can and where to put it.

`load_cell_targets("config/cell.yaml")` reads the layout from the params-file section the simulator
reads (the one for ``/salamander/cell_sim``: ``/**/cell_sim``; `salamander_control.cell.layout`) and
returns a frozen `CellTargets`. All targets are
TCP (suction pad tip) positions in base_link, metres, for the pad pointing straight down (tool pitch 0).
A can is an upright cylinder, so the tool yaw is free; the tree may use atan2(y, x) of the target, which
keeps wrist_yaw at zero.

Conventions (the config's `pick_dz`, `place_dz`, `release_dz`):

- ``contact``: the pad on the can top, z = table_z + can_height.
- ``above``: z = contact z + pick_dz. The lifted can's bottom is then pick_dz above the table, above
  the standing cans and the box rim (the config refuses a pick_dz that is not).
- ``approach``: z = contact z + approach_dz (at most pick_dz): where the empty pad's transit ends and
  its descent onto the can begins. The empty pad is then approach_dz above the standing cans' tops (a
  can placed stands floor_thickness higher); the tree ends its transit there when the joint path to it
  keeps the pad at least that high (salamander_behavior.plan), else at ``above``.
- ``place_above``: over compartment k's centre with the can bottom place_dz above the compartment
  floor: z = floor_top + place_dz + can_height, where floor_top = table_z + floor_thickness. The can
  clears the rim and the cans already placed (place_dz > can_height is enforced).
- ``depart``: straight below place_above, the empty pad approach_dz above the placed cans' tops:
  z = floor_top + can_height + approach_dz. The rise after a release may hand on to the next can's
  transit from there (salamander_behavior.tree, `rise_handoff`): the pad is clear of every placed can.
- ``place_release``: straight below place_above, the can bottom release_dz above the floor:
  z = floor_top + release_dz + can_height, i.e.
  **place_release z = place_above z + (release_dz - place_dz)**. The tree switches the vacuum off there
  and the can drops release_dz onto the floor with side_clearance per side.
- ``rim_pass_z``: the TCP z at which a held can's bottom is level with the box rim and the divider tops
  (they are one height): z = rim_z + can_height. A can off its compartment meets the rim there; the
  tree's guarded pass spans a band around it.
- ``travel_z``: the lowest z at which a held can clears everything between the pick row and the box:
  the higher of every above and place_above. Move between them at or above it.
- ``lift_clear_z``: the TCP z at which a held can's bottom is level with the higher of the standing
  cans' tops and the box rim: z = contact z + max(can_height, rim height above the table). The lift to
  above (pick_dz, which the config requires to exceed both) ends above it.
- ``can_tops_z``: the TCP z at which a held can's bottom is level with the highest can top, standing or
  placed: z = max(table_z, floor_top) + 2 * can_height. Below it a held can must keep sideways clear of
  every can that may stand there (salamander_behavior.plan, `low_carry_end`).

Can i (``can_i``, config order) belongs in compartment i. The tree waits for the gripper's part-present
switch (the hardware contract), never for the simulator's settle times, which this module does not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from salamander_control.cell.layout import NODE_FQN, CellLayout, load_cell_layout

Point = tuple[float, float, float]


@dataclass(frozen=True)
class PickTarget:
    """TCP targets for picking one can."""

    can: str
    xy: tuple[float, float]
    above: Point
    contact: Point
    approach: Point | None = None
    """Where the empty pad's descent onto the can begins (None: at ``above``)."""


@dataclass(frozen=True)
class PlaceTarget:
    """TCP targets for placing into one compartment."""

    compartment: int
    centre: tuple[float, float]
    place_above: Point
    place_release: Point
    depart: Point | None = None
    """Where the empty pad's rise may hand on to the next transit (None: only near place_above)."""


@dataclass(frozen=True)
class CellTargets:
    """Everything the pick-and-place tree reads from the cell config (see the module conventions)."""

    picks: tuple[PickTarget, ...]
    places: tuple[PlaceTarget, ...]
    travel_z: float
    pick_dz: float
    place_dz: float
    release_dz: float
    rim_pass_z: float
    lift_clear_z: float
    can_tops_z: float
    can_diameter: float

    def pairs(self) -> tuple[tuple[PickTarget, PlaceTarget], ...]:
        """(pick, place) for each can in order: can i into compartment i."""
        return tuple(zip(self.picks, self.places, strict=True))


def cell_targets(lay: CellLayout) -> CellTargets:
    """The targets of a layout."""
    contact_z = lay.table_z + lay.can_height
    picks = tuple(
        PickTarget(cid, (x, y), (x, y, contact_z + lay.pick_dz), (x, y, contact_z),
                   (x, y, contact_z + lay.approach_dz))  # fmt: skip
        for cid, (x, y) in zip(lay.can_ids, lay.can_xy, strict=True)
    )
    above_z = lay.floor_top + lay.place_dz + lay.can_height
    release_z = above_z + (lay.release_dz - lay.place_dz)
    places = []
    for k in range(lay.compartments):
        x, y = lay.compartment_centre(k)
        depart = (x, y, lay.floor_top + lay.can_height + lay.approach_dz)
        places.append(PlaceTarget(k, (x, y), (x, y, above_z), (x, y, release_z), depart))
    return CellTargets(
        picks=picks,
        places=tuple(places),
        travel_z=max(above_z, contact_z + lay.pick_dz),
        pick_dz=lay.pick_dz,
        place_dz=lay.place_dz,
        release_dz=lay.release_dz,
        rim_pass_z=lay.rim_z + lay.can_height,
        lift_clear_z=contact_z + max(lay.can_height, lay.rim_z - lay.table_z),
        can_tops_z=max(lay.table_z, lay.floor_top) + 2 * lay.can_height,
        can_diameter=lay.can_diameter,
    )


def load_cell_targets(path: str | Path, node_fqn: str = NODE_FQN) -> CellTargets:
    """Read a params file (config/cell.yaml) and return the pick-and-place targets.

    Raises:
        OSError: the file cannot be read.
        ValueError: the file or a value in it is invalid; the message names the file and the problem.
    """
    return cell_targets(load_cell_layout(path, node_fqn))
