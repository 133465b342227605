"""The placement benchmark's pure parts (bench/placement_metrics.py; bench_placement: launch copy, levels).

The whole benchmark starts the stack three times per seed and level (minutes), too long for the suite;
what it computes from what it records is checked here: the log lines it reads, the outcome classes, the
Wilson interval, the table's numbers, the scaled sigmas and the launch copy that carries the seed, the
sigmas and each mode's parameters to the nodes.
"""

from __future__ import annotations

import sys

import pytest

from salamander_bringup.launch_plan import load_plan
from salamander_testing import REPO

sys.path.insert(0, str(REPO / "bench"))

import placement_metrics as pm  # noqa: E402

SERVER = "[behavior_server_node] [INFO] [1.0] [salamander.behavior_server_node]: "
OPERATOR = "[sim_operator] [INFO] [1.0] [salamander.sim_operator]: "
CELL = "[cell_sim] [WARN] [1.0] [salamander.cell_sim]: "


def test_the_adjust_line_and_the_operators_looks_are_read_for_the_right_can():
    lines = [
        SERVER + "ManualAdjust[place_can_0]: confirmed, offset [4.2, 0.2, 0.0] mm after 3.9 s",
        OPERATOR + "ManualAdjust[place_can_0] is over (confirmed by the operator after 3 look(s), "
        "2 stroke(s), 4.0 s)",
        SERVER + "ManualAdjust[place_can_1]: aborted, offset [-30.0, 0.0, 0.0] mm after 2.0 s",
    ]
    adjust = pm.find_adjust(lines, "can_0")
    assert adjust == pm.Adjust("confirmed", (4.2, 0.2, 0.0), 3.9, 3, 2)
    assert adjust.correction_mm == pytest.approx(4.2048, abs=1e-4)
    assert pm.find_adjust(lines, "can_1") == pm.Adjust("aborted", (-30.0, 0.0, 0.0), 2.0)
    assert pm.find_adjust(lines, "can_2") is None


def test_the_search_lines_give_contact_probes_and_tear_off_of_the_right_can():
    """The lines as behaviors/search.py and cell/physics.py write them; can_1 is no prefix of can_10."""
    lines = [
        SERVER + "can_0: met the rim: tool force 6.1 N at (0.300, -0.180, -0.100), can_0 over compartment 0 "
        "at offset (0.0, 0.0, 0.0) mm: lifting it clear (vacuum on), then searching (12 probes, step 2.0 mm, "
        "within 4.0 mm)",
        SERVER + "can_0: probe 1/12 met the rim: tool force 5.5 N, ...: lifting clear, probe 2 next",
        SERVER + "can_0: probe 2/12 met the rim: tool force 5.2 N, ...: lifting clear, probe 3 next",
        SERVER + "can_0: probe 3/12 passed the rim over compartment 0 at offset (2.0, 0.0, 0.0) mm "
        "(the search moved it (2.0, 0.0, 0.0) mm): releasing there",
        SERVER + "can_10: probe 7/12 met the rim: ...",
        SERVER + "can_2: met the rim: ...: lifting it clear (vacuum on) and holding it there "
        "(no search after ManualAdjust)",
        CELL + "can_1 torn off the pad by wall -y (moment 0.31 N m > 0.29 N m)",
    ]
    assert pm.find_search(lines, "can_0") == pm.Search(contact=True, probes=3, torn=False)
    assert pm.find_search(lines, "can_1") == pm.Search(contact=False, probes=0, torn=True)
    assert pm.find_search(lines, "can_2") == pm.Search(contact=True, probes=0, torn=False)
    assert pm.find_search(lines, "can_10").probes == 7
    assert pm.find_search(lines, "can_3") == pm.Search()


@pytest.mark.parametrize(
    ("cell", "search", "outcome"),
    [
        ("in_box_clear", pm.Search(), pm.CLEAR),
        ("in_box_touching", pm.Search(contact=True, probes=2), pm.TOUCHING),
        ("on_rim", pm.Search(), pm.RIM),
        ("in_box_clear", pm.Search(torn=True), pm.TORN),  # torn off first, wherever it landed
        (pm.ON_PAD, pm.Search(contact=True, probes=12), pm.HELD),
        ("on_table", pm.Search(), pm.ASTRAY),
        ("tipped", pm.Search(), pm.ASTRAY),
        ("dropped", pm.Search(), pm.ASTRAY),
        ("unknown", pm.Search(), pm.ASTRAY),
        (None, pm.Search(), pm.ASTRAY),
        (pm.UNTOUCHED, pm.Search(), pm.UNTOUCHED),
    ],
)
def test_every_can_falls_in_one_outcome_class(cell, search, outcome):
    assert pm.Cycle(pm.SHIPPED, 1.0, 1, "can_0", "placed", cell, 10.0, search=search).outcome == outcome


