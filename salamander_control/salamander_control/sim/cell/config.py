"""The simulated work cell's configuration: table, cans, box, suction; one table of parameters.

`cell_param_specs` is the single source of every cell parameter's default, range and description: the
node declares these ParamSpecs as they are (read-only where a run-time change makes no sense: a can
cannot teleport, a box cannot grow; the node's whole parameter list is `sim.cell.params`), and
`load_cell_config` reads the same names from a ROS params file (`config/cell.yaml`, the section that
applies to ``/salamander/cell_sim``, e.g. ``/**/cell_sim``), so the simulator and the behaviour tree,
which reads the file with `salamander_control.sim.cell.targets`, can never disagree about the cell.

Frames and units: base_link (REP-103), metres, radians, seconds. A can's position is the centre of its
bottom face. The box stands on the table; its frame is centred on its footprint, turned by `box_yaw`
about +z, with its row of compartments along the box's +x.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from salamander_control import params_file
from salamander_control.kinematics import ArmParams
from salamander_control.param_spec import ParamSpec

NODE_FQN = "/salamander/cell_sim"
"""The node of the default launch whose section of the params file the loader reads (names.CELL_SIM)."""


def _param(
    name: str,
    default: Any,
    description: str,
    min_value: float | None = None,
    max_value: float | None = None,
    live: bool = False,
) -> ParamSpec:
    """One cell parameter: read-only on the node unless `live` (range None for arrays)."""
    return ParamSpec(name, default, description, min_value, max_value, read_only=not live)


# The shipped layout (config/cell.yaml repeats it): table 0.18 m below base_link, three 330 ml cans in a
# row at y = +0.18 m, a three-compartment box at y = -0.18 m. Every target of the pick-and-place cycle
# then lies at a reach of 0.33-0.50 m, well inside the pad-down workspace (docs/workspace.png).
_LAYOUT: tuple[ParamSpec, ...] = (
    _param("table_z", -0.18, "height of the table surface in base_link (m)", -1.0, 1.0),
    _param("can_diameter", 0.0662, "can diameter (m); a 330 ml can is 66.2 mm", 0.01, 0.3),
    _param("can_height", 0.115, "can height (m); a 330 ml can is 115 mm", 0.01, 0.5),
    _param("can_mass", 0.35, "mass of a full can (kg; physics engine); a 330 ml can: ~0.35 kg", 0.01, 5.0),
    _param(
        "can_xy",
        [0.30, 0.18, 0.38, 0.18, 0.46, 0.18],
        "start positions of the cans on the table, flat [x0, y0, x1, y1, ...] in base_link (m); "
        "can i is named can_i and belongs in compartment i",
    ),
    _param("box_x", 0.38, "x of the box footprint's centre in base_link (m)", -2.0, 2.0),
    _param("box_y", -0.18, "y of the box footprint's centre in base_link (m)", -2.0, 2.0),
    _param(
        "box_yaw", 0.0, "yaw of the box about +z (rad); its compartments run along its +x", -math.pi, math.pi
    ),
    _param(
        "side_clearance",
        0.00195,
        "gap between a centred can and each compartment wall (m); inner size = diameter + 2 * this",
        0.0,
        0.05,
    ),
    _param("wall_thickness", 0.003, "thickness of the box walls and dividers (m)", 0.0005, 0.05),
    _param("wall_height", 0.06, "height of the walls above the box floor (m)", 0.005, 0.5),
    _param("floor_thickness", 0.003, "thickness of the box floor (m)", 0.0, 0.05),
    _param(
        "pick_dz",
        0.15,
        "above-can target: pad this far above the can top (m); the lifted can must clear cans and rim",
        0.0,
        1.0,
    ),
    _param(
        "place_dz",
        0.15,
        "place_above target: can bottom this far above the compartment floor (m)",
        0.0,
        1.0,
    ),
    _param(
        "release_dz",
        0.005,
        "place_release target: can bottom this far above the compartment floor when the vacuum goes off (m)",
        0.0,
        1.0,
    ),
)

_SUCTION: tuple[ParamSpec, ...] = (
    _param(
        "attach_tol_z", 0.003, "pad within this of a can top, vertically, to grip it (m)", 0.0, 0.05, True
    ),
    _param(
        "attach_tol_xy",
        0.005,
        "pad within this of a can's axis, horizontally, to grip it (m)",
        0.0,
        0.05,
        True,
    ),
    _param(
        "attach_max_tilt",
        0.1,
        "largest tool pitch at which the pad seals on a can top (rad)",
        0.0,
        1.5708,
        True,
    ),
    _param(
        "attach_settle_s", 0.5, "vacuum on with contact this long before the can is held (s)", 0.0, 10.0, True
    ),
    _param("release_settle_s", 0.7, "vacuum off this long before the can lets go (s)", 0.0, 10.0, True),
    _param(
        "touch_tolerance",
        0.0001,
        "a can in a compartment closer than this to a wall has touched it (m)",
        0.0,
        0.01,
        True,
    ),
    _param(
        "suction_force_n",
        25.0,
        "holding force of the sealed pad along its axis (N; physics engine: pressure difference times pad "
        "area, -60 kPa on a 23 mm pad); a can pulled off harder than this is torn off",
        0.1,
        1000.0,
        True,
    ),
    _param(
        "pad_radius",
        0.0115,
        "radius of the pad's sealing lip (m; physics engine): a moment on the can larger than "
        "(holding force - pull) * this peels the seal",
        0.001,
        0.05,
        True,
    ),
    _param(
        "pad_friction",
        0.5,
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
    _param(
        "uncertainty_seed",
        0,
        "seed of every random draw of the cell (true box pose, can spots, grip offsets): the same seed and "
        "the same sequence of grips give the same cell",
        0,
        2**31 - 1,
    ),
    _param(
        "box_error_sigma_xy",
        0.0015,
        "standard deviation of the box's true x and y about the configured box_x, box_y (m; each axis, "
        "drawn once, clipped at 3 sigma)",
        0.0,
        0.05,
    ),
    _param(
        "box_error_sigma_yaw",
        0.004,
        "standard deviation of the box's true yaw about the configured box_yaw (rad; clipped at 3 sigma)",
        0.0,
        0.2,
    ),
    _param(
        "box_error",
        [0.0, 0.0, 0.0],
        "a fixed error [dx (m), dy (m), dyaw (rad)] of the box's true pose, added to the drawn one "
        "(the believed pose, which the behaviour tree's targets use, stays box_x, box_y, box_yaw)",
    ),
    _param(
        "can_spot_sigma_xy",
        0.0005,
        "standard deviation of each can's true x and y about its can_xy spot (m; each axis, clipped at 3 "
        "sigma)",
        0.0,
        0.02,
    ),
    _param(
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
    _param(
        "engine",
        "physics",
        "the cell's engine: physics (MuJoCo rigid bodies, the default) or kinematic (the fast "
        "hand-written model, for tests where the physics is not the point)",
    ),
)

_NODE: tuple[ParamSpec, ...] = (
    _param("update_rate_hz", 50.0, "cell simulation steps per second (Hz)", 1.0, 500.0),
    _param(
        "physics_timestep_s",
        0.002,
        "physics engine time step (s); each update runs as many steps as the time since the last one needs",
        0.0005,
        0.005,
    ),
    _param("state_rate_hz", 4.0, "periodic /salamander/cell/state publications per second (Hz)", 0.1, 50.0),
    _param("marker_rate_hz", 10.0, "marker publications per second (Hz)", 0.1, 50.0),
    _param(
        "joint_state_timeout_s",
        0.5,
        "a /joint_states older than this gives no TCP: no gripping on stale data (s)",
        0.05,
        10.0,
        True,
    ),
    _param(
        "part_present_delay_s",
        0.03,
        "the simulated vacuum switch reports a can gripped or gone this long after the cell model "
        "decided it (s; the hose and switch response of a real one, sim/cell/switch.py)",
        0.0,
        2.0,
        True,
    ),
    _param(
        "part_present_rate_hz",
        10.0,
        "periodic part-present publications per second (Hz; and on every change)",
        1.0,
        500.0,
    ),
)

STANDARD_GRAVITY = 9.81
"""m/s^2, the physics engine's gravity."""

