"""The pick-and-place tree: one selector per can, run in order after the stack is ready.

A run that begins with cans recorded as lost in transit (the run's progress) first waits, before any
motion, for the operator to confirm the cell is clear (`cell clear of can_k?`, behaviors/lost.py).

Per can (``can_i``, into compartment i), after ``pad clear before can_i?`` (behaviors/pad.py: with a can
on the pad it does not pick; vacuum on, then the operator confirms its placement (the first check of a
run places the can recorded as carried, `held_subtree`: its grip check and `place_steps`) or removes
it)::

    can_i (Selector, memory)
    |-- Guarded[can_i] (Sequence, no memory: the limit conditions, re-ticked every tick, then ...)
    |   `-- Carried[can_i] (Sequence, no memory)
    |       |-- can_i still on the pad?          while carried: part-present fresh and true, every tick
    |       `-- pick and place can_i (Sequence, memory)
    |           |-- approach can_i (Sequence, memory)
    |           |   |-- above can_i              joint path to approach_dz above the can top
    |           |   |                            (plan.transit_end; else pick_dz above it)
    |           |   `-- descend to can_i         linear, approach_speed, pad on the can top; hands on
    |           |                                to "vacuum on" vacuum_early_m before it (vacuum_early)
    |           `-- carry and place can_i (Sequence, memory)
    |               |-- vacuum on                stage := holding
    |               |-- can_i gripped?           part-present true for grip_confirm_s; stage := gripped
    |               |-- lift can_i               linear back to above-can; hands on to the carry once
    |               |                            the can clears the standing cans, or the rim where
    |               |                            the carry keeps clear of them (plan.lift_clear_level)
    |               |-- offset can_i             offset := the box estimate's (0 without one)
    |               |-- carry can_i              joint path to place_above + offset (plan.carry_path),
    |               |                            or 10 mm above the rim below it (plan.low_carry_end)
    |               |-- manual? place_can_i (Selector, memory)
    |               |   |-- manual_place off?    the offset stands (also when the box estimate knows
    |               |   |                        the compartment within manual_place_known_m)
    |               |   `-- ManualAdjust[place_can_i]
    |               |-- over the rim can_i? (Selector, memory)
    |               |   |-- over the rim can_i   one line down to place_release + offset: release_speed,
    |               |   |                        guard_speed and guarded through the rim band; a contact:
    |               |   |                        lift clear, search (behaviors/search.py)
    |               |   `-- after the search can_i (Sequence, memory)
    |               |       |-- operator after the search can_i?   no probe passed and the operator
    |               |       |                                      is there (search_fallback manual)
    |               |       |-- ManualAdjust[place_can_i after the search]
    |               |       `-- over the rim can_i after ManualAdjust   guarded, no search
    |               |-- vacuum off               stage := released; ONLY reachable from here (a guarded
    |               |                            descent finishes its last release_early_m meanwhile)
    |               |-- can_i let go?            part-present false after the valve closed; stage := let_go
    |               |-- settle                   settle_s
    |               |-- rise                     linear to place_above + offset; hands on to the next
    |               |                            can's joint path once the pad clears the placed cans
    |               |                            by approach_dz (rise_handoff)
    |               |-- can_i placed
    |               `-- box evidence from can_i  a ManualAdjust/search offset updates the box estimate
    `-- skip or stop can_i                      skip (never touched) / stop the run (holding, or a
                                                fault of the stack: stale joints, lease, motion node)

The tree decides from the gripper's hardware contract only (the valve it commands, the part-present
switch it hears, each reading's age; behaviors/vacuum.py); can and box positions come from the cell
config (plan.py). `can_i still on the pad?` watches the lift, the carry, the manual placement and the
release descent: the tick the switch drops or goes stale, the running motion is cancelled.

The release descent (`over the rim can_i`, behaviors/search.py) is one linear goal from the carry's end to
place_release: release_speed, except through the band where the can's bottom passes the rim and the
divider tops, which it crosses slowly (guard_speed) and guarded (guard_force_n) without stopping at
either end (without joint efforts or with ``guarded_pass`` false: release_speed all the way, unguarded).
A contact in the band lifts the can clear of the rim, vacuum on, and a search probes offsets around the
one that met the rim; the first that passes goes on to the release height and becomes the can's offset
(source "search"). No probe passes: the can is held above its compartment and the run stops, or, with
``search_fallback`` manual (or ``manual_place`` true), ManualAdjust follows and then one guarded pass
without a search (a contact then stops the run, holding).

The release is safe by structure: "vacuum off" is the next sibling of `over the rim can_i?`, which
succeeds only with the can at its release height (a rim pass that ended there) or, on a guarded pass,
within ``release_early_m`` of it below the band, inside its compartment (the pass crossed the band
without a contact and hands its goal on to finish the descent while the valve vents; once the can has
let go, the rise bends out of that goal's end: the Cartesian node starts it after the descent's last
sample, at rest), in a memory sequence whose ancestors up to the can's selector are sequences, so it is
ticked only after the whole pass SUCCEEDED; the selector's fallback (the outcome leaf) never switches
the vacuum. A failure anywhere after "vacuum on" (including ManualAdjust's abort or timeout and a
guard trip) therefore ends with the can still on the pad, and the outcome leaf stops the run there. The
guard (limit conditions of `behaviors/guard.py`) wraps the whole cycle of a can, so every motion in it,
ManualAdjust's nudges included, is stopped the tick a condition fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import py_trees
from py_trees.composites import Selector
from py_trees.composites import Sequence as Seq

from salamander_behavior.behaviors.base import (
    BOX_ESTIMATE_KEY,
    offset_key,
    offset_source_key,
    pad_key,
    stage_key,
)
from salamander_behavior.behaviors.box import BoxEvidence, PlaceOffset
from salamander_behavior.behaviors.flow import CanOutcome, CanPlaced, Wait, WaitUntilReady
from salamander_behavior.behaviors.ik_retry import IkRetry
from salamander_behavior.behaviors.lost import CellCleared
from salamander_behavior.behaviors.motion import CarryTarget, FixedTarget, MoveTo, OffsetTarget
from salamander_behavior.behaviors.pad import ClearPad, PadDecided
from salamander_behavior.behaviors.search import AfterSearch, RimPass, search_key
from salamander_behavior.behaviors.vacuum import SetVacuum, StillHeld, WaitForPartPresent
from salamander_behavior.box_estimate import BoxEstimate
from salamander_behavior.manual_adjust.behavior import ManualAdjust, ManualPlaceOff
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import (
    LIFT_CLEAR_M,
    CanJob,
    carry_path,
    carry_plan,
    transit_end,
    transit_starts,
)
from salamander_behavior.ports import CartesianTarget, MotionPath
from salamander_control.kinematics import ArmParams

Guard = Callable[[py_trees.behaviour.Behaviour, str], py_trees.behaviour.Behaviour]
"""Wraps a can's cycle (the behaviour, the can's name) in limit conditions; see `guard.guarded`."""

ROOT_NAME = "pick and place"


PICK = IkRetry.PICK
"""IK retries of the pick-side moves: elbow branch and tool pitch (behaviors/ik_retry.py)."""
PLACE = IkRetry.BRANCH
"""IK retries of the place-side moves: elbow branch only (a tilted can would hit the compartment)."""


def can_cycle(
    job: CanJob,
    more: bool = False,
    carry: MotionPath = MotionPath.JOINT,
    transit: CartesianTarget | None = None,
    low: CartesianTarget | None = None,
    lift_clear: float | None = None,
) -> Seq:
    """The cycle of one can, without guard and fallback (approach, then carry and place).

    `more`: another can follows in the run, so the rise may hand on to its joint path. `carry`: the
    carry's path (`place_steps`; `build_tree` carries in joint space where `plan.carry_path` allows).
    `transit`: where the empty pad's joint path ends and the descent onto the can begins (default: above
    the can; `build_tree` chooses the job's approach where `plan.transit_end` allows). `low`: where the
    carry may end below place_above (`behaviors.motion.CarryTarget`; `build_tree` gives
    `plan.low_carry_end`). `lift_clear`: the level the lift clears before it hands on (`lift_handoff`;
    `build_tree` gives `plan.lift_clear_level`).
    """
    can = job.can
    approach = Seq(
        f"approach {can}",
        memory=True,
        children=[
            MoveTo(
                f"above {can}",
                FixedTarget(transit or job.above),
                MotionPath.JOINT,
                "transit_speed",
                "above",
                PICK,
                blend=True,  # out of the previous can's rise
            ),
            MoveTo(
                f"descend to {can}",
                FixedTarget(job.contact),
                MotionPath.LINEAR,
                "approach_speed",
                "contact",
                PICK,
                handoff=vacuum_early,  # the vacuum comes on as the pad arrives; the lift waits for it
            ),
        ],
    )
    place = Seq(
        f"carry and place {can}",
        memory=True,
        children=[
            SetVacuum("vacuum on", can, on=True),
            WaitForPartPresent(f"{can} gripped?", can, True, "attach_timeout_s", "grip_confirm_s"),
            MoveTo(
                f"lift {can}",
                FixedTarget(job.above),
                MotionPath.LINEAR,
                "approach_speed",
                "lift",
                PICK,
                handoff=lift_handoff(job, lift_clear) if carry is MotionPath.JOINT else None,
            ),
            *place_steps(job, more, carry, low),
        ],
    )
    return Seq(f"pick and place {can}", memory=True, children=[approach, place])


def vacuum_early(settings: BehaviorSettings) -> float:
    """The descent onto a can hands on to "vacuum on" `vacuum_early_m` before its end (measured pad).

    The goal runs on to the can top meanwhile; the lift, which does not blend, starts from rest once it
    has ended. Nothing moves the pad sideways after it: the seal forms as the pad arrives, not a goal's
    end (the settle check, the result) later. A descent that fails after the hand-off leaves no grip,
    and the grip check fails the can with the vacuum on, as any failure after "vacuum on" does.
    """
    return settings.vacuum_early_m


def rise_handoff(job: CanJob) -> Callable[[BehaviorSettings], float]:
    """The rise's hand-off point to the next can's joint path: `blend_m` before its end at most.

    The rise lifts the empty pad from the release height to place_above; it hands on no earlier than at
    the job's depart (approach_dz above the placed cans' tops, 95 mm before its end with the shipped
    cell). The joint path bent out of it starts no lower than where the measured pad was when it handed
    on and, over the shipped cell, never dips below the lower of that and the next can's approach
    (`plan.transit_end` checks the joint paths from each depart; `test/test_handoff_clearance.py`
    replays the bend). 0 (never) when the job has no depart between its release and place_above.
    """
    room = 0.0
    if job.depart is not None and job.place_release.z < job.depart.z < job.place_above.z:
        room = job.place_above.z - job.depart.z
    return _blend_within(room)


def _blend_within(room: float) -> Callable[[BehaviorSettings], float]:
    """A hand-off point: `blend_m` before the line's end, but no more than `room` (m; 0: never)."""

    def at(settings: BehaviorSettings) -> float:
        return max(0.0, min(settings.blend_m, room))

    return at


