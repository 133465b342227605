"""The arm lease: one holder at a time decides whose goals move the arm.

Pure state machine with the clock passed in (seconds, monotonic), so it is tested without ROS. The
trajectory generator owns one; when the holder misses its heartbeat the lease expires and the
generator brings the arm to a stop within its limits.

Identity is a token, not a name: ACQUIRE hands the holder an unguessable token (`secrets`, 192 bits);
HEARTBEAT, RELEASE, a re-ACQUIRE (refresh) and every goal must carry it. The client id only names the
holder (in `LeaseState`, the logs and the replies), so a client that sends the holder's name without its
token changes nothing. The token is never logged; `fingerprint()` gives a short hash that is safe to log.
This guards against mistakes and misbehaving clients, not against an attacker who can read the DDS
traffic (the token travels in the clear): that is DDS-Security's job (docs/security.md).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass

MIN_TIMEOUT = 0.05
MAX_TIMEOUT = 60.0
MAX_CLIENT_ID = 128
TOKEN_BYTES = 24
"""Random bytes per token (192 bits; `secrets.token_urlsafe` makes 32 characters of them)."""


def new_token() -> str:
    """A fresh unguessable lease token."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def fingerprint(token: str) -> str:
    """A short hash of a token for log lines (the token itself is never logged); "-" for none."""
    if not token:
        return "-"
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def same_token(given: str, token: str) -> bool:
    """Whether `given` is `token` (constant time, any string, never raises); "" matches nothing."""
    if not token:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class LeaseReply:
    """Outcome of a lease request; `token` only on a successful ACQUIRE (the holder's token)."""

    success: bool
    message: str
    holder: str
    token: str = ""


class ArmLease:
    """Acquire / heartbeat / release with expiry on a missed heartbeat, by token.

    An empty holder means free: anyone's goals are accepted (the gamepad jogs freely while the
    behaviour tree is idle). Re-acquiring by the holder with its token refreshes the lease and keeps
    the token; without it (or with another) the re-acquire is refused, or the holder's name alone would
    hand out its token.

    Args:
        make_token: the token source (tests pass a deterministic one).
    """

    def __init__(self, make_token: Callable[[], str] = new_token) -> None:
        self._make_token = make_token
        self._holder = ""
        self._token = ""
        self._timeout = 0.0
        self._deadline = 0.0

    @property
    def holder(self) -> str:
        """Current holder's client id, "" when free. Call `expire(now)` first to account for time."""
        return self._holder

    @property
    def token(self) -> str:
        """Current holder's token, "" when free (never log it: `fingerprint`)."""
        return self._token

    @property
    def timeout(self) -> float:
        """Heartbeat timeout of the current holder, s (0 when free)."""
        return self._timeout

    def seconds_left(self, now: float) -> float:
        """Time before the lease expires without a heartbeat (0 when free)."""
        return max(0.0, self._deadline - now) if self._holder else 0.0

    def acquire(self, client: str, timeout: float, now: float, token: str = "") -> LeaseReply:
        """Take the lease for `client` if free (a new token), or refresh it when `token` is the holder's."""
        if not client or len(client) > MAX_CLIENT_ID:
            return LeaseReply(False, f"client_id must have 1 to {MAX_CLIENT_ID} characters", self._holder)
        if not (math.isfinite(timeout) and MIN_TIMEOUT <= timeout <= MAX_TIMEOUT):
            problem = f"timeout must lie in [{MIN_TIMEOUT}, {MAX_TIMEOUT}] s, got {timeout}"
            return LeaseReply(False, problem, self._holder)
        self.expire(now)
        if self._holder and self._holder != client:
            return LeaseReply(False, f"lease held by {self._holder!r}", self._holder)
        if self._holder and not same_token(token, self._token):
            return LeaseReply(
                False, f"lease held by {self._holder!r}: a re-acquire must carry the holder's token "
                f"({_token_problem(token)})", self._holder,
            )
        refresh = bool(self._holder)
        if not refresh:
            self._token = self._make_token()
        self._holder, self._timeout, self._deadline = client, timeout, now + timeout
        verb = "refreshed for" if refresh else "granted to"
        message = f"lease {verb} {client!r} for {timeout:.2f} s heartbeats (token {fingerprint(self._token)})"
        return LeaseReply(True, message, client, self._token)

    def heartbeat(self, client: str, token: str, now: float) -> LeaseReply:
        """Keep the lease alive (the holder's client id and token)."""
        self.expire(now)
        refused = self._refusal(client, token)
        if refused is not None:
            return refused
        self._deadline = now + self._timeout
        return LeaseReply(True, "ok", client)

    def release(self, client: str, token: str, now: float) -> LeaseReply:
        """Give the lease back (the holder's client id and token)."""
        self.expire(now)
        refused = self._refusal(client, token)
        if refused is not None:
            return refused
        self._holder, self._token, self._timeout, self._deadline = "", "", 0.0, 0.0
        return LeaseReply(True, f"lease released by {client!r}", "")

    def _refusal(self, client: str, token: str) -> LeaseReply | None:
        """Why `client` with `token` may not heartbeat or release, or None when it may."""
        if not client or self._holder != client:
            who = repr(client[:MAX_CLIENT_ID])
            return LeaseReply(False, f"{who} does not hold the lease (holder {self._holder!r})", self._holder)
        if not same_token(token, self._token):
            return LeaseReply(
                False, f"{client!r} holds the lease but the request does not carry its token "
                f"({_token_problem(token)})", self._holder,
            )
        return None

    def extend(self, seconds: float) -> None:
        """Move the holder's heartbeat deadline `seconds` later (no-op when free).

        For time that is not the holder's to account for: the lease's owner did not run, so it could not
        take a heartbeat.
        """
        if self._holder:
            self._deadline += seconds

    def expire(self, now: float) -> str:
        """Drop a holder whose heartbeat is overdue; returns the expired holder or ""."""
        if self._holder and now > self._deadline:
            gone = self._holder
            self._holder, self._token, self._timeout, self._deadline = "", "", 0.0, 0.0
            return gone
        return ""

    def allows(self, sender: str, now: float) -> bool:
        """Whether a goal whose sender field is `sender` may move the arm now.

        Free: anyone ("" = anonymous, e.g. the gamepad). Held: only the holder's token.
        """
        self.expire(now)
        return not self._holder or same_token(sender, self._token)


def _token_problem(token: str) -> str:
    return "no token" if not token else f"token {fingerprint(token)} is not the holder's"
