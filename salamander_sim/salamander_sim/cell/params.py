"""The cell simulator node's parameters (`/salamander/cell_sim`) and their `CellSimSettings` snapshot.

The convention of every node (see `salamander_control.ros.params`): `param_specs` and `build_config`.
The node declares the cell's parameters (`config.cell_param_specs`, values in config/cell.yaml, which
the behaviour tree reads too) and the arm model it computes the pad's position with (config/arm.yaml,
loaded first). Pure: no rclpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salamander_control.kinematics import ArmParams
from salamander_control.kinematics.params import arm_param_specs, build_arm_params
from salamander_control.param_spec import ParamSpec
from salamander_sim.cell.config import CellConfig, cell_param_specs, config_from_values


@dataclass(frozen=True)
class CellSimSettings:
    """The node's parameter snapshot: the cell config and the arm model for FK."""

    config: CellConfig
    arm: ArmParams


def param_specs() -> list[ParamSpec]:
    """The cell's parameters (read-only unless live) and the arm model's."""
    return [*cell_param_specs(), *arm_param_specs()]


def build_config(values: dict[str, Any]) -> CellSimSettings:
    """The snapshot from parameter values; raises ValueError (the refusal reason) when inconsistent."""
    return CellSimSettings(config_from_values(values), build_arm_params(values))
