"""A run's cans, progress and outcomes as the behaviour server's action reports them (runs.py)."""

from __future__ import annotations

import py_trees
import pytest
from hypothesis import given
from hypothesis import strategies as st
from py_trees.composites import Sequence

from salamander_behavior import runs
from salamander_behavior.report import CanResult, RunReport

CANS = ("can_0", "can_1", "can_2")


def test_empty_goal_means_every_can_not_yet_placed_or_missed() -> None:
    assert runs.select_cans([], CANS, set()) == CANS
    assert runs.select_cans([], CANS, {"can_1"}) == ("can_0", "can_2")
    with pytest.raises(ValueError, match="nothing left to do"):
        runs.select_cans([], CANS, set(CANS))


def test_named_cans_run_in_the_given_order() -> None:
    assert runs.select_cans(["can_2", "can_0"], CANS, set()) == ("can_2", "can_0")


@pytest.mark.parametrize(
    ("requested", "done", "reason"),
    [
        (["can_7"], set(), "unknown can id(s) 'can_7'; the cell has can_0, can_1, can_2"),
        (["can_0", "can_1", "can_0"], set(), "given more than once: 'can_0'"),
        (["can_1"], {"can_1"}, "can_1 already placed or missed"),
        # Before, each id was counted through the whole goal: 100000 of them held the server for minutes.
        (["can_0"] * 100_000, set(), "100000 can ids for a cell of 3 cans (can_0, can_1, can_2)"),
    ],
)
def test_bad_goals_are_refused_with_the_reason(requested, done, reason) -> None:
    with pytest.raises(ValueError) as err:
        runs.select_cans(requested, CANS, done)
    assert reason in str(err.value)


@given(st.lists(st.sampled_from([*CANS, "x"]), max_size=5), st.sets(st.sampled_from(CANS)))
def test_a_run_never_holds_an_unknown_repeated_or_done_can(requested, done) -> None:
    try:
        cans = runs.select_cans(requested, CANS, done)
    except ValueError:
        return
    assert cans and len(set(cans)) == len(cans) and set(cans) <= set(CANS) and not set(cans) & done


def test_outcomes_say_what_became_of_each_can() -> None:
    report = RunReport()
    report.record("can_0", CanResult.PLACED, "in box")
    report.record("can_1", CanResult.SKIPPED, "IK")
    stages = {"can_0": "released", "can_1": None, "can_2": None}
    assert runs.outcomes(CANS, report, stages) == ["placed", "skipped", "not_run"]
    assert runs.left_on_pad(CANS, report, stages) == []


def test_a_can_touched_by_a_cancelled_run_is_reported_aborted_and_blocks() -> None:
    stages = {"can_0": "holding", "can_1": None}
    assert runs.outcomes(["can_0", "can_1"], RunReport(), stages) == ["aborted", "not_run"]
    assert runs.left_on_pad(["can_0", "can_1"], RunReport(), stages) == ["can_0"]


def test_progress_names_the_running_can_and_leaf() -> None:
    leaf = py_trees.behaviours.Running("descend to can_1")
    root = Sequence(
        "pick and place",
        memory=True,
        children=[
            py_trees.behaviours.Success("arm and cell ready?"),
            Sequence("can_0", memory=True, children=[py_trees.behaviours.Success("x")]),
            Sequence("can_1", memory=True, children=[Sequence("approach", memory=True, children=[leaf])]),
        ],
    )
    assert runs.progress(root, CANS) == runs.Progress("", "")  # not ticked yet
    root.tick_once()
    assert runs.progress(root, CANS) == runs.Progress("can_1", "descend to can_1")
