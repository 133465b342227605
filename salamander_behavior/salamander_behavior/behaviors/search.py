"""The release descent of a held can over the rim, guarded, and the search that follows a contact.

`RimPass` moves the can from where it stands (place_above, or where ManualAdjust left it) down to its
release height in one linear goal (tree.py, `place_steps`): at release_speed, except through the rim
band, which it crosses at guard_speed without stopping at either end (`MotionRequest.band`), guarded
(`MotionRequest.guard_force`: the Cartesian node feels for contact inside the band only, and stops at
the first one, an external force on the tool above `guard_force_n`, estimated from the joint efforts).

The band (`rim_band`) is where the can's bottom passes the rim and the divider tops (one height, the cell
description: `CanJob.rim_pass_z`): from `guard_band_above_m` above to `guard_band_below_m` below, never
above place_above nor below the release height.

A contact in the band: one line says where (TCP, force, can, compartment, offset) and what comes next;
the can is lifted clear of the rim (vacuum on: nothing here touches the valve), then the search probes
`probe_offsets` around the offset the descent started from (the blackboard's ``/place_offset/<can>``
then: the plan's, the estimate's or the operator's): for each, a move above the band at the probe
offset and a guarded descent through it to the release height. Which probe comes next (`next_probe`):
the one nearest a step from the contact in the direction the rim pushed the can sideways (the rim's
edge pushes it back toward the compartment; ``search_follow_push``), else the next of the spiral. The
first probe that passes writes its offset (the start offset plus the probe's) to ``/place_offset/<can>``
with source "search" and `RimPass` succeeds, the can at its release height. No probe passes: the can is
lifted clear and held above its compartment, ``/rim_search/<can>`` says "exhausted" and `RimPass`
fails; `AfterSearch` then lets ManualAdjust follow (``search_fallback`` manual, or ``manual_place``
true: the operator is there) or fails, and the can's outcome leaf stops the run with the can held.

Unguarded (one descent at release_speed, no band): ``guarded_pass`` false, no joint efforts in the
joint states (`MotionPort.contact_sensing`), or no rim height known.

Invariants: the can goes below the band's bottom only in a goal that crossed the band without a
contact; each probe offset is tried at most once, every one within `search_reach_m` of the start
offset and the total within the pinned 30 mm (`motion.OFFSET_BOUND`); a failure of any move other than
a contact fails the pass with its reason (never retried). `RimPass` succeeds only with the can at its
release height, or, on a guarded pass, in the goal that crossed the band without a contact once the
measured can is below the band and within `release_early_m` of that height (the goal hands on and
finishes the descent while the vacuum, the next step, goes off: the valve's release time overlaps the
last millimetres); so the vacuum's release never happens above the band's bottom, outside the can's
compartment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    LEASE_FAULT,
    OFFSET_SEARCH,
    PortBehavior,
    Ports,
    blackboard_client,
    offset_key,
    offset_source_key,
)
from salamander_behavior.behaviors.motion import (
    NO_LEASE,
    OFFSET_BOUND,
    MotionLeaf,
    OffsetTarget,
    describe_failure,
    outcome_fault,
)
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import CanJob
from salamander_behavior.ports import (
    CartesianTarget,
    Contact,
    MotionBand,
    MotionPath,
    MotionPhase,
    MotionRequest,
)
from salamander_behavior.report import offset_mm

SEARCH_PASSED = "passed"
SEARCH_EXHAUSTED = "exhausted"
CANDIDATES = 1000
"""Most grid points a search chooses its probes from (every one within ``search_reach_m``, nearest
first); it tries at most ``search_probes`` of them."""
DROPPED_IN_M = 0.001
"""m: a can that drops off the pad with its bottom this far below the rim or more is in its compartment
(`RimPass.drop_hint`); nearer the rim it may rest on the rim's or a divider's edge."""


def search_key(can: str) -> str:
    """Blackboard key of how a can's rim search ended: "passed" or "exhausted" (unset: no search ended)."""
    return f"/rim_search/{can}"


