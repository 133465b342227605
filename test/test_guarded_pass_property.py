"""The guarded pass's safety property over the physics cell, without ROS (issue 24, section 1).

A small in-process harness runs ONE can's guarded release over a `PhysicsCell` whose true box stands
off the believed one, and hypothesis draws the placement errors (derandomized, as configured):

- the cell: the true layout with the box moved by (dx, dy) of 0 .. 2 x the 1.95 mm side clearance in
  any direction and turned by up to 3 sigma of the configured yaw error; the cans on their spots; each
  grip shifted against the pad by up to 3 sigma of the configured grip scatter per axis (the cell's own
  `grip_scatter` hook, so the shift is clamped as in the cell);
- the harness's clock: a 10 ms tick; each tick the pad's pose goes to the cell (which filters it as
  the arm's dynamics, `pad_motion.PAD_BANDWIDTH`), the cell's tool wrench goes through the arm's Jacobian
  with the simulator's noise (`hardware.EffortSensor`, 0.03 N m) and `read_efforts` into a real
  `ContactDetector` (guard_force_n 5 N, debounce 2, baseline 5 samples), as the Cartesian node does;
- the tree's pass (`RimPass`, one goal with a band): from the carry's low end (`plan.low_carry_end`, 15 mm
  above the rim) fast (release_speed, braking at `BAND_ENTRY_DECEL_SHARE` of its acceleration) into the
  band's top
  (`rim_band` of the believed targets with the shipped `BehaviorSettings`) at guard_speed (10 mm/s)
  without stopping, on through the band at that speed, guarded from where the pad enters it (the
  detector's baseline is taken there); on a trip the pad brakes, is lifted back to the band's top (vacuum
  on), and the search's `probe_offsets` follow in the tree's order (`next_probe`: where the detector's
  force at the trip pushed the can sideways), each a move at the band's top and a guarded descent from
  rest; the first one that passes goes down to the release height, the vacuum going off `release_early_m`
  before it, and the can settles; no probe passes: the can is held there.

Simplified relative to the real stack: the pad's commanded pose is the measured TCP (no trajectory
generator, no stream); the stop after a trip is modelled as the worst the real node showed, not
computed: the arm runs on at full speed for `RUN_ON_S` (the command's lead over the measured arm, the
generator's stream delay and the motors' lag, with a late control cycle) and then decelerates at
`BRAKE_DECEL` (what the node's hard brake achieves at 20 mm/s: 0.93 mm); docs/design/guarded_moves.md.
The joints for the Jacobian are the IK of the commanded pose; the guarded descents, the lifts and the
moves between probes are straight lines at guard_speed with its acceleration (0.4 m/s^2, RAMP_FLOOR), the
other moves minimum-jerk at fixed speeds; the can is gripped on its true spot.

The property: no can is torn off, released or knocked outside its compartment (in_box_clear or
touching a wall, never on the rim, astray or tipped); every contact ends with the can held before and
after the lift; an exhausted search leaves it held above the band (the tree stops the run holding it).
It does not hold for every draw yet: `GRAZE` says where it fails (pinned as strict xfails). The hypothesis
test asserts it for every draw but one that ends in that mode (`grazed`: peeled off at once with the can's
side within `GRAZE_BAND` of a wall's plane), which it counts and `test_zz_report_the_numbers` prints;
so any other failure fails it. `LIFT_OFF` was seen before the search followed the rim's push.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from salamander_behavior.behaviors.search import CANDIDATES, next_probe, probe_offsets, release_handoff
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import LOW_CARRY_ABOVE_RIM
from salamander_control.cartesian.contact import ContactDetector, read_efforts
from salamander_control.cartesian.plan import BAND_ENTRY_DECEL_SHARE, RAMP_FLOOR
from salamander_control.cell.layout import CellLayout
from salamander_control.cell.targets import load_cell_targets
from salamander_control.kinematics import JOINT_NAMES, ArmParams, ToolPose, solve_ik_pitched
from salamander_sim.cell import load_cell_config
from salamander_sim.cell.config import Uncertainty
from salamander_sim.cell.geometry import CellGeometry
from salamander_sim.cell.physics import IMPACT_FACTOR, PhysicsCell
from salamander_sim.cell.uncertainty import CLIP_SIGMAS, draw_truth
from salamander_sim.hardware import EffortSensor, SimConfig
from salamander_testing import REPO

CFG = load_cell_config(REPO / "config" / "cell.yaml")
TARGETS = load_cell_targets(REPO / "config" / "cell.yaml")
SETTINGS = BehaviorSettings()
ARM = ArmParams()
TICK = 0.01
"""s: the joint states' period (100 Hz): one effort sample, one detector update, one cell step."""
CARTESIAN_MAX_SPEED = 1.0
"""m/s: the Cartesian node's speed at speed_scale 1 (config/cartesian_motion.yaml)."""
CARTESIAN_MAX_ACCEL = 4.0
"""m/s^2: its acceleration at speed_scale 1; a slow goal's at max(speed_scale, RAMP_FLOOR) (0.4 m/s^2)."""


