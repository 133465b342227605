"""The pick-and-place jobs: one `CanJob` per can, from the cell config's targets (pure).

The targets themselves (above-can, contact, place_above, place_release and their conventions) are
`salamander_control.cell.targets`' business: the simulator and the tree read the same file through it.
This module only turns them into pad-down `CartesianTarget`s (tool yaw = atan2(y, x), so wrist_yaw
stays at zero) in the order the tree works through them, each with the box's planned centre (the mean of
every compartment centre: the row of compartments is symmetric about it), about which the box estimate
(box_estimate.py) turns. `joint_carry_sag` says whether a can may be carried in joint space.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from salamander_behavior.ports import CartesianTarget
from salamander_control.cell.targets import CellTargets, load_cell_targets
from salamander_control.kinematics import ArmParams, forward_kinematics_batch, solve_ik_pitched

CARRY_SAG_TOLERANCE = 0.001
"""m: a joint-space carry may run this far below the lower of its two ends (`joint_carry_sag`)."""


@dataclass(frozen=True)
class CanJob:
    """Everything the tree needs for one can: its name and the four TCP targets of its cycle.

    `rim_pass_z` is the TCP z at which the held can's bottom is level with the rim and the divider tops
    (`CellTargets.rim_pass_z`); the guarded pass spans a band around it. None: not known (the release
    descent is then one unguarded move).
    """

    can: str
    compartment: int
    above: CartesianTarget
    contact: CartesianTarget
    place_above: CartesianTarget
    place_release: CartesianTarget
    rim_pass_z: float | None = None
    box_centre: tuple[float, float] | None = None
    """The box's planned centre in base_link (m); None: this compartment's centre stands for it."""
    lift_clear_z: float | None = None
    """The TCP z at which the lifted can's bottom is level with the standing cans' tops and the rim
    (`CellTargets.lift_clear_z`); None: not known (the lift never hands on)."""

    @property
    def planned_xy(self) -> tuple[float, float]:
        """The planned place point (the compartment centre) in base_link, m."""
        return (self.place_release.x, self.place_release.y)

    @property
    def centre(self) -> tuple[float, float]:
        """The box's planned centre (`box_centre`, else `planned_xy`)."""
        return self.box_centre if self.box_centre is not None else self.planned_xy

    @property
    def adjust_name(self) -> str:
        """The name in ManualAdjust's log line, e.g. ``place_can_0``."""
        return f"place_{self.can}"


def jobs_from_targets(targets: CellTargets) -> tuple[CanJob, ...]:
    """One job per (pick, place) pair of the cell, in config order (can i into compartment i)."""
    centres = [place.centre for place in targets.places]
    box_centre = (
        (sum(c[0] for c in centres) / len(centres), sum(c[1] for c in centres) / len(centres))
        if centres
        else None
    )
    return tuple(
        CanJob(
            can=pick.can,
            compartment=place.compartment,
            above=CartesianTarget.pad_down(*pick.above),
            contact=CartesianTarget.pad_down(*pick.contact),
            place_above=CartesianTarget.pad_down(*place.place_above),
            place_release=CartesianTarget.pad_down(*place.place_release),
            rim_pass_z=targets.rim_pass_z,
            box_centre=box_centre,
            lift_clear_z=targets.lift_clear_z,
        )
        for pick, place in targets.pairs()
    )


def load_jobs(path: str | Path) -> tuple[CanJob, ...]:
    """Jobs from a cell params file (config/cell.yaml).

    Raises:
        OSError: the file cannot be read.
        ValueError: the file or a value in it is invalid (the message names both).
    """
    return jobs_from_targets(load_cell_targets(path))


def joint_carry_sag(job: CanJob, arm: ArmParams, samples: int = 101) -> float | None:
    """How far (m) the carry's joint-space path runs below the lower of its ends; None: no IK for one.

    The carry goes from above the can (the lift's end, at rest) to place_above. The trajectory generator
    moves the joints from rest to rest along a straight line in joint space (Ruckig, phase
    synchronisation), so the TCP follows the forward kinematics of that line, sampled here; the Cartesian
    node solves place_above nearest the joints it starts from, as here. Both ends clear the standing cans
    and the rim (`salamander_control.cell.targets`); a path that does not sink below them clears them
    too, with nothing between the pick row and the box.
    """
    start = solve_ik_pitched(job.above.position, job.above.tool_pitch, job.above.tool_yaw, arm)
    if not start.ok:
        return None
    end = solve_ik_pitched(
        job.place_above.position,
        job.place_above.tool_pitch,
        job.place_above.tool_yaw,
        arm,
        seed=tuple(start.q),
    )
    if not end.ok:
        return None
    a, b = np.asarray(start.q), np.asarray(end.q)
    path = a + np.linspace(0.0, 1.0, samples)[:, None] * (b - a)
    z = forward_kinematics_batch(path, arm).tcp[:, 2]
    return max(0.0, float(min(z[0], z[-1]) - z.min()))