def probe_offsets(step: float, reach: float, probes: int) -> list[tuple[float, float]]:
    """The search's XY offsets (m), around (0, 0): a square grid of spacing `step` walked outwards.

    Every grid point within `reach` (XY radius) except the centre (it met the rim), nearest first; at one
    distance, counter-clockwise from +x (a square spiral). At most `probes` of them. Every point of the
    plane lies within step / sqrt(2) of a grid point, so with a step up to sqrt(2) times the side
    clearance (2 mm against 1.95 mm: 1.41 mm) a box offset inside the probed area has a probe that
    passes. The search chooses from every point within its reach (6 mm by default) and tries at most
    ``search_probes`` (12) of them: in the spiral's order (no sideways push) the nearest 12, to 4 mm,
    which finds box offsets up to 4.8 mm (diagonal) to 5.9 mm (along an axis); following the rim's push
    (`next_probe`) it may walk out to the reach. Why 2 mm and not finer: docs/design/guarded_moves.md.

    Raises:
        ValueError: a step or reach that is not a positive finite number, or probes < 0.
    """
    if not (math.isfinite(step) and step > 0.0 and math.isfinite(reach) and reach > 0.0):
        raise ValueError(f"the search needs a positive step and reach, got {step} and {reach} m")
    if probes < 0:
        raise ValueError(f"probes must be >= 0, got {probes}")
    n = int(reach / step + 1e-9)
    found: list[tuple[int, int]] = []
    for r in range(1, n + 1):  # square rings outwards; every point nearer than r steps is in rings <= r
        ring = [(i, j) for i in range(-r, r + 1) for j in range(-r, r + 1) if max(abs(i), abs(j)) == r]
        found += [p for p in ring if math.hypot(*p) * step <= reach + 1e-12]
        if sum(1 for p in found if math.hypot(*p) <= r) >= probes:
            break
    found.sort(key=lambda p: (round(math.hypot(*p), 9), math.atan2(p[1], p[0]) % (2 * math.pi)))
    return [(i * step, j * step) for i, j in found[:probes]]


PUSH_MIN_N = 0.5
"""N: a contact's sideways force from this on tells the direction along each axis that holds
`PUSH_AXIS_SHARE` of it (the efforts' noise puts ~0.1 N into the estimate)."""
PUSH_WEAK_N = 0.2
"""N: from this up to `PUSH_MIN_N` a sideways force tells its larger axis only; below it, nothing
(the spiral's order)."""
PUSH_AXIS_SHARE = 0.4
"""An axis (base_link x, y) holding at least this share of the sideways force is one the can is pushed
along (within ~66 degrees of it); a diagonal push moves the aim along both."""


def push_axes(force: tuple[float, float, float] | None) -> tuple[int, int]:
    """Where a contact pushed the can sideways, per base_link axis: -1, 0 or +1 (0, 0: no direction).

    Meeting the rim's or a divider's top edge with its bottom edge, the can is pushed back toward the
    compartment as well as up (the edges meet at a slant); over the physics cell the sideways part was
    0.7-1.7 N at a 5-6 N trip along each axis on which the can stood beyond the clearance, and at most
    0.2 N along one within it (docs/design/guarded_moves.md, "Following the push"). Over the whole stack
    the same contact now and then reads much weaker at its trip (0.2-0.3 N where other runs read 0.8-1.2
    N), its larger axis still the true one and the smaller one noise: such a push names that axis only.
    """
    if force is None:
        return (0, 0)
    fx, fy = force[0], force[1]
    side = math.hypot(fx, fy)
    if not (math.isfinite(side) and side >= PUSH_WEAK_N):
        return (0, 0)
    if side < PUSH_MIN_N:
        if abs(fx) == abs(fy):
            return (0, 0)
        return (int(math.copysign(1.0, fx)), 0) if abs(fx) > abs(fy) else (0, int(math.copysign(1.0, fy)))
    return tuple(  # type: ignore[return-value]
        int(math.copysign(1.0, f)) if abs(f) >= PUSH_AXIS_SHARE * side else 0 for f in (fx, fy)
    )


