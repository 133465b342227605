"""The cell config (config/cell.yaml) and the pick/place targets the behaviour tree derives from it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from salamander_control.cell.layout import LAYOUT_SPECS
from salamander_control.cell.targets import load_cell_targets
from salamander_control.kinematics import ToolPose, solve_ik_pitched
from salamander_sim.cell import CellModel, load_cell_config
from salamander_sim.cell.config import cell_param_specs
from salamander_testing import REPO as REPO_ROOT

CELL_YAML = REPO_ROOT / "config" / "cell.yaml"


def reachable(p: tuple[float, float, float]) -> bool:
    """The arm can put the pad at p pointing straight down (default arm model)."""
    return solve_ik_pitched(p, 0.0, math.atan2(p[1], p[0])).ok


def test_shipped_config_is_the_product() -> None:
    cfg = load_cell_config(CELL_YAML)
    lay = cfg.layout
    assert (lay.can_diameter, lay.can_height) == (0.0662, 0.115)  # a 330 ml can
    assert lay.compartments == len(lay.can_xy) == 3
    assert lay.compartment_inner == pytest.approx(0.0662 + 2 * 0.00195)  # 70.1 mm
    assert (cfg.suction.attach_settle_s, cfg.suction.release_settle_s) == (0.15, 0.25)
    assert (cfg.suction.attach_tol_z, cfg.suction.attach_tol_xy) == (0.003, 0.005)
    # The file names every parameter (nothing silently falls back to a default the reader cannot see).
    text = CELL_YAML.read_text()
    assert all(f"\n    {p.name}:" in text for p in cell_param_specs())
    # ... and its layout is the code's defaults, which docs/parameters.md lists and a second cell's file
    # that leaves a key out falls back to.
    shipped = yaml.safe_load(text)["/**/cell_sim"]["ros__parameters"]
    assert {p.name: shipped[p.name] for p in LAYOUT_SPECS} == {p.name: p.default for p in LAYOUT_SPECS}


def test_every_target_and_every_path_between_them_is_reachable_with_the_pad_down() -> None:
    targets = load_cell_targets(CELL_YAML)
    lay = load_cell_config(CELL_YAML).layout
    checked = 0
    for pick, place in targets.pairs():
        # Vertical descents, including the pad pressed attach_tol_z into the can top.
        pressed = (pick.contact[0], pick.contact[1], pick.contact[2] - 0.003)
        segments = [(pick.above, pressed), (place.place_above, place.place_release)]
        # Travel at travel_z from above the can to above the compartment.
        high_pick = (pick.above[0], pick.above[1], targets.travel_z)
        high_place = (place.place_above[0], place.place_above[1], targets.travel_z)
        segments += [(pick.above, high_pick), (high_pick, high_place), (high_place, place.place_above)]
        for a, b in segments:
            for s in np.linspace(0.0, 1.0, 21):
                p = tuple(float(a[i] + s * (b[i] - a[i])) for i in range(3))
                assert reachable(p), f"{pick.can} -> compartment {place.compartment}: {p} unreachable"
                checked += 1
    assert checked == 3 * 5 * 21
    # Can i goes into compartment i; compartments are where the layout puts them.
    assert [p.compartment for p in targets.places] == [0, 1, 2]
    assert targets.places[1].centre == pytest.approx((lay.box_x, lay.box_y))


def test_target_conventions() -> None:
    t = load_cell_targets(CELL_YAML)
    lay = load_cell_config(CELL_YAML).layout
    for pick in t.picks:
        assert pick.contact[2] == pytest.approx(lay.table_z + lay.can_height)
        assert pick.above[2] - pick.contact[2] == pytest.approx(t.pick_dz)
        assert pick.approach is not None and pick.approach[:2] == pick.above[:2]
        assert pick.approach[2] - pick.contact[2] == pytest.approx(lay.approach_dz)
    for place in t.places:
        assert place.place_release[2] == pytest.approx(place.place_above[2] + (t.release_dz - t.place_dz))
        assert place.place_above[2] - lay.can_height - lay.floor_top == pytest.approx(t.place_dz)
        assert place.place_above[:2] == place.place_release[:2] == place.centre
        # The empty pad at depart is approach_dz above the placed cans' tops, between release and above.
        assert place.depart is not None and place.depart[:2] == place.centre
        assert place.depart[2] - lay.can_height - lay.floor_top == pytest.approx(lay.approach_dz)
        assert place.place_release[2] < place.depart[2] < place.place_above[2]
    assert t.travel_z >= max(p.above[2] for p in t.picks) and t.travel_z >= t.places[0].place_above[2]
    # A can lifted to travel_z clears the rim and the standing cans' tops.
    assert t.travel_z - lay.can_height > max(lay.rim_z, lay.table_z + lay.can_height)


def test_release_at_place_release_drops_the_can_release_dz_onto_the_floor() -> None:
    cfg = load_cell_config(CELL_YAML)
    t = load_cell_targets(CELL_YAML)
    model = CellModel(cfg.layout, cfg.suction)
    pick, place = t.pairs()[2]
    model.set_vacuum(True, 0.0)
    for now in (0.0, 0.25, 0.5):
        model.step(ToolPose(pick.contact, 0.0, 0.0), now)
    assert model.held == "can_2"
    model.step(ToolPose(pick.above, 0.0, 0.0), 0.6)
    model.step(ToolPose(place.place_above, 0.0, 0.0), 0.7)
    model.step(ToolPose(place.place_release, 0.0, 0.0), 0.8)
    before = model.positions()["can_2"][2]
    assert before - cfg.layout.floor_top == pytest.approx(t.release_dz)
    model.set_vacuum(False, 0.9)
    model.step(ToolPose(place.place_release, 0.0, 0.0), 0.9 + cfg.suction.release_settle_s)
    assert model.positions()["can_2"][2] == pytest.approx(cfg.layout.floor_top)
    assert model.placement("can_2").result == "in_box_clear"


def test_nested_and_wildcard_params_file_forms_are_read(tmp_path: Path) -> None:
    path = tmp_path / "cell.yaml"
    path.write_text(
        "/**:\n  ros__parameters:\n    table_z: -0.15\n    can_height: 0.1\n"
        "salamander:\n  cell_sim:\n    ros__parameters:\n      table_z: -0.2\n      box_yaw: 0.3\n"
    )
    lay = load_cell_config(path).layout
    assert (lay.table_z, lay.can_height, lay.box_yaw) == (-0.2, 0.1, 0.3)


def test_a_wildcard_section_applies_in_any_namespace_and_keys_apply_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "cell.yaml"
    path.write_text(
        "/**/cell_sim:\n  ros__parameters:\n    table_z: -0.2\n    box_yaw: 0.3\n"
        "/**:\n  ros__parameters:\n    table_z: -0.15\n    can_height: 0.1\n"
    )
    for fqn in ("/salamander/cell_sim", "/cell2/salamander/cell_sim"):
        lay = load_cell_config(path, fqn).layout
        assert (lay.table_z, lay.can_height, lay.box_yaw) == (-0.15, 0.1, 0.3), fqn  # /** comes last: it wins
    with pytest.raises(ValueError, match="no section for /salamander/other"):
        load_cell_config(path, "/salamander/other")


@pytest.mark.parametrize(
    ("section", "match"),
    [
        ("cna_xy: [0.3, 0.18]", "unknown cell parameter"),
        ("can_xy: [0.3, 0.18, 0.4]", "x, y pairs"),
        ("can_xy: [0.3, 0.18, 0.33, 0.18]", "can_1 and can_0 overlap by 36.2 mm"),
        ("can_xy: [0.38, -0.13]", "can_0 .* stands on or inside the box"),
        ("pick_dz: 0.1", "pick_dz 0.1 m: a lifted can's bottom must clear"),
        ("place_dz: 0.05", "place_dz 0.05 m"),
        ("release_dz: 0.2", "release_dz 0.2 m must be below place_dz"),
        ("approach_dz: 0.2", "approach_dz 0.2 m must not exceed pick_dz 0.15 m"),
        ("attach_settle_s: .nan", "attach_settle_s must be a finite number"),
        ("side_clearance: -0.001", r"side_clearance must lie in \[0.0, 0.05\]"),
        ("update_rate_hz: 5.0", "skip_gap_s 0.5 s must be at least 3 update periods"),
    ],
)
def test_bad_configs_are_refused_with_a_reason(tmp_path: Path, section: str, match: str) -> None:
    path = tmp_path / "cell.yaml"
    path.write_text(f"/salamander/cell_sim:\n  ros__parameters:\n    {section}\n")
    with pytest.raises(ValueError, match=match):
        load_cell_config(path)


def test_a_file_without_the_section_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.yaml"
    path.write_text("/arm/trajectory_generator:\n  ros__parameters:\n    alpha_max: 1.3\n")
    for load in (load_cell_targets, load_cell_config):
        with pytest.raises(ValueError, match="no section for /salamander/cell_sim"):
            load(path)
