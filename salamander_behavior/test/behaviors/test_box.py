"""The box estimate in the tree, on fakes: ManualPlaceOff applies it, ManualAdjust starts from it, a can
placed with a ManualAdjust or search offset updates it (one log line), an estimated offset does not."""

from __future__ import annotations

import math
from dataclasses import replace

import py_trees
import pytest
from py_trees.common import Status

from salamander_behavior.behaviors.base import (
    BOX_ESTIMATE_KEY,
    OFFSET_ESTIMATE,
    OFFSET_MANUAL,
    OFFSET_PLAN,
    OFFSET_SEARCH,
    offset_key,
    offset_source_key,
)
from salamander_behavior.behaviors.box import BoxEvidence, estimated_offset
from salamander_behavior.box_estimate import BoxEstimate, Evidence
from salamander_behavior.mock.ports import Rig
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import load_jobs
from salamander_testing import REPO

JOBS = load_jobs(REPO / "config" / "cell.yaml")
JOB = JOBS[0]
ADJUST = "ManualAdjust[place_can_0]"
LINE = "box estimate: offset ("


def estimate_from(job_index: int, offset: tuple[float, float], can: str = "can_9") -> BoxEstimate:
    job = JOBS[job_index]
    return BoxEstimate(job.centre).with_evidence(Evidence(can, job.planned_xy, offset, OFFSET_MANUAL))


def board_estimate() -> BoxEstimate | None:
    return py_trees.blackboard.Blackboard.storage.get(BOX_ESTIMATE_KEY)


def released_offset(rig: Rig, job=JOB) -> tuple[float, float]:
    at = rig.gripper.releases[0].at
    return (at.x - job.place_release.x, at.y - job.place_release.y)


def test_the_box_centre_is_the_middle_of_the_compartments() -> None:
    assert JOB.centre == pytest.approx((0.38, -0.18), abs=1e-9)
    assert all(job.centre == JOB.centre for job in JOBS)


def test_without_an_estimate_the_can_goes_to_the_plan_and_is_no_evidence() -> None:
    rig = Rig([JOB])
    assert rig.run() == "SUCCESS"
    assert released_offset(rig) == pytest.approx((0.0, 0.0), abs=1e-12)
    assert py_trees.blackboard.Blackboard.storage[offset_source_key("can_0")] == OFFSET_PLAN
    assert board_estimate() is None and LINE not in rig.log.text()


def test_manual_place_off_applies_the_estimate_and_that_is_no_new_evidence() -> None:
    box = estimate_from(1, (0.004, -0.002))  # seen in compartment 1: the same shift everywhere
    rig = Rig([JOB], box=box)
    assert rig.run() == "SUCCESS"
    expected = box.offset_at(JOB.planned_xy)
    assert math.hypot(*expected) > 0.003
    assert released_offset(rig) == pytest.approx(expected, abs=1e-9)
    rise = [h.request.target for h in rig.motion.handles if h.request.label == "rise"][0]
    assert (rise.x - JOB.place_above.x, rise.y - JOB.place_above.y) == pytest.approx(expected, abs=1e-9)
    assert py_trees.blackboard.Blackboard.storage[offset_source_key("can_0")] == OFFSET_ESTIMATE
    assert "can_0: placed at the box estimate's offset [" in rig.log.text()
    assert board_estimate() == box  # an estimated offset only confirms itself: not evidence
    assert LINE not in rig.log.text()


@pytest.mark.parametrize("settings", [BehaviorSettings(box_estimate=False), BehaviorSettings()])
def test_the_plan_when_the_estimate_is_off_or_empty(settings: BehaviorSettings) -> None:
    box = estimate_from(1, (0.004, -0.002)) if not settings.box_estimate else BoxEstimate(JOB.centre)
    rig = Rig([JOB], settings=settings, box=box)
    assert rig.run() == "SUCCESS"
    assert released_offset(rig) == pytest.approx((0.0, 0.0), abs=1e-12)
    assert py_trees.blackboard.Blackboard.storage[offset_source_key("can_0")] == OFFSET_PLAN


