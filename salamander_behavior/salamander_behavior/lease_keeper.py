"""The client side of the arm lease: when to acquire, heartbeat or give up, and whether we hold it (pure).

The trajectory generator only moves the arm for the lease holder, and drops a holder whose heartbeat is
overdue. `LeaseKeeper` decides, from a clock passed in, which request to send next (one at a time) and
keeps a *conservative* view of the lease: a grant confirmed for a request sent at time t is counted
valid until t + timeout (the server started its deadline no earlier than t), so the tree never believes
in a lease the generator has already dropped. A refused heartbeat (the generator restarted, the lease
expired) makes the next request an ACQUIRE; an answer that never comes is given up after `timeout`.

The behaviour server holds the lease exactly while a run is active: `ros.arm_motion_client.ArmMotionCore`
makes one keeper per run (`acquire_lease`) and stops it when the run ends (`release_lease`).
"""

from __future__ import annotations

import math
from enum import IntEnum

NOT_REQUESTED = "lease not requested yet"
LAPSED = "arm lease lapsed"
"""How `LeaseKeeper.on_reply`'s line begins when a lease we held lapsed and was granted anew (a warning)."""


class LeaseOp(IntEnum):
    """ArmLease operations (the values of salamander_msgs/srv/ArmLease's constants)."""

    ACQUIRE = 0
    HEARTBEAT = 1
    RELEASE = 2


class LeaseKeeper:
    """Acquire on start, heartbeat every `timeout / 4`, re-acquire after a refusal.

    Args:
        client_id: our lease identity.
        timeout: the heartbeat timeout asked for, s.
        retry: seconds between two ACQUIRE attempts while the lease is refused.
    """

    def __init__(self, client_id: str, timeout: float, retry: float = 0.5) -> None:
        if not client_id:
            raise ValueError("client_id must not be empty")
        if not (math.isfinite(timeout) and timeout > 0.0):
            raise ValueError(f"timeout must be a positive number, got {timeout}")
        self.client_id = client_id
        self.timeout = timeout
        self.period = timeout / 4.0
        self.retry = retry
        self._held_until = -math.inf
        self._confirmed_at = -math.inf
        self._in_flight: tuple[LeaseOp, float, int] | None = None  # (op, sent at, request id)
        self._requests = 0  # ids of the requests sent so far
        self._last_attempt = -math.inf
        self._problem = NOT_REQUESTED
        self.token = ""  # the generator's token for our lease (ACQUIRE's answer); "" while not held
        self.loss = ""  # how the last lease we held ended (refused, or lapsed and granted anew); "" never
        self._stopped = False

    def held(self, now: float) -> bool:
        """Whether the lease is ours at `now` (conservatively)."""
        return now < self._held_until

    @property
    def problem(self) -> str:
        """Why the lease is not held (the last refusal or what is awaited)."""
        return self._problem

    @property
    def request_id(self) -> int:
        """The id of the request `next_request` returned last (pass it back to `on_reply`)."""
        return self._requests

    @property
    def in_flight(self) -> LeaseOp | None:
        """The request awaiting its answer, if any (an ACQUIRE's answer may still grant the lease)."""
        return self._in_flight[0] if self._in_flight is not None else None

    def next_request(self, now: float) -> LeaseOp | None:
        """The request to send now, or None; the caller must send it (it is marked in flight)."""
        if self._stopped:
            return None
        if self._in_flight is not None:
            if now - self._in_flight[1] <= self.timeout:
                return None
            self._problem = f"no answer to {self._in_flight[0].name} within {self.timeout:.2f} s"
            self._in_flight = None
        op: LeaseOp | None = None
        if not self.held(now):
            if now - self._last_attempt >= self.retry:
                op = LeaseOp.ACQUIRE
        elif now - self._confirmed_at >= self.period:
            op = LeaseOp.HEARTBEAT
        if op is not None:
            if self._problem == NOT_REQUESTED:
                self._problem = f"{op.name} sent, no answer yet"
            self._requests += 1
            self._in_flight = (op, now, self._requests)
            self._last_attempt = now if op is LeaseOp.ACQUIRE else self._last_attempt
        return op

    def on_reply(
        self,
        op: LeaseOp,
        success: bool,
        message: str,
        holder: str,
        token: str = "",
        request: int | None = None,
    ) -> str | None:
        """Take the answer to the request in flight; returns a line worth logging when the state changed.

        An answer to anything but the request in flight is ignored: `request` is the id it was sent
        with (`request_id`; None: the one in flight). A late answer to an ACQUIRE given up on must not
        pass for the answer to the next one: its token belongs to a lease that expired unkept (seen on a
        loaded machine: every heartbeat refused, the whole run skipped).
        """
        if self._in_flight is None or self._in_flight[0] is not op:
            return None
        if request is not None and request != self._in_flight[2]:
            return None
        sent_at = self._in_flight[1]
        self._in_flight = None
        was_held = self._held_until > -math.inf
        if success:
            line = None if was_held else f"arm lease acquired as {self.client_id!r}: {message}"
            if op is LeaseOp.ACQUIRE and was_held:  # only sent once the lease we held had lapsed
                why = (f"no heartbeat confirmed for {sent_at - self._confirmed_at:.2f} s against its "
                       f"{self.timeout:.2f} s timeout")  # fmt: skip
                self.loss = f"it lapsed, {why}"
                line = f"{LAPSED}, {why}; granted anew: {message}"
            if op is LeaseOp.ACQUIRE:
                self.token = token
            self._held_until = sent_at + self.timeout
            self._confirmed_at = sent_at
            self._problem = ""
            return line
        self._held_until = -math.inf
        self._confirmed_at = -math.inf
        self.token = ""
        self._problem = f"{op.name.lower()} refused: {message} (holder {holder!r})"
        if was_held:
            self.loss = self._problem
            return f"arm lease lost: {self._problem}; acquiring again"
        return None

    def on_error(self, op: LeaseOp, error: str, request: int | None = None) -> None:
        """The call failed without an answer (service gone): try again on the next request."""
        if request is not None and self._in_flight is not None and request != self._in_flight[2]:
            return
        if self._in_flight is not None and self._in_flight[0] is op:
            self._in_flight = None
            self._problem = f"{op.name.lower()} failed: {error}"

    def stop(self) -> bool:
        """Stop requesting (shutdown); returns whether a RELEASE is worth sending (we held the lease)."""
        self._stopped = True
        held = self._held_until > -math.inf
        self._held_until = -math.inf
        self._problem = "stopped"
        return held
