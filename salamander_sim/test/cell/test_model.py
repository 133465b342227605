"""The cell model: gripping, following, releasing, placement outcomes, and no can ever inside a solid."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from salamander_control.cell.targets import load_cell_targets
from salamander_control.kinematics import ToolPose
from salamander_sim.cell import CellModel, load_cell_config
from salamander_sim.cell.scene import GREEN, ORANGE, RED, SILVER, YELLOW, can_colour, scene
from salamander_testing import REPO as REPO_ROOT

CELL_YAML = REPO_ROOT / "config" / "cell.yaml"
CFG = load_cell_config(CELL_YAML)
SUCTION = dataclasses.replace(CFG.suction, attach_settle_s=0.5, release_settle_s=0.7)
"""The shipped suction with the settle times these timing tests step through (the model takes any)."""
LAY = CFG.layout
TARGETS = load_cell_targets(CELL_YAML)
H, R = LAY.can_height, LAY.can_radius


def pad(p: tuple[float, float, float], yaw: float = 0.0, pitch: float = 0.0) -> ToolPose:
    return ToolPose(p, pitch, yaw)


def top_of(model: CellModel, can: str, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0) -> ToolPose:
    x, y, z = model.positions()[can]
    return pad((x + dx, y + dy, z + H + dz))


def gripped_model(can: int = 0, offset: tuple[float, float] = (0.0, 0.0)) -> CellModel:
    """A model at t = 1.0 s holding can_<can>, gripped `offset` off its axis."""
    model = CellModel(LAY, SUCTION)
    pose = top_of(model, f"can_{can}", *offset)
    model.set_vacuum(True, 0.0)
    for now in (0.0, 0.5, 1.0):
        model.step(pose, now)
    assert model.held == f"can_{can}"
    model.drain_events()
    return model


def release_at(model: CellModel, tcp: tuple[float, float, float], now: float = 2.0) -> None:
    """Move the held can to `tcp` (straight from where it is), vacuum off, wait release_settle_s."""
    model.step(pad(tcp), now)
    model.set_vacuum(False, now)
    model.step(pad(tcp), now + SUCTION.release_settle_s)


# --- gripping ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dx", "dy", "dz", "pitch", "grips"),
    [
        (0.0, 0.0, 0.0, 0.0, True),
        (0.0049, 0.0, 0.0, 0.0, True),
        (0.0035, -0.0035, 0.0, 0.0, True),  # 4.95 mm off the axis
        (0.0051, 0.0, 0.0, 0.0, False),
        (0.0036, 0.0036, 0.0, 0.0, False),  # 5.09 mm
        (0.0, 0.0, 0.0029, 0.0, True),
        (0.0, 0.0, -0.0029, 0.0, True),  # pad pressed into the top
        (0.0, 0.0, 0.0031, 0.0, False),
        (0.0, 0.0, -0.0031, 0.0, False),
        (0.0, 0.0, 0.0, 0.099, True),
        (0.0, 0.0, 0.0, -0.101, False),  # pad tilted: no seal
    ],
)
def test_grip_only_within_tolerance(dx: float, dy: float, dz: float, pitch: float, grips: bool) -> None:
    model = CellModel(LAY, SUCTION)
    x, y, z = top_of(model, "can_1").tcp
    model.set_vacuum(True, 0.0)
    for now in (0.0, 0.3, 0.6, 5.0):
        model.step(pad((x + dx, y + dy, z + dz), pitch=pitch), now)
    assert model.held == ("can_1" if grips else None)
    assert model.positions()["can_1"] == pytest.approx((x, y, LAY.table_z)) or grips


def test_grip_only_after_the_settle_time_with_vacuum_and_contact_uninterrupted() -> None:
    model = CellModel(LAY, SUCTION)
    on_top, lifted = top_of(model, "can_0"), top_of(model, "can_0", dz=0.01)
    # Contact first, vacuum later: the settle time counts from the vacuum.
    model.step(on_top, 0.0)
    model.set_vacuum(True, 1.0)
    model.step(on_top, 1.49)
    assert model.held is None and model.contact == "can_0"
    model.step(on_top, 1.5)
    assert model.held == "can_0"

    # Vacuum first, contact later, then interrupted for one step: the settle time starts again.
    model = CellModel(LAY, SUCTION)
    model.set_vacuum(True, 0.0)
    model.step(lifted, 0.5)
    model.step(on_top, 1.0)
    model.step(lifted, 1.3)  # pad lifted 10 mm: contact lost
    model.step(on_top, 1.4)
    model.step(on_top, 1.8)
    assert model.held is None
    model.step(on_top, 1.9)
    assert model.held == "can_0"
    assert [e.kind for e in model.drain_events()] == ["vacuum", "gripped"]

    # Vacuum switched off before the settle time: nothing is gripped.
    model = CellModel(LAY, SUCTION)
    model.set_vacuum(True, 0.0)
    model.step(on_top, 0.0)
    model.set_vacuum(False, 0.4)
    model.step(on_top, 5.0)
    assert model.held is None


def test_no_grip_without_a_fresh_tcp() -> None:
    model = CellModel(LAY, SUCTION)
    model.set_vacuum(True, 0.0)
    model.step(top_of(model, "can_0"), 0.0)
    model.step(None, 0.3)  # joint states went stale: contact unknown
    model.step(top_of(model, "can_0"), 0.6)
    assert model.held is None


def test_held_can_follows_the_tcp_keeping_its_offset_and_turning_with_the_tool() -> None:
    model = gripped_model(0, offset=(0.003, 0.0))  # pad 3 mm in +x of the axis
    x0, y0, _ = model.positions()["can_0"]
    model.step(pad((0.35, 0.05, 0.10)), 1.5)
    assert model.positions()["can_0"] == pytest.approx((0.347, 0.05, 0.10 - H))
    model.step(pad((0.35, 0.05, 0.10), yaw=math.pi / 2), 1.6)  # tool turned 90 deg about the pad
    assert model.positions()["can_0"] == pytest.approx((0.35, 0.047, 0.10 - H))
    assert model.held == "can_0" and model.support("can_0") == "gripper"


def test_a_pad_settling_lower_after_the_grip_presses_the_can_down_within_its_compliance() -> None:
    """The arm still settles ~1 mm after its descent ends: the pad gives, the can stays on the pad."""
    model = gripped_model(0)
    x, y, z = model.positions()["can_0"]
    model.step(top_of(model, "can_0", dz=-0.001), 1.1)  # 1 mm into the can standing on the table
    assert model.held == "can_0" and model.positions()["can_0"] == (x, y, z)
    model.step(pad((x, y, z + H + 0.05)), 1.2)  # lifts with the offset it was gripped with
    assert model.positions()["can_0"] == pytest.approx((x, y, z + 0.05))
    model.step(pad((x, y, z + H - SUCTION.attach_tol_z - 0.001)), 1.3)  # past the compliance
    assert model.held is None and model.placement("can_0").knocked_off_by == "table"
    assert model.positions()["can_0"] == pytest.approx((x, y, z))


# --- releasing and placement outcomes ----------------------------------------------------------------


def test_release_centred_over_a_compartment_is_in_box_clear_with_1_95_mm_per_side() -> None:
    model = gripped_model(0)
    place = TARGETS.places[0]
    model.step(pad(TARGETS.picks[0].above), 1.5)
    model.step(pad(place.place_above), 1.8)
    release_at(model, place.place_release)
    outcome = model.placement("can_0")
    assert outcome.result == "in_box_clear" and outcome.compartment == 0
    assert outcome.clearance == pytest.approx({"-x": 0.00195, "+x": 0.00195, "-y": 0.00195, "+y": 0.00195})
    assert outcome.text.startswith("in box, clear of walls")
    state = model.state()["cans"][0]
    assert state["outcome"]["clearance_mm"] == {"-x": 1.95, "+x": 1.95, "-y": 1.95, "+y": 1.95}
    assert state["position"] == pytest.approx([*place.centre, LAY.floor_top], abs=1e-5)
    assert state["attached"] is False and state["on"] == "floor"


def test_release_20_mm_off_lands_on_the_rim_20_mm_off() -> None:
    # Released just above the rim, 20 mm off in x: the footprint overlaps the divider.
    model = gripped_model(1)
    cx, cy = TARGETS.places[1].centre
    model.step(pad((cx + 0.02, cy, TARGETS.travel_z)), 1.5)
    release_at(model, (cx + 0.02, cy, LAY.rim_z + 0.005 + H))
    outcome = model.placement("can_1")
    assert outcome.result == "on_rim" and outcome.compartment is None
    assert model.positions()["can_1"] == pytest.approx((cx + 0.02, cy, LAY.rim_z))
    assert model.state()["cans"][1]["position"][:2] == pytest.approx([cx + 0.02, cy], abs=1e-5)

    # Descending to place_release 20 mm off: the can hits the rim first and is knocked off onto it.
    model = gripped_model(1)
    model.step(pad((cx, cy - 0.02, TARGETS.travel_z)), 1.5)
    model.step(pad((cx, cy - 0.02, TARGETS.places[1].place_release[2])), 1.8)
    events = model.drain_events()
    assert [e.kind for e in events] == ["knocked_off"] and model.held is None
    outcome = model.placement("can_1")
    assert outcome.result == "on_rim" and outcome.knocked_off_by == "wall -y"
    assert model.positions()["can_1"] == pytest.approx((cx, cy - 0.02, LAY.rim_z))
    assert "knocked off by wall -y, on the box rim" in events[0].text


@pytest.mark.parametrize(
    ("off", "result", "gap_minus", "gap_plus"),
    [
        (0.0, "in_box_clear", 1.95, 1.95),
        (0.001, "in_box_clear", 2.95, 0.95),
        (0.00195, "in_box_touching", 3.9, 0.0),
    ],
)
def test_clearance_per_side_is_measured(off: float, result: str, gap_minus: float, gap_plus: float) -> None:
    model = gripped_model(2)
    cx, cy = TARGETS.places[2].centre
    model.step(pad((cx + off, cy, TARGETS.travel_z)), 1.5)
    release_at(model, (cx + off, cy, TARGETS.places[2].place_release[2]))
    outcome = model.placement("can_2")
    assert outcome.result == result
    assert outcome.clearance["-x"] * 1000 == pytest.approx(gap_minus, abs=1e-6)
    assert outcome.clearance["+x"] * 1000 == pytest.approx(gap_plus, abs=1e-6)
    assert outcome.clearance["-y"] * 1000 == pytest.approx(1.95, abs=1e-6)


def test_sliding_into_a_wall_inside_a_compartment_knocks_the_can_off_touching_it() -> None:
    model = gripped_model(0)
    place = TARGETS.places[0]
    model.step(pad(place.place_above), 1.5)
    model.step(pad(place.place_release), 1.6)
    cx, cy, z = place.place_release
    model.step(pad((cx, cy + 0.01, z)), 1.7)  # 10 mm sideways against a 1.95 mm gap
    outcome = model.placement("can_0")
    assert model.held is None and outcome.knocked_off_by == "wall +y"
    assert outcome.result == "in_box_touching" and outcome.clearance["+y"] == pytest.approx(0.0, abs=1e-8)
    assert model.positions()["can_0"][1] == pytest.approx(cy + 0.00195, abs=1e-8)


def test_a_skip_into_a_wall_sweeps_the_can_and_knocks_it_off_at_the_wall() -> None:
    """A skip puts a held can straight at its new place only when that place is free: one inside a wall
    is swept there as a step is (knocked off at the contact), so no can ever stands inside a solid."""
    model = gripped_model(0)
    place = TARGETS.places[0]
    model.step(pad(place.place_above), 1.5)
    model.step(pad(place.place_release), 1.6)
    assert model.held == "can_0" and model.drain_events() == []
    cx, cy, z = place.place_release
    model.skip(pad((cx, cy + 0.01, z)), 4.6)  # 10 mm sideways against a 1.95 mm gap
    outcome = model.placement("can_0")
    assert model.held is None and outcome.knocked_off_by == "wall +y"
    assert model.positions()["can_0"][1] == pytest.approx(cy + 0.00195, abs=1e-8)
    kinds = [e.kind for e in model.drain_events()]
    assert kinds == ["skipped", "knocked_off"]


def test_bad_input_to_skip_is_refused_and_changes_nothing() -> None:
    model = gripped_model(0)
    before = model.positions()
    with pytest.raises(ValueError, match="finite"):
        model.skip(pad((math.nan, 0.0, 0.0)), 5.0)
    with pytest.raises(ValueError, match="go back"):
        model.skip(pad((0.3, 0.0, 0.0)), 0.5)
    assert model.positions() == before and model.held == "can_0" and model.t == 1.0
    assert model.drain_events() == []


def test_release_over_another_can_lands_on_its_top_and_it_falls_when_that_can_is_lifted() -> None:
    model = gripped_model(0)
    x1, y1, _ = model.positions()["can_1"]
    model.step(pad((0.30, 0.18, TARGETS.travel_z)), 1.5)
    model.step(pad((x1 + 0.01, y1, TARGETS.travel_z)), 1.6)
    release_at(model, (x1 + 0.01, y1, LAY.table_z + 2 * H + 0.01 + H))
    assert model.placement("can_0").result == "on_can" and model.support("can_0") == "can_1"
    assert model.positions()["can_0"][2] == pytest.approx(LAY.table_z + H)
    # Slide can_1 out from under it (gripped off-centre, moved sideways at table level).
    model.set_vacuum(True, 3.0)
    for now in (3.0, 3.5):
        model.step(top_of(model, "can_1"), now)
    assert model.held == "can_1"
    model.step(pad((x1 - 0.08, y1 - 0.08, LAY.table_z + H)), 3.6)
    assert model.held == "can_1" and model.placement("can_0").result == "on_table"
    assert model.positions()["can_0"][2] == pytest.approx(LAY.table_z)


def test_the_vacuum_on_never_lets_go_and_off_lets_go_exactly_after_the_settle_time() -> None:
    model = gripped_model(2)
    for i in range(1, 2001):  # 1000 s of wandering in free space above the cell
        model.step(
            pad((0.3 + 0.1 * math.sin(i), 0.1 * math.cos(i), 0.05 + 0.05 * math.sin(0.3 * i))), 1.0 + i * 0.5
        )
        assert model.held == "can_2"
    t = model.t
    model.set_vacuum(False, t)
    model.set_vacuum(True, t + 0.69)  # back on in time: the release is cancelled
    model.step(pad((0.3, 0.0, 0.05)), t + 5.0)
    assert model.held == "can_2"
    model.set_vacuum(False, t + 5.0)
    model.step(pad((0.3, 0.0, 0.05)), t + 5.0 + 0.699)
    assert model.held == "can_2"
    model.step(pad((0.3, 0.0, 0.05)), t + 5.7)
    assert model.held is None and model.placement("can_2").result == "on_table"
    kinds = [e.kind for e in model.drain_events()]
    assert kinds == ["vacuum", "vacuum", "vacuum", "released"]


def test_bad_input_is_refused_and_changes_nothing() -> None:
    model = gripped_model(0)
    before = model.positions()
    with pytest.raises(ValueError, match="finite"):
        model.step(pad((math.nan, 0.0, 0.0)), 2.0)
    with pytest.raises(ValueError, match="go back"):
        model.step(pad((0.3, 0.0, 0.0)), 0.5)
    assert model.positions() == before and model.held == "can_0" and model.t == 1.0


def test_scene_colours_follow_the_state() -> None:
    model = gripped_model(0)
    assert can_colour(model, "can_0") == YELLOW and can_colour(model, "can_1") == SILVER
    model.step(pad(TARGETS.places[0].place_above), 1.5)
    release_at(model, TARGETS.places[0].place_release)
    assert can_colour(model, "can_0") == GREEN
    shapes = scene(model)
    assert sum(s.kind == "cylinder" for s in shapes) == 3
    assert sum(s.ns == "box" for s in shapes) == 1 + 2 + 4  # floor, long walls, ends and dividers
    for colour, result in ((ORANGE, "in_box_touching"), (RED, "on_rim")):
        c = model._cans["can_0"]
        c.placement = dataclasses.replace(c.placement, result=result)
        assert can_colour(model, "can_0") == colour


# --- property: no can ever intersects the box, the table or another can -------------------------------

# The shipped layout, and the same with the box turned by 0.5 rad (exercises the box frame).
LAYOUTS = (LAY, dataclasses.replace(LAY, box_yaw=0.5))
TOL = 1e-9


def box_solids(lay) -> list[tuple[float, float, float, float, float]]:
    """The box solids worked out here, independently of geometry.py: (u0, u1, v0, v1, top z), box frame."""
    n, t, s = len(lay.can_xy), lay.wall_thickness, lay.can_diameter + 2 * lay.side_clearance
    length, width = n * s + (n + 1) * t, s + 2 * t
    rim = lay.table_z + lay.floor_thickness + lay.wall_height
    solids = [(-length / 2, length / 2, -width / 2, width / 2, lay.table_z + lay.floor_thickness)]  # floor
    solids += [(-length / 2, length / 2, -width / 2, -width / 2 + t, rim)]
    solids += [(-length / 2, length / 2, width / 2 - t, width / 2, rim)]
    solids += [
        (-length / 2 + k * (s + t), -length / 2 + k * (s + t) + t, -width / 2, width / 2, rim)
        for k in range(n + 1)
    ]
    return solids


def gaps(lay, p: tuple[float, float, float], others: list[tuple[float, float, float]]) -> list[float]:
    """Signed gap between a can at `p` and each solid (< 0: intersecting), computed independently."""
    x, y, z = p
    out = [z - lay.table_z]
    c, s = math.cos(lay.box_yaw), math.sin(lay.box_yaw)
    u, v = c * (x - lay.box_x) + s * (y - lay.box_y), -s * (x - lay.box_x) + c * (y - lay.box_y)
    for u0, u1, v0, v1, top in box_solids(lay):
        du, dv = max(u0 - u, u - u1), max(v0 - v, v - v1)  # > 0 outside the rectangle along that axis
        horizontal = math.hypot(max(du, 0.0), max(dv, 0.0)) + min(max(du, dv), 0.0) - R
        out.append(max(horizontal, lay.table_z - (z + H), z - top))
    for ox, oy, oz in others:
        out.append(max(math.hypot(x - ox, y - oy) - 2 * R, oz - (z + H), z - (oz + H)))
    return out


def intersections(lay, positions: dict[str, tuple[float, float, float]]) -> list[str]:
    found = []
    for cid, p in positions.items():
        others = [q for other, q in positions.items() if other != cid]
        worst = min(gaps(lay, p, others))
        if worst < -TOL:
            found.append(f"{cid} at {p} intersects a solid by {-worst * 1000:.4f} mm")
    return found


def path_min_gap(lay, p0, p1, others) -> float:
    """Smallest gap along the straight move p0 -> p1, by sphere tracing.

    Every gap is 1-Lipschitz in position, so from a point with gap g the next g metres are free: the
    trace cannot step over a solid, and it takes steps of at least 0.2 mm where solids are touched.
    """
    length = math.dist(p0, p1)
    travelled, smallest = 0.0, math.inf
    while True:
        s = min(travelled / length, 1.0) if length > 0 else 1.0
        p = tuple(p0[i] + s * (p1[i] - p0[i]) for i in range(3))
        g = min(gaps(lay, p, others))
        smallest = min(smallest, g)
        if s >= 1.0 or g < -TOL:
            return smallest
        travelled += max(g, 0.0002)


def _targeted(model: CellModel, draw: st.DrawFn) -> tuple[float, float, float]:
    """A TCP point drawn near where things happen: can tops, compartments, or anywhere."""
    lay = model.layout
    kind = draw(st.sampled_from(["can", "compartment", "anywhere"]))
    if kind == "can":
        cid = draw(st.sampled_from(lay.can_ids))
        x, y, z = model.positions()[cid]
        n = st.floats(-0.004, 0.004)
        return (x + draw(n), y + draw(n), z + H + draw(st.floats(-0.0025, 0.0025)))
    if kind == "compartment":
        cx, cy = lay.compartment_centre(draw(st.integers(0, lay.compartments - 1)))
        n = st.floats(-0.05, 0.05)
        return (cx + draw(n), cy + draw(n), lay.floor_top + H + draw(st.floats(-0.03, 0.2)))
    return (
        draw(st.floats(0.15, 0.6)),
        draw(st.floats(-0.35, 0.35)),
        draw(st.floats(lay.table_z - 0.05, 0.3)),
    )


def _carry(model: CellModel, draw: st.DrawFn) -> list[tuple[float, float, float]]:
    """Up to travel height, over a compartment (offset by a little or a lot), down to release height."""
    lay = model.layout
    x, y, _ = model.tcp.tcp if model.tcp else (0.3, 0.0, 0.0)
    cx, cy = lay.compartment_centre(draw(st.integers(0, lay.compartments - 1)))
    off = st.one_of(st.floats(-0.0025, 0.0025), st.floats(-0.03, 0.03))
    cx, cy = cx + draw(off), cy + draw(off)
    z = lay.floor_top + H + draw(st.floats(0.0, 0.02))
    return [(x, y, TARGETS.travel_z), (cx, cy, TARGETS.travel_z), (cx, cy, z)]


def _hold(
    model: CellModel,
    target: tuple[float, float, float],
    yaw: float,
    now: float,
    vacuum_off_at: float,
    draw: st.DrawFn,
) -> float:
    """Put the pad at `target` for a few steps (grips and releases happen), checking after each."""
    lay = model.layout
    for _ in range(draw(st.integers(1, 4))):
        held_before, before, offset = model.held, model.positions(), model.grip_offset
        now += draw(st.sampled_from([0.02, 0.1, 0.3, 0.6]))
        model.step(pad(target, yaw=yaw), now)
        problems = intersections(lay, model.positions())
        assert not problems, problems
        if held_before is not None and offset is not None:
            # Where the held can was asked to go: the new pad pose plus its grip offset, turned with the tool.
            old = before[held_before]
            ox, oy, oz = offset
            wanted = (
                target[0] + math.cos(yaw) * ox - math.sin(yaw) * oy,
                target[1] + math.sin(yaw) * ox + math.cos(yaw) * oy,
                target[2] + oz,
            )
            others = [q for cid, q in before.items() if cid != held_before]
            if model.held == held_before:  # it followed all the way, through nothing
                now_at = model.positions()[held_before]
                assert now_at[:2] == pytest.approx(wanted[:2], abs=1e-9)
                if now_at[2] != pytest.approx(wanted[2], abs=1e-9):
                    # Pressed: the pad gave (at most its compliance), the can stands on a solid.
                    assert wanted[2] < now_at[2] <= wanted[2] + SUCTION.attach_tol_z + 1e-9
                    below = (now_at[0], now_at[1], now_at[2] - 1e-6)
                    assert min(gaps(lay, below, others)) < 0.0, (now_at, wanted)
                assert path_min_gap(lay, old, now_at, others) >= -TOL, (old, now_at)
            elif model.vacuum or now - vacuum_off_at < SUCTION.release_settle_s - 1e-9:
                # Knocked off: only when the move really ran into a solid.
                assert path_min_gap(lay, old, wanted, others) <= 0.0002 + TOL, (old, wanted)
        events = model.drain_events()
        for e in events:  # --hypothesis-show-statistics shows how often each thing happened
            event(e.placement.result if e.placement else e.kind)
        kinds = {e.kind for e in events if e.can == held_before}
        if held_before is not None and model.held is None:
            # A held can left the pad: knocked off by a solid, or released >= release_settle_s after off.
            assert "knocked_off" in kinds or (
                not model.vacuum and now - vacuum_off_at >= SUCTION.release_settle_s - 1e-9
            ), (kinds, model.vacuum, now, vacuum_off_at)
    return now


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_tcp_paths_never_put_a_can_inside_a_wall_the_table_or_another_can(data: st.DataObject) -> None:
    model = CellModel(data.draw(st.sampled_from(LAYOUTS)), SUCTION)
    now, vacuum_off_at = 0.0, 0.0
    for _ in range(data.draw(st.integers(5, 40))):
        action = data.draw(st.sampled_from(["move", "move", "carry", "vacuum_on", "vacuum_off", "hold"]))
        if action in ("vacuum_on", "vacuum_off"):
            on = action == "vacuum_on"
            if on != model.vacuum and not on:
                vacuum_off_at = now
            model.set_vacuum(on, now)
            continue
        if action == "carry":
            waypoints = _carry(model, data.draw)
        elif action == "move":
            waypoints = [_targeted(model, data.draw)]
        else:
            waypoints = [model.tcp.tcp] if model.tcp else []
        yaw = data.draw(st.sampled_from([0.0, 0.0, 0.7]))
        for target in waypoints:
            now = _hold(model, target, yaw, now, vacuum_off_at, data.draw)
