"""The latest joint state, shared by every limit condition of a tree: one subscription, one cache.

The subscription callback only validates and stores (`put_message`, a few comparisons under a lock);
the behaviours read the newest sample when they tick. Receive times come from a monotonic clock
(injectable, so tests can age a sample without sleeping): a joint state's age is how long ago *this
process* heard of it, which is what matters for "is the arm still where we think it is", whatever clock
(sim time, a robot's own) stamped it.

What is refused, keeping the previous sample (which then ages and goes stale: the conditions fail
rather than judge on bad data): malformed messages (see `JointSample.from_arrays`) and messages
stamped older than the newest one, unless older by more than `clock_reset` seconds, which is a
restarted publisher or simulation and starts a new ordering. Unstamped (zero) messages are not ordered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from salamander_behavior.limits.sample import JointSample, StateError

CLOCK_RESET = 1.0
"""Seconds by which a stamp must be older than the newest to count as a clock reset, not a late message."""


@dataclass(frozen=True)
class CachedState:
    """A stored joint state.

    Attributes:
        sample: the validated joint state.
        received: when it was stored, on the cache's clock (s).
        stamp: its header stamp in seconds, or None when unstamped.
    """

    sample: JointSample
    received: float
    stamp: float | None


class JointStateCache:
    """Thread-safe holder of the newest valid joint state.

    Args:
        clock: monotonic time source in seconds (time.monotonic by default).
        clock_reset: see `CLOCK_RESET`.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, clock_reset: float = CLOCK_RESET) -> None:
        self._clock = clock
        self._clock_reset = clock_reset
        self._lock = threading.Lock()
        self._state: CachedState | None = None
        self._newest_stamp: float | None = None
        self.accepted = 0
        """Messages stored."""
        self.refused = 0
        """Messages refused (malformed or out of order)."""
        self.last_refusal = ""
        """Why the last refused message was refused."""

    def now(self) -> float:
        """The cache's clock."""
        return self._clock()

    def put(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float] = (),
        efforts: Sequence[float] = (),
        stamp: float | None = None,
    ) -> str | None:
        """Validate and store one joint state.

        Returns:
            None when stored; otherwise why it was refused (the caller logs it, throttled).
        """
        try:
            sample = JointSample.from_arrays(names, positions, velocities, efforts)
        except StateError as exc:
            return self._refuse(str(exc))
        stamp = stamp or None  # 0 = unstamped
        with self._lock:
            newest = self._newest_stamp
            if stamp is not None and newest is not None and stamp < newest <= stamp + self._clock_reset:
                reason = f"out of order: stamp {stamp:.3f} s is older than the newest {newest:.3f} s"
            else:
                reason = None
                if stamp is not None:
                    self._newest_stamp = stamp
                self._state = CachedState(sample, self._clock(), stamp)
                self.accepted += 1
        return None if reason is None else self._refuse(reason)

    def put_message(self, msg: Any) -> str | None:
        """`put` a ``sensor_msgs/msg/JointState`` (duck-typed: no ROS import here)."""
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        return self.put(msg.name, msg.position, msg.velocity, msg.effort, stamp)

    def _refuse(self, reason: str) -> str:
        with self._lock:
            self.refused += 1
            self.last_refusal = reason
        return reason

    def latest(self) -> CachedState | None:
        """The newest stored state, or None before the first one."""
        with self._lock:
            return self._state

    def age(self, state: CachedState | None = None) -> float | None:
        """Seconds since `state` (default: the newest) was stored; None before the first one."""
        state = state if state is not None else self.latest()
        return None if state is None else self._clock() - state.received

    def clear(self) -> None:
        """Forget everything stored (e.g. when the publisher is known to have gone)."""
        with self._lock:
            self._state = None
            self._newest_stamp = None