def lift_handoff(job: CanJob, clear_z: float | None = None) -> Callable[[BehaviorSettings], float]:
    """The lift's hand-off point to the carry's joint path: `blend_m` before its end at most.

    No earlier than leaves the held can's bottom `LIFT_CLEAR_M` above `clear_z` (a TCP z; `build_tree`
    gives `plan.lift_clear_level`: the rim where the carry's path from there keeps clear of every other can,
    else the standing cans' tops), by default above the standing cans' tops and the rim.
    The joint path bent out of the lift (the generator's Ruckig, from the lift's moving state) swings the
    can sideways from there on and only rises on to place_above (over the shipped cell; `plan.
    joint_carry_sag`), or sinks to the low end only where it keeps clear of every can that may stand
    below it (`plan.low_carry_end`; `test/test_handoff_clearance.py` replays both); the hand-off is
    judged on the measured pad, which trails the command. 0 (never) when the job does not know the cans'
    height.
    """
    clear = job.lift_clear_z if clear_z is None else clear_z
    room = 0.0 if clear is None else job.above.z - (clear + LIFT_CLEAR_M)
    return _blend_within(room)


def place_steps(
    job: CanJob, more: bool = False, carry: MotionPath = MotionPath.LINEAR, low: CartesianTarget | None = None
) -> list[py_trees.behaviour.Behaviour]:
    """From the carry on: carry, manual?, over the rim? (down to the release), vacuum off, let go?, rise...

    Shared by a can's cycle and the placement of a can found on the pad (`held_subtree`); the vacuum
    off stays the next sibling of the release descent in a memory sequence either way. `more`: another
    can follows in the run, so the rise hands on to its joint path. `carry`: the carry's path. A can's
    cycle carries in joint space from above its spot (the generator's time-optimal joint move, about
    0.5 s shorter than the line; `build_tree` falls back to the line for a cell where the joint path
    would sink, `plan.carry_path`); a can found on the pad is carried along a straight line, because
    the arm may stand anywhere then. `low`: where the carry may end below place_above (`CarryTarget`).
    """
    can = job.can
    manual = Selector(
        f"manual? {job.adjust_name}",
        memory=True,
        children=[
            ManualPlaceOff("manual_place off?", job.planned_xy),
            ManualAdjust(
                f"ManualAdjust[{job.adjust_name}]", job.adjust_name, can, job.place_above, job.place_release
            ),
        ],
    )
    rim = RimPass(f"over the rim {can}", job)
    after_search = Seq(
        f"after the search {can}",
        memory=True,
        children=[
            AfterSearch(f"operator after the search {can}?", rim),
            ManualAdjust(
                f"ManualAdjust[{job.adjust_name} after the search]",
                job.adjust_name,
                can,
                job.place_above,
                job.place_release,
            ),
            RimPass(f"over the rim {can} after ManualAdjust", job, search=False),
        ],
    )
    over_the_rim = Selector(f"over the rim {can}?", memory=True, children=[rim, after_search])
    return [
        PlaceOffset(f"offset {can}", can, job.planned_xy),
        MoveTo(
            f"carry {can}",
            CarryTarget(job, low),  # at the offset: the release descent below it is then vertical
            carry,
            "transit_speed",
            "carry",
            PLACE,
            blend=carry is MotionPath.JOINT,  # out of the lift (`lift_handoff`)
        ),
        manual,
        over_the_rim,
        SetVacuum("vacuum off", can, on=False),
        WaitForPartPresent(f"{can} let go?", can, False, "release_timeout_s"),
        Wait("settle", "settle_s"),
        MoveTo(
            "rise",
            OffsetTarget(job.place_above, can),
            MotionPath.LINEAR,
            "approach_speed",
            "rise",
            PLACE,
            handoff=rise_handoff(job) if more else None,
            # out of a descent handed on to vent the valve: the can has let go, so the rise need not wait
            # for the descent's settle check (its result, 0.05-0.1 s after the command rests); the
            # Cartesian node starts it after the descent's last sample, whose end it rests at
            blend=True,
        ),
        CanPlaced(f"{can} placed", can, job.compartment),
        BoxEvidence(f"box evidence from {can}", can, job.compartment, job.planned_xy, job.centre),
    ]


