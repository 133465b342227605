"""The run's report (report.py): per-can results and the one-line summary."""

from __future__ import annotations

from salamander_behavior.report import CanResult, RunReport


def test_report_summary() -> None:
    report = RunReport()
    report.record("can_0", CanResult.PLACED, "ok")
    report.record("can_1", CanResult.SKIPPED, "above can_1: IK early-fail out_of_reach: x")
    rim = "released over the box but knocked off by wall -y, on the box rim"
    report.record("can_2", CanResult.MISSED, rim)
    assert report.summary() == "1 placed, 1 missed, 1 skipped, 0 aborted"
    assert report.lines()[1] == "can_1: skipped: above can_1: IK early-fail out_of_reach: x"
    assert report.lines()[2] == f"can_2: missed: {rim}"