class Speeds(NamedTuple):
    """The harness's motion under a set of behaviour settings (`speeds`)."""

    guard: float
    """m/s: the guarded descents, the lifts clear and the moves between probes (guard_speed)."""
    guard_accel: float
    """m/s^2: their acceleration (a slow goal ramps at `RAMP_FLOOR`)."""
    release: float
    """m/s: the release descent outside the band (release_speed)."""
    release_decel: float
    """m/s^2: how the release descent brakes into the band (the plan's `BAND_ENTRY_DECEL_SHARE` of it)."""


def speeds(settings: BehaviorSettings) -> Speeds:
    """The Cartesian node's speeds and ramps for `settings` (its limits at speed_scale 1 above)."""
    return Speeds(
        settings.guard_speed * CARTESIAN_MAX_SPEED,
        max(settings.guard_speed, RAMP_FLOOR) * CARTESIAN_MAX_ACCEL,
        settings.release_speed * CARTESIAN_MAX_SPEED,
        BAND_ENTRY_DECEL_SHARE * settings.release_speed * CARTESIAN_MAX_ACCEL,
    )


RUN_ON_S = 0.15
"""s: after the trip the arm runs on at full speed this long (0.08 s lead of the command in simulation,
a late control cycle or two on a loaded machine: the real runs' worst was 4.9 mm past the 2 N point)."""
BRAKE_DECEL = 0.2
"""m/s^2: then it decelerates at this (1 mm from 20 mm/s; the node's hard brake measured 0.93 mm)."""
CLEARANCE = 0.00195
GRIP_LIMIT = CLIP_SIGMAS * CFG.uncertainty.grip_sigma_xy if CFG.uncertainty.grip_sigma_xy else 0.0015
YAW_LIMIT = CLIP_SIGMAS * (CFG.uncertainty.box_error_sigma_yaw or 0.004)

Point = tuple[float, float, float]


@dataclass
class Contact:
    """One trip of the guard: where, with what force, and whether the can was held after the stop."""

    probe: int
    tcp: Point
    push: Point
    """The estimated force at the trip (N, base_link): its sideways part steers the search."""
    held_after_stop: bool
    held_after_lift: bool
    stroke: float
    seal_use: float

    @property
    def force(self) -> float:
        """|F| at the trip, N."""
        return math.hypot(*self.push)


@dataclass
class Outcome:
    """What one guarded release did."""

    contacts: list[Contact] = field(default_factory=list)
    probes: int = 0
    exhausted: bool = False
    events: list[str] = field(default_factory=list)
    placement: object = None
    held_at_end: str | None = None
    pad: Point = (0.0, 0.0, 0.0)
    tear_gap: float | None = None
    """m: where the can was torn off the pad, its gap to the nearest true wall (`wall_gap`)."""