def can_subtree(
    job: CanJob,
    guard: Guard | None = None,
    more: bool = False,
    carry: MotionPath = MotionPath.JOINT,
    transit: CartesianTarget | None = None,
    low: CartesianTarget | None = None,
    lift_clear: float | None = None,
) -> Selector:
    """The can's selector: the (guarded) cycle, then the outcome leaf that skips or stops.

    The cycle runs behind `StillHeld` (a no-memory sequence: the condition is re-ticked before the
    running leaf on every tick), so a can lost or a switch gone stale while carrying stops the motion.
    """
    return _selector(job, can_cycle(job, more, carry, transit, low, lift_clear), guard)


def held_subtree(job: CanJob, guard: Guard | None = None) -> Selector:
    """The placement of `job`'s can, found on the pad (the operator confirmed): grip check, place steps.

    The pad check switched the vacuum on (stage "holding"); part-present must then hold for
    `grip_confirm_s` (stage "gripped", from then on `StillHeld` watches), and the can's place steps
    follow from the carry (a linear move from wherever the arm stands to its place_above).
    """
    cycle = Seq(
        f"place {job.can} from the pad",
        memory=True,
        children=[
            WaitForPartPresent(f"{job.can} gripped?", job.can, True, "attach_timeout_s", "grip_confirm_s"),
            *place_steps(job),
        ],
    )
    return _selector(job, cycle, guard)