def test_wilson_interval():
    lo, hi = pm.wilson(15, 15)
    assert hi == 1.0 and lo == pytest.approx(0.796, abs=0.001)  # all 15: at least ~80 %
    lo, hi = pm.wilson(9, 15)
    assert (lo, hi) == pytest.approx((0.357, 0.802), abs=0.001)
    assert pm.wilson(60, 60)[0] == pytest.approx(0.940, abs=0.001)  # the default's 60 cans per column
    assert pm.wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes must lie in"):
        pm.wilson(3, 2)


def test_summary_counts_each_class_and_averages_per_can_tried():
    adjust = pm.Adjust("confirmed", (3.0, 4.0, 0.0), 4.0, looks=3)
    small = pm.Adjust("confirmed", (1.0, 0.0, 0.0), 2.0)
    late = pm.Adjust("timed_out", (0.0, 0.0, 0.0), 120.0)
    cycles = [
        pm.Cycle(pm.MANUAL, 1.0, 1, "can_0", "placed", pm.CELL_CLEAR, 12.0, adjust),
        pm.Cycle(
            pm.MANUAL,
            1.0,
            1,
            "can_1",
            "placed",
            pm.CELL_TOUCHING,
            14.0,
            small,
            pm.Search(True, 0),
            release_to_release_s=13.0,
        ),
        pm.Cycle(pm.MANUAL, 1.0, 2, "can_0", "timeout", "on_table", None, late),
        pm.Cycle(pm.MANUAL, 1.0, 2, "can_1", "skipped", pm.UNTOUCHED, 2.0),  # never tried: not counted
    ]
    s = pm.summarise(cycles)
    assert (s.cans, s.timeouts, s.untouched, s.waits, s.contacts) == (3, 1, 1, 3, 1)
    assert s.counts == {pm.CLEAR: 1, pm.TOUCHING: 1, pm.ASTRAY: 1} and s.astray == {"on_table": 1}
    assert s.share(pm.CLEAR) == (1, pm.wilson(1, 3)) and s.share(pm.RIM) == (0, pm.wilson(0, 3))
    assert s.cycle_mean_s == 13.0 and s.cycle_sd_s == pytest.approx(1.4142, abs=1e-4)
    assert s.operator_s_per_can == pytest.approx(126.0 / 3)  # every wait: the operator's time is spent
    assert s.correction_mean_mm == 3.0 and s.looks_mean == 3.0  # confirmed waits only
    assert s.probes_per_can == 0.0
    assert s.release_to_release == (13.0, None, 1)  # only the cans with a release before them in the run

    searched = [
        pm.Cycle(pm.SHIPPED, 2.0, 1, "can_0", "placed", pm.CELL_CLEAR, 20.0, search=pm.Search(True, 3)),
        pm.Cycle(pm.SHIPPED, 2.0, 1, "can_1", "failed", pm.ON_PAD, 40.0, search=pm.Search(True, 12)),
    ]
    t = pm.summarise(searched)
    assert t.probes_per_can == 7.5 and t.operator_s_per_can == 0.0 and t.counts[pm.HELD] == 1

    text = pm.table([("empty", pm.summarise([])), ("manual", s), ("shipped", t)])
    assert text.splitlines()[0] == "| metric | empty | manual | shipped |"
    share = ", n / tried (95 % Wilson) | "
    assert "| clear of all four walls (cell's ground truth)" + share + "- | 1 / 3 (33 %; 6-79 %) |" in text
    assert "| held above the box, run stopped" + share + "- | 0 / 3 (0 %; 0-56 %) | 1 / 2 (50 %;" in text
    assert "| astray: where (cell's outcome) | none | on_table 1 | none |" in text
    assert "| operator time per can (ManualAdjust waits / cans tried) [s] | - | 42.0 | 0.0 |" in text
    assert "| probes per can (0 without a contact), mean | - | 0.00 | 7.50 |" in text
    assert "| cans the tree skipped untouched (not counted) | 0 | 1 | 0 |" in text
    assert "| ... release to release within a run, mean ± sd [s] | - | 13.00 (1 cans) | - |" in text
    assert pm.level_text(2.0) == "sigma x2" and pm.level_text(1.5) == "sigma x1.5"


def test_a_level_scales_every_sigma_of_the_cell_and_refuses_what_the_cell_would():
    import bench_placement as bench

    values = bench.cell_values()
    assert set(bench.SIGMAS) <= set(values)
    doubled = bench.level_sigmas(values, 2.0)
    assert doubled == {k: pytest.approx(2 * float(values[k])) for k in bench.SIGMAS}
    assert doubled["box_error_sigma_xy"] == pytest.approx(0.003)  # config/cell.yaml's 1.5 mm, twice
    with pytest.raises(ValueError, match="level 1000"):
        bench.level_sigmas(values, 1000.0)
    with pytest.raises(ValueError, match="positive"):
        bench.level_sigmas(values, 0.0)
    assert bench.parse_levels("1,2") == [1.0, 2.0]


