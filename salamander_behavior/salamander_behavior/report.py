"""What became of each can in a run: placed, skipped (with the reason) or aborted (pure).

The tree's outcome leaves write it; the node prints it at the head of the tree snapshot and logs the
summary when the run ends, so an operator sees at a glance why a can is still on the table.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum


def offset_mm(offset: Sequence[float]) -> str:
    """An offset in m as the logs write it: ``[x, y, z] mm``, one decimal, never "-0.0".

    A value that rounds to zero from below (e.g. -0.04 mm) is written "0.0": the operators' and the tests'
    reading of "came back to where it started" should not depend on the sign of a rounding residue.
    """
    return "[" + ", ".join(f"{round(v * 1000.0, 1) + 0.0:.1f}" for v in offset) + "] mm"


class Outcome(StrEnum):
    """A can's outcome, in these words everywhere.

    A run's result (RunPickPlace's `outcomes`), the progress file and the logs use them. The first four
    are a cycle's own ends (`CanResult`).
    """

    PLACED = "placed"  # released over its compartment, and the part-present switch dropped
    # Released but known to have landed elsewhere. The tree, deciding on the hardware contract only, has
    # no view of where a can landed and never records this; kept for reports made with such a view.
    MISSED = "missed"
    SKIPPED = "skipped"  # failed before the vacuum came on: the can was never touched
    ABORTED = "aborted"  # failed with the can on the pad (or after releasing it): the run stopped
    REMOVED = "removed"  # the can recorded as carried was taken off the pad by hand (or was not on it)
    LOST = "lost"  # it fell off the pad in transit (part-present dropped while it was carried)
    NOT_RUN = "not_run"  # the run did not finish it (cancelled before it, or stopped earlier)


class CanResult(Enum):
    """How the cycle of one can ended (the tree's outcome leaves write it)."""

    PLACED = Outcome.PLACED
    MISSED = Outcome.MISSED
    SKIPPED = Outcome.SKIPPED
    ABORTED = Outcome.ABORTED


@dataclass(frozen=True)
class CanRecord:
    """One can's result and the reason (or details) in words."""

    can: str
    result: CanResult
    detail: str


class RunReport:
    """Results by can, in the order they were recorded; thread-safe (the snapshot timer reads it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, CanRecord] = {}

    def record(self, can: str, result: CanResult, detail: str) -> None:
        """Record (or overwrite) the result of `can`."""
        with self._lock:
            self._records[can] = CanRecord(can, result, detail)

    def records(self) -> tuple[CanRecord, ...]:
        """Every record so far."""
        with self._lock:
            return tuple(self._records.values())

    def result_of(self, can: str) -> CanResult | None:
        """The result of `can`, None while it is pending."""
        with self._lock:
            record = self._records.get(can)
            return record.result if record else None

    def summary(self) -> str:
        """One line, e.g. ``2 placed, 1 missed, 0 skipped, 0 aborted``."""
        records = self.records()
        counts = {r: sum(1 for rec in records if rec.result is r) for r in CanResult}
        return ", ".join(f"{counts[r]} {r.value}" for r in CanResult)

    def lines(self) -> list[str]:
        """One line per can, e.g. ``can_1: skipped: descend to can_1: IK early-fail ...``."""
        return [f"{r.can}: {r.result.value}: {r.detail}" for r in self.records()]
