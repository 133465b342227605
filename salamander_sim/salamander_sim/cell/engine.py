"""The cell's engines behind one interface, and the one place that builds the configured one.

`CellEngine` is what the node, the markers (`scene`) and the state report (`report`) use of a cell:
the kinematic `model.CellModel` (fast, exact, for tests where the physics is not the point) and the
physics `physics.PhysicsCell` (MuJoCo, the default) both provide it. `build_engine` draws the true cell
from the config's uncertainty (`uncertainty.draw_truth`: the box and can spots as they really are; the
behaviour tree keeps the configured, believed layout) and starts the engine the `engine` parameter
names on it, with the seeded grip scatter. Pure: no rclpy.
"""

from __future__ import annotations

from typing import Any, Protocol

from salamander_control.kinematics import ToolPose
from salamander_sim.cell.config import CellConfig, CellLayout, SuctionParams
from salamander_sim.cell.geometry import CellGeometry, Point
from salamander_sim.cell.model import CellModel
from salamander_sim.cell.report import CellEvent, Placement
from salamander_sim.cell.tool import Wrench
from salamander_sim.cell.uncertainty import CellTruth, GripScatter, draw_truth


class CellEngine(Protocol):
    """A simulated cell driven by vacuum commands and TCP poses on one monotonic clock (seconds)."""

    layout: CellLayout  # the TRUE layout
    geometry: CellGeometry
    suction: SuctionParams
    t: float
    vacuum: bool

    def set_vacuum(self, on: bool, now: float) -> None:
        """Switch the vacuum at `now` (not before the engine's time)."""

    def step(self, pose: ToolPose | None, now: float) -> None:
        """Advance to `now` with the pad at `pose` (None: no fresh TCP)."""

    def skip(self, pose: ToolPose | None, now: float) -> None:
        """Advance to `now` without simulating the gap (the world paused); the pad jumps to `pose`."""

    def set_suction(self, suction: SuctionParams) -> None:
        """Apply new (live) suction parameters."""

    @property
    def held(self) -> str | None:
        """The can on the pad, or None."""

    @property
    def contact(self) -> str | None:
        """The can whose top the pad is on, or None."""

    def positions(self) -> dict[str, Point]:
        """Each can's bottom centre (base_link, m)."""

    def orientation(self, can: str) -> tuple[float, float, float, float]:
        """A can's attitude (w, x, y, z)."""

    def placement(self, can: str) -> Placement | None:
        """A can's last placement."""

    def support(self, can: str) -> str:
        """What a can stands on."""

    def drain_events(self) -> list[CellEvent]:
        """Events since the last call."""

    def tool_wrench(self) -> Wrench:
        """What the tool feels from the held can (force N, moment about the TCP N m; base_link)."""

    def state(self) -> dict[str, Any]:
        """The state report (cell/report.py)."""


def build_engine(config: CellConfig, t: float = 0.0, truth: CellTruth | None = None) -> CellEngine:
    """The configured engine on the true cell drawn from `config.uncertainty` (or on `truth`).

    Raises:
        ValueError: the drawn cell is impossible (the message names the seed).
    """
    truth = truth or draw_truth(config.layout, config.uncertainty)
    grips = GripScatter(config.uncertainty)
    if config.engine == "kinematic":
        return CellModel(truth.layout, config.suction, t=t, grip_scatter=grips.draw)
    from salamander_sim.cell.physics import PhysicsCell  # mujoco loads only when it is used

    timestep = float(config.node.get("physics_timestep_s", 0.002))
    return PhysicsCell(truth.layout, config.suction, t=t, timestep=timestep, grip_scatter=grips.draw)
