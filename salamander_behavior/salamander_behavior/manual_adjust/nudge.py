"""Keep the arm at place_above + offset while the operator nudges: one goal, retargeted as the offset moves.

The first change of the offset sends a linear MoveCartesian goal; while that goal runs, each further
change retargets it (RetargetCartesian, one call in flight at a time, the newest offset wins). When the
goal has arrived and the offset changes again, a new goal is sent. A refused retarget or a failed goal
is reported once; the same offset is not tried again until the operator moves it (no goal storm on an
unreachable spot). A retarget that crossed the goal's end (sent while the goal ran here, answered after
it ended at the Cartesian node: "no active goal") is no refusal: the offset goes out as a new goal once
the goal's result arrives, so a refusal is reported only if the goal still runs when the next answers are
taken. Pure: talks to a `MotionPort`, polled from ManualAdjust's update.
"""

from __future__ import annotations

import math

from salamander_behavior.behaviors.motion import describe_failure
from salamander_behavior.ports import (
    CartesianTarget,
    MotionHandle,
    MotionPath,
    MotionPhase,
    MotionPort,
    MotionRequest,
)
from salamander_behavior.report import offset_mm

Offset = tuple[float, ...]
"""(dx, dy) or (dx, dy, dz), m; a missing dz is 0."""

RESOLUTION = 0.0002
"""Offsets closer than 0.2 mm count as the same (no goal or retarget for less)."""


def _xyz(offset: Offset) -> tuple[float, float, float]:
    return (offset[0], offset[1], offset[2] if len(offset) > 2 else 0.0)


def _same(a: Offset | None, b: Offset | None) -> bool:
    return a is not None and b is not None and math.dist(_xyz(a), _xyz(b)) < RESOLUTION


class NudgeCommander:
    """Drives the arm to `base` shifted by the desired offset.

    Args:
        base: the planned place_above pose (where the arm is when the wait begins).
        label: goal label for logs.
    """

    def __init__(self, base: CartesianTarget, label: str) -> None:
        self.base = base
        self.label = label
        self.handle: MotionHandle | None = None
        self.reached: Offset | None = (0.0, 0.0)  # None: unknown (a goal failed part-way)
        self.heading: Offset = (0.0, 0.0)  # where the running goal goes
        self.pending: Offset | None = None  # offset of the retarget in flight
        self.refused: Offset | None = None  # last offset a retarget was refused for
        self.failed: Offset | None = None  # last offset a goal failed for
        self._refusal: str | None = None  # a refusal, reported if the goal still runs at the next answers
        self.goals = 0
        self.retargets = 0

    def target(self, offset: Offset) -> CartesianTarget:
        """The pose for an offset."""
        return self.base.shifted(*_xyz(offset))

    @property
    def stuck(self) -> bool:
        """Whether the last goal failed and no goal runs now."""
        return self.handle is None and self.failed is not None

    def update(self, motion: MotionPort, desired: Offset, speed: float) -> tuple[bool, str | None]:
        """One tick: take answers, then send a goal or a retarget if the offset moved.

        Returns:
            (settled, note): settled when no goal runs and the arm arrived at `desired`; note is a line to
            log (a refusal or failure), else None.
        """
        note = self._take_answers()
        if self.handle is None:
            if _same(desired, self.reached):
                return True, note
            if _same(desired, self.failed):
                return False, note
            request = MotionRequest(self.target(desired), MotionPath.LINEAR, speed, self.label)
            self.handle = motion.send(request)
            self.heading, self.pending, self.refused = desired, None, None
            self.goals += 1
        elif self.pending is None and not _same(desired, self.heading) and not _same(desired, self.refused):
            if self.handle.retarget(self.target(desired)):
                self.pending = desired
                self.retargets += 1
        return False, note

    def _take_answers(self) -> str | None:
        handle = self.handle
        if handle is None:
            return None
        note, self._refusal = self._refusal, None
        reply = handle.take_retarget_reply()
        if reply is not None and self.pending is not None:
            if reply.accepted:
                self.heading = self.pending
            else:
                self.refused = self.pending
                self._refusal = f"retarget to offset {offset_mm(self.pending)} refused: {reply.message}"
            self.pending = None
        outcome = handle.poll()
        if outcome.done:  # a refusal held or just taken crossed the goal's end: no line
            self.handle, self.pending, self._refusal, note = None, None, None, None
            if outcome.phase is MotionPhase.SUCCEEDED:
                self.reached, self.failed = self.heading, None
            else:
                self.reached, self.failed = None, self.heading
                note = f"nudge to offset {offset_mm(self.heading)} failed: {describe_failure(outcome)}"
        return note

    def cancel(self) -> None:
        """Stop a running goal; no poll first: a poll of a goal due to be sent again would send it."""
        if self.handle is not None:
            self.handle.cancel()  # a no-op for a goal known to have ended
        self.handle = None
