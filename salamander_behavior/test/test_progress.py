"""The run's progress file: round trip, atomic write, bad content, and what a resumed run picks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from salamander_behavior import progress, runs
from salamander_behavior.behaviors.base import STAGE_GRIPPED, STAGE_HOLDING, STAGE_LET_GO, STAGE_REMOVED
from salamander_behavior.box_estimate import BoxEstimate, Evidence
from salamander_behavior.progress import RunProgress
from salamander_behavior.report import CanResult, RunReport

CANS = ("can_0", "can_1", "can_2")


def test_round_trip_through_the_file(tmp_path) -> None:
    path = tmp_path / "a" / "progress.json"
    state = RunProgress({"can_0": "placed", "can_1": "aborted"}, "can_1")
    progress.save(path, state)
    assert progress.load(path, CANS) == (state, [])
    assert [p.name for p in path.parent.iterdir()] == ["progress.json"]  # no temporary file left


def test_a_missing_file_is_a_fresh_start_without_a_warning(tmp_path) -> None:
    assert progress.load(tmp_path / "none.json", CANS) == (RunProgress(), [])


def test_corrupt_or_unknown_content_starts_fresh_with_a_warning(tmp_path) -> None:
    path = tmp_path / "progress.json"
    for text in ("{not json", "[]", '{"version": 9}', json.dumps({"version": 1, "cans": {"can_0": "eaten"}}),
                 json.dumps({"version": 1, "cans": [], "carrying": None}), "\xff",
                 json.dumps({"version": 1, "cans": {"can_0": ["placed"]}, "carrying": None}),  # hand-edited
                 "[" * 100000 + "]" * 100000):  # fmt: skip
        path.write_text(text)
        state, warnings = progress.load(path, CANS)
        assert state == RunProgress() and len(warnings) == 1 and "starting fresh" in warnings[0], text
    path.write_bytes(b"\xff\xfe")
    state, warnings = progress.load(path, CANS)
    assert state == RunProgress() and "starting fresh" in warnings[0]


def test_cans_the_cell_does_not_know_are_dropped_with_a_warning(tmp_path) -> None:
    path = tmp_path / "progress.json"
    data = {"version": 1, "cans": {"can_0": "placed", "can_7": "placed"}, "carrying": "can_7"}
    path.write_text(json.dumps(data))
    state, warnings = progress.load(path, CANS)
    assert state == RunProgress({"can_0": "placed"}, None) and len(warnings) == 2


def test_default_path_is_under_ros_home_per_node() -> None:
    path = progress.default_path("/cell2/salamander/behavior_server_node", {"ROS_HOME": "/r"})
    assert str(path) == "/r/salamander/cell2_salamander_behavior_server_node/progress.json"
    assert str(progress.default_path("/x", {})).endswith(".ros/salamander/x/progress.json")


def test_a_progress_dir_from_the_environment_replaces_ros_home() -> None:
    env = {"ROS_HOME": "/r", progress.PROGRESS_DIR_ENV: "/tmp/fresh"}
    path = progress.default_path("/salamander/behavior_server_node", env)
    assert path == Path("/tmp/fresh/salamander_behavior_server_node/progress.json")


def test_observe_records_carrying_let_go_outcomes_and_removal() -> None:
    report = RunReport()
    state = progress.observe(RunProgress(), CANS, {"can_0": STAGE_HOLDING}, report)
    assert state.carrying == "can_0" and state.cans == {}
    state = progress.observe(state, CANS, {"can_0": STAGE_GRIPPED}, report)
    assert state.carrying == "can_0"
    state = progress.observe(state, CANS, {"can_0": STAGE_LET_GO}, report)
    assert state == RunProgress({"can_0": "placed"}, None)
    report.record("can_0", CanResult.ABORTED, "the rise failed")  # let go over the box: stays placed
    report.record("can_1", CanResult.SKIPPED, "IK")
    state = progress.observe(state, CANS, {"can_0": STAGE_LET_GO}, report)
    assert state == RunProgress({"can_0": "placed", "can_1": "skipped"}, None)
    state = progress.observe(state, CANS, {"can_2": STAGE_HOLDING}, RunReport())
    state = progress.observe(state, CANS, {"can_2": STAGE_REMOVED}, RunReport())
    assert state.cans["can_2"] == "removed" and state.carrying is None


def test_a_resumed_run_picks_only_the_cans_not_yet_done() -> None:
    state = RunProgress({"can_0": "placed", "can_1": "aborted", "can_2": "skipped"}, "can_1")
    assert runs.select_cans([], CANS, state.done(), state.final()) == ("can_1", "can_2")
    removed = RunProgress({"can_0": "placed", "can_1": "removed"})
    assert runs.select_cans([], CANS, removed.done(), removed.final()) == ("can_2",)
    # A can removed by hand may be named again (put back at its spot); one in the box may not.
    assert runs.select_cans(["can_1"], CANS, removed.done(), removed.final()) == ("can_1",)
    try:
        runs.select_cans(["can_0"], CANS, removed.done(), removed.final())
    except ValueError as exc:
        assert "already placed" in str(exc)
    else:
        raise AssertionError("can_0 is in the box")


def test_the_operators_kept_sets_go_with_the_progress_until_a_reset() -> None:
    state = RunProgress({"can_0": "placed"}, "can_1").with_operator_param("manual_place", True)
    state = state.with_state("can_1", "aborted").with_carrying(None).with_operator_param("allow_z", True)
    assert state.operator_params == {"manual_place": True, "allow_z": True}
    assert "operator set manual_place=True, allow_z=True" in state.describe()
    # The reset after a finished batch keeps them; an explicit reset is a fresh RunProgress().
    assert state.next_batch() == RunProgress(operator_params={"manual_place": True, "allow_z": True})
    try:
        state.with_operator_param("manual_place", [1])
    except ValueError as exc:
        assert "bool, number or string" in str(exc)
    else:
        raise AssertionError("a list is not a parameter value the file keeps")


def test_kept_sets_round_trip_and_an_older_file_has_none(tmp_path) -> None:
    path = tmp_path / "progress.json"
    state = RunProgress({"can_0": "placed"}, None, {"manual_place": True, "max_offset_z": 0.02})
    progress.save(path, state)
    assert json.loads(path.read_text())["operator_params"] == {"manual_place": True, "max_offset_z": 0.02}
    assert progress.load(path, CANS) == (state, [])
    path.write_text(json.dumps({"version": 1, "cans": {"can_0": "placed"}, "carrying": None}))
    assert progress.load(path, CANS) == (RunProgress({"can_0": "placed"}), [])
    for bad in ([], {"manual_place": None}, {"manual_place": [True]}):
        path.write_text(json.dumps({"version": 1, "cans": {}, "carrying": None, "operator_params": bad}))
        state, warnings = progress.load(path, CANS)
        assert state == RunProgress() and "starting fresh" in warnings[0], bad


def test_a_lost_can_is_kept_until_acknowledged_and_holds_the_batch_open(tmp_path) -> None:
    path = tmp_path / "progress.json"
    state = RunProgress({"can_0": "placed", "can_1": "placed", "can_2": "lost"})
    progress.save(path, state)
    assert progress.load(path, CANS) == (state, [])
    assert state.lost() == {"can_2"} and "can_2" in state.done() and "can_2" not in state.final()
    assert not state.batch_done(CANS)  # the automatic reset must not forget it
    acknowledged = progress.observe(state, ("can_2",), {"can_2": STAGE_REMOVED}, RunReport())
    assert acknowledged.cans["can_2"] == "removed" and acknowledged.batch_done(CANS)
    # A goal naming the lost can picks it (the run asks for the confirmation first).
    assert runs.select_cans(["can_2"], CANS, state.done(), state.final(), state.lost()) == ("can_2",)


def _box() -> BoxEstimate:
    return BoxEstimate((0.38, -0.18)).with_evidence(
        Evidence("can_0", (0.3069, -0.18), (0.0012, -0.0004), "manual", 0)
    ).with_evidence(Evidence("can_2", (0.4531, -0.18), (0.0016, 0.0002), "search", 2))


def test_the_box_estimate_survives_a_save_and_load(tmp_path) -> None:
    path = tmp_path / "progress.json"
    state = RunProgress({"can_0": "placed"}, None, {"manual_place": True}, _box())
    progress.save(path, state)
    loaded, warnings = progress.load(path, CANS)
    assert warnings == [] and loaded == state
    assert loaded.box is not None and loaded.box.mean == state.box.mean and loaded.box.count == 2


def test_the_box_estimate_belongs_to_the_box_not_the_batch() -> None:
    state = RunProgress({c: "placed" for c in CANS}, None, {}, _box())
    assert state.batch_done(CANS)
    assert state.next_batch().box == state.box
    assert state.with_state("can_0", "placed").box == state.box
    assert state.with_carrying("can_1").box == state.box
    assert state.with_operator_param("allow_z", True).box == state.box
    assert state.with_box(None).box is None and state.with_box(None).cans == state.cans


def test_a_hand_edited_box_centre_drops_the_box_not_the_cans(tmp_path) -> None:
    path = tmp_path / "progress.json"
    huge = "1" + "0" * 400  # a JSON integer too large for a float: OverflowError, once the whole file
    path.write_text('{"version": 1, "cans": {"can_0": "placed"}, "carrying": null, '
                    f'"box": {{"centre": [{huge}, 0], "evidence": []}}}}')  # fmt: skip
    state, warnings = progress.load(path, CANS)
    assert state == RunProgress({"can_0": "placed"}) and len(warnings) == 1, warnings
    assert "the box estimate is unusable" in warnings[0] and len(warnings[0]) < 300


@pytest.mark.parametrize("compartment", [float("inf"), 1e400, 1.5, True, "1", [1]])
def test_a_hand_edited_compartment_drops_the_box_never_the_node(tmp_path, compartment: Any) -> None:
    # Before, inf raised OverflowError and a list TypeError out of `load`: the server died at every start.
    path = tmp_path / "progress.json"
    evidence = {"can": "can_0", "planned": [0.3, -0.18], "offset": [0.001, 0.0], "source": "manual",
                "compartment": compartment}  # fmt: skip
    path.write_text(json.dumps({"version": 1, "cans": {"can_0": "placed"}, "carrying": None,
                                "box": {"centre": [0.38, -0.18], "evidence": [evidence]}}))  # fmt: skip
    state, warnings = progress.load(path, CANS)
    assert state == RunProgress({"can_0": "placed"}) and len(warnings) == 1, warnings
    assert "the box estimate is unusable" in warnings[0]


def test_a_bad_box_estimate_is_dropped_with_a_warning_and_the_rest_kept(tmp_path) -> None:
    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"version": 1, "cans": {"can_0": "placed"}, "carrying": None,
                                "box": {"centre": [0.38, -0.18], "evidence": [{"can": "can_0"}]}}))
    loaded, warnings = progress.load(path, CANS)
    assert loaded == RunProgress({"can_0": "placed"}) and len(warnings) == 1 and "box estimate" in warnings[0]


def test_observe_takes_the_runs_box_estimate_and_keeps_the_old_one_without() -> None:
    old = RunProgress({}, None, {}, _box())
    newer = _box().with_evidence(Evidence("can_1", (0.38, -0.18), (0.001, 0.0), "manual", 1))
    assert progress.observe(old, CANS, {}, RunReport(), newer).box == newer
    assert progress.observe(old, CANS, {}, RunReport(), None).box == old.box
    assert progress.observe(old, CANS, {}, RunReport(), old.box) is old
