"""The simulated cell's configuration: the layout plus suction, uncertainty and engine; one table.

`cell_param_specs` is the single source of every parameter of the simulated cell: its default, range
and description. The node declares these ParamSpecs as they are (read-only where a run-time change
makes no sense: a can cannot teleport, a box cannot grow; the node's whole parameter list is
`salamander_sim.cell.params`), and `load_cell_config` reads the same names from a ROS params file
(`config/cell.yaml`, the section that applies to ``/salamander/cell_sim``). The layout part is the
arm stack's neutral cell description (`salamander_control.cell.layout`), which the behaviour tree and
the operator view read from the same file, so simulator and tree can never disagree about the cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from salamander_control import params_file
from salamander_control.cell.layout import (
    LAYOUT_SPECS,
    NODE_FQN,
    CellLayout,
    cell_param,
    checked_values,
    layout_from_values,
)
from salamander_control.kinematics import ArmParams
from salamander_control.param_spec import ParamSpec


@dataclass(frozen=True)
class SuctionParams:
    """How the suction pad grips and lets go (all live parameters)."""

    attach_tol_z: float = 0.003
    attach_tol_xy: float = 0.005
    attach_max_tilt: float = 0.1
    attach_settle_s: float = 0.15
    release_settle_s: float = 0.25
    touch_tolerance: float = 0.0001
    suction_force_n: float = 25.0
    pad_radius: float = 0.0115
    pad_friction: float = 0.5


_S = SuctionParams()
"""The suction parameters' defaults (written once, in `SuctionParams`)."""

_SUCTION: tuple[ParamSpec, ...] = (
    cell_param(
        "attach_tol_z", _S.attach_tol_z, "pad within this of a can top, vertically, to grip it (m)", 0.0,
        0.05, True,
    ),
    cell_param(
        "attach_tol_xy",
        _S.attach_tol_xy,
        "pad within this of a can's axis, horizontally, to grip it (m)",
        0.0,
        0.05,
        True,
    ),
    cell_param(
        "attach_max_tilt",
        _S.attach_max_tilt,
        "largest tool pitch at which the pad seals on a can top (rad)",
        0.0,
        1.5708,
        True,
    ),
    cell_param(
        "attach_settle_s",
        _S.attach_settle_s,
        "vacuum on with contact this long before the can is held (s)",
        0.0,
        10.0,
        True,
    ),
    cell_param(
        "release_settle_s", _S.release_settle_s, "vacuum off this long before the can lets go (s)", 0.0, 10.0,
        True,
    ),
    cell_param(
        "touch_tolerance",
        _S.touch_tolerance,
        "a can in a compartment closer than this to a wall has touched it (m)",
        0.0,
        0.01,
        True,
    ),
    cell_param(
        "suction_force_n",
        _S.suction_force_n,
        "holding force of the sealed pad along its axis (N; physics engine: pressure difference times pad "
        "area, -60 kPa on a 23 mm pad); a can pulled off harder than this is torn off",
        0.1,
        1000.0,
        True,
    ),
    cell_param(
        "pad_radius",
        _S.pad_radius,
        "radius of the pad's sealing lip (m; physics engine): a moment on the can larger than "
        "(holding force - pull) * this peels the seal",
        0.001,
        0.05,
        True,
    ),
    cell_param(
        "pad_friction",
        _S.pad_friction,
        "friction coefficient of the pad's lip on a can lid (physics engine): a sideways load larger "
        "than this * (holding force - pull) shears the can off",
        0.0,
        2.0,
        True,
    ),
)