def next_probe(
    probes: list[tuple[float, float]],
    tried: list[int],
    at: tuple[float, float],
    force: tuple[float, float, float] | None,
    step: float,
) -> int | None:
    """The index in `probes` of the probe to try after a contact at `at` (offsets from the start, m).

    With a sideways push (`push_axes` of the contact's `force`): the untried probe nearest to one `step`
    from `at` along each pushed axis, the nearer to the start first on a tie. Without one (or `force`
    None: ``search_follow_push`` false): the first untried probe, i.e. the spiral's order. None: every
    probe has been tried.
    """
    left = [i for i in range(len(probes)) if i not in tried]
    if not left:
        return None
    sx, sy = push_axes(force)
    if (sx, sy) == (0, 0):
        return left[0]
    aim = (at[0] + sx * step, at[1] + sy * step)
    return min(left, key=lambda i: (round(math.dist(probes[i], aim), 9), i))


def push_text(force: tuple[float, float, float] | None) -> str:
    """How a contact pushed the can sideways (`push_axes`), for its log line.

    E.g. "pushed toward +x -y (1.4 N sideways)"; under `PUSH_MIN_N` what there was: "pushed weakly toward
    -y (-0.1, -0.3 N: its larger axis only)", or "no sideways push (+0.1, -0.1 N: under 0.2 N)" (the
    search then walks its spiral).
    """
    axes = push_axes(force)
    if force is None or not all(math.isfinite(f) for f in force[:2]):
        return "no sideways push"
    if axes == (0, 0):
        return f"no sideways push ({force[0]:+.1f}, {force[1]:+.1f} N: under {PUSH_WEAK_N:g} N)"
    names = " ".join(f"{'+' if v > 0 else '-'}{n}" for v, n in zip(axes, "xy", strict=True) if v)
    side = math.hypot(force[0], force[1])
    if side < PUSH_MIN_N:
        return f"pushed weakly toward {names} ({force[0]:+.1f}, {force[1]:+.1f} N: its larger axis only)"
    return f"pushed toward {names} ({side:.1f} N sideways)"


@dataclass(frozen=True)
class RimBand:
    """The TCP heights (m, base_link) between which the guarded pass runs: `top` > `bottom`."""

    top: float
    bottom: float


def rim_band(job: CanJob, settings: BehaviorSettings, dz: float = 0.0) -> RimBand | None:
    """The band of `job` (see the module docstring); None when the rim height is unknown or no band fits.

    `dz` is the upward offset of the release (the release height rises by it; the band does not move).
    """
    if job.rim_pass_z is None:
        return None
    top = min(job.rim_pass_z + settings.guard_band_above_m, job.place_above.z + max(dz, 0.0))
    bottom = max(job.rim_pass_z - settings.guard_band_below_m, job.place_release.z + max(dz, 0.0))
    return RimBand(top, bottom) if top > bottom else None


def release_handoff(settings: BehaviorSettings, bottom: float) -> float:
    """How far (m) above the release height a guarded descent hands on and the vacuum goes off.

    ``release_early_m``, never above the band's bottom, which lies `bottom` m above the release height.
    """
    return min(settings.release_early_m, bottom)


def contact_sensing_line(efforts: bool, settings: BehaviorSettings, topic: str) -> tuple[bool, str]:
    """The behaviour server's one start-up line on the guarded pass: (a warning?, the line).

    Args:
        efforts: whether the first joint state on `topic` carried efforts (`MotionPort.contact_sensing`).
        settings: the parameters then (``guarded_pass``, the guard and the search).
        topic: the joint states' topic as the node resolves it.
    """
    if not efforts:
        return True, (
            f"no joint efforts in {topic} (an empty effort field, or NaN for a joint): the release descent "
            "runs unguarded (no contact sensing, no search)"
        )
    if not settings.guarded_pass:
        return False, (
            f"joint efforts in {topic}, but guarded_pass is false: the release descent runs unguarded "
            "(no contact sensing, no search)"
        )
    return False, (
        f"joint efforts in {topic}: the release descent passes the rim guarded (guard_force_n "
        f"{settings.guard_force_n:g} N at guard_speed {settings.guard_speed:g}); a contact lifts the can "
        f"clear and searches (search_probes {settings.search_probes}, search_step_m "
        f"{settings.search_step_m:g}, search_reach_m {settings.search_reach_m:g}, search_follow_push "
        f"{str(settings.search_follow_push).lower()}), then search_fallback {settings.search_fallback}"
    )


