"""Reading the simulated cell's state message (ros/cell_state.py): parsing, refusals, message order."""

from __future__ import annotations

import json

import pytest

from salamander_behavior.ros.cell_state import CellView, is_newer, parse_cell_state


def state(**changes) -> str:
    data = {
        "t": 1.5,
        "vacuum": True,
        "held": "can_0",
        "contact": "can_0",
        "cans": [
            {
                "id": "can_0",
                "position": [0.3, 0.18, -0.05],
                "attached": True,
                "on": "gripper",
                "outcome": None,
            },
            {
                "id": "can_1",
                "position": [0.38, -0.18, -0.177],
                "attached": False,
                "on": "floor",
                "outcome": {"result": "in_box_clear", "text": "in box, clear of walls"},
            },
        ],
    }
    data.update(changes)
    return json.dumps(data)


def test_cell_state_is_parsed() -> None:
    view = parse_cell_state(state())
    assert view.held == "can_0" and view.vacuum and view.t == 1.5
    assert view.cans[1].outcome == "in box, clear of walls" and view.cans[0].position == (0.3, 0.18, -0.05)
    assert view.cans[1].result == "in_box_clear" and view.cans[0].result is None


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[1, 2]",
        state(t=float("nan")).replace("NaN", "NaN"),
        state(held="can_9"),
        state(cans=[{"id": "can_0", "position": [0.0, 0.0], "attached": False}]),
        json.dumps({"t": 1.0, "vacuum": True}),
        state(
            cans=[{"id": "can_0", "position": [0.0, 0.0, 0.0], "attached": False, "outcome": {"result": 3}}]
        ),
    ],
)
def test_malformed_cell_states_are_refused(text) -> None:
    with pytest.raises(ValueError):
        parse_cell_state(text)


def test_out_of_order_states_are_dropped_but_a_restarted_cell_is_accepted() -> None:
    old = CellView(10.0, False, None, ())
    assert not is_newer(old, CellView(9.9, False, None, ()))
    assert is_newer(old, CellView(10.0, False, None, ()))
    assert is_newer(old, CellView(0.2, False, None, ()))  # simulator restarted
