"""Who may use the operator view's controls: everyone on loopback, token holders elsewhere. Pure.

The page can move the robot. On 127.0.0.1 (the default) only users of this machine reach it, and every
client may use the controls. On any other address the controls need the access token: a client enters
it once in the page (each browser tab has its own panel, so one client's token is never shown to
another); a control request from a client without it is refused, and the node logs the refusal. The 3D
view and the gauges stay readable to every client. Tokens are compared in constant time.
Against mistakes and curious colleagues, not a determined attacker on the network: the page is plain
HTTP (docs/security.md).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets

TOKEN_BYTES = 16


def is_loopback(host: str) -> bool:
    """Whether `host` only accepts connections from this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything, so treat it as open


def new_token() -> str:
    """A random access token (URL-safe text)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


class AccessGuard:
    """Which clients may use the controls (see the module docstring)."""

    def __init__(self, host: str, token: str) -> None:
        self.required = not is_loopback(host)
        self.token = token or (new_token() if self.required else "")
        self._granted: set[int] = set()

    def offer(self, client: int, token: str) -> bool:
        """Client `client` entered `token`; True (and it may use the controls) when it is right."""
        if not self.required:
            return True
        ok = hmac.compare_digest(token.strip().encode(), self.token.encode())
        if ok:
            self._granted.add(client)
        else:
            self._granted.discard(client)
        return ok

    def allowed(self, client: int) -> bool:
        """Whether `client` may use the controls now."""
        return not self.required or client in self._granted

    def forget(self, client: int) -> None:
        """The client disconnected."""
        self._granted.discard(client)