# Uncertainty (read-only: the true cell is drawn once, when the simulator starts). Defaults and why:
# docs/design/cell_model.md, "Uncertainty".
_UNCERTAINTY: tuple[ParamSpec, ...] = (
    cell_param(
        "uncertainty_seed",
        0,
        "seed of every random draw of the cell (true box pose, can spots, grip offsets): the same seed and "
        "the same sequence of grips give the same cell",
        0,
        2**31 - 1,
    ),
    cell_param(
        "box_error_sigma_xy",
        0.0015,
        "standard deviation of the box's true x and y about the configured box_x, box_y (m; each axis, "
        "drawn once, clipped at 3 sigma)",
        0.0,
        0.05,
    ),
    cell_param(
        "box_error_sigma_yaw",
        0.004,
        "standard deviation of the box's true yaw about the configured box_yaw (rad; clipped at 3 sigma)",
        0.0,
        0.2,
    ),
    cell_param(
        "box_error",
        [0.0, 0.0, 0.0],
        "a fixed error [dx (m), dy (m), dyaw (rad)] of the box's true pose, added to the drawn one "
        "(the believed pose, which the behaviour tree's targets use, stays box_x, box_y, box_yaw)",
    ),
    cell_param(
        "can_spot_sigma_xy",
        0.0005,
        "standard deviation of each can's true x and y about its can_xy spot (m; each axis, clipped at 3 "
        "sigma)",
        0.0,
        0.02,
    ),
    cell_param(
        "grip_sigma_xy",
        0.0005,
        "standard deviation of the shift of a can against the pad when the seal forms (m; each axis of the "
        "pad frame, a new draw per grip; the can's total offset from the pad axis stays within "
        "attach_tol_xy)",
        0.0,
        0.01,
    ),
)

ENGINES = ("physics", "kinematic")
"""The cell's engines: MuJoCo rigid-body physics (`sim.cell.physics`), or the kinematic model (`model`)."""

_ENGINE: tuple[ParamSpec, ...] = (
    cell_param(
        "engine",
        "physics",
        "the cell's engine: physics (MuJoCo rigid bodies, the default) or kinematic (the fast "
        "hand-written model, for tests where the physics is not the point)",
    ),
)

_NODE: tuple[ParamSpec, ...] = (
    cell_param("update_rate_hz", 50.0, "cell simulation steps per second (Hz)", 1.0, 500.0),
    cell_param(
        "physics_timestep_s",
        0.002,
        "physics engine time step (s); each update runs as many steps as the time since the last one needs",
        0.0005,
        0.005,
    ),
    cell_param(
        "skip_gap_s",
        0.5,
        "an update this long after the previous one (the node stopped or starved of CPU) skips the time "
        "without physics: the pad and a held can go straight to the newest pose, with a warning (s; "
        "shorter gaps are caught up in physics steps, the pad moving from its last pose to the new one)",
        0.1,
        10.0,
    ),
    cell_param(
        "state_rate_hz", 4.0, "periodic /salamander/cell/state publications per second (Hz)", 0.1, 50.0
    ),
    cell_param("marker_rate_hz", 10.0, "marker publications per second (Hz)", 0.1, 50.0),
    cell_param(
        "joint_state_timeout_s",
        0.5,
        "a /joint_states older than this gives no TCP: no gripping on stale data (s)",
        0.05,
        10.0,
        True,
    ),
    cell_param(
        "part_present_delay_s",
        0.03,
        "the simulated vacuum switch reports a can gripped or gone this long after the cell model "
        "decided it (s; the hose and switch response of a real one, salamander_sim/cell/switch.py)",
        0.0,
        2.0,
        True,
    ),
    cell_param(
        "part_present_rate_hz",
        10.0,
        "periodic part-present publications per second (Hz; and on every change)",
        1.0,
        500.0,
    ),
)

STANDARD_GRAVITY = 9.81
"""m/s^2, the physics engine's gravity."""

_INFO = {p.name: p for p in (*LAYOUT_SPECS, *_SUCTION, *_UNCERTAINTY, *_ENGINE, *_NODE)}
_ARM_NAMES = frozenset(f.name for f in fields(ArmParams))
MAX_CANS = 20


def cell_param_specs() -> list[ParamSpec]:
    """Every cell parameter (layout, suction, uncertainty, simulator; read-only unless live), file order."""
    return [*LAYOUT_SPECS, *_SUCTION, *_UNCERTAINTY, *_ENGINE, *_NODE]


