"""A can lost in transit: recorded "lost", and the next run does not move before the operator's confirmation.

Over fakes (mock/ports.py `Rig`). The first run loses can_0 during its carry; its progress is taken
from the tree as the node does (`progress.observe` over the blackboard stages and the report); the
next run is built from that progress as the node builds it (`lost` and `held` from the progress).
"""

from __future__ import annotations

from salamander_behavior import progress, runs
from salamander_behavior.behaviors.base import STAGE_LOST, STAGE_REMOVED
from salamander_behavior.mock.ports import Rig
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import load_jobs
from salamander_behavior.progress import RunProgress
from salamander_behavior.report import CanResult
from salamander_testing import REPO

JOBS = load_jobs(REPO / "config" / "cell.yaml")
CANS = tuple(job.can for job in JOBS)
WAITING = "fell off the pad in transit in an earlier run"


def observed(rig: Rig, before: RunProgress, cans: tuple[str, ...]) -> RunProgress:
    """The run's progress after `rig`'s run, as the node records it."""
    stages = {can: runs.stage_of(can) for can in cans}
    return progress.observe(before, cans, stages, rig.report)


def lose_can_0() -> tuple[Rig, RunProgress]:
    """A run of can_0 and can_1 that loses can_0 during the carry; its rig and recorded progress."""
    rig = Rig(JOBS[:2])
    state = RunProgress()
    rig.run(until=lambda: "carry can_0" in rig.motion.labels)
    state = observed(rig, state, CANS[:2])
    assert state.carrying == "can_0"
    rig.gripper.holding = None  # torn off the pad on the way to the box
    assert rig.run() == "FAILURE"
    return rig, observed(rig, state, CANS[:2])


def next_run(state: RunProgress, jobs=JOBS[1:2], **config) -> Rig:
    """The next run as the node builds it from `state` (lost cans lead; the carried one is offered)."""
    held = next((job for job in JOBS if job.can == state.carrying), None)
    lost = tuple(can for can in CANS if can in state.lost())
    return Rig(jobs, settings=BehaviorSettings(**config), held=held, lost=lost)


def waiting(rig: Rig) -> bool:
    return any(WAITING in m for _, m in rig.log.lines)


def test_a_can_lost_in_transit_is_recorded_lost_and_the_abort_line_asks_for_the_confirmation() -> None:
    rig, state = lose_can_0()
    assert runs.stage_of("can_0") == STAGE_LOST
    assert rig.report.result_of("can_0") is CanResult.ABORTED
    assert runs.outcomes(CANS[:2], rig.report, {"can_0": STAGE_LOST}) == ["lost", "not_run"]
    assert state == RunProgress({"can_0": "lost"}, None)  # not carried any more, and not "aborted"
    assert state.lost() == {"can_0"} and not state.batch_done(["can_0"])
    line = next(m for level, m in rig.log.lines if level == "error" and "aborted, run stopped" in m)
    assert "may lie anywhere in the cell" in line
    assert "the next run does not move before the operator confirms the cell is clear" in line
    assert "true on /salamander/operator/confirm" in line and "no restart needed" in line
    assert "restart the behaviour server" not in rig.log.text()
    assert rig.gripper.commands == [True]  # never switched off outside the box


def test_the_next_run_does_not_move_before_the_operator_confirms_the_cell_is_clear() -> None:
    _, state = lose_can_0()
    rig = next_run(state)
    rig.confirm(True)  # before the wait began: does not count
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    assert waiting(rig)
    rig.run(max_ticks=200)
    assert rig.root.status.value == "RUNNING"
    assert rig.motion.labels == [] and rig.gripper.commands == []  # nothing moved, the valve untouched
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    assert rig.motion.labels[0] == "above can_1" and rig.report.result_of("can_1") is CanResult.PLACED
    assert "confirmed the cell is clear of can_0" in rig.log.text()
    # Acknowledged: can_0 counts as taken away (an empty goal leaves it out; naming it picks it again).
    assert runs.stage_of("can_0") == STAGE_REMOVED
    after = observed(rig, state, ("can_0", "can_1"))
    assert after == RunProgress({"can_0": "removed", "can_1": "placed"}, None) and not after.lost()


def test_confirm_false_or_no_answer_stops_the_run_where_it_stands_and_the_can_stays_lost() -> None:
    _, state = lose_can_0()
    rig = next_run(state)
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    rig.confirm(False)
    assert rig.run() == "FAILURE" and rig.motion.labels == []
    assert "stopped by the operator: can_0 still to be confirmed clear" in rig.log.text()
    assert observed(rig, state, ("can_0", "can_1")).lost() == {"can_0"}

    rig = next_run(state, pad_wait_timeout_s=2.0)
    assert rig.run() == "FAILURE" and rig.motion.labels == []
    assert 40 <= rig.ticks <= 44  # 2 s at 0.05 s a tick
    assert "no confirmation within 2 s that the cell is clear of can_0: not moving" in rig.log.text()


def test_with_only_the_lost_can_left_a_run_is_the_confirmation_alone_and_ends_the_batch() -> None:
    state = RunProgress({"can_0": "placed", "can_1": "placed", "can_2": "lost"})
    assert runs.select_cans([], CANS, state.done(), state.final(), state.lost()) == ()
    rig = next_run(state, jobs=())
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    rig.confirm(True)
    assert rig.run() == "SUCCESS" and rig.motion.labels == []
    after = observed(rig, state, ("can_2",))
    assert after.cans["can_2"] == "removed" and after.batch_done(CANS)
