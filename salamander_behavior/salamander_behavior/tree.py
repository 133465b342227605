"""The pick-and-place tree: one selector per can, run in order after the stack is ready.

Per can (``can_i``, into compartment i)::

    can_i (Selector, memory)
    |-- Guarded[can_i] (Sequence, no memory: the limit conditions, re-ticked every tick, then ...)
    |   `-- pick and place can_i (Sequence, memory)
    |       |-- approach can_i (Sequence, memory)
    |       |   |-- above can_i                  joint path, transit_speed
    |       |   `-- descend to can_i             linear, approach_speed, pad on the can top
    |       `-- carry and place can_i (Sequence, memory)
    |           |-- vacuum on                    stage := holding
    |           |-- can_i gripped?               the cell reports it held for grip_confirm_s
    |           |-- lift can_i                   linear back to above-can
    |           |-- carry can_i                  linear to place_above
    |           |-- manual? place_can_i (Selector, memory)
    |           |   |-- manual_place off?        offset := 0
    |           |   `-- ManualAdjust[place_can_i]
    |           |-- can_i still on the pad?      not lost in transit
    |           |-- place_release                linear, release_speed (0.5), place_release + offset
    |           |-- vacuum off                   stage := released; ONLY reachable from here
    |           |-- can_i let go?                the cell reports it off the pad
    |           |-- settle                       settle_s
    |           |-- rise                         linear to place_above + offset
    |           `-- can_i placed
    `-- skip or stop can_i                      skip (never touched) / abort the run (holding)

The release is safe by structure: "vacuum off" is the next sibling of the place_release descent in a
memory sequence whose ancestors up to the can's selector are sequences, so it is ticked only after that
descent SUCCEEDED; the selector's fallback (the outcome leaf) never switches the vacuum. A failure
anywhere after "vacuum on" (including ManualAdjust's abort or timeout and a guard trip) therefore ends
with the can still on the pad, and the outcome leaf stops the run there. The guard (limit conditions
of `behaviors/guard.py`) wraps the whole cycle of a can, so every motion in it, ManualAdjust's
nudges included, is stopped the tick a condition fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import py_trees
from py_trees.composites import Selector
from py_trees.composites import Sequence as Seq

from salamander_behavior.behaviors.base import offset_key, stage_key
from salamander_behavior.behaviors.flow import CanOutcome, CanPlaced, Wait, WaitUntilReady
from salamander_behavior.behaviors.motion import FixedTarget, MoveTo, OffsetTarget
from salamander_behavior.behaviors.vacuum import SetVacuum, StillHeld, WaitForHeld
from salamander_behavior.manual_adjust.behavior import ManualAdjust, ManualPlaceOff
from salamander_behavior.plan import CanJob
from salamander_behavior.ports import MotionPath

Guard = Callable[[py_trees.behaviour.Behaviour, str], py_trees.behaviour.Behaviour]
"""Wraps a can's cycle (the behaviour, the can's name) in limit conditions; see `guard.guarded`."""

ROOT_NAME = "pick and place"
ROLE_PLACE_RELEASE = "place_release"


def can_cycle(job: CanJob) -> Seq:
    """The cycle of one can, without guard and fallback (approach, then carry and place)."""
    can = job.can
    approach = Seq(
        f"approach {can}",
        memory=True,
        children=[
            MoveTo(f"above {can}", FixedTarget(job.above), MotionPath.JOINT, "transit_speed", "above"),
            MoveTo(
                f"descend to {can}", FixedTarget(job.contact), MotionPath.LINEAR, "approach_speed", "contact"
            ),
        ],
    )
    manual = Selector(
        f"manual? {job.adjust_name}",
        memory=True,
        children=[
            ManualPlaceOff("manual_place off?", can),
            ManualAdjust(f"ManualAdjust[{job.adjust_name}]", job.adjust_name, can, job.place_above),
        ],
    )
    place = Seq(
        f"carry and place {can}",
        memory=True,
        children=[
            SetVacuum("vacuum on", can, on=True),
            WaitForHeld(f"{can} gripped?", can, True, "attach_timeout_s", "grip_confirm_s"),
            MoveTo(f"lift {can}", FixedTarget(job.above), MotionPath.LINEAR, "approach_speed", "lift"),
            MoveTo(f"carry {can}", FixedTarget(job.place_above), MotionPath.LINEAR, "transit_speed", "carry"),
            manual,
            StillHeld(f"{can} still on the pad?", can),
            MoveTo(
                "place_release",
                OffsetTarget(job.place_release, can),
                MotionPath.LINEAR,
                "release_speed",
                ROLE_PLACE_RELEASE,
            ),
            SetVacuum("vacuum off", can, on=False),
            WaitForHeld(f"{can} let go?", can, False, "release_timeout_s"),
            Wait("settle", "settle_s"),
            MoveTo("rise", OffsetTarget(job.place_above, can), MotionPath.LINEAR, "approach_speed", "rise"),
            CanPlaced(f"{can} placed", can),
        ],
    )
    return Seq(f"pick and place {can}", memory=True, children=[approach, place])


def can_subtree(job: CanJob, guard: Guard | None = None) -> Selector:
    """The can's selector: the (guarded) cycle, then the outcome leaf that skips or stops."""
    cycle = can_cycle(job)
    attempt = guard(cycle, job.can) if guard is not None else cycle
    return Selector(
        job.can,
        memory=True,
        children=[attempt, CanOutcome(f"skip or stop {job.can}", job.can, attempt)],
    )


def build_tree(jobs: Sequence[CanJob], guard: Guard | None = None) -> Seq:
    """The whole run: wait for the stack, then every can in order; FAILURE stops at an aborted can."""
    if not jobs:
        raise ValueError("the tree needs at least one can")
    for job in jobs:  # a tree is built for one run: nothing may carry over from an earlier one
        py_trees.blackboard.Blackboard.unset(stage_key(job.can))
        py_trees.blackboard.Blackboard.unset(offset_key(job.can))
    return Seq(
        ROOT_NAME,
        memory=True,
        children=[WaitUntilReady("arm and cell ready?"), *(can_subtree(job, guard) for job in jobs)],
    )


def walk(root: py_trees.behaviour.Behaviour) -> Iterator[py_trees.behaviour.Behaviour]:
    """Every behaviour under `root` (itself included), depth first in tick order."""
    yield root
    for child in root.children:
        yield from walk(child)
