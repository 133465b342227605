"""What the simulated operator sees: the wait in the tree snapshot, the held can over the true box."""

from __future__ import annotations

import json
import math

import pytest

from salamander_sim.cell.config import config_from_values
from salamander_sim.operator.perception import (
    BoxPose,
    CellView,
    placement_error,
    read_cell_state,
    read_wait,
)

LAYOUT = config_from_values({}).layout  # the shipped cell: three compartments along base_link x


def test_the_wait_is_read_with_its_offset_in_metres():
    text = (
        "run: RUNNING (1 placed, 0 missed, 0 skipped, 0 aborted)\n"
        "can_0: placed: released over compartment 0\n\n"
        "{-} PickAndPlace [*]\n    {-} can_1 [*]\n        {o} place_can_1 [*]\n"
        "            --> ManualAdjust[place_can_1] [*] -- waiting for the operator: "
        "offset [4.0, -2.5, 0.0] mm, 1.2 of 120 s\n"
    )
    wait = read_wait(text)
    assert wait is not None and wait.name == "place_can_1"
    assert wait.offset == pytest.approx((0.004, -0.0025, 0.0))


@pytest.mark.parametrize("text", [
    "",
    "run: IDLE (no run yet: start one with the RunPickPlace action)",
    "--> ManualAdjust[place_can_0] [*] -- confirmed; finishing the nudge to [1.0, 0.0, 0.0] mm",
    "--> ManualAdjust[place_can_0] [-] -- waiting for the operator: offset [1.0, 0.0, 0.0] mm",  # not running
    "--> ManualAdjust[place_can_0] [*] -- waiting for the operator: offset [nan, 0.0, 0.0] mm",
])  # fmt: skip
def test_no_wait_unless_the_leaf_runs_and_waits(text):
    assert read_wait(text) is None


def state(held: str | None = "can_1", xy=(0.38, -0.18), box: dict | None = None, **extra) -> str:
    cans = [{"id": "can_0", "position": [0.3, 0.18, -0.18]},
            {"id": "can_1", "position": [xy[0], xy[1], -0.03], "attached": held == "can_1"}]  # fmt: skip
    data = {"t": 3.5, "vacuum": held is not None, "held": held, "cans": cans, **extra}
    if box is not None:
        data["box"] = box
    return json.dumps(data)


def test_the_cell_state_gives_the_held_can_and_the_true_box():
    view = read_cell_state(state(box={"xy": [0.384, -0.18], "yaw": 0.01}))
    assert view == CellView(3.5, "can_1", (0.38, -0.18), BoxPose(0.384, -0.18, 0.01))
    assert read_cell_state(state(held=None)).held_xy is None
    assert read_cell_state(state()).box is None  # a cell without box error: the config's pose


@pytest.mark.parametrize(("text", "why"), [
    ("{not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    (state(held="can_7"), "no such can"),
    (state(box={"xy": [0.38]}), "'box' must be"),
    (state(box={"xy": [0.38, -0.18], "yaw": "north"}), "box yaw must be a finite number"),
    (state(xy=(math.nan, -0.18)), "can_1 x must be a finite number"),
    (json.dumps({"held": None, "cans": []}), "'t' must be a finite number"),
])  # fmt: skip
def test_a_malformed_state_is_refused_with_the_reason(text, why):
    with pytest.raises(ValueError, match=why):
        read_cell_state(text)


def test_the_error_points_from_the_can_to_the_centre_of_the_true_compartment_under_it():
    cx, cy = LAYOUT.compartment_centre(1)  # where the plan puts can_1 (the believed box)
    view = CellView(0.0, "can_1", (cx, cy), BoxPose(LAYOUT.box_x + 0.004, LAYOUT.box_y, 0.0))
    error = placement_error(view, LAYOUT)
    assert error is not None and error.compartment == 1
    assert (error.dx, error.dy) == pytest.approx((0.004, 0.0), abs=1e-12)
    assert error.norm == pytest.approx(0.004)
    # Turned about its centre, the box moves the outer compartments sideways: compartment 0 is -u away.
    yaw = 0.01
    x0, y0 = LAYOUT.compartment_centre(0)
    turned = CellView(0.0, "can_0", (x0, y0), BoxPose(LAYOUT.box_x, LAYOUT.box_y, yaw))
    u = LAYOUT.compartment_u(0)
    error = placement_error(turned, LAYOUT)
    assert error is not None and error.compartment == 0
    assert (error.dx, error.dy) == pytest.approx((u * math.cos(yaw) - u, u * math.sin(yaw)), abs=1e-12)


def test_without_a_box_in_the_state_the_box_is_where_the_config_says_and_no_can_means_no_error():
    cx, cy = LAYOUT.compartment_centre(2)
    error = placement_error(CellView(0.0, "can_2", (cx - 0.001, cy + 0.002), None), LAYOUT)
    assert error is not None and error.compartment == 2
    assert (error.dx, error.dy) == pytest.approx((0.001, -0.002), abs=1e-12)
    assert placement_error(CellView(0.0, None, None, None), LAYOUT) is None