class Harness:
    """Drives a PhysicsCell at 100 Hz and feeds its efforts to a real ContactDetector (module docstring)."""

    def __init__(self, cell: PhysicsCell, seed: int, settings: BehaviorSettings) -> None:
        self.cell = cell
        self.settings = settings
        self.speeds = speeds(settings)
        self.t = cell.t
        self.p: Point = TARGETS.picks[0].above
        self.sensor = EffortSensor(SimConfig().effort_noise, seed)
        self.events: list[str] = []
        self.torn_at: Point | None = None  # the TCP the tick the can was torn off the pad
        self.peak_stroke = 0.0
        self.peak_seal_use = 0.0
        self.tick()

    def tick(self, p: Point | None = None) -> None:
        self.p = p or self.p
        self.t += TICK
        self.cell.step(ToolPose(self.p, 0.0, 0.0), self.t)
        self.events += [f"{e.kind}: {e.text}" for e in self.cell.drain_events()]
        if self.torn_at is None and any("torn off" in e for e in self.events):
            self.torn_at = self.p
        self.peak_stroke = max(self.peak_stroke, self.cell.compensator_stroke)
        self.peak_seal_use = max(self.peak_seal_use, self.seal_use())

    def seal_use(self) -> float:
        """The held can's load on the seal as a fraction of its nearest limit (physics.py; 1: it tears)."""
        load = self.cell.seal_load()
        if load is None or self.cell.vacuum is False:
            return 0.0
        pull, shear, bend = load
        s, hold = self.cell.suction, self.cell.hold_force(self.t)
        pressing = max(hold - max(pull, 0.0), 1e-9)
        return max(abs(pull) / hold, shear / (s.pad_friction * pressing), bend / (pressing * s.pad_radius))

    def move(self, to: Point, speed: float, vent_within: float = -1.0) -> None:
        """A minimum-jerk move at `speed` m/s on average; the vacuum goes off once the pad is `vent_within`
        (m) from `to`, the move going on (the tree's `release_early_m`; < 0: never)."""
        start, vented = self.p, False
        n = max(1, math.ceil(math.dist(start, to) / speed / TICK))
        for i in range(1, n + 1):
            s = i / n
            s = 10 * s**3 - 15 * s**4 + 6 * s**5
            self.tick(tuple(a + s * (b - a) for a, b in zip(start, to, strict=True)))  # type: ignore[arg-type]
            if not vented and math.dist(self.p, to) <= vent_within:
                self.cell.set_vacuum(False, self.t)
                vented = True

    def line(self, to: Point, speed: float, accel: float, end_speed: float = 0.0) -> None:
        """A straight move with a trapezoidal speed profile (the Cartesian node's linear goal at a scale),
        arriving at `end_speed` (the start of a band crossed without stopping) or at rest."""
        start, length = self.p, math.dist(self.p, to)
        done, v = 0.0, 0.0
        while length - done > 1e-9:
            brake = math.sqrt(end_speed**2 + 2.0 * accel * (length - done)) + accel * TICK
            v = max(min(v + accel * TICK, speed, brake), end_speed if v >= end_speed else 0.0)
            done = min(length, done + v * TICK)
            s = done / length
            self.tick(tuple(a + s * (b - a) for a, b in zip(start, to, strict=True)))  # type: ignore[arg-type]

    def hold(self, seconds: float) -> None:
        for _ in range(round(seconds / TICK)):
            self.tick()

    def guarded_descent(self, bottom: float, v0: float = 0.0) -> tuple[Point, Point] | None:
        """Down the vertical line to `bottom` at guard speed (from `v0`); None if it got there, else (TCP,
        the estimated force F) at the trip, after braking (run on `RUN_ON_S`, then `BRAKE_DECEL`)."""
        detector = ContactDetector(self.settings.guard_force_n, ARM, self.t)
        x, y, z = self.p
        v = v0
        while z > bottom:
            v = min(v + self.speeds.guard_accel * TICK, self.speeds.guard)
            z = max(bottom, z - v * TICK)
            self.tick((x, y, z))
            q = solve_ik_pitched(self.p, 0.0, 0.0).q
            tau = self.sensor.read(q, self.cell.tool_wrench(), ARM)
            state = detector.update(self.t, q, read_efforts(JOINT_NAMES, tau))
            if state.tripped:
                assert state.force is not None
                trip = (self.p, state.force)
                for _ in range(round(RUN_ON_S / TICK)):
                    z = max(bottom, z - v * TICK)
                    self.tick((x, y, z))
                while v > 0.0:
                    v = max(0.0, v - BRAKE_DECEL * TICK)
                    z = max(bottom, z - v * TICK)
                    self.tick((x, y, z))
                self.hold(0.1)  # the goal ends once the motion stands; the tree sends the lift
                return trip
        return None


