"""The simulated cell's state machine: cans, suction pad, vacuum, and where every can ends up.

Driven by two inputs with explicit timestamps (seconds of one monotonic clock): `set_vacuum` (the
vacuum service) and `step` (the TCP pose from FK of /joint_states, or None when that is stale). The
rules, in the order `step` applies them:

1. **Release.** A held can lets go `release_settle_s` after the vacuum went off (vacuum on again before
   that cancels it). It drops straight down onto the highest solid under its footprint.
2. **Follow.** A held can keeps the offset from the pad it had when gripped (rotating with the tool yaw)
   and stays upright. Its move is swept against the walls, floor, table and other cans: if it would
   hit one, it stops at the contact, is knocked off the pad, and drops. Pushed straight down onto
   what it stands on, the pad gives by up to `attach_tol_z` before that happens (`_pressed`).
3. **Grip.** With no can held, the pad grips a can when the vacuum has been on *and* the pad has been on
   that can's top (within `attach_tol_z` of the top, `attach_tol_xy` of the axis, tilt at most
   `attach_max_tilt`) for `attach_settle_s`, both without interruption.
4. **Settle.** A can whose support moved away (a can stood on the one just lifted) drops.

`skip` is `step` for a gap in which the world paused (the node stopped or starved, `cell_sim`'s
`skip_gap_s`): the held can goes straight to the pad's new place, not swept along a straight line the arm
need not have taken.

Every landing produces a `Placement`: in a compartment, clear of the walls or touching one (with the
clearance per side), on the box rim, on another can, or on the table. A can never intersects the box,
the table or another can (`geometry.sweep` stops moves at the contact; drops land on the highest support).
Not modelled: the arm's own links, cans tipping over, the pad pushing a can it does not hold. The
physics engine (`physics.PhysicsCell`, the default) has the same interface and models tipping too.

The model runs the *true* layout (`uncertainty.draw_truth`); with a `grip_scatter` each grip shifts
the can against the pad by one draw (kept within attach_tol_xy of the axis), as in the physics engine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from salamander_control.kinematics import ToolPose
from salamander_sim.cell.config import STANDARD_GRAVITY, CellLayout, SuctionParams
from salamander_sim.cell.geometry import EPS, CellGeometry, Point
from salamander_sim.cell.report import CellEvent, Placement, state_dict
from salamander_sim.cell.tool import ZERO_WRENCH, Wrench
from salamander_sim.cell.uncertainty import clamp_offset


@dataclass
class _Can:
    id: str
    pos: Point
    held: bool = False
    support: str = "table"
    placement: Placement | None = None


@dataclass
class _Grip:
    can: str
    offset: Point  # can bottom centre minus TCP, in the tool-yaw frame
    release_at: float | None = None  # set while the vacuum is off


@dataclass
class CellModel:
    """The cell; all times are seconds of one monotonic clock, never going back."""

    layout: CellLayout
    suction: SuctionParams = field(default_factory=SuctionParams)
    t: float = 0.0
    grip_scatter: Callable[[], tuple[float, float]] | None = None
    """One draw per grip: the can's shift against the pad, tool-yaw frame (m); None: no shift."""

    def __post_init__(self) -> None:
        """Stand every can at its configured place on the table; vacuum off, nothing held."""
        self.geometry = CellGeometry(self.layout)
        z = self.layout.table_z
        self._cans = {
            cid: _Can(cid, (x, y, z))
            for cid, (x, y) in zip(self.layout.can_ids, self.layout.can_xy, strict=True)
        }
        self.vacuum = False
        self._vacuum_since = self.t
        self._contact: tuple[str, float] | None = None
        self._grip: _Grip | None = None
        self._events: list[CellEvent] = []
        self.tcp: ToolPose | None = None
        self._stepped_t = self.t  # the time of the last step (a skip's gap starts there)
        self._jump_pending = False  # skipped without a pose: the held can jumps to the next fresh one

    # --- inputs --------------------------------------------------------------------------------------

    def set_vacuum(self, on: bool, now: float) -> None:
        """Switch the vacuum (the service's command) at time `now`; repeating the state changes nothing.

        Raises:
            ValueError: `now` is not finite or earlier than the model's time (nothing changes).
        """
        self._advance(now)
        self._release_if_due(now)
        if on == self.vacuum:
            return
        self.vacuum, self._vacuum_since = on, now
        if self._grip is not None:
            self._grip.release_at = None if on else now + self.suction.release_settle_s
        text = "vacuum on" if on else "vacuum off"
        if self._grip is not None and not on:
            text += f": {self._grip.can} lets go in {self.suction.release_settle_s:.2f} s"
        self._events.append(CellEvent(now, "vacuum", self._grip.can if self._grip else None, text))

    def step(self, pose: ToolPose | None, now: float) -> None:
        """Advance to `now` with the pad at `pose` (None: no fresh TCP, so no contact can be judged).

        Raises:
            ValueError: a non-finite pose, or `now` not finite or earlier than the model's time; the
                model is left exactly as it was.
        """
        if pose is not None and not all(map(math.isfinite, (*pose.tcp, pose.tool_pitch, pose.tool_yaw))):
            raise ValueError(f"TCP pose must be finite, got {pose}")  # refused before anything changes
        self._advance(now)
        self._release_if_due(now)
        self._move(pose, now, jump=self._jump_pending and pose is not None)

    def skip(self, pose: ToolPose | None, now: float) -> None:
        """Advance to `now` as `step`, for a gap in which the world paused (the node was stopped or starved).

        The held can goes straight to the pad's new place (or the next fresh one when `pose` is None)
        instead of being swept there in a straight line, which the arm's path in the gap need not have
        been (over a rim and down into a compartment); only a can whose new place is not free is swept
        (and knocked off at the contact). One "skipped" event says so.

        Raises:
            ValueError: as `step`; the model is left exactly as it was.
        """
        if pose is not None and not all(map(math.isfinite, (*pose.tcp, pose.tool_pitch, pose.tool_yaw))):
            raise ValueError(f"TCP pose must be finite, got {pose}")
        gap = now - self._stepped_t
        self._advance(now)
        self._release_if_due(now)
        moves = f"the pad and {self.held} on it jump" if self.held else "the pad jumps"
        where = "the newest pose" if pose is not None else "the next fresh pose"
        text = f"the cell was not stepped for {gap:.2f} s: skipped; {moves} straight to {where}"
        self._events.append(CellEvent(now, "skipped", self.held, text))
        self._jump_pending = pose is None
        self._move(pose, now, jump=pose is not None)

    def _move(self, pose: ToolPose | None, now: float, jump: bool) -> None:
        """The pad to `pose`, a held can with it (`jump`: not swept, see `skip`), then contact and grip."""
        self._stepped_t = now
        if pose is not None:
            self._jump_pending = False
            self.tcp = pose
            if self._grip is not None:
                self._follow(pose, now, jump)
        self._update_contact(pose, now)
        if self._grip is None and self._contact is not None and self.vacuum:
            can, since = self._contact
            if now - max(since, self._vacuum_since) >= self.suction.attach_settle_s - 1e-9:
                self._grab(can, pose, now)

    def set_suction(self, suction: SuctionParams) -> None:
        """Apply new suction parameters (live); a pending release keeps the deadline it had."""
        self.suction = suction

    # --- outputs -------------------------------------------------------------------------------------

    def positions(self) -> dict[str, Point]:
        """Every can's bottom centre by id."""
        return {cid: c.pos for cid, c in self._cans.items()}

    def orientation(self, can: str) -> tuple[float, float, float, float]:
        """The can's attitude as a unit quaternion (w, x, y, z): always upright here."""
        return (1.0, 0.0, 0.0, 0.0)

    @property
    def held(self) -> str | None:
        """Id of the can on the pad, or None."""
        return self._grip.can if self._grip else None

    def tool_wrench(self) -> Wrench:
        """What the tool feels from the held can, base_link (force N, moment about the TCP N m).

        Its weight, and the weight's moment when it hangs off the axis; ZERO_WRENCH without one. This
        engine has no contacts: a can pressed onto something weighs on the tool as it hangs.
        """
        if self._grip is None or self.tcp is None:
            return ZERO_WRENCH
        x, y, _ = self._cans[self._grip.can].pos
        rx, ry = x - float(self.tcp.tcp[0]), y - float(self.tcp.tcp[1])  # centre of mass from the pad
        fz = -self.layout.can_mass * STANDARD_GRAVITY
        return (0.0, 0.0, fz, ry * fz, -rx * fz, 0.0)

    @property
    def grip_offset(self) -> Point | None:
        """The held can's bottom centre from the pad as gripped (tool frame: turns with the yaw), m."""
        return self._grip.offset if self._grip else None

    @property
    def contact(self) -> str | None:
        """Id of the can whose top the pad is on (gripped or not yet), or None."""
        return self._contact[0] if self._contact else None

    def placement(self, can: str) -> Placement | None:
        """The last landing of `can` (None at the start and while held)."""
        return self._cans[can].placement

    def support(self, can: str) -> str:
        """What `can` stands on ("gripper" while held)."""
        return "gripper" if self._cans[can].held else self._cans[can].support

    def drain_events(self) -> list[CellEvent]:
        """Events since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    def state(self) -> dict[str, Any]:
        """The JSON-ready state the node publishes (format documented in cell/report.py)."""
        return state_dict(self)

    # --- rules ---------------------------------------------------------------------------------------

    def _advance(self, now: float) -> None:
        if not math.isfinite(now) or now < self.t:
            raise ValueError(f"time must be finite and not go back: {now} after {self.t}")
        self.t = now

    def _release_if_due(self, now: float) -> None:
        grip = self._grip
        if grip is not None and grip.release_at is not None and now >= grip.release_at:
            self._let_go(grip.can, now, None)

    def _others(self, can: str) -> dict[str, Point]:
        return {cid: c.pos for cid, c in self._cans.items() if cid != can}

    def _update_contact(self, pose: ToolPose | None, now: float) -> None:
        if self._grip is not None:
            self._contact = (self._grip.can, self._contact[1] if self._contact else now)
            return
        found = None if pose is None else self._can_under_pad(pose)
        if found is None:
            self._contact = None
        elif self._contact is None or self._contact[0] != found:
            self._contact = (found, now)

    def _can_under_pad(self, pose: ToolPose) -> str | None:
        s = self.suction
        if abs(pose.tool_pitch) > s.attach_max_tilt:
            return None
        x, y, z = pose.tcp
        best, best_d = None, math.inf
        for cid, c in self._cans.items():
            d = math.hypot(x - c.pos[0], y - c.pos[1])
            if (
                d <= s.attach_tol_xy
                and abs(z - (c.pos[2] + self.layout.can_height)) <= s.attach_tol_z
                and d < best_d
            ):
                best, best_d = cid, d
        return best

    def _grab(self, can: str, pose: ToolPose | None, now: float) -> None:
        assert pose is not None  # contact needs a pose
        c = self._cans[can]
        dx, dy, dz = (c.pos[i] - pose.tcp[i] for i in range(3))
        cy, sy = math.cos(pose.tool_yaw), math.sin(pose.tool_yaw)
        ox, oy = cy * dx + sy * dy, -sy * dx + cy * dy
        if self.grip_scatter is not None:
            sx, sy_ = self.grip_scatter()
            ox, oy = clamp_offset(ox + sx, oy + sy_, self.suction.attach_tol_xy)
        self._grip = _Grip(can, (ox, oy, dz))
        c.held, c.placement, c.support = True, None, "gripper"
        off = math.hypot(ox, oy) * 1000
        self._events.append(CellEvent(now, "gripped", can, f"{can} gripped ({off:.1f} mm off its axis)"))

    def _follow(self, pose: ToolPose, now: float, jump: bool = False) -> None:
        grip = self._grip
        assert grip is not None
        c = self._cans[grip.can]
        ox, oy, oz = grip.offset
        cy, sy = math.cos(pose.tool_yaw), math.sin(pose.tool_yaw)
        target = (pose.tcp[0] + cy * ox - sy * oy, pose.tcp[1] + sy * ox + cy * oy, pose.tcp[2] + oz)
        others = self._others(grip.can)
        target = self._pressed(c, target, others)
        if jump and not self.geometry.collisions(target, others):
            c.pos = target
            self._settle_others(now)
            return
        s, hit = self.geometry.sweep(c.pos, target, others)
        stop = target if hit is None else tuple(c.pos[i] + s * (target[i] - c.pos[i]) for i in range(3))
        if not self.geometry.collisions(stop, others):  # free by construction; belt and braces
            c.pos = stop
        if hit is not None:
            self._let_go(grip.can, now, hit)
        self._settle_others(now)

    def _pressed(self, c: _Can, target: Point, others: dict[str, Point]) -> Point:
        """`target`, unless the pad pushes the can into what it stands on by at most its compliance.

        The pad gives by up to `attach_tol_z` (the same slack it grips with): a pad still settling a
        millimetre lower after the grip, or putting a can down onto a surface, presses the can onto the
        solid under it instead of driving it through. Pressed farther than that, the can is knocked off.
        """
        floor, _, _ = self.geometry.support((target[0], target[1], c.pos[2]), others)
        press = floor - target[2]
        if 0.0 < press <= self.suction.attach_tol_z:
            return (target[0], target[1], floor)
        return target

    def _let_go(self, can: str, now: float, knocked_by: str | None) -> None:
        self._grip = None
        self._contact = None
        c = self._cans[can]
        c.held = False
        placement = self._drop(c, knocked_by)
        kind = "released" if knocked_by is None else "knocked_off"
        self._events.append(CellEvent(now, kind, can, f"{can} {placement.text}", placement))

    def _drop(self, c: _Can, knocked_by: str | None) -> Placement:
        z, kind, name = self.geometry.support(c.pos, self._others(c.id))
        c.pos = (c.pos[0], c.pos[1], z)
        c.support = name
        compartment = clearance = None
        if kind == "floor":
            compartment = self.geometry.compartment_of(c.pos)
            if compartment is not None:
                clearance = self.geometry.side_clearances(c.pos, compartment)
        if kind == "wall":
            result = "on_rim"
        elif kind == "can":
            result = "on_can"
        elif compartment is not None and clearance is not None:
            touching = min(clearance.values()) < self.suction.touch_tolerance
            result = "in_box_touching" if touching else "in_box_clear"
        else:
            result = "on_table"
        c.placement = Placement(result, c.pos, name, compartment, clearance, knocked_by)
        return c.placement

    def _settle_others(self, now: float) -> None:
        """Drop any resting can whose support is gone (it stood on the can that just moved)."""
        for c in self._cans.values():
            if c.held:
                continue
            z, _, _ = self.geometry.support(c.pos, self._others(c.id))
            if z < c.pos[2] - EPS:
                placement = self._drop(c, None)
                self._events.append(CellEvent(now, "fell", c.id, f"{c.id} fell: {placement.text}", placement))
