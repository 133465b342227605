"""run_on_start: one run of every can once the stack is ready, a goal the server sends itself (no node).

`AutoStart` holds what that wait decides: whether it still applies (`pending`: until a run started or
its goal was refused), what the stack still lacks (`waiting_for`: the reasons of the checks not passed)
and when to send the goal (`due`: again only after `AUTO_GOAL_RETRY_S` without an answer, a request
lost at start-up). No lease is held while waiting.

Invariants: at most one goal per `AUTO_GOAL_RETRY_S`; once `pending` is off it stays off. The server's
lifecycle: docs/design/behavior_server.md.
"""

from __future__ import annotations

AUTO_GOAL_RETRY_S = 5.0
"""s; run_on_start sends its goal again when no answer came this long (a request lost at start-up)."""


def waiting_for(*checks: tuple[bool, str]) -> str:
    """What is still awaited: the reasons of the (ok, reason) checks not ok, joined; "" when all are."""
    return "; ".join(why for ok, why in checks if not ok)


class AutoStart:
    """The run_on_start wait; `pending` starts as the parameter says."""

    def __init__(self, enabled: bool, retry_s: float = AUTO_GOAL_RETRY_S) -> None:
        self.pending = enabled
        self._retry_s = retry_s
        self._sent_at: float | None = None

    def start_text(self, action: str) -> str:
        """The start line's end: what the server does first (`action`: the RunPickPlace action's name)."""
        if self.pending:
            return "run_on_start: one run of every can once the stack is ready"
        return f"idle, holding no lease: start a run with the RunPickPlace action on {action}"

    def due(self, now: float) -> bool:
        """Whether to send the goal now (monotonic s); if so, counted as sent."""
        if self._sent_at is not None and now - self._sent_at < self._retry_s:
            return False
        self._sent_at = now
        return True

    def stop(self) -> None:
        """A run started, or the goal was refused (the reason is logged): the wait is over for good."""
        self.pending = False