def test_an_estimate_beyond_thirty_mm_is_applied_at_thirty_mm() -> None:
    box = BoxEstimate(JOB.centre).with_evidence(Evidence("can_9", JOB.planned_xy, (0.5, 0.0), OFFSET_MANUAL))
    offset, source = estimated_offset(box, BehaviorSettings(), JOB.planned_xy)
    assert source == OFFSET_ESTIMATE and math.hypot(*offset) == pytest.approx(0.030)


def test_manual_adjust_starts_from_the_estimate_and_a_bare_confirm_is_evidence() -> None:
    box = estimate_from(1, (0.004, -0.002))
    rig = Rig([JOB], settings=BehaviorSettings(manual_place=True), box=box)
    rig.run(until=lambda: rig.leaf(ADJUST).status is Status.RUNNING)
    start = box.offset_at(JOB.planned_xy)
    nudges = [h.request.target for h in rig.motion.handles if h.request.label == ADJUST]
    assert len(nudges) == 1  # the arm goes to the estimate first
    assert (nudges[0].x - JOB.place_above.x, nudges[0].y - JOB.place_above.y) == pytest.approx(start)
    assert "+ the box estimate's offset [" in rig.log.text()
    for _ in range(40):
        rig.tick()  # the nudge arrives
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    assert released_offset(rig) == pytest.approx(start, abs=1e-9)
    assert py_trees.blackboard.Blackboard.storage[offset_source_key("can_0")] == OFFSET_MANUAL
    after = board_estimate()
    assert after is not None and after.count == 2 and after.evidence[-1].can == "can_0"
    assert after.yaw_observable  # compartments 1 and 0 seen
    lines = [m for _, m in rig.log.lines if m.startswith(LINE)]
    assert len(lines) == 1 and lines[0].endswith("from can_0 (ManualAdjust)")


def test_manual_adjust_keeps_its_thirty_mm_from_the_planned_target_when_starting_off() -> None:
    box = estimate_from(1, (0.025, 0.0))
    rig = Rig([JOB], settings=BehaviorSettings(manual_place=True), box=box)
    rig.run(until=lambda: rig.leaf(ADJUST).status is Status.RUNNING)
    for _ in range(40):
        rig.jog(0.05, 0.0)
        rig.tick()
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    dx, dy = released_offset(rig)
    assert math.hypot(dx, dy) == pytest.approx(0.030, abs=1e-9)


def nudge_and_confirm(rig: Rig, vx: float, vy: float) -> None:
    """Wait for ManualAdjust on can_0, jog at (vx, vy) m/s for 10 ticks, let the nudge arrive, confirm."""
    rig.run(until=lambda: rig.leaf(ADJUST).status is Status.RUNNING)
    for _ in range(10):
        rig.jog(vx, vy)
        rig.tick()
    for _ in range(10):
        rig.tick()
    rig.confirm(True)


def test_a_first_manual_placement_makes_the_first_estimate() -> None:
    rig = Rig([JOB], settings=BehaviorSettings(manual_place=True))
    nudge_and_confirm(rig, 0.0, 0.02)
    assert rig.run() == "SUCCESS"
    estimate = board_estimate()
    assert estimate is not None and estimate.count == 1 and estimate.centre == JOB.centre
    noise = BehaviorSettings().estimate_noise  # one confirm against the prior: weighed by their variances
    w = (noise.sigma_xy / noise.noise_manual) ** 2
    assert estimate.offset[1] == pytest.approx(released_offset(rig)[1] * w / (w + 1), rel=0.01)


@pytest.mark.parametrize("source, evidence", [(OFFSET_SEARCH, True), (OFFSET_MANUAL, True),
                                              (OFFSET_ESTIMATE, False), (OFFSET_PLAN, False), (None, False)])
def test_box_evidence_takes_search_and_manual_offsets_only(source: str | None, evidence: bool) -> None:
    rig = Rig([JOB])  # its ports and a clean blackboard
    board = py_trees.blackboard.Blackboard
    board.set(offset_key("can_0"), (0.0015, -0.001, 0.0))
    if source is not None:
        board.set(offset_source_key("can_0"), source)
    leaf = BoxEvidence("box evidence", "can_0", 0, JOB.planned_xy, JOB.centre)
    leaf.setup(ports=rig.ports)
    leaf.tick_once()
    assert leaf.status is Status.SUCCESS
    estimate = board_estimate()
    assert (estimate is not None) is evidence
    if evidence:
        word = "search" if source == OFFSET_SEARCH else "ManualAdjust"
        assert rig.log.lines[-1][1].endswith(f"from can_0 ({word})")
        assert estimate.evidence[0].offset == (0.0015, -0.001) and estimate.evidence[0].compartment == 0