def pad_subtree(before: CanJob | None, held: CanJob | None = None, guard: Guard | None = None,
                ) -> py_trees.behaviour.Behaviour:
    """The pad check before picking `before` (None: at the end of a run that only places `held`).

    Without `held` it is the `ClearPad` leaf (a can found on the pad may only be removed); with it, a
    sequence: the check, then a selector that places `held` when the operator confirmed.
    """
    label = before.can if before is not None else "end"
    what = f"picking {before.can}" if before is not None else "ending the run"
    name = f"pad clear before {before.can}?" if before is not None else "pad clear?"
    check = ClearPad(name, label, what, held.can if held is not None else None)
    if held is None:
        return check
    place = Selector(
        f"place {held.can} from the pad?",
        memory=True,
        children=[PadDecided("nothing to place?", label), held_subtree(held, guard)],
    )
    return Seq(f"pad before {label}", memory=True, children=[check, place])


def _selector(job: CanJob, body: py_trees.behaviour.Behaviour, guard: Guard | None) -> Selector:
    cycle = Seq(
        f"Carried[{job.can}]",
        memory=False,
        children=[StillHeld(f"{job.can} still on the pad?", job.can, body), body],
    )
    attempt = guard(cycle, job.can) if guard is not None else cycle
    return Selector(
        job.can,
        memory=True,
        children=[attempt, CanOutcome(f"skip or stop {job.can}", job.can, attempt)],
    )


