"""The cell on a rigid-body physics engine (MuJoCo): cans that slide, tip and fall; a force-limited pad.

`PhysicsCell` has the interface of the kinematic `CellModel` (`set_vacuum`, `step`, `state`, events,
placements), so the node, the markers and the state topic do not care which engine runs. The scene
(`physics_scene.scene_xml`) is built from the *true* layout (`uncertainty.draw_truth`):

- the table: a slab whose top is table_z (`physics_scene.TABLE_SLAB`); the box: a fixed body at the true
  box pose with one MuJoCo box geom per solid of `geometry.box_prisms` (floor, walls, dividers: the
  compartments with their side clearance);
- each can: a free body, a cylinder of can_diameter x can_height and can_mass (a full 330 ml can: 66.2
  x 115 mm, ~0.35 kg), at its true spot, upright on the table;
- the pad: a mocap body (kinematic: moved, never pushed) that follows the TCP of the measured joint
  states (FK, done by the node; linear between two measurements) through a critically damped filter
  (`pad_motion`), so the timing noise of the joint states does not jolt a held can; `skip` (the node
  was paused) puts it, and a held can, straight at the newest pose instead. It has no
  collision geometry: the pad never pushes a can it does not hold (as in the kinematic model; the
  arm's links are not modelled).

**Suction.** A weld equality constraint per can, switched on when the pad seals: the vacuum on and the
pad on the can top (within attach_tol_z of the top plane and attach_tol_xy of the axis, the pad's axis
within attach_max_tilt of the can's) without interruption for attach_settle_s, as in the kinematic
model. The weld keeps the can's pose relative to the pad as it was when the seal formed, shifted by one
draw of the grip scatter (`uncertainty.GripScatter`: the lid slides under the lip as the seal forms;
the total offset from the axis stays within attach_tol_xy). A weld alone would hold any load, so every
physics step reads the weld's wrench on the can (the constraint force `efc_force` through its Jacobian)
in the pad frame at the seal, and the seal breaks (weld off: the can is torn off) when, for at least
`TEAR_PERSIST_S`, with F the holding force and T the pull along the pad axis:

- the pull exceeds the holding force: T > F (pulled off);
- the sideways load exceeds the lip's friction: shear > pad_friction * (F - max(T, 0)) (sheared off);
- the moment about the seal tips the load onto the lip's edge: moment > (F - max(T, 0)) * pad_radius
  (peeled off: a can that meets a wall top with its edge while held);
- the can is pushed into the pad harder than the vacuum holds it: -T > F (pushed off: the kinematic
  model's "pressed farther than the pad gives").

The pad sits on a spring-loaded level compensator (`tool`: the body `pad_tip` on a slide joint under
the pad, 9 mm of stroke, 2 N preload, 0.5 N/mm), and the weld holds the can to it: a held can set down
on something pushes the pad in against a force that grows with the press, and the seal check sees
that force, not an instant rigid one. `tool_wrench` is what the tool feels from the held can (its
weight, its inertia and what presses on it; zero without a can), the mean over the last `step`.

F is `suction_force_n` while the vacuum is on. When it goes off, F decays exponentially (the pad's
volume venting through the valve) with the time constant that brings it down to the can's weight in
release_settle_s: tau = release_settle_s / ln(F / (m g)) (0.13 s at the defaults). The can therefore lets
go when the decaying hold can no longer carry its load (a can hanging centred: after release_settle_s,
as the kinematic model's fixed delay; one with a moment on the pad, or pulled on by a pad still braking
its descent, a little earlier: "the venting hold gave way"), and at the latest after release_settle_s.
Why a weld and not MuJoCo's adhesion actuator: docs/design/cell_model.md.

**Outcomes.** A can that left the pad (or that something pushed) is watched until it is at rest
(`REST_SPEED`, `REST_SPIN` for `REST_S`; `SETTLE_TIMEOUT_S` at most), then classified from the
physics: its tilt and what it stands on (the contacts whose normal points up into it): tipped over,
on the rim (a wall or divider top carries it), on another can, in a compartment (clear of the walls or
touching one, with the gap to each wall computed from the can's pose), on the table, or dropped in
transit (came off the pad without a release and rests on the table). The event carrying the
`Placement` comes at that moment; `held` (the part-present switch's input) drops the moment the seal
breaks. Pure: mujoco and numpy, no rclpy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from salamander_control.kinematics import ToolPose
from salamander_sim.cell.config import STANDARD_GRAVITY, CellLayout, SuctionParams
from salamander_sim.cell.geometry import CellGeometry, Point, box_prisms
from salamander_sim.cell.pad_motion import PadFilter, PadPose, pad_quat, pad_rotation, target_at
from salamander_sim.cell.physics_scene import scene_xml, xml_name
from salamander_sim.cell.report import CellEvent, Placement, state_dict
from salamander_sim.cell.tool import ZERO_WRENCH, Wrench, tool_wrench

TIPPED_TILT = 0.35
"""rad (20 deg): a can at rest tilted more than this from upright, not hanging on the rim, has tipped
over (in a compartment it can lean at most ~2 deg)."""
REST_SPEED = 0.003
"""m/s: a can slower than this ..."""
REST_SPIN = 0.05
"""rad/s: ... and turning slower than this ..."""
REST_S = 0.15
"""s: ... for this long is at rest, and its placement is judged."""
SETTLE_TIMEOUT_S = 3.0
"""s: a can still moving this long after it left the pad (rolling on the table) is judged as it is."""
MOVED_DISTANCE = 0.0005
"""m: a can at rest whose bottom centre moved farther than this (pushed by a carried can) moves again."""
MOVED_TILT = 0.01
"""rad: ... or whose axis turned by more than this."""
TEAR_PERSIST_S = 0.006
"""s: an overload of the seal must last this long to break it (a lip rides out a 2 ms jolt) ..."""
IMPACT_FACTOR = 2.0
"""... unless it is this many times the limit: a held can driven into a rim breaks the seal at once
(waiting would let the kinematic pad drive it deep into the solid)."""
MAX_STEP_S = 0.1
"""s: one `step` simulates at most this much; the rest is caught up by the next ones (a stalled node
does not stall longer still)."""
MAX_LAG_S = 2.0
"""s: physics this far behind the clock skips ahead, as `skip` does: only a node starved of CPU for
seconds gets there (a node that sees itself stopped calls `skip` sooner)."""
WARM_UP_S = 0.3
"""s: the cans settle on the table this long before the cell starts (not counted as cell time)."""
SUPPORT_NORMAL_Z = 0.5
"""A contact whose normal into the can points up more steeply than this (cos 60 deg) carries it."""

_EQUALITY = int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)


@dataclass
class _Seal:
    """The can on the pad."""

    can: str
    rel: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the can's centre in the pad frame at the seal
    off_at: float | None = None  # when the vacuum went off (the hold decays from then)
    overload_since: float | None = None
    why: str = ""


@dataclass
class _CanWatch:
    """What the cell knows about one can that is not on the pad."""

    resting: bool = True
    support: str = "table"
    placement: Placement | None = None
    rest_pos: np.ndarray | None = None
    rest_axis: np.ndarray | None = None
    moving_since: float = 0.0
    still_since: float | None = None
    how: str = "moved"  # why it moves: "released", "knocked_off" or "moved"
    knocked_by: str | None = None


@dataclass
class PhysicsStats:
    """Counters of the physics: steps, their wall time, simulated, resting and skipped seconds."""

    steps: int = 0
    step_wall_s: float = 0.0
    simulated_s: float = 0.0  # cell time advanced, stepped or at rest
    resting_s: float = 0.0  # of which nothing could move (no steps taken)
    skipped_s: float = 0.0


class PhysicsCell:
    """The cell on MuJoCo (see the module docstring); all times are seconds of one monotonic clock.

    Args:
        layout: the true layout.
        suction: the pad's parameters (live: `set_suction`).
        t: the clock's time at the start.
        timestep: physics step (s).
        grip_scatter: one draw per seal, the can's shift against the pad in the pad frame (m); None: none.
        compensator: False fixes the pad's level compensator (a rigid pad; tests compare the two).
    """

    def __init__(
        self,
        layout: CellLayout,
        suction: SuctionParams | None = None,
        t: float = 0.0,
        timestep: float = 0.002,
        grip_scatter: Callable[[], tuple[float, float]] | None = None,
        compensator: bool = True,
    ) -> None:
        self.layout = layout
        self.suction = suction or SuctionParams()
        self.t = t
        self.timestep = timestep
        self.grip_scatter = grip_scatter
        self.geometry = CellGeometry(layout)
        self.mj_model = mujoco.MjModel.from_xml_string(scene_xml(layout, timestep, compensator))
        self.mj_data = mujoco.MjData(self.mj_model)
        m = self.mj_model
        self._ids = layout.can_ids
        self._body = {c: m.body(c).id for c in self._ids}
        self._geom = {c: m.geom(c).id for c in self._ids}
        self._dof = {c: int(m.jnt_dofadr[m.body_jntadr[self._body[c]]]) for c in self._ids}
        self._eq = {c: m.equality(f"grip_{c}").id for c in self._ids}
        self._pad_mocap = int(m.body_mocapid[m.body("pad").id])
        joint = m.joint("compensator") if compensator else None
        self._comp_qpos = None if joint is None else int(joint.qposadr[0])
        self._comp_dof = None if joint is None else int(joint.dofadr[0])
        self._wrench: Wrench = ZERO_WRENCH  # the tool's, mean over the last step (see tool_wrench)
        self._wrench_sum = [0.0] * 6
        self._wrench_n = 0
        self._solid: dict[int, tuple[str, str]] = {m.geom("table").id: ("table", "table")}
        for prism in box_prisms(layout):
            self._solid[m.geom(xml_name(prism.name)).id] = (prism.name, prism.kind)
        for c in self._ids:
            self._solid[self._geom[c]] = (c, "can")
        self._can_of_geom = {g: c for c, g in self._geom.items()}
        self._mass = layout.can_mass
        self.vacuum = False
        self._vacuum_since = t
        self._vacuum_queue: list[tuple[float, bool]] = []
        self._contact: tuple[str, float] | None = None
        self._seal: _Seal | None = None
        self._events: list[CellEvent] = []
        self.tcp: ToolPose | None = None
        self._pad: PadPose | None = None  # None: no joint state yet (the pad is parked)
        self._pad_fresh = False
        self._filter: PadFilter | None = None  # None: no joint state yet (the pad is parked)
        self._target: tuple[tuple[float, PadPose], tuple[float, PadPose]] | None = None  # see _measurements
        self._jump_pending = False  # skipped without a pose: the pad jumps to the next fresh one
        self.stats = PhysicsStats()
        for _ in range(round(WARM_UP_S / timestep)):
            mujoco.mj_step(m, self.mj_data)
        self._phys_t = t  # the clock's time the physics state stands for
        self._watch = {c: _CanWatch() for c in self._ids}
        for c in self._ids:
            self._mark_rest(c)

    # --- inputs --------------------------------------------------------------------------------------

    def set_vacuum(self, on: bool, now: float) -> None:
        """Switch the vacuum at time `now`; the physics applies it when it gets there (at once if it has).

        Raises:
            ValueError: `now` is not finite or earlier than the cell's time (nothing changes).
        """
        self._check_time(now)
        if now <= self._phys_t:
            self._apply_vacuum(on, self._phys_t)
        else:
            self._vacuum_queue.append((now, on))

    def step(self, pose: ToolPose | None, now: float) -> None:
        """Simulate up to `now` with the pad moving (linearly) to `pose`, measured at `now`.

        `pose` None: no fresh TCP; the pad stays where it was and no seal can form.

        Raises:
            ValueError: a non-finite pose, or `now` not finite or earlier than the cell's time; nothing
                changes.
        """
        self._check_input(pose, now)
        self.t = now
        if now - self._phys_t > MAX_LAG_S:
            self._skip(pose, now, f"the physics fell {now - self._phys_t:.2f} s behind the clock")
        self._advance(pose, now)

    def skip(self, pose: ToolPose | None, now: float) -> None:
        """Move the clock to `now` without simulating the time since the last step (the world paused).

        For a node that was stopped (SIGSTOP, a debugger) or starved of CPU for longer than the physics
        can sensibly catch up: nothing moves in the skipped time, the pad goes straight to `pose` and a
        held can with it (rigidly, at rest: it stays on the pad), or to the next fresh pose when `pose`
        is None; vacuum commands of the skipped time apply; one "skipped" event says so.

        Raises:
            ValueError: as `step`; nothing changes.
        """
        self._check_input(pose, now)
        self.t = now
        self._skip(pose, now, f"the cell was not stepped for {now - self._phys_t:.2f} s")
        self._advance(pose, now)

    def _check_input(self, pose: ToolPose | None, now: float) -> None:
        if pose is not None and not all(map(math.isfinite, (*pose.tcp, pose.tool_pitch, pose.tool_yaw))):
            raise ValueError(f"TCP pose must be finite, got {pose}")
        self._check_time(now)

    def _skip(self, pose: ToolPose | None, now: float, why: str) -> None:
        """The physics' clock to `now` without steps; the pad (and a held can) to `pose` (see `skip`)."""
        gap = now - self._phys_t
        while self._vacuum_queue and self._vacuum_queue[0][0] <= now:
            when, on = self._vacuum_queue.pop(0)
            self._apply_vacuum(on, when)
        for watch in self._watch.values():  # a moving can's settling did not happen: its clock waits too
            if not watch.resting:
                watch.moving_since += gap
                watch.still_since = None if watch.still_since is None else watch.still_since + gap
        if self._seal is not None:
            self._seal.overload_since = None
        self._phys_t = now
        self.stats.skipped_s += gap
        self._jump_pending = self._filter is not None
        if pose is not None and self._filter is not None:
            self._jump_pad(PadPose.of(pose))
        moves = f"the pad and {self.held} on it jump" if self.held else "the pad jumps"
        where = "the newest pose" if pose is not None else "the next fresh pose"
        text = f"{why}: {gap:.2f} s skipped without physics; {moves} straight to {where}"
        self._events.append(CellEvent(now, "skipped", self.held, text))

    def _advance(self, pose: ToolPose | None, now: float) -> None:
        """The rest of `step`: physics up to `now` (at most MAX_STEP_S of it), contacts and the cans."""
        if pose is not None and self._jump_pending and self._filter is not None:
            self._jump_pad(PadPose.of(pose))  # the first fresh pose after a skip without one
        previous, newest = self._measurements(pose, now)
        self._pad_fresh = pose is not None
        if pose is not None:
            self.tcp = pose
        t0, h = self._phys_t, self.timestep
        n = min(int((now - t0) / h + 1e-9), round(MAX_STEP_S / h))
        if self._seal is None and all(w.resting for w in self._watch.values()):
            self._rest(n, newest)  # nothing can move: no physics to step
        else:
            self._simulate(n, previous, newest)
        self.stats.simulated_s += n * h
        if self._seal is None:
            self._track_contact(self._phys_t)  # once per update, as the kinematic model does
        self._watch_cans(self._phys_t)

    def _rest(self, n: int, newest: tuple[float, PadPose] | None) -> None:
        """Advance `n` steps' time with every can at rest and none on the pad, without stepping.

        The pad has no collision geometry, so nothing in the scene can move: MuJoCo's state stays as it
        is, the pad goes straight to the newest measurement (a seal only forms on a pad that stood still
        for attach_settle_s, so the filter has nothing to smooth), queued vacuum commands apply at their
        times.
        """
        end = self._phys_t + n * self.timestep
        while self._vacuum_queue and self._vacuum_queue[0][0] <= end:
            when, on = self._vacuum_queue.pop(0)
            self._apply_vacuum(on, when)
        if newest is not None and self._filter is not None:
            self._filter = PadFilter(newest[1])
            self._pad = newest[1]
            self._place_pad(self._pad)
        self._phys_t = end
        self.stats.resting_s += n * self.timestep

    def _simulate(
        self, n: int, previous: tuple[float, PadPose], newest: tuple[float, PadPose] | None
    ) -> None:
        """Step the physics `n` times, the pad filtered toward its target, the seal checked after each."""
        t0, h = self._phys_t, self.timestep
        wall = time.perf_counter()
        m, d = self.mj_model, self.mj_data
        self._wrench_sum, self._wrench_n = [0.0] * 6, 0
        for k in range(1, n + 1):
            ts = t0 + k * h
            if newest is not None and self._filter is not None:
                self._pad = self._filter.advance(target_at((previous, newest), ts), h)
                self._place_pad(self._pad)
            while self._vacuum_queue and self._vacuum_queue[0][0] <= ts:
                self._apply_vacuum(self._vacuum_queue.pop(0)[1], ts)
            mujoco.mj_step(m, d)
            self._phys_t = ts
            if self._seal is not None:
                self._check_seal(ts)
        self.stats.steps += n
        self.stats.step_wall_s += time.perf_counter() - wall
        if self._seal is None or self._wrench_n == 0:  # no step this update keeps the last mean
            self._wrench = ZERO_WRENCH if self._seal is None or n > 0 else self._wrench
        else:
            n_ = self._wrench_n
            self._wrench = tool_wrench(
                tuple(v / n_ for v in self._wrench_sum[:3]),  # type: ignore[arg-type]
                tuple(v / n_ for v in self._wrench_sum[3:]),  # type: ignore[arg-type]
            )

    def set_suction(self, suction: SuctionParams) -> None:
        """Apply new suction parameters (live)."""
        self.suction = suction

    # --- outputs -------------------------------------------------------------------------------------

    def positions(self) -> dict[str, Point]:
        """Every can's bottom centre by id (base_link, m)."""
        d = self.mj_data
        out = {}
        for c in self._ids:
            centre, axis = d.xpos[self._body[c]], d.xmat[self._body[c]].reshape(3, 3)[:, 2]
            bottom = centre - axis * (self.layout.can_height / 2)
            out[c] = (float(bottom[0]), float(bottom[1]), float(bottom[2]))
        return out

    def orientation(self, can: str) -> tuple[float, float, float, float]:
        """The can's attitude as a unit quaternion (w, x, y, z)."""
        w, x, y, z = self.mj_data.xquat[self._body[can]]
        return (float(w), float(x), float(y), float(z))

    @property
    def held(self) -> str | None:
        """Id of the can on the pad (sealed), or None."""
        return self._seal.can if self._seal else None

    @property
    def contact(self) -> str | None:
        """Id of the can whose top the pad is on (gripped or not yet), or None."""
        if self._seal is not None:
            return self._seal.can
        return self._contact[0] if self._contact else None

    def placement(self, can: str) -> Placement | None:
        """The last judged landing of `can` (None at the start, while held and while still moving)."""
        return None if self.held == can else self._watch[can].placement

    def support(self, can: str) -> str:
        """What `can` stands on: "gripper", a solid's name, or "moving" (not at rest yet)."""
        if self.held == can:
            return "gripper"
        watch = self._watch[can]
        return watch.support if watch.resting else "moving"

    def drain_events(self) -> list[CellEvent]:
        """Events since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    def state(self) -> dict[str, Any]:
        """The JSON-ready state the node publishes (format documented in cell/report.py)."""
        return state_dict(self)

    def hold_force(self, now: float) -> float:
        """The pad's holding force at `now` (N): suction_force_n, decaying after the vacuum went off."""
        s = self.suction
        if self._seal is None or self._seal.off_at is None:
            return s.suction_force_n
        weight = self._mass * STANDARD_GRAVITY
        if s.release_settle_s <= 0.0 or s.suction_force_n <= weight:
            return 0.0
        tau = s.release_settle_s / math.log(s.suction_force_n / weight)
        return s.suction_force_n * math.exp(-(now - self._seal.off_at) / tau)

    def seal_load(self) -> tuple[float, float, float] | None:
        """The held can's load on the seal: (pull along the pad axis N, shear N, moment N m), or None."""
        if self._seal is None:
            return None
        return self._seal_load(self._seal.can)

    def tool_wrench(self) -> Wrench:
        """What the tool feels from the held can, base_link: (force N, moment about the TCP N m).

        The mean over the physics steps of the last `step` (its weight while it hangs, plus its inertia
        and what presses on it); ZERO_WRENCH without a can on the pad.
        """
        return self._wrench if self._seal is not None else ZERO_WRENCH

    @property
    def compensator_stroke(self) -> float:
        """How far the pad's level compensator is pushed in now (m, 0 = fully out)."""
        return 0.0 if self._comp_qpos is None else float(self.mj_data.qpos[self._comp_qpos])

    # --- rules ---------------------------------------------------------------------------------------

    def _check_time(self, now: float) -> None:
        if not math.isfinite(now) or now < self.t:
            raise ValueError(f"time must be finite and not go back: {now} after {self.t}")

    def _measurements(
        self, pose: ToolPose | None, now: float
    ) -> tuple[tuple[float, PadPose], tuple[float, PadPose] | None]:
        """The pad's target from here on: a straight run (time, pose) -> (time, pose) to the newest pose.

        It starts where the last target stands at the physics' time (a node that has not caught up yet
        does not make it jump back), or where the pad is after a gap in the joint states. No fresh
        pose: the target stays where it stands (the pad comes to rest there). The first pose places
        the pad at once.
        """
        t = self._phys_t
        last = self._target
        if pose is None:
            if last is None:
                return (now, PadPose((0.0, 0.0, 0.0), 0.0, 0.0)), None
            here = (t, target_at(last, t))
            self._target = (here, here)
            return self._target
        end = PadPose.of(pose)
        if self._filter is None:
            self._filter = PadFilter(end)
            self._pad = end
            self._place_pad(end)
        if last is None or not self._pad_fresh:
            start = (t, self._pad or end)
        else:
            start = (t, target_at(last, t)) if t < last[1][0] else last[1]
        self._target = (start, (now, end))
        return self._target

    def _jump_pad(self, to: PadPose) -> None:
        """After a skip: the pad at `to` at once, and a held can with it.

        The can moves rigidly with the pad (shifted and turned as the pad is) and is left at rest, so
        skipped time does not yank it off.
        """
        here = self._pad
        self._jump_pending = False
        self._filter = PadFilter(to)
        self._target = ((self._phys_t, to), (self._phys_t, to))
        if self._seal is not None and here is not None:
            m, d = self.mj_model, self.mj_data
            body = self._body[self._seal.can]
            adr, dof = int(m.jnt_qposadr[m.body_jntadr[body]]), self._dof[self._seal.can]
            turn = pad_rotation(to.pitch, to.yaw) @ pad_rotation(here.pitch, here.yaw).T
            d.qpos[adr : adr + 3] = np.array(to.p) + turn @ (d.qpos[adr : adr + 3] - np.array(here.p))
            turn_quat, quat = np.zeros(4), np.zeros(4)
            mujoco.mju_mat2Quat(turn_quat, turn.flatten())
            mujoco.mju_mulQuat(quat, turn_quat, d.qpos[adr + 3 : adr + 7].copy())
            d.qpos[adr + 3 : adr + 7] = quat
            d.qvel[dof : dof + 6] = 0.0
        if self._comp_dof is not None:
            self.mj_data.qvel[self._comp_dof] = 0.0
        self._pad = to
        self._place_pad(to)
        mujoco.mj_forward(self.mj_model, self.mj_data)

    def _place_pad(self, pad: PadPose) -> None:
        d = self.mj_data
        d.mocap_pos[self._pad_mocap] = pad.p
        d.mocap_quat[self._pad_mocap] = pad_quat(pad.pitch, pad.yaw)

    def _apply_vacuum(self, on: bool, now: float) -> None:
        if on == self.vacuum:
            return
        self.vacuum, self._vacuum_since = on, now
        seal = self._seal
        text = "vacuum on" if on else "vacuum off"
        if seal is not None:
            seal.off_at = None if on else now
            if not on:
                text += f": {seal.can} lets go within {self.suction.release_settle_s:.2f} s"
        self._events.append(CellEvent(now, "vacuum", seal.can if seal else None, text))

    def _can_frame(self, can: str) -> tuple[np.ndarray, np.ndarray]:
        """Centre and axis (unit, bottom to top) of `can`."""
        b = self._body[can]
        return self.mj_data.xpos[b], self.mj_data.xmat[b].reshape(3, 3)[:, 2]

    def _can_under_pad(self) -> str | None:
        pad = self._pad
        if pad is None or not self._pad_fresh:
            return None
        s = self.suction
        z_pad = pad_rotation(pad.pitch, pad.yaw)[:, 2]
        best, best_d = None, math.inf
        for c in self._ids:
            centre, axis = self._can_frame(c)
            if float(z_pad @ axis) < math.cos(s.attach_max_tilt):
                continue
            rel = np.array(pad.p) - (centre + axis * (self.layout.can_height / 2))
            along = float(rel @ axis)
            radial = float(np.linalg.norm(rel - along * axis))
            if abs(along) <= s.attach_tol_z and radial <= s.attach_tol_xy and radial < best_d:
                best, best_d = c, radial
        return best

    def _track_contact(self, now: float) -> None:
        found = self._can_under_pad()
        if found is None:
            self._contact = None
        elif self._contact is None or self._contact[0] != found:
            self._contact = (found, now)
        if self._contact is not None and self.vacuum:
            can, since = self._contact
            if now - max(since, self._vacuum_since) >= self.suction.attach_settle_s - 1e-9:
                self._grab(can, now)

    def _grab(self, can: str, now: float) -> None:
        pad = self._pad
        assert pad is not None  # a contact needs a pad pose
        m, d = self.mj_model, self.mj_data
        if self.grip_scatter is not None:
            self._shift_under_pad(can, pad, *self.grip_scatter())
        centre, axis = self._can_frame(can)
        rel = np.array(pad.p) - (centre + axis * (self.layout.can_height / 2))
        radial = rel - float(rel @ axis) * axis  # the pad's offset from the can's axis
        rot = pad_rotation(pad.pitch, pad.yaw)
        rel_quat = np.zeros(4)
        mujoco.mju_mat2Quat(rel_quat, (rot.T @ d.xmat[self._body[can]].reshape(3, 3)).flatten())
        eq = self._eq[can]
        m.eq_data[eq, 0:3] = 0.0  # anchor: the can's centre
        tip = np.array(pad.p) + rot[:, 2] * self.compensator_stroke  # the weld's body: the plunger
        rel_pos = rot.T @ (centre - tip)  # the can as it is, in the plunger's frame (the pad's, shifted)
        m.eq_data[eq, 3:6] = rel_pos
        m.eq_data[eq, 6:10] = rel_quat
        d.eq_active[eq] = 1
        self._seal = _Seal(can, (float(rel_pos[0]), float(rel_pos[1]), float(rel_pos[2])))
        self._contact = (can, now)
        watch = self._watch[can]
        watch.resting, watch.placement, watch.still_since = False, None, None
        off = float(np.linalg.norm(radial)) * 1000
        self._events.append(CellEvent(now, "gripped", can, f"{can} gripped ({off:.1f} mm off its axis)"))

    def _shift_under_pad(self, can: str, pad: PadPose, sx: float, sy: float) -> None:
        """Move `can` by (sx, sy) of the pad frame as the seal forms (the lid sliding under the lip).

        Its offset from the pad axis stays within attach_tol_xy; it does not move at all if that would
        push it into a neighbour (a can standing against a wall stays where it is).
        """
        m, d = self.mj_model, self.mj_data
        centre, axis = self._can_frame(can)
        rel = np.array(pad.p) - (centre + axis * (self.layout.can_height / 2))
        radial = rel - float(rel @ axis) * axis
        rot = pad_rotation(pad.pitch, pad.yaw)
        moved = radial - (rot[:, 0] * sx + rot[:, 1] * sy)  # the can moves by (sx, sy): its axis by -
        moved -= float(moved @ axis) * axis
        length = float(np.linalg.norm(moved))
        kept = min(length, self.suction.attach_tol_xy)
        target = moved * (kept / length) if length > 0.0 else moved
        shift = radial - target
        adr = int(m.jnt_qposadr[m.body_jntadr[self._body[can]]])
        before = d.qpos[adr : adr + 3].copy()
        d.qpos[adr : adr + 3] = before + shift
        mujoco.mj_forward(m, d)
        _, beside = self.supports(can, depth=-1e-4)
        if beside:
            d.qpos[adr : adr + 3] = before
            mujoco.mj_forward(m, d)

    def _seal_load(self, can: str, accumulate: bool = False) -> tuple[float, float, float]:
        """(pull T, shear, moment) of the weld on `can`, in the pad frame at the seal (N, N, N m).

        The weld's constraint force (its rows of efc_force, mapped by their Jacobian rows onto the can's
        free joint) is a force at the can's centre (world frame) and a torque (body frame); the moment
        about the seal is that torque plus (centre - seal) x force. Called every physics step while a
        can is held (`accumulate`: adding the force and moment to the step's tool wrench), so it works
        on plain floats where numpy's per-call cost would dominate.
        """
        m, d = self.mj_model, self.mj_data
        eq, nv, nefc = self._eq[can], m.nv, d.nefc
        if nefc >= 6 and d.efc_type[0] == _EQUALITY and d.efc_id[0] == eq and d.efc_id[5] == eq:
            rows = slice(0, 6)  # equality rows come first, and one weld at most is active
            jac = d.efc_J[: 6 * nv].reshape(6, nv)
        else:
            idx = np.flatnonzero((d.efc_type[:nefc] == _EQUALITY) & (d.efc_id[:nefc] == eq))
            if idx.size == 0:
                return (0.0, 0.0, 0.0)
            rows = idx  # type: ignore[assignment]
            jac = d.efc_J[: nefc * nv].reshape(nefc, nv)[idx]
        dof = self._dof[can]
        fx, fy, fz, tx, ty, tz = (jac[:, dof : dof + 6].T @ d.efc_force[rows]).tolist()
        r = d.xmat[self._body[can]].tolist()  # row-major 3x3: r[3 i + j]
        wx = r[0] * tx + r[1] * ty + r[2] * tz  # torque in the world frame
        wy = r[3] * tx + r[4] * ty + r[5] * tz
        wz = r[6] * tx + r[7] * ty + r[8] * tz
        h = self.layout.can_height / 2  # centre - seal = -axis * h
        ax, ay, az = -r[2] * h, -r[5] * h, -r[8] * h
        mx, my, mz = wx + ay * fz - az * fy, wy + az * fx - ax * fz, wz + ax * fy - ay * fx
        pad = self._pad
        assert pad is not None
        if accumulate:  # the moment about the TCP (the pad at its mount): + (seal - tcp) x force
            cx, cy, cz = d.xpos[self._body[can]].tolist()
            dx, dy, dz = cx - ax - pad.p[0], cy - ay - pad.p[1], cz - az - pad.p[2]
            acc = self._wrench_sum
            acc[0] += fx
            acc[1] += fy
            acc[2] += fz
            acc[3] += mx + dy * fz - dz * fy
            acc[4] += my + dz * fx - dx * fz
            acc[5] += mz + dx * fy - dy * fx
            self._wrench_n += 1
        cy, sy, cp, sp = math.cos(pad.yaw), math.sin(pad.yaw), math.cos(pad.pitch), math.sin(pad.pitch)
        zx, zy, zz = cy * sp, sy * sp, cp  # the pad's +z
        pull = fx * zx + fy * zy + fz * zz
        shear = math.sqrt(max(0.0, fx * fx + fy * fy + fz * fz - pull * pull))
        twist = mx * zx + my * zy + mz * zz
        bend = math.sqrt(max(0.0, mx * mx + my * my + mz * mz - twist * twist))
        return (pull, shear, bend)

    def _check_seal(self, now: float) -> None:
        seal = self._seal
        assert seal is not None
        s = self.suction
        if seal.off_at is not None and now - seal.off_at >= s.release_settle_s - 1e-9:
            self._let_go(now, "released", "vacuum off")
            return
        hold = self.hold_force(now)
        pull, shear, bend = self._seal_load(seal.can, accumulate=True)
        pressing = max(hold - max(pull, 0.0), 1e-9)
        checks = (  # (load, limit, how it lets go)
            (pull, hold, "pulled off"),
            (-pull, hold, "pushed off"),
            (shear, s.pad_friction * pressing, "sheared off"),
            (bend, pressing * s.pad_radius, "peeled off"),
        )
        # The pull first: beyond the holding force there is no pressing left for the other two limits.
        load, limit, how = checks[0] if pull > hold else max(checks, key=lambda c: c[0] / max(c[1], 1e-9))
        ratio = load / max(limit, 1e-9)
        if ratio <= 1.0:
            seal.overload_since = None
            return
        unit = "N m" if how == "peeled off" else "N"
        if seal.off_at is not None and how == "pulled off":  # the release: the venting hold gave way
            how = "the venting hold gave way"
        why = f"{how}: {load:.3g} {unit} > {limit:.3g} {unit}"
        if seal.overload_since is None:
            seal.overload_since, seal.why = now, why
        if ratio >= IMPACT_FACTOR:
            seal.why = why
        if ratio >= IMPACT_FACTOR or now - seal.overload_since >= TEAR_PERSIST_S - 1e-9:
            kind = "released" if seal.off_at is not None else "knocked_off"
            self._let_go(now, kind, seal.why)

    def _let_go(self, now: float, kind: str, why: str) -> None:
        seal = self._seal
        assert seal is not None
        d = self.mj_data
        d.eq_active[self._eq[seal.can]] = 0
        self._seal = None
        self._contact = None
        watch = self._watch[seal.can]
        watch.resting, watch.moving_since, watch.still_since = False, now, None
        watch.how = kind
        watch.knocked_by = self._pressing_solid(seal.can) if kind == "knocked_off" else None
        if kind == "released":
            text = f"{seal.can} left the pad ({why})"
        else:
            by = f" by {watch.knocked_by}" if watch.knocked_by else ""
            text = f"{seal.can} torn off the pad{by} ({why})"
        self._events.append(CellEvent(now, "left_pad", seal.can, text))

    def _pressing_solid(self, can: str) -> str | None:
        """The solid pressing hardest on `can` now (the one that knocked it off), or None."""
        m, d = self.mj_model, self.mj_data
        best, best_f = None, 0.0
        force = np.zeros(6)
        g = self._geom[can]
        for i in range(d.ncon):
            con = d.contact[i]
            if g not in (con.geom1, con.geom2):
                continue
            mujoco.mj_contactForce(m, d, i, force)
            other = con.geom2 if con.geom1 == g else con.geom1
            if force[0] > best_f:
                best, best_f = self._solid[int(other)][0], float(force[0])
        return best

    # --- where the cans come to rest -----------------------------------------------------------------

    def _mark_rest(self, can: str) -> None:
        centre, axis = self._can_frame(can)
        watch = self._watch[can]
        watch.rest_pos, watch.rest_axis = centre.copy(), axis.copy()

    def _watch_cans(self, now: float) -> None:
        d = self.mj_data
        for c in self._ids:
            if self.held == c:
                continue
            watch = self._watch[c]
            dof = self._dof[c]
            if watch.resting:
                centre, axis = self._can_frame(c)
                assert watch.rest_pos is not None and watch.rest_axis is not None
                turned = math.acos(min(1.0, float(axis @ watch.rest_axis)))
                if float(np.linalg.norm(centre - watch.rest_pos)) > MOVED_DISTANCE or turned > MOVED_TILT:
                    watch.resting, watch.moving_since, watch.still_since = False, now, None
                    watch.how, watch.knocked_by = "moved", None
                continue
            speed = float(np.linalg.norm(d.qvel[dof : dof + 3]))
            spin = float(np.linalg.norm(d.qvel[dof + 3 : dof + 6]))
            if speed < REST_SPEED and spin < REST_SPIN:
                watch.still_since = now if watch.still_since is None else watch.still_since
            else:
                watch.still_since = None
            settled = watch.still_since is not None and now - watch.still_since >= REST_S
            if settled or now - watch.moving_since >= SETTLE_TIMEOUT_S:
                self._judge(c, now)

    def _judge(self, can: str, now: float) -> None:
        watch = self._watch[can]
        placement = self.classify(can, watch.how == "knocked_off", watch.knocked_by)
        watch.placement, watch.support, watch.resting = placement, placement.support, True
        self._mark_rest(can)
        kind = {"released": "released", "knocked_off": "knocked_off"}.get(watch.how, "moved")
        text = f"{can} {placement.text}" if kind != "moved" else f"{can} moved: {placement.text}"
        self._events.append(CellEvent(now, kind, can, text, placement))
        watch.how, watch.knocked_by = "moved", None

    def supports(self, can: str, depth: float = 0.0) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """What touches `can` now: (carrying solids, other touching solids), each (name, kind).

        Only contacts deeper than `depth` (m, <= 0) count.
        """
        d = self.mj_data
        g = self._geom[can]
        under, beside = [], []
        for i in range(d.ncon):
            con = d.contact[i]
            if g not in (con.geom1, con.geom2) or con.dist > depth:
                continue
            other = int(con.geom2 if con.geom1 == g else con.geom1)
            normal_z = float(con.frame[2]) if con.geom2 == g else -float(con.frame[2])
            solid = self._solid[other]
            (under if normal_z > SUPPORT_NORMAL_Z else beside).append(solid)
        return under, beside

    def classify(self, can: str, dropped: bool = False, knocked_by: str | None = None) -> Placement:
        """Where `can` is now, judged from its pose and contacts (see the module docstring)."""
        centre, axis = self._can_frame(can)
        bottom = centre - axis * (self.layout.can_height / 2)
        position = (float(bottom[0]), float(bottom[1]), float(bottom[2]))
        tilt = math.acos(max(-1.0, min(1.0, float(axis[2]))))
        under, beside = self.supports(can)
        kinds = {kind: name for name, kind in reversed(under)}
        if "wall" in kinds:  # hanging on the rim, tilted or not
            return Placement("on_rim", position, kinds["wall"], knocked_off_by=knocked_by)
        if tilt > TIPPED_TILT:
            support = next(iter(kinds.values()), "table")
            return Placement("tipped", position, support, knocked_off_by=knocked_by)
        if "can" in kinds:
            return Placement("on_can", position, kinds["can"], knocked_off_by=knocked_by)
        k = self.geometry.compartment_of(position)
        if "floor" in kinds or (k is not None and not under):
            if k is None:
                k = self._nearest_compartment(position)
            clearance = self.side_clearances(can, k)
            touching = min(clearance.values()) < self.suction.touch_tolerance or any(
                kind == "wall" for _, kind in beside
            )
            result = "in_box_touching" if touching else "in_box_clear"
            return Placement(result, position, "floor", k, clearance, knocked_by)
        return Placement("dropped" if dropped else "on_table", position, "table", knocked_off_by=knocked_by)

    def _nearest_compartment(self, p: Point) -> int:
        lay = self.layout
        return min(range(lay.compartments), key=lambda k: math.dist(p[:2], lay.compartment_centre(k)))

    def side_clearances(self, can: str, k: int) -> dict[str, float]:
        """Gap between `can` (as it stands, tilted or not) and each wall of compartment k, box frame (m).

        Only the part of the can below the rim counts (above it there is no wall to touch).
        """
        lay = self.layout
        centre, axis = self._can_frame(can)
        h = lay.can_height / 2
        bottom, top = centre - axis * h, centre + axis * h
        if top[2] > lay.rim_z and abs(axis[2]) > 1e-9:
            top = bottom + axis * ((lay.rim_z - bottom[2]) / axis[2]) if bottom[2] < lay.rim_z else bottom
        cx, cy = lay.compartment_centre(k)
        c, s = math.cos(lay.box_yaw), math.sin(lay.box_yaw)
        half, r = lay.compartment_inner / 2, lay.can_radius
        out = {}
        for side, e in (("-x", (-c, -s)), ("+x", (c, s)), ("-y", (s, -c)), ("+y", (-s, c))):
            e3 = np.array([e[0], e[1], 0.0])
            reach = max(float((p - np.array([cx, cy, p[2]])) @ e3) for p in (bottom, top))
            along = float(axis @ e3)
            out[side] = half - reach - r * math.sqrt(max(0.0, 1.0 - along * along))
        return out
