"""Cell settings for tests that start the simulated cell but test something other than its uncertainty.

The shipped config/cell.yaml draws a true cell that differs from the believed one (box and can spots a
little off, each grip a little off the can's axis: `sim.cell.uncertainty`), so an autonomous placement
may miss, as on the robot. A test that checks the tree, the contract or the cell's mechanics with exact
expectations (1.95 mm per side) passes `NO_UNCERTAINTY` as node parameters (`NodeProcess(params=...)`)
or merges it into its params-file section: the true cell is then the believed one. A test that starts the
stack through the launch file passes ``cell_config:=`` a copy made by `cell_config_without_uncertainty`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

NO_UNCERTAINTY: dict[str, float] = {
    "box_error_sigma_xy": 0.0,
    "box_error_sigma_yaw": 0.0,
    "can_spot_sigma_xy": 0.0,
    "grip_sigma_xy": 0.0,
}
"""Every sigma of the cell's uncertainty at zero (box_error defaults to none): the true cell is the
configured one."""


def cell_config_without_uncertainty(directory: Path, **overrides: Any) -> Path:
    """config/cell.yaml with `NO_UNCERTAINTY` (and `overrides`) merged in, written to `directory`.

    For tests that start the stack through the launch file: pass ``cell_config:=<this file>`` to the
    runner; the simulated cell, the behaviour server and the simulated operator all read it.
    """
    from salamander_testing import REPO

    data = yaml.safe_load((REPO / "config" / "cell.yaml").read_text())
    ((key, section),) = data.items()
    section["ros__parameters"].update(NO_UNCERTAINTY, **overrides)
    path = directory / "cell_no_uncertainty.yaml"
    path.write_text(yaml.safe_dump({key: section}))
    return path
