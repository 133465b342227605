"""The run's plan (plan.py): one job per can, from the cell's own targets."""

from __future__ import annotations

import math

import pytest

from salamander_behavior.plan import jobs_from_targets
from salamander_control.cell.targets import load_cell_targets
from salamander_testing import REPO

CELL = REPO / "config" / "cell.yaml"


def test_jobs_follow_the_cell_targets() -> None:
    targets = load_cell_targets(CELL)
    jobs = jobs_from_targets(targets)
    assert [j.can for j in jobs] == ["can_0", "can_1", "can_2"]
    for job, (pick, place) in zip(jobs, targets.pairs(), strict=True):
        assert job.contact.position == pick.contact and job.place_release.position == place.place_release
        assert job.place_release.z == pytest.approx(job.place_above.z + targets.release_dz - targets.place_dz)
        assert job.above.tool_pitch == 0.0 and job.above.tool_yaw == pytest.approx(math.atan2(*pick.xy[::-1]))
    assert jobs[0].adjust_name == "place_can_0"
