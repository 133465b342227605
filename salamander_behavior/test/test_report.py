"""The run's report (report.py): per-can results and the one-line summary."""

from __future__ import annotations

from salamander_behavior.report import CanResult, RunReport, offset_mm


def test_report_summary() -> None:
    report = RunReport()
    report.record("can_0", CanResult.PLACED, "ok")
    report.record("can_1", CanResult.SKIPPED, "above can_1: IK early-fail out_of_reach: x")
    rim = "released over the box but knocked off by wall -y, on the box rim"
    report.record("can_2", CanResult.MISSED, rim)
    assert report.summary() == "1 placed, 1 missed, 1 skipped, 0 aborted"
    assert report.lines()[1] == "can_1: skipped: above can_1: IK early-fail out_of_reach: x"
    assert report.lines()[2] == f"can_2: missed: {rim}"


def test_offsets_are_written_in_mm_and_a_residue_below_zero_is_no_minus_zero() -> None:
    # A nudge out and back leaves a rounding residue of either sign: the logs (which operators and the
    # browser test compare with the page) write both as 0.0 (the browser test once failed on "-0.0").
    assert offset_mm((-0.00004, -0.0001, 0.0)) == "[0.0, -0.1, 0.0] mm"
    assert offset_mm((0.02, -0.0, 0.00004)) == "[20.0, 0.0, 0.0] mm"
    assert offset_mm((-0.00005, 0.0149, -0.0301)) == "[-0.1, 14.9, -30.1] mm"
