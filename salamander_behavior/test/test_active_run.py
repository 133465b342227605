"""One run as the server holds it (active_run.py): snapshot, feedback, how it ends and its result."""

from __future__ import annotations

from collections.abc import Iterator

import py_trees
import pytest
from py_trees.composites import Sequence

from salamander_behavior.active_run import (
    TICK_SETTLE_S,
    TICK_STALL_S,
    ActiveRun,
    Feedback,
    RunEnd,
    snapshot_text,
)
from salamander_behavior.behaviors.base import BOX_ESTIMATE_KEY, STAGE_HOLDING, stage_key
from salamander_behavior.box_estimate import BoxEstimate
from salamander_behavior.plan import load_jobs
from salamander_behavior.report import CanResult, RunReport
from salamander_testing import REPO

CELL = REPO / "config" / "cell.yaml"
CANS = ("can_0", "can_1")


@pytest.fixture(autouse=True)
def clean_blackboard() -> Iterator[None]:
    py_trees.blackboard.Blackboard.storage.clear()
    yield
    py_trees.blackboard.Blackboard.storage.clear()


def _run(leaf: py_trees.behaviour.Behaviour | None = None, goal: object | None = None) -> ActiveRun:
    children = [Sequence("can_0", memory=True, children=[leaf or py_trees.behaviours.Running("descend")])]
    return ActiveRun(CANS, Sequence("pick and place", memory=True, children=children), RunReport(), goal)


def test_snapshot_shows_every_behavior_with_its_status() -> None:
    from salamander_behavior.mock.ports import Rig

    rig = Rig(load_jobs(CELL)[:1])
    rig.run(until=lambda: len(rig.motion.labels) == 3)
    text = snapshot_text(rig.root, rig.report)
    assert text.splitlines()[0] == "run: RUNNING (0 placed, 0 missed, 0 skipped, 0 aborted)"
    assert "above can_0 [✓]" in text and "lift can_0 [*]" in text and "over the rim can_0 [-]" in text
    assert "ManualAdjust[place_can_0]" in text


def test_feedback_is_given_once_per_change() -> None:
    run = _run(goal=object())
    run.tree.tick()
    assert run.feedback() == Feedback("can_0", "descend", 0, 2)
    assert run.feedback() is None  # nothing changed
    run.report.record("can_0", CanResult.PLACED, "in box")
    assert run.feedback() == Feedback("can_0", "descend", 1, 2)


def test_a_complete_run_succeeds_only_when_every_can_was_placed() -> None:
    run = _run()
    run.report.record("can_0", CanResult.PLACED, "in box")
    run.report.record("can_1", CanResult.SKIPPED, "IK")
    assert run.conclude(RunEnd.COMPLETE) == []
    assert run.end is RunEnd.COMPLETE and run.state is None
    assert not run.result.success
    assert run.result.outcomes == ["placed", "skipped"] and run.result.cans == list(CANS)
    assert run.result.message == "1 placed, 0 missed, 1 skipped, 0 aborted"
    everything = _run()
    for can in CANS:
        everything.report.record(can, CanResult.PLACED, "in box")
    everything.conclude(RunEnd.COMPLETE)
    assert everything.result.success


def test_a_cancel_reports_the_outcomes_and_the_can_left_on_the_pad() -> None:
    run = _run()
    run.tree.tick()
    py_trees.blackboard.Blackboard.storage[stage_key("can_0")] = STAGE_HOLDING
    run.root.stop(py_trees.common.Status.INVALID)
    assert run.conclude(RunEnd.CANCELLED) == ["can_0"]
    assert run.state == "CANCELLED" and run.snapshot().startswith("run: CANCELLED (0 placed")
    assert not run.result.success
    assert run.result.message.endswith("; cancelled, outcomes {'can_0': 'aborted', 'can_1': 'not_run'}")


def test_the_box_estimate_is_read_from_the_blackboard() -> None:
    run = _run()
    assert run.box() is None
    py_trees.blackboard.Blackboard.storage[BOX_ESTIMATE_KEY] = "not an estimate"
    assert run.box() is None
    box = BoxEstimate((0.38, -0.18))
    py_trees.blackboard.Blackboard.storage[BOX_ESTIMATE_KEY] = box
    assert run.box() is box


def test_only_the_runs_own_goal_is_cancelled_and_only_while_it_goes() -> None:
    goal = object()
    run = _run(goal=goal)
    assert not run.cancel(object()) and not run.cancel_requested
    assert run.cancel(goal) and run.cancel_requested
    assert run.tick() is RunEnd.CANCELLED and run.root.status is py_trees.common.Status.INVALID
    run.done = True
    assert not run.cancel(goal)


def test_a_tick_says_how_the_run_ended() -> None:
    assert _run().tick() is None  # running
    assert _run(py_trees.behaviours.Success("x")).tick() is RunEnd.COMPLETE
    assert _run(py_trees.behaviours.Failure("x")).tick() is RunEnd.STOPPED


def test_after_a_stall_ticks_are_skipped_until_fresh_inputs_came_and_never_for_good() -> None:
    run = _run()
    assert run.stalled(100.0) == (False, None)  # the first tick has nothing to compare with
    assert run.stalled(100.05) == (False, None)  # the tick period
    assert run.stalled(100.05 + TICK_STALL_S - 0.01) == (False, None)  # late, but within the bound
    t = 101.0
    skip, gap = run.stalled(t)  # this process stalled: skipped, and said once
    assert skip and gap == pytest.approx(t - (100.05 + TICK_STALL_S - 0.01))
    assert run.stalled(t + 0.05) == (True, None)  # fresh inputs are still coming in
    assert run.stalled(t + TICK_SETTLE_S + 0.01) == (False, None)  # the tree runs again
    assert run.stalled(t + TICK_SETTLE_S + 0.06) == (False, None)
    # A process starved for good (every tick late): every other tick still runs the tree.
    late, now, runs = TICK_STALL_S + 0.01, t + TICK_SETTLE_S + 0.06, []
    for _ in range(6):
        now += late
        runs.append(not run.stalled(now)[0])
    assert runs == [False, True, False, True, False, True]


def test_the_release_wait_ends_on_the_answer_or_after_two_lease_timeouts() -> None:
    from rclpy.task import Future

    run = _run()
    answer = Future()
    run.await_release(answer, 10.0, 2.0)
    assert not run.released(13.9) and run.released(14.1)
    answer.set_result(True)
    assert run.released(10.0)
    run.await_release(None, 10.0, 0.1)  # no RELEASE sent: nothing to wait for
    assert run.released(10.0)
    run.await_release(Future(), 10.0, 0.1)  # at least RELEASE_WAIT_MIN_S
    assert not run.released(10.9) and run.released(11.1)
