"""The work cell's layout: the table, the cans' spots, the box and its compartments.

The one description of where things stand that the behaviour tree, the simulated cell and the operator
view share. It depends on the arm library's parameter conventions only, never on the simulator or the
tree. The layout is read from the cell's params file (``config/cell.yaml``, the section that applies to
``/salamander/cell_sim``, e.g. ``/**/cell_sim``: the simulator's node owns the file; every other reader
takes the layout names from it). `LAYOUT_SPECS` holds each name's default, range and description.

Frames and units: base_link (REP-103), metres, radians. A can's position is the centre of its bottom
face. The box stands on the table; its frame is centred on its footprint, turned by `box_yaw` about +z,
with its row of compartments along the box's +x. Can ``can_i`` belongs in compartment i.

Invariant: a `CellLayout` is validated on construction (no overlapping cans, no can on the box, a lifted
can clears the rim), so a layout in use is always one the cycle can run in. The pick and place targets
derived from it: `salamander_control.cell.targets`. More: docs/design/cell_model.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from salamander_control import params_file
from salamander_control.param_spec import ParamSpec

NODE_FQN = "/salamander/cell_sim"
"""The node of the default launch whose section of the params file holds the cell (names.CELL_SIM)."""

MAX_CANS = 20


def cell_param(
    name: str,
    default: Any,
    description: str,
    min_value: float | None = None,
    max_value: float | None = None,
    live: bool = False,
) -> ParamSpec:
    """One cell parameter: read-only on the node unless `live` (range None for arrays)."""
    return ParamSpec(name, default, description, min_value, max_value, read_only=not live)


# The shipped layout (config/cell.yaml repeats it; salamander_sim's test_config.py keeps the two equal):
# table 0.18 m below base_link, three 330 ml cans in a row at y = +0.18 m, a three-compartment box at
# y = -0.18 m. Every target of the pick-and-place cycle then lies at a reach of 0.33-0.50 m, well inside
# the pad-down workspace (docs/workspace.png).
LAYOUT_SPECS: tuple[ParamSpec, ...] = (
    cell_param("table_z", -0.18, "height of the table surface in base_link (m)", -1.0, 1.0),
    cell_param("can_diameter", 0.0662, "can diameter (m); a 330 ml can is 66.2 mm", 0.01, 0.3),
    cell_param("can_height", 0.115, "can height (m); a 330 ml can is 115 mm", 0.01, 0.5),
    cell_param(
        "can_mass", 0.35, "mass of a full can (kg; physics engine); a 330 ml can: ~0.35 kg", 0.01, 5.0
    ),
    cell_param(
        "can_xy",
        [0.30, 0.18, 0.38, 0.18, 0.46, 0.18],
        "start positions of the cans on the table, flat [x0, y0, x1, y1, ...] in base_link (m); "
        "can i is named can_i and belongs in compartment i",
    ),
    cell_param("box_x", 0.38, "x of the box footprint's centre in base_link (m)", -2.0, 2.0),
    cell_param("box_y", -0.18, "y of the box footprint's centre in base_link (m)", -2.0, 2.0),
    cell_param(
        "box_yaw", 0.0, "yaw of the box about +z (rad); its compartments run along its +x", -math.pi, math.pi
    ),
    cell_param(
        "side_clearance",
        0.00195,
        "gap between a centred can and each compartment wall (m); inner size = diameter + 2 * this",
        0.0,
        0.05,
    ),
    cell_param("wall_thickness", 0.003, "thickness of the box walls and dividers (m)", 0.0005, 0.05),
    cell_param("wall_height", 0.06, "height of the walls above the box floor (m)", 0.005, 0.5),
    cell_param("floor_thickness", 0.003, "thickness of the box floor (m)", 0.0, 0.05),
    cell_param(
        "pick_dz",
        0.15,
        "above-can target: pad this far above the can top (m); the lifted can must clear cans and rim",
        0.0,
        1.0,
    ),
    cell_param(
        "approach_dz",
        0.015,
        "approach target: the empty pad comes down onto a can from this far above its top (m); at most "
        "pick_dz",
        0.005,
        1.0,
    ),
    cell_param(
        "place_dz",
        0.125,
        "place_above target: can bottom this far above the compartment floor (m)",
        0.0,
        1.0,
    ),
    cell_param(
        "release_dz",
        0.005,
        "place_release target: can bottom this far above the compartment floor when the vacuum goes off (m)",
        0.0,
        1.0,
    ),
)


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
    approach_dz: float = 0.015

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
        if self.approach_dz > self.pick_dz:
            raise ValueError(f"approach_dz {self.approach_dz} m must not exceed pick_dz {self.pick_dz} m")
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


def checked_values(values: Mapping[str, Any], specs: tuple[ParamSpec, ...]) -> dict[str, Any]:
    """The values of `specs` (defaults for missing names), each checked by its spec; raises ValueError."""
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
    v = checked_values(values, LAYOUT_SPECS)
    flat = [float(x) for x in v.pop("can_xy")]
    if len(flat) % 2:
        raise ValueError(f"can_xy must hold x, y pairs, got {len(flat)} numbers")
    pairs = tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))
    return CellLayout(can_xy=pairs, **{k: float(x) for k, x in v.items()})


def load_cell_layout(path: str | Path, node_fqn: str = NODE_FQN) -> CellLayout:
    """Read the layout from a ROS params file (e.g. config/cell.yaml); other names in it are not read.

    Raises:
        OSError: the file cannot be read.
        ValueError: not YAML, no section for the node, or a bad layout value (the message names the file).
    """
    document = params_file.load(path)  # its errors name the file already
    try:
        return layout_from_values(params_file.node_values([document], node_fqn, require_section=True))
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
    candidates.append(Path(__file__).resolve().parents[3] / "config" / "cell.yaml")
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no cell config found (looked at {', '.join(map(str, candidates))}); set cell_config"
    )
