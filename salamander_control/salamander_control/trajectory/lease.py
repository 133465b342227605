"""The arm lease: one holder at a time decides whose goals move the arm.

Pure state machine with the clock passed in (seconds, monotonic), so it is tested without ROS. The
trajectory generator owns one; when the holder misses its heartbeat the lease expires and the
generator brings the arm to a stop within its limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MIN_TIMEOUT = 0.05
MAX_TIMEOUT = 60.0


@dataclass(frozen=True)
class LeaseReply:
    """Outcome of a lease request."""

    success: bool
    message: str
    holder: str


class ArmLease:
    """Acquire / heartbeat / release with expiry on a missed heartbeat.

    An empty holder means free: anyone's goals are accepted (the gamepad jogs freely while the
    behaviour tree is idle). Re-acquiring by the holder refreshes the lease.
    """

    def __init__(self) -> None:
        self._holder = ""
        self._timeout = 0.0
        self._deadline = 0.0

    @property
    def holder(self) -> str:
        """Current holder, "" when free. Call `expire(now)` first to account for time."""
        return self._holder

    @property
    def timeout(self) -> float:
        """Heartbeat timeout of the current holder, s (0 when free)."""
        return self._timeout

    def seconds_left(self, now: float) -> float:
        """Time before the lease expires without a heartbeat (0 when free)."""
        return max(0.0, self._deadline - now) if self._holder else 0.0

    def acquire(self, client: str, timeout: float, now: float) -> LeaseReply:
        """Take the lease for `client` if free (or already theirs)."""
        if not client:
            return LeaseReply(False, "client_id must not be empty", self._holder)
        if not (math.isfinite(timeout) and MIN_TIMEOUT <= timeout <= MAX_TIMEOUT):
            problem = f"timeout must lie in [{MIN_TIMEOUT}, {MAX_TIMEOUT}] s, got {timeout}"
            return LeaseReply(False, problem, self._holder)
        self.expire(now)
        if self._holder and self._holder != client:
            return LeaseReply(False, f"lease held by {self._holder!r}", self._holder)
        self._holder, self._timeout, self._deadline = client, timeout, now + timeout
        return LeaseReply(True, f"lease granted to {client!r} for {timeout:.2f} s heartbeats", client)

    def heartbeat(self, client: str, now: float) -> LeaseReply:
        """Keep the lease alive."""
        self.expire(now)
        if self._holder != client or not client:
            return self._not_holder(client)
        self._deadline = now + self._timeout
        return LeaseReply(True, "ok", client)

    def release(self, client: str, now: float) -> LeaseReply:
        """Give the lease back."""
        self.expire(now)
        if self._holder != client or not client:
            return self._not_holder(client)
        self._holder, self._timeout, self._deadline = "", 0.0, 0.0
        return LeaseReply(True, f"lease released by {client!r}", "")

    def _not_holder(self, client: str) -> LeaseReply:
        message = f"{client!r} does not hold the lease (holder {self._holder!r})"
        return LeaseReply(False, message, self._holder)

    def expire(self, now: float) -> str:
        """Drop a holder whose heartbeat is overdue; returns the expired holder or ""."""
        if self._holder and now > self._deadline:
            gone = self._holder
            self._holder, self._timeout, self._deadline = "", 0.0, 0.0
            return gone
        return ""

    def allows(self, client: str, now: float) -> bool:
        """Whether goals from `client` ("" = anonymous, e.g. the gamepad) may move the arm now."""
        self.expire(now)
        return not self._holder or self._holder == client