@pytest.mark.parametrize(
    ("mode", "server"),
    [
        ("plain", {("manual_place", "false"), ("guarded_pass", "false"), ("box_estimate", "false")}),
        ("shipped", {("manual_place", "false")}),
        ("manual", {("manual_place", "true")}),
        ("known", {("manual_place", "true"), ("manual_place_known_m", "0.0012")}),
    ],
)
def test_the_launch_copy_gives_the_cell_its_seed_and_sigmas_and_the_tree_its_mode(tmp_path, mode, server):
    import bench_placement as bench

    sigmas = bench.level_sigmas(bench.cell_values(), 2.0)
    path = bench.launch_copy(tmp_path / "copy", seed=7, mode=mode, sigmas=sigmas)
    operator = mode in pm.OPERATOR_MODES
    plan = load_plan(path, {"sim_operator": "true" if operator else "false"})
    nodes = {n.name: n for n in plan.nodes}
    cell = dict(nodes["cell_sim"].params)
    assert cell["uncertainty_seed"] == "7"
    assert {k: float(cell[k]) for k in bench.SIGMAS} == pytest.approx(sigmas, abs=1e-9)
    bt = nodes["behavior_server_node"].params
    assert server <= set(bt)
    assert {n for n, _ in bt} & {"guarded_pass", "box_estimate"} <= {n for n, _ in server}  # plain only
    assert ("sim_operator" in nodes) == operator
    if operator:  # the person's draws differ from box to box as the box's do
        assert dict(nodes["sim_operator"].params)["seed"] == "7"
    for node in plan.nodes:  # the repository's parameter files, through the link beside the copy
        assert all(f.startswith(str(tmp_path / "copy")) for f in node.param_files)
        assert all((REPO / "config" / f.rsplit("/", 1)[1]).is_file() for f in node.param_files)


def test_one_run_times_each_can_from_the_previous_cans_placed_line():
    import bench_placement as bench

    def line(t: float, text: str) -> str:
        return f"[behavior_server_node] [INFO] [{t}] [salamander.behavior_server_node]: {text}"

    lines = [
        line(99.0, "run started: can_9 (arm lease requested)"),  # an earlier run's: the last one counts
        line(100.0, "run started: can_0, can_1, can_2 (arm lease requested)"),
        line(108.5, "can_0: placed (released over compartment 0 at offset [0.0, 0.0, 0.0] mm; ...)"),
        line(109.0, "box estimate: offset (1.8, -1.8) mm ..."),
        line(115.0, "can_1: placed (released over compartment 1 at offset [2.0, -2.0, 0.0] mm; ...)"),
        line(116.0, "can_2: placed at the box estimate's offset [1.8, -1.8, 0.0] mm (from 1 can)"),
    ]
    # can_2 never placed (its estimate line, logged before the carry, is no placement): timed to the result.
    times = bench.run_times(lines, ["can_0", "can_1", "can_2", "can_3"], ended=121.0)
    assert times == pytest.approx({"can_0": 8.5, "can_1": 6.5, "can_2": 6.0})
    assert bench.run_times(lines[2:], ["can_0"], ended=121.0) == {}  # no run started: nothing to time
    # The tree started 1.5 s after the run (the gripper's driver still coming up): can_0 runs from there.
    waited = [*lines[:2], line(101.5, "arm and gripper ready: starting the run"), *lines[2:]]
    assert bench.run_times(waited, ["can_0"], ended=121.0) == pytest.approx({"can_0": 7.0})
    earlier = [lines[0], line(99.5, "arm and gripper ready: starting the run"), *lines[1:]]  # not this run's
    assert bench.run_times(earlier, ["can_0"], ended=121.0) == pytest.approx({"can_0": 8.5})


def test_one_run_times_each_can_from_the_previous_cans_release_in_the_cells_log():
    import bench_placement as bench

    def left(t: float, can: str) -> str:
        return f"[cell_sim] [INFO] [{t}] [salamander.cell_sim]: {can} left the pad (vacuum off)"

    lines = [left(108.0, "can_0"), "[cell_sim] [INFO] [110.0] [salamander.cell_sim]: vacuum on",
             left(114.25, "can_1"), left(120.5, "can_3")]  # fmt: skip
    # can_0 has no release before it, can_2 never left the pad, can_3's predecessor (can_2) never did.
    times = bench.release_times(lines, ["can_0", "can_1", "can_2", "can_3"])
    assert times == pytest.approx({"can_1": 6.25})
    assert bench.release_times(lines, ["can_1", "can_0"]) == {}  # out of order: no cycle