def wall_gap(layout: CellLayout, k: int, xy: tuple[float, float]) -> float:
    """m: the gap between an upright can centred at `xy` and the nearest wall of true compartment `k`
    (negative: it reaches past that wall's plane, onto its top edge)."""
    return min(CellGeometry(layout).side_clearances((*xy, 0.0), k).values())


def guarded_release(
    box: tuple[float, float, float],
    grip: tuple[float, float],
    k: int,
    seed: int,
    follow_push: bool = True,
    settings: BehaviorSettings = SETTINGS,
) -> Outcome:
    """Can k gripped on its spot, carried over its believed compartment, released through the guarded pass
    and the search into the true box moved by `box` (dx, dy, dyaw) with the grip shifted by `grip`; the
    tree's `settings` (bench/guarded_pass_survey.py tries others)."""
    layout = draw_truth(CFG.layout, Uncertainty(box_error=box)).layout
    cell = PhysicsCell(layout, CFG.suction, grip_scatter=lambda: grip)
    run = Harness(cell, seed, settings)
    v = run.speeds
    can, out = f"can_{k}", Outcome()
    pick, place = TARGETS.picks[k], TARGETS.places[k]
    run.move(pick.above, 0.3)
    run.move(pick.contact, 0.1)
    cell.set_vacuum(True, run.t)
    run.hold(CFG.suction.attach_settle_s + 0.1)
    assert cell.held == can, run.events
    run.move(pick.above, 0.2)
    run.move((*pick.above[:2], TARGETS.travel_z), 0.2)
    cx, cy, _ = place.place_above
    top = min(TARGETS.rim_pass_z + settings.guard_band_above_m, place.place_above[2])
    bottom = max(TARGETS.rim_pass_z - settings.guard_band_below_m, place.place_release[2])
    run.move((cx, cy, TARGETS.travel_z), 0.4)
    run.move((cx, cy, TARGETS.rim_pass_z + LOW_CARRY_ABOVE_RIM), 0.15)  # where the carry ends (low_carry)
    step = settings.search_step_m
    probes = probe_offsets(step, settings.search_reach_m, CANDIDATES)  # RimPass's candidates ...
    tried: list[int] = []
    px = py = 0.0
    for i in range(min(settings.search_probes, len(probes)) + 1):  # ... and its budget of tries
        out.probes = i
        if i:  # the search's next probe (RimPass: where the last contact pushed the can, else the spiral)
            push = out.contacts[-1].push if follow_push else None  # None: the square spiral
            index = next_probe(probes, tried, (px, py), push, step)
            assert index is not None  # one probe per pass of the loop: never all tried here
            tried.append(index)
            px, py = probes[index]
        if i == 0:  # into the band at its speed, without stopping
            run.line((cx, cy, top), v.release, v.release_decel, end_speed=v.guard)
        else:
            run.line((cx + px, cy + py, top), v.guard, v.guard_accel)
        run.peak_stroke = run.peak_seal_use = 0.0
        trip = run.guarded_descent(bottom, v.guard if i == 0 else 0.0)
        if trip is None:  # the vacuum goes off release_early_m before the release height, below the band
            release = place.place_release
            early = release_handoff(settings, bottom - release[2])
            run.move((cx + px, cy + py, release[2]), 0.15, vent_within=early)
            cell.set_vacuum(False, run.t)
            for _ in range(300):  # at most 3 s for the can to settle
                run.tick()
                if cell.placement(can) is not None and cell.held is None:
                    break
            break
        held_after_stop = cell.held == can
        run.line((cx + px, cy + py, top), v.guard, v.guard_accel)
        tcp, push = trip
        out.contacts.append(
            Contact(i, tcp, push, held_after_stop, cell.held == can, run.peak_stroke, run.peak_seal_use)
        )
        if not held_after_stop:
            break
    else:
        out.exhausted = True
    run.hold(0.5)
    out.events, out.placement, out.held_at_end, out.pad = run.events, cell.placement(can), cell.held, run.p
    if run.torn_at is not None:
        out.tear_gap = wall_gap(layout, k, (run.torn_at[0] + grip[0], run.torn_at[1] + grip[1]))
    return out


