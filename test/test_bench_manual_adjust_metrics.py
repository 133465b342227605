"""The ManualAdjust benchmark's pure parts (bench/manual_adjust_metrics.py, bench_manual_adjust.launch_copy).

The whole benchmark starts the stack twice per seed (minutes), too long for the suite; what it computes
from what it records is checked here: the log lines it reads, the Wilson interval, the table's numbers,
and the launch copy that carries the seed and manual_place to the nodes.
"""

from __future__ import annotations

import sys

import pytest

from salamander_bringup.launch_plan import load_plan
from salamander_testing import REPO

sys.path.insert(0, str(REPO / "bench"))

import manual_adjust_metrics as mam  # noqa: E402

SERVER = "[behavior_server_node] [INFO] [1.0] [salamander.behavior_server_node]: "
OPERATOR = "[sim_operator] [INFO] [1.0] [salamander.sim_operator]: "


def test_the_adjust_line_and_the_operators_looks_are_read_for_the_right_can():
    lines = [
        SERVER + "ManualAdjust[place_can_0]: confirmed, offset [4.2, 0.2, 0.0] mm after 3.9 s",
        OPERATOR + "ManualAdjust[place_can_0] is over (confirmed by the operator after 3 look(s), "
        "2 stroke(s), 4.0 s)",
        SERVER + "ManualAdjust[place_can_1]: aborted, offset [-30.0, 0.0, 0.0] mm after 2.0 s",
    ]
    adjust = mam.find_adjust(lines, "can_0")
    assert adjust == mam.Adjust("confirmed", (4.2, 0.2, 0.0), 3.9, 3, 2)
    assert adjust.correction_mm == pytest.approx(4.2048, abs=1e-4)
    assert mam.find_adjust(lines, "can_1") == mam.Adjust("aborted", (-30.0, 0.0, 0.0), 2.0)
    assert mam.find_adjust(lines, "can_2") is None


def test_wilson_interval():
    lo, hi = mam.wilson(15, 15)
    assert hi == 1.0 and lo == pytest.approx(0.796, abs=0.001)  # all 15: at least ~80 %
    lo, hi = mam.wilson(9, 15)
    assert (lo, hi) == pytest.approx((0.357, 0.802), abs=0.001)
    assert mam.wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes must lie in"):
        mam.wilson(3, 2)


def test_summary_counts_clear_cans_and_averages_what_each_mode_has():
    adjust = mam.Adjust("confirmed", (3.0, 4.0, 0.0), 4.0, looks=3)
    small = mam.Adjust("confirmed", (1.0, 0.0, 0.0), 2.0)
    late = mam.Adjust("timed_out", (0.0, 0.0, 0.0), 120.0)
    cycles = [
        mam.Cycle(mam.MANUAL, 1, "can_0", "placed", mam.CLEAR, 12.0, adjust),
        mam.Cycle(mam.MANUAL, 1, "can_1", "placed", "in_box_touching", 14.0, small),
        mam.Cycle(mam.MANUAL, 2, "can_0", "timeout", None, None, late),
        mam.Cycle(mam.MANUAL, 2, "can_1", "skipped", mam.UNTOUCHED, 2.0),  # never tried: not in the rate
    ]
    s = mam.summarise(cycles)
    assert (s.cans, s.clear, s.timeouts, s.untouched) == (3, 1, 1, 1) and s.rate == pytest.approx(1 / 3)
    assert s.cycle_mean_s == 13.0 and s.cycle_sd_s == pytest.approx(1.4142, abs=1e-4)
    assert s.correction_mean_mm == 3.0 and s.adjust_mean_s == 3.0 and s.looks_mean == 3.0  # confirmed only
    assert s.outcomes == {mam.CLEAR: 1, "in_box_touching": 1, "unknown": 1}
    text = mam.table(mam.summarise([]), s)
    assert "| placed clear of all four walls (cell's ground truth) | - | 1 / 3 (33 %) |" in text
    assert "| operator's correction per can, mean [mm] | - | 3.00 |" in text
    assert "in_box_touching 1, unknown 1" in text
    assert "| cans the tree skipped untouched (not counted) | 0 | 1 |" in text


def test_the_launch_copy_gives_the_cell_its_seed_and_the_tree_manual_place(tmp_path):
    import bench_manual_adjust as bench

    path = bench.launch_copy(tmp_path / "copy", seed=7, manual=True)
    plan = load_plan(path, {"sim_operator": "true"})
    nodes = {n.name: n for n in plan.nodes}
    assert ("uncertainty_seed", "7") in nodes["cell_sim"].params
    assert ("manual_place", "true") in nodes["behavior_server_node"].params
    assert "sim_operator" in nodes
    for node in plan.nodes:  # the repository's parameter files, through the link beside the copy
        assert all(f.startswith(str(tmp_path / "copy")) for f in node.param_files)
        assert all((REPO / "config" / f.rsplit("/", 1)[1]).is_file() for f in node.param_files)
    auto = load_plan(bench.launch_copy(tmp_path / "auto", seed=7, manual=False))
    bt = next(n for n in auto.nodes if n.name == "behavior_server_node")
    assert ("manual_place", "false") in bt.params