_INFO = {p.name: p for p in (*_LAYOUT, *_SUCTION, *_UNCERTAINTY, *_ENGINE, *_NODE)}
_ARM_NAMES = frozenset(f.name for f in fields(ArmParams))
MAX_CANS = 20


def cell_param_specs() -> list[ParamSpec]:
    """Every cell parameter (layout, suction, uncertainty, simulator; read-only unless live), file order."""
    return [*_LAYOUT, *_SUCTION, *_UNCERTAINTY, *_ENGINE, *_NODE]


@dataclass(frozen=True)
class CellLayout:
    """Where everything stands; validated on construction (a layout in use is always consistent)."""

    table_z: float
    can_diameter: float
    can_height: float
    can_xy: tuple[tuple[float, float], ...]
    box_x: float
    box_y: float
    box_yaw: float
    side_clearance: float
    wall_thickness: float
    wall_height: float
    floor_thickness: float
    pick_dz: float
    place_dz: float
    release_dz: float
    can_mass: float = 0.35

    def __post_init__(self) -> None:
        """Refuse layouts the cycle cannot run in: overlapping cans, a lifted can that hits something."""
        n = len(self.can_xy)
        if not 1 <= n <= MAX_CANS:
            raise ValueError(f"can_xy must give 1..{MAX_CANS} cans, got {n}")
        d = self.can_diameter
        for i, (x, y) in enumerate(self.can_xy):
            for j in range(i):
                gap = math.dist((x, y), self.can_xy[j]) - d
                if gap < 0.0:
                    raise ValueError(f"can_{i} and can_{j} overlap by {-gap * 1000:.1f} mm")
            # Distance from the can axis to the box footprint, in the box frame.
            u, v = self.to_box_frame(x, y)
            dx = max(abs(u) - self.box_length / 2, 0.0)
            dy = max(abs(v) - self.box_width / 2, 0.0)
            if math.hypot(dx, dy) < self.can_radius:
                raise ValueError(f"can_{i} at ({x}, {y}) stands on or inside the box footprint")
        rim = self.floor_thickness + self.wall_height
        if self.pick_dz <= max(self.can_height, rim):
            raise ValueError(
                f"pick_dz {self.pick_dz} m: a lifted can's bottom must clear the standing cans "
                f"({self.can_height} m) and the box rim ({rim:.4f} m above the table)"
            )
        if self.place_dz <= max(self.can_height, self.wall_height):
            raise ValueError(
                f"place_dz {self.place_dz} m: at place_above the can must clear the rim "
                f"({self.wall_height} m) and the cans already placed ({self.can_height} m above the floor)"
            )
        if self.release_dz >= self.place_dz:
            raise ValueError(f"release_dz {self.release_dz} m must be below place_dz {self.place_dz} m")

    @property
    def can_radius(self) -> float:
        """Half the can diameter (m)."""
        return self.can_diameter / 2

    @property
    def can_ids(self) -> tuple[str, ...]:
        """Can names in config order: can_0, can_1, ..."""
        return tuple(f"can_{i}" for i in range(len(self.can_xy)))

    @property
    def compartment_inner(self) -> float:
        """Inner side of a (square) compartment: can diameter + 2 * side clearance (m)."""
        return self.can_diameter + 2 * self.side_clearance

    @property
    def compartments(self) -> int:
        """One compartment per can."""
        return len(self.can_xy)

    @property
    def box_length(self) -> float:
        """Outer size of the box along its x (the row of compartments), m."""
        return self.compartments * self.compartment_inner + (self.compartments + 1) * self.wall_thickness

    @property
    def box_width(self) -> float:
        """Outer size of the box along its y, m."""
        return self.compartment_inner + 2 * self.wall_thickness

    @property
    def floor_top(self) -> float:
        """Height of the compartment floors in base_link (m)."""
        return self.table_z + self.floor_thickness

    @property
    def rim_z(self) -> float:
        """Height of the wall tops in base_link (m)."""
        return self.floor_top + self.wall_height

    def compartment_u(self, k: int) -> float:
        """Box-frame x of compartment k's centre (its y is 0)."""
        pitch = self.compartment_inner + self.wall_thickness
        return -self.box_length / 2 + self.wall_thickness + self.compartment_inner / 2 + k * pitch

    def compartment_centre(self, k: int) -> tuple[float, float]:
        """Compartment k's centre in base_link (x, y)."""
        return self.from_box_frame(self.compartment_u(k), 0.0)

    def to_box_frame(self, x: float, y: float) -> tuple[float, float]:
        """A base_link point in the box frame."""
        c, s = math.cos(self.box_yaw), math.sin(self.box_yaw)
        dx, dy = x - self.box_x, y - self.box_y
        return (c * dx + s * dy, -s * dx + c * dy)

    def from_box_frame(self, u: float, v: float) -> tuple[float, float]:
        """A box-frame point in base_link."""
        c, s = math.cos(self.box_yaw), math.sin(self.box_yaw)
        return (self.box_x + c * u - s * v, self.box_y + s * u + c * v)


