"""The tree snapshot reader, against the behaviour server's own snapshot function."""

from __future__ import annotations

import py_trees
import pytest

from salamander_behavior.active_run import snapshot_text
from salamander_behavior.report import CanResult, RunReport
from salamander_view.snapshot import ManualWait, parse


def _run_tree(waiting: bool) -> tuple[py_trees.behaviour.Behaviour, RunReport]:
    root = py_trees.composites.Sequence("PickAndPlace", memory=True)
    can_0 = py_trees.composites.Sequence("can_0", memory=True)
    can_0.add_child(py_trees.behaviours.Success("place_release"))
    can_1 = py_trees.composites.Sequence("can_1", memory=True)
    sel = py_trees.composites.Selector("place_can_1", memory=False)
    leaf = py_trees.behaviours.Running("ManualAdjust[place_can_1]" if waiting else "transit")
    sel.add_child(leaf)
    can_1.add_children([py_trees.behaviours.Success("pick"), sel])
    root.add_children([can_0, can_1])
    root.tick_once()
    leaf.feedback_message = "waiting for the operator: offset [4.0, -2.5, 0.0] mm, 1.2 of 120 s"
    report = RunReport()
    report.record("can_0", CanResult.PLACED, "released over compartment 0")
    return root, report


def test_running_step_can_outcomes_and_manual_wait():
    root, report = _run_tree(waiting=True)
    snap = parse(snapshot_text(root, report), ("can_0", "can_1"))
    assert snap.state == "RUNNING" and snap.running
    assert snap.outcomes == {"can_0": "placed"}
    assert snap.can == "can_1"
    assert snap.step == "ManualAdjust[place_can_1]"
    assert snap.manual == ManualWait("place_can_1", (4.0, -2.5, 0.0))


def test_no_manual_wait_while_another_leaf_runs():
    root, report = _run_tree(waiting=False)
    snap = parse(snapshot_text(root, report), ("can_0", "can_1"))
    assert snap.step == "transit" and snap.manual is None


def test_cancelled_and_idle_heads():
    root, report = _run_tree(waiting=False)
    root.stop(py_trees.common.Status.INVALID)
    snap = parse(snapshot_text(root, report, "CANCELLED"), ("can_0", "can_1"))
    assert snap.state == "CANCELLED" and not snap.running and snap.step == "" and snap.manual is None
    idle = parse("run: IDLE (no run yet: start one with the RunPickPlace action)")
    assert idle.state == "IDLE" and not idle.running


@pytest.mark.parametrize("text", ["", "garbage", "run:"])
def test_unknown_text_is_unknown_not_an_error(text):
    assert parse(text).state == "UNKNOWN"