def test_box_evidence_refuses_a_non_finite_offset_with_a_warning() -> None:
    rig = Rig([JOB])
    board = py_trees.blackboard.Blackboard
    board.set(offset_key("can_0"), (math.nan, 0.0, 0.0))
    board.set(offset_source_key("can_0"), OFFSET_SEARCH)
    leaf = BoxEvidence("box evidence", "can_0", 0, JOB.planned_xy, JOB.centre)
    leaf.setup(ports=rig.ports)
    leaf.tick_once()
    assert leaf.status is Status.SUCCESS and board_estimate() is None
    assert "left out" in rig.log.text()


KNOWN = BehaviorSettings(manual_place=True, manual_place_known_m=0.0012)
"""The operator places a can only while the estimate knows its compartment worse than 1.2 mm (1 sigma)."""


def test_with_manual_place_known_a_can_the_estimate_knows_goes_in_without_the_operator() -> None:
    box = estimate_from(1, (0.004, -0.002))  # one confirm in compartment 1: compartment 0 to ~0.9 mm
    assert max(box.with_noise(KNOWN.estimate_noise).sigma_at(JOB.planned_xy)) < KNOWN.manual_place_known_m
    rig = Rig([JOB], settings=KNOWN, box=box)
    assert rig.run() == "SUCCESS"
    assert ADJUST not in rig.motion.labels  # no wait for the operator: the arm never went to nudge
    assert released_offset(rig) == pytest.approx(box.offset_at(JOB.planned_xy), abs=1e-9)
    assert py_trees.blackboard.Blackboard.storage[offset_source_key("can_0")] == OFFSET_ESTIMATE
    assert "can_0: placed at the box estimate's offset [" in rig.log.text()
    assert "no operator needed" in rig.log.text() and "manual_place_known_m 1.20 mm" in rig.log.text()
    assert board_estimate() == box  # the estimate's own offset is no new evidence


@pytest.mark.parametrize(
    "settings, box",
    [
        (KNOWN, None),  # no estimate yet: the operator places the box's first can
        (replace(KNOWN, manual_place_known_m=0.0005), "one confirm"),  # known to ~0.9 mm only
        (replace(KNOWN, manual_place_known_m=0.0), "one confirm"),  # 0: the operator places every can
        (replace(KNOWN, box_estimate=False), "one confirm"),  # the estimate is not used
    ],
)
def test_with_manual_place_known_the_operator_places_a_can_the_estimate_does_not_know(
    settings: BehaviorSettings, box: str | None
) -> None:
    rig = Rig([JOB], settings=settings, box=estimate_from(1, (0.004, -0.002)) if box else None)
    rig.run(until=lambda: rig.leaf(ADJUST).status is Status.RUNNING)
    assert rig.leaf("manual_place off?").feedback_message.endswith("the operator places this can")
    assert not rig.gripper.releases
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    assert py_trees.blackboard.Blackboard.storage[offset_source_key("can_0")] == OFFSET_MANUAL


def test_with_manual_place_known_the_operator_places_a_boxs_first_can_and_the_tree_the_next() -> None:
    rig = Rig(JOBS[:2], settings=KNOWN)
    nudge_and_confirm(rig, 0.02, 0.0)  # can_0 confirmed where the estimate had nothing: the first evidence
    assert rig.run() == "SUCCESS"
    assert [r.can for r in rig.gripper.releases] == ["can_0", "can_1"]
    assert "ManualAdjust[place_can_1]" not in rig.motion.labels
    storage = py_trees.blackboard.Blackboard.storage
    assert storage[offset_source_key("can_0")] == OFFSET_MANUAL
    assert storage[offset_source_key("can_1")] == OFFSET_ESTIMATE
    assert "can_1: placed at the box estimate's offset [" in rig.log.text()