@dataclass(frozen=True)
class Uncertainty:
    """How the true cell differs from the believed one (drawn by `sim.cell.uncertainty`).

    Attributes:
        seed: seed of every draw.
        box_error_sigma_xy: sigma of the box's true x and y about the configured pose (m, each axis).
        box_error_sigma_yaw: sigma of its true yaw (rad).
        box_error: a fixed (dx, dy, dyaw) added to the drawn box error (m, m, rad).
        can_spot_sigma_xy: sigma of each can's true x and y about its configured spot (m, each axis).
        grip_sigma_xy: sigma of the can's shift against the pad when the seal forms (m, each axis).
    """

    seed: int = 0
    box_error_sigma_xy: float = 0.0
    box_error_sigma_yaw: float = 0.0
    box_error: tuple[float, float, float] = (0.0, 0.0, 0.0)
    can_spot_sigma_xy: float = 0.0
    grip_sigma_xy: float = 0.0


@dataclass(frozen=True)
class CellConfig:
    """Everything a params-file section says about the cell."""

    layout: CellLayout
    suction: SuctionParams
    node: Mapping[str, float]  # the simulator's own settings (rates, joint_state_timeout_s), read-only view
    uncertainty: Uncertainty = Uncertainty()
    engine: str = "physics"


def suction_from_values(values: Mapping[str, Any]) -> SuctionParams:
    """SuctionParams from parameter values (defaults for missing names); raises ValueError."""
    return SuctionParams(**{k: float(x) for k, x in checked_values(values, _SUCTION).items()})


def uncertainty_from_values(values: Mapping[str, Any]) -> Uncertainty:
    """Uncertainty from parameter values (defaults for missing names).

    Raises:
        ValueError: a value out of range, a seed that is not an integer, a box_error that is not three
            numbers (or one larger than 0.1 m or 0.5 rad).
    """
    v = checked_values(values, _UNCERTAINTY)
    seed = v.pop("uncertainty_seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"uncertainty_seed must be an integer, got {seed!r}")
    error = tuple(float(x) for x in v.pop("box_error"))
    if len(error) != 3:
        raise ValueError(f"box_error must be [dx, dy, dyaw], three numbers, got {len(error)}")
    if max(abs(error[0]), abs(error[1])) > 0.1 or abs(error[2]) > 0.5:
        raise ValueError(f"box_error {list(error)}: at most 0.1 m in x and y and 0.5 rad in yaw")
    return Uncertainty(seed=seed, box_error=error, **{k: float(x) for k, x in v.items()})  # type: ignore[arg-type]


def config_from_values(values: Mapping[str, Any]) -> CellConfig:
    """The whole CellConfig from one params-file section (the arm's own parameters may appear too).

    Raises:
        ValueError: an unknown name (a typo would otherwise silently keep the default), or a bad value.
    """
    unknown = sorted(set(values) - set(_INFO) - _ARM_NAMES - {"use_sim_time"})
    if unknown:
        raise ValueError(f"unknown cell parameter(s): {', '.join(unknown)}")
    node = MappingProxyType({k: float(x) for k, x in checked_values(values, _NODE).items()})
    if node["skip_gap_s"] < 3.0 / node["update_rate_hz"]:
        raise ValueError(
            f"skip_gap_s {node['skip_gap_s']} s must be at least 3 update periods (3 / update_rate_hz = "
            f"{3.0 / node['update_rate_hz']:.3g} s): a late update is caught up, only a pause is skipped"
        )
    engine = checked_values(values, _ENGINE)["engine"]
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    suction = suction_from_values(values)
    layout = layout_from_values(values)
    weight = layout.can_mass * STANDARD_GRAVITY
    if engine == "physics" and suction.suction_force_n <= weight:
        raise ValueError(
            f"suction_force_n {suction.suction_force_n} N cannot lift a can of {layout.can_mass} kg "
            f"({weight:.2f} N)"
        )
    return CellConfig(layout, suction, node, uncertainty_from_values(values), engine)


def load_cell_config(path: str | Path, node_fqn: str = NODE_FQN) -> CellConfig:
    """Read a ROS params file (e.g. config/cell.yaml) into a validated CellConfig.

    The sections that apply to `node_fqn` are merged as rcl merges them (`salamander_control.params_file`:
    ``/**``, ``/**/cell_sim``, the fully qualified or the nested form); one of them must name the node.

    Raises:
        OSError: the file cannot be read.
        ValueError: not YAML, no section for the node, unknown names or bad values (the message says which).
    """
    document = params_file.load(path)  # its errors name the file already
    try:
        return config_from_values(params_file.node_values([document], node_fqn, require_section=True))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
