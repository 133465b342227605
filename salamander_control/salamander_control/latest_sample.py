"""A one-slot mailbox for the newest stamped sample: subscription callbacks put, a timer takes.

Rate-limited monitors (the IK ghost) must work on the *latest* measurement, never on a backlog, and must
not let a late, older message overwrite a newer one. The callback does only `put` (a comparison and an
assignment under a lock), so it never blocks the executor; the timer does the work on what `take`
returns.
"""

from __future__ import annotations

import threading
from enum import Enum
from typing import Generic, TypeVar

T = TypeVar("T")

CLOCK_RESET_NS = 1_000_000_000
"""A stamp this much older than the newest one is a clock reset (a simulation restarted, a publisher
without stamps after one with), not a late message: it is accepted and starts a new ordering. Genuinely
late messages on one machine are late by milliseconds."""


class PutResult(Enum):
    """What `LatestSample.put` did with a sample."""

    STORED = "stored"
    OUT_OF_ORDER = "out_of_order"  # older than the newest seen: dropped
    CLOCK_RESET = "clock_reset"  # much older: taken as a clock reset, stored


class LatestSample(Generic[T]):
    """Holds the newest sample by stamp; thread-safe.

    Args:
        clock_reset_ns: see `CLOCK_RESET_NS`.
    """

    def __init__(self, clock_reset_ns: int = CLOCK_RESET_NS) -> None:
        self._lock = threading.Lock()
        self._item: T | None = None
        self._newest_ns: int | None = None
        self._clock_reset_ns = clock_reset_ns

    def put(self, stamp_ns: int, item: T) -> PutResult:
        """Offer a sample stamped `stamp_ns`: an equal or newer stamp replaces the held one."""
        with self._lock:
            result = PutResult.STORED
            if self._newest_ns is not None and stamp_ns < self._newest_ns:
                if self._newest_ns - stamp_ns <= self._clock_reset_ns:
                    return PutResult.OUT_OF_ORDER
                result = PutResult.CLOCK_RESET
            self._newest_ns = stamp_ns
            self._item = item
            return result

    def take(self) -> T | None:
        """The newest sample not taken yet, or None; each sample is returned at most once."""
        with self._lock:
            item, self._item = self._item, None
            return item
