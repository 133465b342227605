"""The server's run progress and the decisions that read it (progress_keeper.py), without ROS."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from salamander_behavior import progress
from salamander_behavior.behaviors.base import STAGE_HOLDING
from salamander_behavior.box_estimate import BoxEstimate, EstimateNoise, Evidence
from salamander_behavior.progress import RunProgress
from salamander_behavior.progress_keeper import RESET_TEXT, ProgressKeeper, ProgressNotWritten, reset_text
from salamander_behavior.report import RunReport

CANS = ("can_0", "can_1", "can_2")
EVIDENCE = Evidence("can_0", (0.3069, -0.18), (0.0012, -0.0004), "manual", 0)
BOX = BoxEstimate((0.38, -0.18), evidence=(EVIDENCE,))
LAUNCH = {"manual_place": False, "allow_z": False, "max_offset_z": 0.03}


def _keeper(tmp_path: Path, state: RunProgress | None = None) -> ProgressKeeper:
    path = tmp_path / "progress.json"
    if state is not None:
        progress.save(path, state)
    return ProgressKeeper(path, CANS, pytest.fail)  # no write fails here


def test_it_reads_the_file_and_writes_every_change(tmp_path) -> None:
    keeper = _keeper(tmp_path, RunProgress({"can_0": "placed"}, "can_1"))
    assert keeper.progress == RunProgress({"can_0": "placed"}, "can_1") and keeper.warnings == []
    keeper.store(keeper.progress.with_carrying(None))  # waits for its write
    assert progress.load(keeper.path, CANS)[0] == RunProgress({"can_0": "placed"})


def test_a_failed_write_is_reported_and_the_progress_in_memory_stays(tmp_path) -> None:
    errors: list[str] = []
    (tmp_path / "progress.json").mkdir()  # a folder where the file should be: the write fails
    keeper = ProgressKeeper(tmp_path / "progress.json", CANS, errors.append)
    keeper.store(RunProgress({"can_0": "placed"}))
    assert keeper.progress == RunProgress({"can_0": "placed"})
    assert len(errors) == 1 and errors[0].startswith("run progress: cannot write ")
    assert errors[0].endswith("; a restart would not know it")


def test_a_ticks_store_never_waits_for_the_disk_and_the_writes_land_in_order(tmp_path, monkeypatch) -> None:
    keeper = _keeper(tmp_path, RunProgress())
    disk_free, saves = threading.Event(), []
    real_save = progress.save

    def slow_save(path: Path, state: RunProgress) -> None:  # a disk that holds every fsync until freed
        assert disk_free.wait(10.0)
        saves.append(state)
        real_save(path, state)

    monkeypatch.setattr(progress, "save", slow_save)
    keeper.store(RunProgress({}, "can_0"), wait=False)
    keeper.store(RunProgress({"can_0": "placed"}), wait=False)  # returned although the first write hangs
    assert keeper.progress == RunProgress({"can_0": "placed"}) and not keeper.flush(0.0)
    disk_free.set()
    assert keeper.flush(5.0)
    assert saves == [RunProgress({}, "can_0"), RunProgress({"can_0": "placed"})]
    assert progress.load(keeper.path, CANS)[0] == RunProgress({"can_0": "placed"})


def test_refusals_say_why(tmp_path) -> None:
    keeper = _keeper(tmp_path, RunProgress({"can_0": "placed"}))
    assert keeper.refusal([], shutting_down=True, active=False) == ((), "the server is shutting down")
    busy = "a run is active (cancel it first, or wait for its result)"
    assert keeper.refusal([], False, True) == ((), busy)
    assert keeper.refusal([], False, False) == (("can_1", "can_2"), "")
    cans, why = keeper.refusal(["can_0"], False, False)
    assert cans == () and why.startswith("can_0 already placed or missed")


def test_lost_cans_then_the_carried_one_lead_the_run_and_the_carried_one_is_not_picked(tmp_path) -> None:
    keeper = _keeper(tmp_path, RunProgress({"can_2": "lost"}, "can_1"))
    order = keeper.run_order(["can_0", "can_1"])
    assert order.cans == ("can_2", "can_1", "can_0") and order.picks == ("can_0",)
    assert order.held == "can_1" and order.lost == ("can_2",)
    in_the_box = _keeper(tmp_path, RunProgress({"can_1": "placed"}, "can_1"))
    assert in_the_box.held() is None  # a can in the box is not carried, whatever the file says


def test_observing_the_run_records_the_carried_can_and_the_box(tmp_path) -> None:
    keeper = _keeper(tmp_path)
    assert not keeper.observe(CANS, {"can_0": STAGE_HOLDING}, RunReport(), None)
    assert keeper.progress.carrying == "can_0"
    assert keeper.observe(CANS, {}, RunReport(), BOX)  # the box changed
    assert not keeper.observe(CANS, {}, RunReport(), BOX)


def test_a_finished_batch_starts_the_next_and_keeps_the_box_and_the_operators_sets(tmp_path) -> None:
    keeper = _keeper(tmp_path, RunProgress(dict.fromkeys(CANS, "placed"), None, {"allow_z": True}, BOX))
    assert keeper.batch_done()
    keeper.next_batch()
    assert keeper.progress == RunProgress({}, None, {"allow_z": True}, BOX)
    assert not keeper.batch_done()


def test_the_reset_forgets_the_cans_and_the_sets_but_not_the_box(tmp_path) -> None:
    keeper = _keeper(tmp_path, RunProgress({"can_0": "placed"}, "can_1", {"manual_place": True}, BOX))
    assert keeper.reset() == ({"manual_place": True}, None)
    assert progress.load(keeper.path, CANS)[0] == RunProgress(box=BOX)
    assert reset_text({}, LAUNCH) == RESET_TEXT
    assert reset_text({"manual_place": True}, LAUNCH) == (
        RESET_TEXT + "; the operator's kept sets are forgotten, back to the launch file's: "
        "manual_place false (launch file), allow_z false (launch file), max_offset_z 0.03 (launch file)"
    )


def test_a_new_box_forgets_the_estimate(tmp_path) -> None:
    keeper = _keeper(tmp_path, RunProgress({"can_0": "placed"}, box=BOX))
    centre, noise = (0.38, -0.18), EstimateNoise()
    assert keeper.box(centre, noise).count == 1
    assert keeper.new_box().startswith("new box: the box estimate is reset (it rested on 1 can(s))")
    assert keeper.progress == RunProgress({"can_0": "placed"}) and keeper.box(centre, noise).empty
    assert "(it rested on 0 can(s))" in keeper.new_box()


def _fail_writes(keeper: ProgressKeeper) -> None:
    """From now on every write of `keeper` fails: a folder (not empty) stands where its file is replaced."""
    keeper.path.unlink()
    keeper.path.mkdir()
    (keeper.path / "x").touch()


def test_an_operators_change_that_is_not_written_is_answered_as_failed(tmp_path) -> None:
    # Before, the write failure was only logged (throttled) and the answer said the box was reset: after
    # a restart the old box's estimate came back and was applied to the new box.
    errors: list[str] = []
    progress.save(tmp_path / "progress.json", RunProgress({"can_0": "placed"}, None, {}, BOX))
    keeper = ProgressKeeper(tmp_path / "progress.json", CANS, errors.append)
    _fail_writes(keeper)
    with pytest.raises(ProgressNotWritten, match="reset in this server .* but not in the run's progress"):
        keeper.new_box()
    assert keeper.progress.box is None and len(errors) == 1  # in memory it is done, and logged
    kept, failure = keeper.reset()
    assert failure is not None and failure.startswith("cannot write ")
    line = keeper.keep_sets([("manual_place", True)])
    assert line is not None and line.startswith("manual_place=True set, but not kept with the run's progress")
    # During a run a set never waits for the disk: its failure comes through on_error only.
    line = keeper.keep_sets([("allow_z", True)], wait=False)
    assert line == "kept with the run's progress (written in the background): allow_z=True"
    assert keeper.flush() and len(errors) == 4  # caught up (a failed write is done, and said)


@pytest.mark.parametrize(
    "layout, why",
    [
        (((0.40, -0.18), {"can_0": (0.3069, -0.18)}), "its box centre (0.3800, -0.1800) m is not the cell's"),
        (((0.38, -0.18), {"can_1": (0.3069, -0.18)}), "can_0 is not a can of the cell"),
        (((0.38, -0.18), {"can_0": (0.3800, -0.18)}), "can_0 was placed into another compartment"),
    ],
)
def test_a_box_estimate_made_for_another_layout_is_dropped_at_start(tmp_path, layout, why) -> None:
    # Before, it was applied: every can of the new layout moved by the old box's offset and turn.
    progress.save(tmp_path / "progress.json", RunProgress({"can_0": "placed"}, None, {}, BOX))
    keeper = ProgressKeeper(tmp_path / "progress.json", CANS, pytest.fail, layout)
    assert keeper.progress == RunProgress({"can_0": "placed"}) and len(keeper.warnings) == 1
    assert f"the box estimate was made for another layout ({why}" in keeper.warnings[0]
    layout = ((0.38, -0.18), {"can_0": (0.307, -0.18)})
    same = ProgressKeeper(tmp_path / "progress.json", CANS, pytest.fail, layout)
    assert same.progress.box == BOX and same.warnings == []  # the same layout, to within a millimetre


def test_kept_sets_are_applied_and_a_refused_one_is_dropped_with_a_warning(tmp_path) -> None:
    kept = {"manual_place": True, "allow_z": 3, "max_offset_z": 0.02}
    keeper = _keeper(tmp_path, RunProgress(operator_params=kept))
    set_calls: list[tuple[str, Any]] = []
    warnings: list[str] = []

    def set_param(name: str, value: Any) -> str | None:
        set_calls.append((name, value))
        return "out of range" if name == "max_offset_z" else None

    assert keeper.apply_kept(set_param, warnings.append) == {"manual_place": True}
    assert set_calls == [("manual_place", True), ("max_offset_z", 0.02)]  # allow_z=3 is not a bool
    assert [w.split("=")[0] for w in warnings] == ["run progress: the operator's kept allow_z"] + [
        "run progress: the operator's kept max_offset_z"
    ]
    assert warnings[1].endswith("(out of range); the launch file's value stays")
    assert progress.load(keeper.path, CANS)[0].operator_params == {"manual_place": True}


@pytest.mark.parametrize(("changed", "line"), [
    ([("manual_place", True), ("tick_rate_hz", 5.0)],
     "kept with the run's progress (a restart applies it again): manual_place=True"),
    ([("tick_rate_hz", 5.0)], None),
])
def test_only_the_operators_parameters_are_kept(tmp_path, changed, line) -> None:
    keeper = _keeper(tmp_path)
    assert keeper.keep_sets(changed) == line
    assert keeper.keep_sets(changed) is None  # kept already
    kept = dict(progress.load(keeper.path, CANS)[0].operator_params)
    assert kept == ({"manual_place": True} if line else {})