class _Leg(Enum):
    """What the move in flight is for."""

    DOWN = "to the release"  # unguarded, to the release height
    THROUGH = "through the rim"  # guarded, slow through the band, to the release height
    LIFT = "lift clear"  # back to the band's top after a contact
    ABOVE_PROBE = "above the rim"  # at the band's top, to the next probe's offset


class RimPass(MotionLeaf):
    """The release descent of `job`'s can through the rim band, with the search after a contact.

    Args:
        name: the leaf's name; its moves are labelled ``<name>: <leg>`` (e.g. ``over the rim can_0:
            through the rim``, ``... probe 3: through the rim``).
        job: the can (its place_release, place_above, compartment and rim height).
        search: False for the pass after ManualAdjust's fallback confirm: a contact then holds the can
            (lifted clear) and fails, without a search.
    """

    def __init__(self, name: str, job: CanJob, search: bool = True) -> None:
        super().__init__(name)
        self.job = job
        self.search = search
        can = job.can
        self._keys = {"offset": offset_key(can), "source": offset_source_key(can), "search": search_key(can)}
        self._bb = blackboard_client(
            f"RimPass[{name}]", {key: Access.WRITE for key in self._keys.values()}
        )
        self._release = OffsetTarget(job.place_release, can)
        self.requests: list[MotionRequest] = []
        """Every goal this pass sent (in order), for tests and the benchmark's probe count."""
        self._leg = _Leg.THROUGH
        self._band: RimBand | None = None
        self._start_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self._probes: list[tuple[float, float]] = []  # the candidates: every grid point within reach
        self._budget = 0  # the most of them to try (search_probes)
        self._tried: list[int] = []  # indices into `_probes`, in the order tried; the last is in flight
        self._push: tuple[float, float, float] | None = None  # the last contact's force
        self._problem = ""
        self._leg_started = 0.0
        self._sent_to = ""  # the current leg and its target, for the feedback
        self._remaining = math.nan  # the measured pad's distance to the leg's target at the last poll (m)

    # Offsets and targets ----------------------------------------------------------------------------

    def _offset(self) -> tuple[float, float, float]:
        """The XY offset (and upward dz) of the current probe (0: the start offset)."""
        dx, dy, dz = self._start_offset
        px, py = self._probe_at()
        return (dx + px, dy + py, dz)

    def _probe_at(self) -> tuple[float, float]:
        """The current probe's offset from the start offset ((0, 0) before the first probe)."""
        return self._probes[self._tried[-1]] if self._tried else (0.0, 0.0)

    @property
    def probes_tried(self) -> int:
        """Probes tried so far (0: the descent from the start offset is in flight or ended the pass)."""
        return len(self._tried)

    def _at(self, z: float) -> CartesianTarget:
        dx, dy, _ = self._offset()
        base = self.job.place_release
        return CartesianTarget(base.x + dx, base.y + dy, z, base.tool_pitch, base.tool_yaw)

    def _where(self) -> str:
        return f"over compartment {self.job.compartment}"

    def drop_hint(self) -> str:
        """Where a can that fell off the pad during this pass most likely lies (`vacuum.StillHeld`'s line).

        On a descent whose last feedback put the measured pad `DROPPED_IN_M` or more below
        `CanJob.rim_pass_z` (the can's bottom below the rim and the dividers' tops, over its compartment),
        in that compartment; else in it or on the rim or a divider beside it.
        """
        n, below = self.job.compartment, self._below_rim()
        if below is not None and below >= DROPPED_IN_M:
            return (
                f"{self._where()}, its bottom {below * 1000:.0f} mm below the rim: in compartment {n} (it "
                "may have tipped)"
            )
        return (
            f"{self._where()}, at or above the rim: most likely in compartment {n} or on the rim or a "
            "divider beside it"
        )

    def _below_rim(self) -> float | None:
        """How far (m) the can's bottom was below the rim at the last feedback of a descent; None: unknown."""
        rim, remaining = self.job.rim_pass_z, self._remaining
        if rim is None or self._leg not in (_Leg.THROUGH, _Leg.DOWN) or not math.isfinite(remaining):
            return None
        return rim - (self._release_z() + remaining)

    def _release_z(self) -> float:
        """The TCP z the descents end at: place_release raised by the start offset's upward dz."""
        return self.job.place_release.z + self._start_offset[2]

    # PortBehavior -----------------------------------------------------------------------------------

    def start(self, ports: Ports) -> None:
        """Read the start offset, decide guarded or not, send the descent to the release height."""
        settings = ports.settings()
        self._handle, self._queued, self._problem, self._band = None, None, "", None
        self.requests = []
        self._tried, self._push, self._budget = [], None, 0
        self._bb.unset(self._keys["search"])
        try:
            target = self._release(settings)  # the start offset as the release would use it (checked)
        except ValueError as exc:
            self._problem = str(exc)
            return
        base = self.job.place_release
        self._start_offset = (target.x - base.x, target.y - base.y, target.z - base.z)
        unguarded = self._unguarded(ports, settings)
        if not unguarded:
            self._band = rim_band(self.job, settings, self._start_offset[2])
            unguarded = "" if self._band else "no rim band between place_above and the release height"
        if unguarded:
            self._send(ports, _Leg.DOWN)
            self.feedback_message = f"unguarded ({unguarded}): {self.feedback_message}"
            return
        reach = settings.search_reach_m
        probes = probe_offsets(settings.search_step_m, reach, CANDIDATES) if self.search else []
        dx, dy, _ = self._start_offset
        self._probes = [p for p in probes if math.hypot(dx + p[0], dy + p[1]) <= OFFSET_BOUND]
        self._budget = min(settings.search_probes, len(self._probes))
        self._send(ports, _Leg.THROUGH)

    def _unguarded(self, ports: Ports, settings: BehaviorSettings) -> str:
        """Why the pass is not guarded ("" when it is)."""
        if not settings.guarded_pass:
            return "guarded_pass is false"
        if ports.motion.contact_sensing() is not True:
            return "no joint efforts in the joint states: no contact sensing"
        if self.job.rim_pass_z is None:
            return "no rim height known for this can"
        return ""

    def _request(self, settings: BehaviorSettings, leg: _Leg, label: str) -> MotionRequest:
        """The goal of `leg`: to the release height (through the band slow and guarded), or the band's top."""
        release_z = self._release_z()
        if leg is _Leg.DOWN:
            return MotionRequest(self._at(release_z), MotionPath.LINEAR, settings.release_speed, label)
        assert self._band is not None
        if leg is _Leg.THROUGH:
            top, bottom = self._band.top - release_z, self._band.bottom - release_z
            return MotionRequest(
                self._at(release_z),
                MotionPath.LINEAR,
                settings.release_speed,
                label,
                guard_force=settings.guard_force_n,
                band=MotionBand(settings.guard_speed, top, bottom),
                handoff=release_handoff(settings, bottom),
            )
        return MotionRequest(self._at(self._band.top), MotionPath.LINEAR, settings.guard_speed, label)

    def _send(self, ports: Ports, leg: _Leg) -> None:
        probe = f" probe {self.probes_tried}" if self.probes_tried else ""
        label = f"{self.name}:{probe} {leg.value}"
        request = self._request(ports.settings(), leg, label)
        self._leg, self._leg_started, self._remaining = leg, ports.clock(), math.nan
        self.requests.append(request)
        self._go(ports, request)
        self._sent_to = f"{leg.value}{probe}: {request.target.describe()}"
        self.feedback_message = self._sent_to

    def step(self, ports: Ports) -> Status:
        """Poll the move in flight and go on to the next leg (see the module docstring)."""
        if self._handle is None and self._queued is None:
            return self._fail(ports, self._problem or "no goal was sent")
        if not ports.motion.lease_held():
            return self._fail(ports, NO_LEASE, LEASE_FAULT)
        outcome = self._poll(ports)
        self._remaining = outcome.remaining
        if outcome.phase is MotionPhase.SUCCEEDED:
            return self._arrived(ports)
        early = self.requests[-1].handoff if self._leg is _Leg.THROUGH else 0.0
        if early > 0.0 and outcome.phase is MotionPhase.ACTIVE and outcome.remaining <= early:  # not NaN
            self._hand_on(ports)  # below the band: the can is in its compartment; the goal finishes
            return self._passed(ports, outcome.remaining)
        if outcome.phase is MotionPhase.FAILED:
            if self._leg is _Leg.THROUGH and outcome.contact is not None:
                return self._contact(ports, outcome.contact)
            why = f"{self._leg.value}: {describe_failure(outcome)}"
            return self._fail(ports, why, outcome_fault(outcome))
        timeout = ports.settings().motion_timeout_s
        if ports.clock() - self._leg_started > timeout:
            return self._fail(ports, f"{self._leg.value}: no result after {timeout:.1f} s (motion_timeout_s)")
        now = outcome.message if outcome.phase is MotionPhase.PENDING else f"{outcome.progress:.0%}"
        self.feedback_message = f"{self._sent_to}: {now or 'waiting for acceptance'}"
        return Status.RUNNING

    def _arrived(self, ports: Ports) -> Status:
        if self._leg is _Leg.DOWN:
            self.feedback_message = "at the release height (unguarded)"
            return Status.SUCCESS
        if self._leg is _Leg.ABOVE_PROBE:
            self._send(ports, _Leg.THROUGH)
            return Status.RUNNING
        if self._leg is _Leg.THROUGH:
            return self._passed(ports)
        # LIFT done: the next probe, or hold here
        index = self._next(ports.settings())
        if index is not None:
            self._tried.append(index)
            self._send(ports, _Leg.ABOVE_PROBE)
            return Status.RUNNING
        return self._exhausted(ports)

    def _next(self, settings: BehaviorSettings) -> int | None:
        """The next probe's index (`next_probe`), None when none is left."""
        if len(self._tried) >= self._budget:
            return None
        push = self._push if settings.search_follow_push else None
        return next_probe(self._probes, self._tried, self._probe_at(), push, settings.search_step_m)

    def _passed(self, ports: Ports, remaining: float = 0.0) -> Status:
        """The can crossed the band: at its release height, or `remaining` m above it (handed on)."""
        self._bb.set(self._keys["search"], SEARCH_PASSED, overwrite=True)
        where = (
            f"{remaining * 1000:.0f} mm above the release height, the descent finishing" if remaining
            else "at the release height"
        )
        if not self.probes_tried:
            self.feedback_message = f"the can passed the rim: {where}"
            return Status.SUCCESS
        offset = self._offset()
        px, py = self._probe_at()
        self._bb.set(self._keys["offset"], offset, overwrite=True)
        self._bb.set(self._keys["source"], OFFSET_SEARCH, overwrite=True)
        k = self.probes_tried
        self.feedback_message = f"probe {k} passed the rim at offset {offset_mm(offset)}: {where}"
        ports.log.info(
            f"{self.job.can}: probe {k}/{self._budget} passed the rim {self._where()} at "
            f"offset {offset_mm(offset)} (the search moved it {offset_mm((px, py, 0.0))}): releasing there"
        )
        return Status.SUCCESS

    def _contact(self, ports: Ports, contact: Contact) -> Status:
        """Log where it met resistance and what comes next; lift clear (the next leg decides the rest)."""
        can, offset = self.job.can, offset_mm(self._offset())
        where = f"{contact.describe()}, {self._where()} at offset {offset}"
        settings = ports.settings()
        self._push = contact.force
        push = push_text(contact.force)
        follow = settings.search_follow_push and push_axes(contact.force) != (0, 0)
        order = "first where the rim pushed it" if follow else "in a square spiral"
        if not self.probes_tried:
            if self._budget:
                step = settings.search_step_m
                reach = max(math.hypot(*p) for p in self._probes)
                ports.log.warning(
                    f"{can}: met the rim: {where}, {push}: lifting it clear (vacuum on), then searching "
                    f"({self._budget} probes, step {step * 1000:.1f} mm, within {reach * 1000:.1f} mm) "
                    f"{order}"
                )
            else:
                ports.log.warning(
                    f"{can}: met the rim: {where}: lifting it clear (vacuum on) and holding it there "
                    f"({'no search after ManualAdjust' if not self.search else 'no probe to try'})"
                )
        else:
            k = self.probes_tried
            more = f"probe {k + 1} next" if k < self._budget else "no probe left"
            ports.log.info(
                f"{can}: probe {k}/{self._budget} met the rim: {where}, {push}: lifting "
                f"clear, {more}"
            )
        self._send(ports, _Leg.LIFT)
        return Status.RUNNING

    def _exhausted(self, ports: Ports) -> Status:
        """No probe passed (or no search): hold the can here, above the band, and fail."""
        self._bb.set(self._keys["search"], SEARCH_EXHAUSTED, overwrite=True)
        settings = ports.settings()
        manual = settings.search_fallback == "manual" or settings.manual_place
        can, k = self.job.can, self.job.compartment
        if self.search and self._tried:
            reach = max(math.hypot(*self._probes[i]) for i in self._tried)
            what = (
                f"no probe of the search passed the rim ({len(self._tried)} probes within "
                f"{reach * 1000:.1f} mm)"
            )
        else:
            what = "the guarded pass met the rim" + (" after ManualAdjust" if not self.search else "")
        if manual and self.search:
            self.feedback_message = f"{what}: the operator places it (ManualAdjust)"
            why = f"search_fallback {settings.search_fallback}, manual_place {settings.manual_place}".lower()
            ports.log.warning(
                f"{can}: {what}: holding the can above compartment {k}; ManualAdjust next ({why})"
            )
        else:
            self.feedback_message = f"{what}: holding the can above compartment {k}, vacuum on"
            ports.log.error(
                f"{can}: {what}: holding the can above compartment {k} (vacuum on); the run stops: check "
                "the box's position, then place the can (the next run's pad check offers it) or remove it"
            )
        return Status.FAILURE


class AfterSearch(PortBehavior):
    """SUCCESS when `rim_pass` ended with no probe passing and the operator is to place the can.

    The operator is there with ``search_fallback`` manual or ``manual_place`` true. Otherwise FAILURE
    with `rim_pass`'s own feedback (its failure is the can's reason: a search exhausted with
    ``search_fallback`` stop, or a move that failed).
    """

    def __init__(self, name: str, rim_pass: RimPass) -> None:
        super().__init__(name)
        self.rim_pass = rim_pass
        self._key = search_key(rim_pass.job.can)
        self._bb = blackboard_client(f"AfterSearch[{rim_pass.job.can}]", {self._key: Access.READ})

    def step(self, ports: Ports) -> Status:
        """Decide from how the search ended and the current parameters."""
        settings = ports.settings()
        ended = self._bb.get(self._key) if self._bb.exists(self._key) else None
        if ended == SEARCH_EXHAUSTED and (settings.search_fallback == "manual" or settings.manual_place):
            self.feedback_message = "no probe passed: the operator places the can (ManualAdjust)"
            return Status.SUCCESS
        self.feedback_message = f"{self.rim_pass.name}: {self.rim_pass.feedback_message}"
        return Status.FAILURE