def build_tree(
    jobs: Sequence[CanJob],
    guard: Guard | None = None,
    held: CanJob | None = None,
    lost: Sequence[str] = (),
    box: BoxEstimate | None = None,
    arm: ArmParams | None = None,
    cell: Sequence[CanJob] = (),
) -> Seq:
    """The whole run: wait for the stack, then per can the pad check and the can; FAILURE stops the run.

    `held`: the can recorded as carried when the last run stopped (the progress file); the first pad
    check offers to place it. It must not be one of `jobs` (it is not at its spot to be picked).
    `lost`: the cans recorded as lost in transit (the progress file): before anything else the run waits
    for the operator to confirm the cell is clear of them (behaviors/lost.py). A run may consist of
    that confirmation alone.
    `box`: the estimate of the box the cans go into (the server keeps it across runs; None: none yet),
    put on the blackboard (``/box_estimate``) for the run's leaves to apply and update.
    `arm`: the arm model (default: the shipped one) for `plan.carry_path`: a can whose joint-space carry
    would sink more than `plan.CARRY_SAG_TOLERANCE` below its ends is carried along a straight line;
    and for `plan.transit_end`: a transit ends at the can's approach where no joint path to it from rest
    or a place_above sinks, else above the can.
    `cell`: every can of the cell (its spots and compartments) for `plan.low_carry_end`: a carry ends
    low where its joint path keeps clear of them all, counting every compartment as filled but those of
    the cans this run picks later; and for `plan.lift_clear_level`: a lift hands on as soon as its can
    clears the rim where the carry's path from there keeps clear of them as well; () (not known): no
    carry ends low, and every lift clears the cans' tops first.
    """
    if not jobs and held is None and not lost:
        raise ValueError("the tree needs at least one can")
    if held is not None and any(job.can == held.can for job in jobs):
        raise ValueError(f"{held.can} is recorded as carried: it cannot also be picked in the same run")
    every = [*jobs, *([held] if held is not None else [])]
    for can in [*(job.can for job in every), *lost]:  # a tree is built for one run: nothing carries over
        py_trees.blackboard.Blackboard.unset(stage_key(can))
        py_trees.blackboard.Blackboard.unset(offset_key(can))
        py_trees.blackboard.Blackboard.unset(offset_source_key(can))
        py_trees.blackboard.Blackboard.unset(search_key(can))
    if box is None:
        py_trees.blackboard.Blackboard.unset(BOX_ESTIMATE_KEY)
    else:
        py_trees.blackboard.Blackboard.set(BOX_ESTIMATE_KEY, box)
    for label in [*(job.can for job in jobs), "end"]:
        py_trees.blackboard.Blackboard.unset(pad_key(label))
    children: list[py_trees.behaviour.Behaviour] = [WaitUntilReady("arm and gripper ready?")]
    if lost:
        children.append(CellCleared(f"cell clear of {', '.join(lost)}?", lost))
    arm = arm or ArmParams()
    starts = transit_starts(every, arm)
    for i, job in enumerate(jobs):
        more = i + 1 < len(jobs)
        low, clear = carry_plan(job, cell, jobs[i + 1:], arm)
        carry, transit = carry_path(job, arm), transit_end(job, starts, arm)
        children += [
            pad_subtree(job, held if i == 0 else None, guard),
            can_subtree(job, guard, more, carry, transit, low, clear),
        ]
    if not jobs and held is not None:
        children.append(pad_subtree(None, held, guard))
    return Seq(ROOT_NAME, memory=True, children=children)


def walk(root: py_trees.behaviour.Behaviour) -> Iterator[py_trees.behaviour.Behaviour]:
    """Every behaviour under `root` (itself included), depth first in tick order."""
    yield root
    for child in root.children:
        yield from walk(child)
