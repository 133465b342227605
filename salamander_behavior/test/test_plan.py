"""The run's plan (plan.py): one job per can, from the cell's own targets; the joint carry's sag; where
the carry may end low; how soon the lift may hand on to it."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from salamander_behavior.plan import (
    LOW_CARRY_ABOVE_RIM,
    jobs_from_targets,
    joint_carry_sag,
    lift_clear_level,
    low_carry_end,
    transit_end,
    transit_starts,
)
from salamander_behavior.ports import CartesianTarget
from salamander_control.cell.targets import load_cell_targets
from salamander_control.kinematics import ArmParams
from salamander_testing import REPO

CELL = REPO / "config" / "cell.yaml"
JOBS = jobs_from_targets(load_cell_targets(CELL))


def test_jobs_follow_the_cell_targets() -> None:
    targets = load_cell_targets(CELL)
    jobs = jobs_from_targets(targets)
    assert [j.can for j in jobs] == ["can_0", "can_1", "can_2"]
    for job, (pick, place) in zip(jobs, targets.pairs(), strict=True):
        assert job.contact.position == pick.contact and job.place_release.position == place.place_release
        assert job.place_release.z == pytest.approx(job.place_above.z + targets.release_dz - targets.place_dz)
        assert job.above.tool_pitch == 0.0 and job.above.tool_yaw == pytest.approx(math.atan2(*pick.xy[::-1]))
    assert jobs[0].adjust_name == "place_can_0"


def test_the_shipped_carries_keep_the_can_level_in_joint_space() -> None:
    for job in jobs_from_targets(load_cell_targets(CELL)):
        assert joint_carry_sag(job, ArmParams()) == pytest.approx(0.0, abs=1e-6)


def test_a_carry_that_would_sink_in_joint_space_is_measured() -> None:
    # From near the base out to a long reach, low: the straight joint line bows 8 mm below both ends.
    job = replace(JOBS[0], above=CartesianTarget.pad_down(0.3, 0.1, -0.1),
                  place_above=CartesianTarget.pad_down(0.55, -0.1, -0.1))  # fmt: skip
    assert joint_carry_sag(job, ArmParams()) == pytest.approx(0.0084, abs=0.0005)
    out_of_reach = replace(job, place_above=CartesianTarget.pad_down(2.0, 0.0, 0.0))
    assert joint_carry_sag(out_of_reach, ArmParams()) is None


def test_the_transit_ends_at_the_approach_unless_a_joint_path_to_it_would_sink() -> None:
    arm = ArmParams()
    starts = transit_starts(JOBS, arm)
    assert len(starts) == 7  # rest, the three place_above and the three depart
    for job in JOBS:  # the shipped cell: down to 15 mm above the can top from rest and from every compartment
        assert job.approach is not None and transit_end(job, starts, arm) == job.approach
        assert job.approach.z == pytest.approx(job.contact.z + 0.015)
    low = replace(JOBS[0], approach=CartesianTarget.pad_down(0.3, 0.1, -0.1))
    far = CartesianTarget.pad_down(0.55, -0.1, -0.1)  # from here the joint path bows 8 mm below both ends
    assert transit_end(low, [*starts, far], arm) == low.above
    assert transit_end(replace(JOBS[0], approach=None), starts, arm) == JOBS[0].above


def test_a_carry_ends_low_only_where_no_can_may_stand_under_its_path() -> None:
    arm = ArmParams()
    ends = [low_carry_end(job, JOBS, JOBS[k + 1:], arm) for k, job in enumerate(JOBS)]  # a run in order
    for job, end in zip(JOBS, ends, strict=True):
        assert end is not None and end.position == pytest.approx(
            (job.place_above.x, job.place_above.y, job.rim_pass_z + LOW_CARRY_ABOVE_RIM))
    # can_0's and can_1's joint paths pass low over the next compartment: filled, or not known to be
    # empty (a run of one can), they end at place_above; can_2's passes over none.
    assert [low_carry_end(job, JOBS, (), arm) is not None for job in JOBS] == [False, False, True]
    reverse = [JOBS[1], JOBS[0]]
    assert [low_carry_end(job, JOBS, reverse[k + 1:], arm) for k, job in enumerate(reverse)] == [None, None]
    # without the cans' height, or with a standing can under the path, never
    assert low_carry_end(replace(JOBS[2], can_tops_z=None), JOBS, (), arm) is None
    under = replace(JOBS[0], can="can_x", contact=CartesianTarget.pad_down(0.42, -0.05, -0.065))
    assert low_carry_end(JOBS[2], [*JOBS, under], (), arm) is None


def test_a_lift_hands_on_over_the_rim_only_where_the_carry_from_there_keeps_clear_of_every_can() -> None:
    arm = ArmParams()

    def levels(order, cell=JOBS):
        return [lift_clear_level(job, cell, order[k + 1:], arm, low_carry_end(job, cell, order[k + 1:], arm))
                for k, job in enumerate(order)]  # fmt: skip

    # A run in order: can_0's straight joint path from over the rim sweeps over can_1's spot, so its lift
    # clears the cans' tops; can_1's and can_2's leave the pick row away from every other spot.
    assert levels(JOBS) == [JOBS[0].lift_clear_z, JOBS[1].rim_pass_z, JOBS[2].rim_pass_z]
    assert JOBS[0].lift_clear_z - JOBS[0].rim_pass_z == pytest.approx(0.052)  # 115 mm can, 63 mm rim
    # can_1 alone (compartment 2 not known to be empty): its path passes low over it
    assert levels([JOBS[1]]) == [JOBS[1].lift_clear_z]
    # a standing can under can_2's path, a carry along a line, or no rim height: the cans' tops
    under = replace(JOBS[0], can="can_x", contact=CartesianTarget.pad_down(0.46, 0.08, -0.065))
    assert levels([JOBS[2]], [*JOBS, under]) == [JOBS[2].lift_clear_z]
    sinking = replace(JOBS[2], place_above=CartesianTarget.pad_down(0.1, -0.45, 0.3))
    assert lift_clear_level(sinking, JOBS, (), arm) == sinking.lift_clear_z  # a line carry (no joint path)
    assert lift_clear_level(replace(JOBS[2], rim_pass_z=None), JOBS, (), arm) == JOBS[2].lift_clear_z
    assert lift_clear_level(replace(JOBS[2], lift_clear_z=None), JOBS, (), arm) is None