STATS: dict[str, list] = {
    "cases": [], "contacts": [], "probes": [], "exhausted": [], "wall": [], "peaks": [], "grazes": []
}

GRAZE = (
    "a can whose side is on a wall's or divider's plane (within ~0.1 mm of it: the pinned draws reach 5 and "
    "11 um past it, offset 1.955-1.966 mm toward it; a 300-draw survey's two, 0.09 mm past and 0.06 mm "
    "short, the can tilted a little by an off-axis grip) rubs the wall's top edge from 0.6 mm below the "
    "rim on, pushed sideways by 2-4 N (the contact's constraint force on an overlap of micrometres: the "
    "pad holds the can rigidly sideways, the compensator gives only along its axis), and is peeled off at "
    "once (0.55-0.89 N m > 0.28 N m, physics.IMPACT_FACTOR) within one physics step as the descent speeds "
    "up below the band (at any speed tried), before any 10 ms effort sample can show it"
)
LIFT_OFF = (
    "a can gripped ~1.6 mm off its axis that meets a wall top with its bottom edge is stopped (trip at ~6 N, "
    "5.3 mm of compensator) but rests on the edge with a sideways load at the seal's peel limit (seal use "
    "0.99 for 0.4 s), and the lift tears it off as the compensator reaches its stop and the can leaves the "
    "edge (0.59 N m > 0.2 N m): it falls on the rim"
)
"""Seen in a random survey before the search followed the rim's push; its draw is now placed (below), and
300 draws up to twice the clearance (2026-12-04) showed it no more: the hypothesis test still names it."""


GRAZE_BAND = 1e-4
"""m: a can torn off with its side this near a wall's plane (`wall_gap`, either way) is the `GRAZE` mode."""
PEELED = re.compile(r"peeled off: ([0-9.]+) N m > ([0-9.]+) N m")


def grazed(out: Outcome) -> bool:
    """The can was peeled off at once (at `physics.IMPACT_FACTOR` times the limit or more) with its side
    within `GRAZE_BAND` of a wall's plane: the `GRAZE` mode. Not a can torn off on a rim's top (its side
    millimetres past the wall's plane), nor one peeled off slowly (a load that built up)."""
    peel = next((m for e in out.events if "torn off" in e and (m := PEELED.search(e))), None)
    at_once = peel is not None and float(peel.group(1)) >= IMPACT_FACTOR * float(peel.group(2))
    return at_once and out.tear_gap is not None and abs(out.tear_gap) <= GRAZE_BAND