@dataclass(frozen=True)
class SuctionParams:
    """How the suction pad grips and lets go (all live parameters)."""

    attach_tol_z: float = 0.003
    attach_tol_xy: float = 0.005
    attach_max_tilt: float = 0.1
    attach_settle_s: float = 0.5
    release_settle_s: float = 0.7
    touch_tolerance: float = 0.0001
    suction_force_n: float = 25.0
    pad_radius: float = 0.0115
    pad_friction: float = 0.5


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


def _checked(values: Mapping[str, Any], specs: tuple[ParamSpec, ...]) -> dict[str, Any]:
    out = {}
    for spec in specs:
        value = values.get(spec.name, spec.default)
        problem = spec.check(value)  # the node's own rule: a file cannot hold what the node would refuse
        if problem:
            raise ValueError(problem)
        out[spec.name] = value
    return out


def layout_from_values(values: Mapping[str, Any]) -> CellLayout:
    """A CellLayout from parameter values (defaults for missing names).

    Raises:
        ValueError: a value out of range or not finite, an odd-length can_xy, or an inconsistent layout.
    """
    v = _checked(values, _LAYOUT)
    flat = [float(x) for x in v.pop("can_xy")]
    if len(flat) % 2:
        raise ValueError(f"can_xy must hold x, y pairs, got {len(flat)} numbers")
    pairs = tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))
    return CellLayout(can_xy=pairs, **{k: float(x) for k, x in v.items()})


