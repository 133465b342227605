"""viser's message buffers woken from any thread without racing their event loop.

viser 1.1.1 (the pinned version) calls `asyncio.Event.set()` on a buffer's ``message_event`` directly
from whatever thread pushed the message (`AsyncMessageBuffer.push`), as well as through the loop's
`call_soon_threadsafe`. The operator view pushes from the ROS executor's thread (the frame timer) and
from viser's own thread pool (a client's connect callback builds its panel). `asyncio.Event` is not
thread-safe: a `set()` from another thread iterates the event's waiters while the loop thread adds or
removes one, and a fresh-clone run of the suite saw the view die of it (``RuntimeError: deque mutated
during iteration`` in `Event.set`, out of `Panel.show`). An event whose waiters were left unwoken that
way stays set with a parked consumer: that browser's page would stop updating.

`install()` makes every buffer viser creates from then on use `LoopSafeEvent`: a `set()` from the
loop's own thread sets it at once, and one from any other thread is handed to the loop
(`call_soon_threadsafe`), as viser's second call already does. Nothing in viser reads the event
synchronously after pushing. Call it before creating the `ViserServer`.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

PATCHED_VERSION = "1.1.1"
"""The viser version whose `AsyncMessageBuffer` this was written against."""


class LoopSafeEvent(asyncio.Event):
    """An `asyncio.Event` of `loop` whose `set()` may be called from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._home = loop

    def set(self) -> None:
        """Set now on the loop's thread; from any other thread, on the loop's next turn."""
        try:
            on_loop = asyncio.get_running_loop() is self._home
        except RuntimeError:  # no loop runs in this thread
            on_loop = False
        if on_loop:
            super().set()
            return
        try:
            self._home.call_soon_threadsafe(super().set)
        except RuntimeError:  # the loop is closed: no consumer is left to wake
            pass


def install() -> None:
    """Give every `AsyncMessageBuffer` created from now on a `LoopSafeEvent` (idempotent).

    Raises:
        RuntimeError: the installed viser is not the version this was written against.
    """
    import viser
    from viser.infra import _async_message_buffer as buffers

    if viser.__version__ != PATCHED_VERSION:
        raise RuntimeError(
            f"salamander_view.viser_threads was written against viser {PATCHED_VERSION}, found "
            f"{viser.__version__}: check whether AsyncMessageBuffer still sets message_event from the "
            "pushing thread, then update or remove this module"
        )
    cls = buffers.AsyncMessageBuffer
    if getattr(cls.__init__, "_loop_safe", False):
        return
    original = cls.__init__

    @functools.wraps(original)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.message_event = LoopSafeEvent(self.event_loop)

    init._loop_safe = True  # type: ignore[attr-defined]
    cls.__init__ = init
