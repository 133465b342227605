"""The pick-and-place jobs: one `CanJob` per can, from the cell config's targets (pure).

The targets themselves (above-can, contact, place_above, place_release and their conventions) are
`salamander_control.cell.targets`' business: the simulator and the tree read the same file through it.
This module only turns them into pad-down `CartesianTarget`s (tool yaw = atan2(y, x), so wrist_yaw
stays at zero) in the order the tree works through them, each with the box's planned centre (the mean of
every compartment centre: the row of compartments is symmetric about it), about which the box estimate
(box_estimate.py) turns. `carry_path` and `transit_end` say where the joint-space paths may go.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from salamander_behavior.ports import CartesianTarget, MotionPath
from salamander_control.cell.targets import CellTargets, load_cell_targets
from salamander_control.kinematics import (
    REST_POSTURE,
    ArmParams,
    forward_kinematics,
    forward_kinematics_batch,
    solve_ik_pitched,
)

CARRY_SAG_TOLERANCE = 0.001
"""m: a joint-space carry may run this far below the lower of its two ends (`joint_carry_sag`)."""
LOW_CARRY_ABOVE_RIM = 0.010
"""m: a low carry ends with the held can's bottom this far above the rim (`low_carry_end`): the lowest the
carry's path comes over the box, with a robot's absolute accuracy (a millimetre or two) and the cans'
height tolerance far inside, and `motion.LOW_CARRY_LEAD` above the rim band's top (was 15 mm: 0.07 s per
can more of release descent, docs/design/cycle.md)."""
LOW_CARRY_CLEAR = 0.005
"""m: below the can tops plus this, a held can keeps this far (beyond touching) from a standing can."""
LIFT_CLEAR_M = 0.01
"""m: the lift hands on no earlier than with the held can's bottom this far above what it must clear
(`lift_clear_level`; `tree.lift_handoff`)."""


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
    approach: CartesianTarget | None = None
    """Where the empty pad's transit ends and its descent onto the can begins (`PickTarget.approach`);
    None: at ``above``."""
    depart: CartesianTarget | None = None
    """The lowest point from which the empty pad's rise may hand on to the next transit
    (`PlaceTarget.depart`, approach_dz above the placed cans' tops); None: not known (it never does)."""
    can_tops_z: float | None = None
    """The TCP z at which the held can's bottom is level with the highest can top, standing or placed
    (`CellTargets.can_tops_z`); None: not known (the carry never ends low)."""
    can_diameter: float = 0.0
    """The cans' diameter (m; `CellTargets.can_diameter`)."""

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
        if centres else None
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
            approach=None if pick.approach is None else CartesianTarget.pad_down(*pick.approach),
            depart=None if place.depart is None else CartesianTarget.pad_down(*place.depart),
            can_tops_z=targets.can_tops_z,
            can_diameter=targets.can_diameter,
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


def joint_path(start: CartesianTarget, end: CartesianTarget, arm: ArmParams, samples: int = 101
               ) -> np.ndarray | None:  # fmt: skip
    """The TCP (samples, 3) along the straight joint-space path from `start` to `end`; None: no IK."""
    first = solve_ik_pitched(start.position, start.tool_pitch, start.tool_yaw, arm)
    if not first.ok:
        return None
    last = solve_ik_pitched(end.position, end.tool_pitch, end.tool_yaw, arm, seed=tuple(first.q))
    if not last.ok:
        return None
    a, b = np.asarray(first.q), np.asarray(last.q)
    return forward_kinematics_batch(a + np.linspace(0.0, 1.0, samples)[:, None] * (b - a), arm).tcp


def joint_path_sag(start: CartesianTarget, end: CartesianTarget, arm: ArmParams, samples: int = 101
                   ) -> float | None:  # fmt: skip
    """How far (m) the joint-space path from `start` to `end` sinks below the lower of its ends.

    None: no IK for one of them. The trajectory generator moves the joints from rest to rest along a
    straight line in joint space (Ruckig, phase synchronisation), so the TCP follows the forward
    kinematics of that line, sampled here; the Cartesian node solves the end nearest the joints it
    starts from, as here. Where both ends clear what stands in the cell, a path that does not sink below
    them clears it too (nothing stands between the pick row and the box).
    """
    tcp = joint_path(start, end, arm, samples)
    if tcp is None:
        return None
    z = tcp[:, 2]
    return max(0.0, float(min(z[0], z[-1]) - z.min()))


def joint_carry_sag(job: CanJob, arm: ArmParams) -> float | None:
    """`joint_path_sag` of the carry: from above the can (the lift's end) to place_above, the can held.

    Both ends clear the standing cans and the rim (`salamander_control.cell.targets`).
    """
    return joint_path_sag(job.above, job.place_above, arm)


def _keeps_height(sag: float | None) -> bool:
    """Whether a joint path with this `joint_path_sag` may be used (IK at both ends, within tolerance)."""
    return sag is not None and sag <= CARRY_SAG_TOLERANCE


def clear_of_cans(tcp: np.ndarray, job: CanJob, spots: Sequence[tuple[float, float]],
                  filled: Sequence[tuple[float, float]]) -> bool:  # fmt: skip
    """Whether `job`'s can, held along `tcp` (N, 3), keeps clear of the cans that may stand around it.

    Only where its bottom is lower than the can tops plus `LOW_CARRY_CLEAR` (`CanJob.can_tops_z`): there
    its axis keeps a can diameter plus `LOW_CARRY_CLEAR` from every spot in `spots` (cans that may stand
    on the table), and never comes nearer a compartment in `filled` (centres of compartments that may
    hold a can) than its own compartment's centre is, less 1 mm: it goes down between them only where
    its release descent does, over its own compartment, the divider between.
    """
    if job.can_tops_z is None:
        return False
    low = tcp[tcp[:, 2] < job.can_tops_z + LOW_CARRY_CLEAR, :2]
    if not len(low):
        return True
    def nearest(xy: tuple[float, float]) -> float:
        return float(np.hypot(*(low - np.asarray(xy)).T).min())

    if any(nearest(spot) < job.can_diameter + LOW_CARRY_CLEAR for spot in spots):
        return False
    return all(nearest(centre) >= math.dist(job.planned_xy, centre) - 0.001 for centre in filled)


def low_carry_end(job: CanJob, cell: Sequence[CanJob], later: Sequence[CanJob], arm: ArmParams
                  ) -> CartesianTarget | None:  # fmt: skip
    """Where the carry may end below place_above (its bottom `LOW_CARRY_ABOVE_RIM` above the rim), or None.

    Low when the carry is a joint path (`carry_path`) and the one from above the can to there
    (`joint_path`) sinks at most `CARRY_SAG_TOLERANCE` below that end (so the can's bottom clears the rim
    and the walls wherever the box stands) and keeps clear of the other cans (`clear_of_cans`): of every
    other can of the `cell` on its spot, and of every compartment but its own and those of the cans in
    `later` (picked after it in this run, so theirs are still empty). The release descent then starts
    there, not 45-50 mm higher. The shipped cell: can_0's carry passes over compartment 1 and can_1's over
    compartment 2 below the can tops, so each ends low only while the next compartment is empty (a run in
    order).
    """
    if job.rim_pass_z is None or job.can_tops_z is None or carry_path(job, arm) is not MotionPath.JOINT:
        return None
    end = job.place_above.shifted(0.0, 0.0, job.rim_pass_z + LOW_CARRY_ABOVE_RIM - job.place_above.z)
    if not job.place_release.z < end.z < job.place_above.z:
        return None
    return end if _carry_keeps_clear(job.above, end, end.z, job, cell, later, arm) else None


def _carry_keeps_clear(start: CartesianTarget, end: CartesianTarget, floor: float, job: CanJob,
                       cell: Sequence[CanJob], later: Sequence[CanJob], arm: ArmParams) -> bool:  # fmt: skip
    """Whether `job`'s carry along the straight joint path from `start` to `end` keeps clear of the cell.

    It sinks at most `CARRY_SAG_TOLERANCE` below `floor` (a TCP z) and keeps clear of the other cans
    (`clear_of_cans`): of every other can of the `cell` on its spot, and of every compartment but its
    own and those of the cans in `later` (picked after it in this run, so theirs are still empty).
    """
    tcp = joint_path(start, end, arm)
    if tcp is None or floor - tcp[:, 2].min() > CARRY_SAG_TOLERANCE:
        return False
    empty = {other.compartment for other in later} | {job.compartment}
    spots = [(o.contact.x, o.contact.y) for o in cell if o.can != job.can]
    filled = [o.planned_xy for o in cell if o.compartment not in empty]
    return clear_of_cans(tcp, job, spots, filled)


def lift_clear_level(job: CanJob, cell: Sequence[CanJob], later: Sequence[CanJob], arm: ArmParams,
                     low: CartesianTarget | None = None) -> float | None:  # fmt: skip
    """The level the lift must clear before it hands on to the carry (a TCP z), as low as the cell allows.

    The rim's (the held can's bottom level with the rim and the divider tops, `CanJob.rim_pass_z`) where
    the carry is a joint path (`carry_path`) and the straight joint paths from `LIFT_CLEAR_M` above it,
    over the can, to each end the carry may have (place_above; `low` when given, `low_carry_end`) sink
    at most `CARRY_SAG_TOLERANCE` below that start and keep clear of the other cans as `low_carry_end`'s
    do (`_carry_keeps_clear`).
    Else `CanJob.lift_clear_z`: the higher of the standing cans' tops and the rim. None: not known.

    The shipped cell: can_1's and can_2's carries leave the pick row sideways, away from every other
    spot, so their lifts hand on 52 mm sooner; can_0's straight path from there sweeps over can_1's spot
    (the real bend out of the moving lift rises first and clears it, but the tree cannot check that
    motion: docs/design/cycle.md), so its lift clears the cans' tops.
    """
    if job.lift_clear_z is None or job.rim_pass_z is None or carry_path(job, arm) is not MotionPath.JOINT:
        return job.lift_clear_z
    start = job.above.shifted(0.0, 0.0, job.rim_pass_z + LIFT_CLEAR_M - job.above.z)
    if not job.contact.z < start.z < job.above.z:
        return job.lift_clear_z
    ends = (job.place_above, *([low] if low is not None else []))
    if all(_carry_keeps_clear(start, end, start.z, job, cell, later, arm) for end in ends):
        return job.rim_pass_z
    return job.lift_clear_z


class CarryPlan(NamedTuple):
    """Where a can's carry may end low, and the level its lift clears before it hands on to the carry.

    `low`: `low_carry_end`; `lift_clear`: `lift_clear_level`, judged against that low end.
    """

    low: CartesianTarget | None
    lift_clear: float | None


def carry_plan(job: CanJob, cell: Sequence[CanJob], later: Sequence[CanJob], arm: ArmParams) -> CarryPlan:
    """`job`'s `CarryPlan` in a run that picks the cans of `later` after it.

    `cell` () (not known): neither, so the carry ends at place_above and the lift clears the cans' tops
    (the job's own `lift_clear_z`).
    """
    if not cell:
        return CarryPlan(None, None)
    low = low_carry_end(job, cell, later, arm)
    return CarryPlan(low, lift_clear_level(job, cell, later, arm, low))


def carry_path(job: CanJob, arm: ArmParams) -> MotionPath:
    """The carry's path: in joint space where it sinks at most `CARRY_SAG_TOLERANCE`, else a line."""
    return MotionPath.JOINT if _keeps_height(joint_carry_sag(job, arm)) else MotionPath.LINEAR


def transit_starts(jobs: Sequence[CanJob], arm: ArmParams) -> list[CartesianTarget]:
    """Where an empty pad's transit may begin: the rest posture, any of `jobs`' place_above or depart.

    The last can's rise ends at its place_above; a rise that hands on does so no lower than its depart.
    """
    rest = forward_kinematics(REST_POSTURE, arm)
    departs = [job.depart for job in jobs if job.depart is not None]
    return [CartesianTarget(*rest.tcp, rest.tool_pitch, rest.tool_yaw), *(job.place_above for job in jobs),
            *departs]  # fmt: skip


def transit_end(job: CanJob, starts: Sequence[CartesianTarget], arm: ArmParams) -> CartesianTarget:
    """Where the empty pad's transit to `job` ends: its approach, else above the can.

    The approach when the joint path to it from each of `starts` (where a transit may begin: the rest
    pose, each compartment's place_above and depart) sinks at most `CARRY_SAG_TOLERANCE` below its
    ends: every point of it then stands at least approach_dz above the standing cans' tops, less the
    tolerance.
    """
    if job.approach is None:
        return job.above
    approach = job.approach
    keeps = all(_keeps_height(joint_path_sag(start, approach, arm)) for start in starts)
    return approach if keeps else job.above