def suction_from_values(values: Mapping[str, Any]) -> SuctionParams:
    """SuctionParams from parameter values (defaults for missing names); raises ValueError."""
    return SuctionParams(**{k: float(x) for k, x in _checked(values, _SUCTION).items()})


def uncertainty_from_values(values: Mapping[str, Any]) -> Uncertainty:
    """Uncertainty from parameter values (defaults for missing names).

    Raises:
        ValueError: a value out of range, a seed that is not an integer, a box_error that is not three
            numbers (or one larger than 0.1 m or 0.5 rad).
    """
    v = _checked(values, _UNCERTAINTY)
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
    node = MappingProxyType({k: float(x) for k, x in _checked(values, _NODE).items()})
    engine = _checked(values, _ENGINE)["engine"]
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


def default_cell_config() -> Path:
    """config/cell.yaml: installed (share/salamander_control/config) or in the source tree.

    Raises:
        FileNotFoundError: neither exists (the caller asks for its `cell_config` parameter).
    """
    candidates = []
    try:
        from ament_index_python.packages import get_package_share_directory

        candidates.append(Path(get_package_share_directory("salamander_control")) / "config" / "cell.yaml")
    except (ImportError, LookupError, ValueError):  # not installed: the source tree below
        pass
    candidates.append(Path(__file__).resolve().parents[4] / "config" / "cell.yaml")
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no cell config found (looked at {', '.join(map(str, candidates))}); set cell_config"
    )
