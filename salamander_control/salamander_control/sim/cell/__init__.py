"""The simulated work cell: cans, a compartment box and a suction pad, pure Python (no rclpy).

- `config`: the parameter table, `CellLayout`, `SuctionParams`, `load_cell_config` (config/cell.yaml).
- `geometry`: the solids and the checks (swept moves, supports, compartment clearances).
- `model`: `CellModel`, the state machine (grip, follow, release, drop, placement outcomes).
- `params`: the cell_sim node's parameters (the cell's and the arm model's) and their snapshot.
- `report`: the JSON state format of /salamander/cell/state.
- `scene`: shapes and colours for the markers.
- `targets`: `load_cell_targets`, the pick/place TCP targets the behaviour tree uses.

What it is for, and why it is built this way: docs/design/cell_model.md.
"""

from salamander_control.sim.cell.config import (
    CellConfig,
    CellLayout,
    SuctionParams,
    config_from_values,
    load_cell_config,
)
from salamander_control.sim.cell.model import OUTCOME_TEXT, CellEvent, CellModel, Placement
from salamander_control.sim.cell.targets import (
    CellTargets,
    PickTarget,
    PlaceTarget,
    cell_targets,
    load_cell_targets,
)

__all__ = [
    "OUTCOME_TEXT",
    "CellConfig",
    "CellEvent",
    "CellLayout",
    "CellModel",
    "CellTargets",
    "PickTarget",
    "PlaceTarget",
    "Placement",
    "SuctionParams",
    "cell_targets",
    "config_from_values",
    "load_cell_config",
    "load_cell_targets",
]