def check_property(
    box: tuple[float, float, float],
    grip: tuple[float, float],
    k: int,
    seed: int,
    follow_push: bool = True,
    settings: BehaviorSettings = SETTINGS,
    grazes: bool = False,
) -> Outcome:
    """Run one guarded release, record its numbers in STATS and assert the safety property; with `grazes`,
    a release that ends in the `GRAZE` mode (`grazed`) is counted in STATS instead."""
    start = time.monotonic()
    out = guarded_release(box, grip, k, seed, follow_push, settings)
    STATS["cases"].append((box, grip, k))
    STATS["contacts"].append(len(out.contacts))
    STATS["peaks"] += [(c.force, c.stroke, c.seal_use) for c in out.contacts]
    STATS["probes"].append(out.probes)
    STATS["exhausted"].append(out.exhausted)
    STATS["wall"].append(time.monotonic() - start)
    contacts = [
        (c.probe, round(c.force, 2), round(c.stroke * 1000, 2), round(c.seal_use, 2)) for c in out.contacts
    ]
    case = (
        f"box {box[0] * 1000:+.3f}, {box[1] * 1000:+.3f} mm, yaw {box[2]:+.4f}; grip {grip[0] * 1000:+.3f}, "
        f"{grip[1] * 1000:+.3f} mm; can_{k}; contacts (probe, |F| N, stroke mm, seal use) {contacts}; "
        f"events {out.events}"
    )
    if grazes and grazed(out):
        STATS["grazes"].append(case)
        return out
    assert not any("torn off" in e or e.startswith("knocked_off") for e in out.events), case
    for c in out.contacts:
        assert c.held_after_stop and c.held_after_lift, case
    if out.exhausted:  # the tree stops the run holding the can above the band
        assert out.held_at_end == f"can_{k}" and out.pad[2] > TARGETS.rim_pass_z, case
    else:
        p = out.placement
        assert p is not None and out.held_at_end is None, case
        assert p.result in ("in_box_clear", "in_box_touching") and p.compartment == k, case
    return out


@pytest.mark.parametrize(
    ("box", "grip", "k", "probes", "exhausted"),
    [
        ((0.0, 0.0, 0.0), (0.0005, -0.0005), 0, 0, False),  # in directly
        ((0.0035, 0.0, 0.0), (0.0, 0.0), 0, 1, False),  # the e2e test's box: meets the rim, probe 1 passes
        # The rim pushes each of these back toward the compartment: the first probe goes there and passes
        # (in the square spiral they took 4, 3 and 6 probes).
        ((0.0, -0.0035, 0.0), (0.0005, -0.0005), 1, 1, False),  # between two dividers: pushed -y
        ((-0.0038, 0.0, 0.0112), (0.0, 0.0012), 0, 1, False),  # far out along x, turned: pushed -x
        ((-0.00269, 0.00249, -0.0068), (-0.00023, -0.00141), 0, 1, False),  # diagonal: pushed -x +y
        # 5.9 mm diagonal: the spiral's twelve nearest (to 4 mm) ran out; the push walks to (-4, +4) mm
        ((-0.0042, 0.0042, 0.0), (0.0, 0.0), 0, 2, False),
        ((-0.0062, 0.0062, 0.0), (0.0, 0.0), 0, 12, True),  # 8.8 mm diagonal: beyond the reach, held
    ],
)
def test_chosen_draws_pass_the_rim_or_are_held(
    box: tuple[float, float, float], grip: tuple[float, float], k: int, probes: int, exhausted: bool
) -> None:
    """Cases of the property with what the search does in them (the probes tried, exhausted or not)."""
    out = check_property(box, grip, k, 1)
    assert (out.probes, out.exhausted) == (probes, exhausted), out.contacts


@pytest.mark.xfail(strict=True, reason=GRAZE)
def test_a_can_grazing_a_wall_top_within_the_clearance_is_not_torn_off() -> None:
    """The failing draw pinned: can_0 1.955 mm toward its +y wall (box moved -y); strict: a cell or stack
    change that makes it pass shows here."""
    check_property((0.0, -0.001955, 0.0), (0.0, 0.0), 0, 1)


LIFT_OFF_DRAW = ((0.0012681725681452012, 0.0028488776057163444, 0.009486845089032785),
                 (-0.0006932297288250244, -0.0014495048306635136), 0, 61)  # fmt: skip
"""The draw `LIFT_OFF` was seen in: box +1.27, +2.85 mm, yaw +0.0095; grip -0.69, -1.45 mm; can_0."""


def test_the_draw_a_square_spiral_tore_off_goes_in_following_the_push() -> None:
    """`LIFT_OFF_DRAW`, once a strict xfail: following the rim's push, the search goes in at probe 2 (+2,
    +4 mm, beyond the spiral's twelve nearest); in the spiral's order its tenth probe grazes wall -x."""
    out = check_property(*LIFT_OFF_DRAW)
    assert (out.probes, len(out.contacts)) == (2, 2)


