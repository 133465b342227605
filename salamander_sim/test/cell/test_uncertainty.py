"""The believed and the true cell: seeded draws of box pose, can spots and grip shifts; bad ones refused."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from salamander_control.cell.targets import load_cell_targets
from salamander_sim.cell import load_cell_config
from salamander_sim.cell.config import Uncertainty
from salamander_sim.cell.uncertainty import CLIP_SIGMAS, GripScatter, draw_truth
from salamander_testing import REPO as REPO_ROOT

CELL_YAML = REPO_ROOT / "config" / "cell.yaml"
CFG = load_cell_config(CELL_YAML)
LAY = CFG.layout

sigmas = st.tuples(st.floats(0.0, 0.005), st.floats(0.0, 0.01), st.floats(0.0, 0.003), st.floats(0.0, 0.002))


def test_the_shipped_defaults_are_seeded_and_nonzero() -> None:
    u = CFG.uncertainty
    assert CFG.engine == "physics"
    assert (u.seed, u.box_error) == (0, (0.0, 0.0, 0.0))
    assert (u.box_error_sigma_xy, u.box_error_sigma_yaw, u.can_spot_sigma_xy, u.grip_sigma_xy) == (
        0.0015,
        0.004,
        0.0005,
        0.0005,
    )


def test_a_fixed_box_error_without_sigmas_moves_the_true_box_only() -> None:
    truth = draw_truth(LAY, Uncertainty(box_error=(0.004, 0.0, 0.0)))
    assert truth.box_error == (0.004, 0.0, 0.0)
    assert (truth.layout.box_x, truth.layout.box_y, truth.layout.box_yaw) == (
        LAY.box_x + 0.004,
        LAY.box_y,
        0.0,
    )
    assert truth.layout.can_xy == LAY.can_xy
    assert dataclasses.replace(truth.layout, box_x=LAY.box_x) == LAY
    # The tree's targets stay the believed ones: the config's file is not the true cell.
    assert load_cell_targets(CELL_YAML).places[1].centre == pytest.approx((LAY.box_x, LAY.box_y))


@given(seed=st.integers(0, 2**31 - 1), s=sigmas)
def test_a_seed_draws_the_same_cell_and_every_draw_is_within_three_sigma(seed: int, s: tuple) -> None:
    u = Uncertainty(seed, s[0], s[1], (0.001, -0.002, 0.003), s[2], s[3])
    a, b = draw_truth(LAY, u), draw_truth(LAY, u)
    assert a == b
    reach = CLIP_SIGMAS + 1e-9
    dx, dy, dyaw = a.box_error
    assert abs(dx - 0.001) <= reach * s[0] and abs(dy + 0.002) <= reach * s[0]
    assert abs(dyaw - 0.003) <= reach * s[1]
    assert all(abs(ex) <= reach * s[2] and abs(ey) <= reach * s[2] for ex, ey in a.can_errors)
    grips_a, grips_b = GripScatter(u), GripScatter(u)
    draws = [grips_a.draw() for _ in range(5)]
    assert draws == [grips_b.draw() for _ in range(5)]
    assert all(abs(x) <= reach * s[3] and abs(y) <= reach * s[3] for x, y in draws)


def test_different_seeds_draw_different_cells_and_the_default_sigmas_are_a_few_mm() -> None:
    boxes = {draw_truth(LAY, dataclasses.replace(CFG.uncertainty, seed=seed)).box_error for seed in range(50)}
    assert len(boxes) == 50
    xy = [math.hypot(dx, dy) for dx, dy, _ in boxes]
    assert 0.001 < sum(xy) / len(xy) < 0.003  # mean distance of a 1.5 mm-per-axis draw: ~1.9 mm
    assert max(abs(dyaw) for _, _, dyaw in boxes) < math.radians(1.0)  # a fraction of a degree


def test_a_zero_sigma_does_not_shift_the_other_draws() -> None:
    with_spots = draw_truth(LAY, Uncertainty(7, 0.002, 0.0, (0.0, 0.0, 0.0), 0.001, 0.0))
    without = draw_truth(LAY, Uncertainty(7, 0.002, 0.0, (0.0, 0.0, 0.0), 0.0, 0.0))
    assert with_spots.box_error == without.box_error and without.can_errors == ((0.0, 0.0),) * 3


@pytest.mark.parametrize(
    ("section", "match"),
    [
        ("engine: bullet", "engine must be one of physics, kinematic"),
        ("uncertainty_seed: 1.5", "uncertainty_seed must be an integer"),
        ("uncertainty_seed: -1", r"uncertainty_seed must lie in \[0, 2147483647\]"),
        ("box_error_sigma_xy: -0.001", r"box_error_sigma_xy must lie in \[0.0, 0.05\]"),
        ("box_error_sigma_yaw: .inf", "box_error_sigma_yaw must be a finite number"),
        ("box_error: [0.004, 0.0]", r"box_error must be \[dx, dy, dyaw\], three numbers, got 2"),
        ("box_error: [0.2, 0.0, 0.0]", "at most 0.1 m in x and y"),
        ("grip_sigma_xy: 0.5", r"grip_sigma_xy must lie in \[0.0, 0.01\]"),
        ("suction_force_n: 3.0", "suction_force_n 3.0 N cannot lift a can of 0.35 kg"),
        ("physics_timestep_s: 0.02", r"physics_timestep_s must lie in \[0.0005, 0.005\]"),
    ],
)
def test_bad_uncertainty_and_engine_settings_are_refused(tmp_path: Path, section: str, match: str) -> None:
    path = tmp_path / "cell.yaml"
    path.write_text(f"/salamander/cell_sim:\n  ros__parameters:\n    {section}\n")
    with pytest.raises(ValueError, match=match):
        load_cell_config(path)


def test_a_draw_that_puts_a_can_on_the_box_is_refused_naming_the_seed() -> None:
    near = dataclasses.replace(LAY, can_xy=((0.38, -0.18 + 0.0745),))  # 1.5 mm clear of the box's side
    assert draw_truth(near, Uncertainty()).layout == near
    refused = []
    for seed in range(20):  # 20 mm per axis: about every other draw puts the can on the box
        try:
            draw_truth(near, Uncertainty(seed=seed, can_spot_sigma_xy=0.02))
        except ValueError as exc:
            refused.append(seed)
            assert f"uncertainty_seed {seed} drew an impossible cell: can_0" in str(exc)
            assert "box footprint" in str(exc)
    assert 0 < len(refused) < 20
