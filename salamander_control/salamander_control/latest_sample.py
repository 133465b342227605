"""The newest stamp wins: the one rule for ordering stamped input, and a one-slot mailbox built on it.

Every node and cache that keeps "the latest" of a stamped stream (joint states, the cell state) must
not let a late, older message overwrite a newer one, yet must not stall forever when the stamps start
again from a smaller value (a simulation restarted, a publisher without stamps after one with).
`StampOrder` decides that, the same everywhere: a stamp not older than the newest one is taken; one
older by up to `CLOCK_RESET_NS` is out of order and dropped; one older by more is a clock reset, taken,
and starts a new ordering. Genuinely late messages on one machine are late by milliseconds.

`LatestSample` is the mailbox for rate-limited monitors (the IK ghost, the cell simulator): they work on
the *latest* measurement, never on a backlog. The callback does only `put` (a comparison and an
assignment under a lock), so it never blocks the executor; the timer does the work on what `take`
returns.
"""

from __future__ import annotations

import threading
from enum import Enum
from typing import Generic, TypeVar

T = TypeVar("T")

CLOCK_RESET_NS = 1_000_000_000
"""A stamp this much older than the newest one (or more) is a clock reset, not a late message."""


class PutResult(Enum):
    """What the ordering made of a stamp."""

    STORED = "stored"  # not older than the newest: taken
    OUT_OF_ORDER = "out_of_order"  # older than the newest seen: dropped
    CLOCK_RESET = "clock_reset"  # much older: taken as a clock reset


def stamp_order(newest_ns: int | None, stamp_ns: int, clock_reset_ns: int = CLOCK_RESET_NS) -> PutResult:
    """The verdict on `stamp_ns` against the newest stamp taken so far (None: none yet)."""
    if newest_ns is None or stamp_ns >= newest_ns:
        return PutResult.STORED
    if newest_ns - stamp_ns <= clock_reset_ns:
        return PutResult.OUT_OF_ORDER
    return PutResult.CLOCK_RESET


class StampOrder:
    """The newest stamp seen, and the verdict on each new one (not thread-safe: callers lock).

    Args:
        clock_reset_ns: see `CLOCK_RESET_NS`.
    """

    def __init__(self, clock_reset_ns: int = CLOCK_RESET_NS) -> None:
        self.clock_reset_ns = clock_reset_ns
        self.newest_ns: int | None = None

    def offer(self, stamp_ns: int) -> PutResult:
        """Judge `stamp_ns` (`stamp_order`), and make it the newest unless it is out of order."""
        result = stamp_order(self.newest_ns, stamp_ns, self.clock_reset_ns)
        if result is not PutResult.OUT_OF_ORDER:
            self.newest_ns = stamp_ns
        return result

    def clear(self) -> None:
        """Forget the newest stamp: the next one is taken whatever it is."""
        self.newest_ns = None


class LatestSample(Generic[T]):
    """Holds the newest sample by stamp (see `StampOrder`); thread-safe.

    Args:
        clock_reset_ns: see `CLOCK_RESET_NS`.
    """

    def __init__(self, clock_reset_ns: int = CLOCK_RESET_NS) -> None:
        self._lock = threading.Lock()
        self._item: T | None = None
        self._order = StampOrder(clock_reset_ns)

    def put(self, stamp_ns: int, item: T) -> PutResult:
        """Offer a sample stamped `stamp_ns`: unless it is out of order, it replaces the held one."""
        with self._lock:
            result = self._order.offer(stamp_ns)
            if result is not PutResult.OUT_OF_ORDER:
                self._item = item
            return result

    def take(self) -> T | None:
        """The newest sample not taken yet, or None; each sample is returned at most once."""
        with self._lock:
            item, self._item = self._item, None
            return item