@pytest.mark.xfail(strict=True, reason=GRAZE)
def test_the_same_draw_in_the_square_spiral_grazes_a_wall() -> None:
    """The spiral's order (``search_follow_push`` false) on `LIFT_OFF_DRAW`: probe 10 is torn off by
    wall -x (the `GRAZE` mode); strict, so a change that mends it shows here."""
    check_property(*LIFT_OFF_DRAW, follow_push=False)


@settings(
    max_examples=40,
    deadline=None,
    phases=(Phase.explicit, Phase.generate),  # no shrinking: a failing draw is reported as drawn
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    r=st.floats(0.0, 2 * CLEARANCE),
    angle=st.floats(0.0, 2 * math.pi),
    yaw=st.floats(-YAW_LIMIT, YAW_LIMIT),
    gx=st.floats(-GRIP_LIMIT, GRIP_LIMIT),
    gy=st.floats(-GRIP_LIMIT, GRIP_LIMIT),
    k=st.integers(0, CFG.layout.compartments - 1),
    seed=st.integers(0, 2**16),
)
def test_the_guarded_pass_never_tears_a_can_off_nor_puts_it_outside_its_compartment(
    r: float, angle: float, yaw: float, gx: float, gy: float, k: int, seed: int
) -> None:
    """Box offsets 0 .. 2 x clearance in any direction, yaw and grip within 3 sigma: the property holds,
    except in a draw that ends in the `GRAZE` mode (pinned by the strict xfails above), and at most
    `MAX_GRAZES` of those: 2 in the 300-draw survey, so more than three in these 40 means a change made the
    mode common, and the exemption would hide it."""
    out = check_property((r * math.cos(angle), r * math.sin(angle), yaw), (gx, gy), k, seed, grazes=True)
    if grazed(out):
        PROPERTY_GRAZES.append((r, angle, yaw, gx, gy, k, seed))
    assert len(PROPERTY_GRAZES) <= MAX_GRAZES, PROPERTY_GRAZES


MAX_GRAZES = 3
PROPERTY_GRAZES: list[tuple] = []  # the draws of the test above that grazed (this process)


def test_only_a_graze_is_let_through() -> None:
    """The hypothesis test above passes over `GRAZE` draws only: both pinned draws are grazes (5 and 11 um
    past the wall's plane), a can torn off on the rim (2.5 mm past it) by a guard too weak to stop it (50
    N) is not."""
    assert grazed(check_property((0.0, -0.001955, 0.0), (0.0, 0.0), 0, 1, grazes=True))
    assert grazed(check_property(*LIFT_OFF_DRAW, follow_push=False, grazes=True))
    weak = dataclasses.replace(SETTINGS, guard_force_n=50.0)
    with pytest.raises(AssertionError, match="torn off the pad by wall -x"):
        check_property((0.0025, 0.0, 0.0), (0.0, 0.0), 0, 1, settings=weak, grazes=True)


def test_zz_report_the_numbers() -> None:
    """Not a check: prints what the runs above measured (pytest -s)."""
    n = len(STATS["cases"])
    if not n:
        return
    print(
        f"\ncases {n}, contacts {sum(STATS['contacts'])} (max {max(STATS['contacts'])} per case), "
        f"probes per case {sorted(STATS['probes'])}, exhausted {sum(STATS['exhausted'])}, "
        f"grazes {len(STATS['grazes'])}, wall {sum(STATS['wall']):.1f} s"
    )
    for case in STATS["grazes"]:
        print(f"GRAZE: {case}")
    if STATS["peaks"]:
        force, stroke, use = (max(p[i] for p in STATS["peaks"]) for i in range(3))
        print(
            f"worst contact: |F| at trip {force:.2f} N, compensator {stroke * 1000:.2f} mm, "
            f"seal use {use:.2f}"
        )
