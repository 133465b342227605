"""The operator view's copy of one of another node's parameters (pure, no ROS).

The view learns the behaviour server's `manual_place` two ways: from /parameter_events (each change, as
it happens) and from a GetParameters poll every few seconds (for a view started after the last change,
or a lost event). The two travel on different channels, so a poll answered *before* a change can be
delivered *after* that change's event; taken as news it would turn the page's checkbox back to the old
value (docs/design/operator_view.md). Invariant: an answer
counts only if no event arrived since its request was sent, so the newest event is never overwritten by
an older reading. The caller serialises the calls (the view holds its lock).
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class ParamMirror(Generic[T]):
    """The newest known value of one remote parameter (None: not known yet)."""

    def __init__(self) -> None:
        self._value: T | None = None
        self._events = 0

    @property
    def value(self) -> T | None:
        """The newest value known, None before the first event or accepted answer."""
        return self._value

    def on_event(self, value: T) -> None:
        """A parameter event announced `value` (always newer than any reading in flight)."""
        self._events += 1
        self._value = value

    def ask(self) -> int:
        """A poll is about to be sent: the ticket to hand back with its answer."""
        return self._events

    def on_answer(self, ticket: int, value: T) -> bool:
        """The poll sent with `ticket` read `value`; taken only if no event came since. Whether taken."""
        if ticket != self._events:
            return False
        self._value = value
        return True
