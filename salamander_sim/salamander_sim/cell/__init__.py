"""The simulated work cell: cans, a compartment box and a suction pad, pure Python (no rclpy).

- `config`: the parameter table, `SuctionParams`, `Uncertainty`, `load_cell_config` (config/cell.yaml);
  the layout itself and the pick/place targets are the stack's neutral cell description,
  `salamander_control.cell`.
- `geometry`: the solids and the checks (swept moves, supports, compartment clearances).
- `model`: `CellModel`, the state machine (grip, follow, release, drop, placement outcomes).
- `params`: the cell_sim node's parameters (the cell's and the arm model's) and their snapshot.
- `report`: the JSON state format of /salamander/cell/state.
- `scene`: shapes and colours for the markers.

What it is for, and why it is built this way: docs/design/cell_model.md.
"""

from salamander_sim.cell.config import (
    CellConfig,
    CellLayout,
    SuctionParams,
    config_from_values,
    load_cell_config,
)
from salamander_sim.cell.model import CellModel
from salamander_sim.cell.report import OUTCOME_TEXT, CellEvent, Placement

__all__ = [
    "OUTCOME_TEXT",
    "CellConfig",
    "CellEvent",
    "CellLayout",
    "CellModel",
    "Placement",
    "SuctionParams",
    "config_from_values",
    "load_cell_config",
]
