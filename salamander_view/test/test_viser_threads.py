"""viser's message buffers woken from other threads (salamander_view/viser_threads.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

pytest.importorskip("viser")

from salamander_view import viser_threads  # noqa: E402
from salamander_view.viser_threads import LoopSafeEvent  # noqa: E402


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in its own thread, as viser's."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="viser-like loop")
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    loop.close()


def test_a_set_from_another_thread_runs_on_the_loop_and_wakes_its_waiter(loop, monkeypatch) -> None:
    event = LoopSafeEvent(loop)
    waiting = threading.Event()

    async def wait() -> str:
        waiter = asyncio.ensure_future(event.wait())
        await asyncio.sleep(0)  # the waiter is parked on the event before the other thread sets it
        waiting.set()
        await waiter
        return threading.current_thread().name

    setters: list[str] = []
    plain_set = asyncio.Event.set

    def recording_set(self: asyncio.Event) -> None:
        setters.append(threading.current_thread().name)
        plain_set(self)

    monkeypatch.setattr(asyncio.Event, "set", recording_set)
    woken = asyncio.run_coroutine_threadsafe(wait(), loop)
    assert waiting.wait(timeout=5)
    event.set()  # from the test's thread, as the node's frame timer pushes
    assert woken.result(timeout=5) == "viser-like loop"
    assert setters == ["viser-like loop"]  # the waiters were only ever touched on the loop's thread


def test_a_set_on_the_loop_is_immediate_and_one_on_a_closed_loop_is_dropped() -> None:
    loop = asyncio.new_event_loop()
    event = LoopSafeEvent(loop)

    async def set_here() -> bool:
        event.set()
        return event.is_set()

    assert loop.run_until_complete(set_here())
    loop.close()
    LoopSafeEvent(loop).set()  # no consumer is left to wake; nothing raises


def test_install_gives_every_new_buffer_a_loop_safe_event_once(monkeypatch) -> None:
    import viser
    from viser.infra._async_message_buffer import AsyncMessageBuffer

    viser_threads.install()
    patched = AsyncMessageBuffer.__init__
    viser_threads.install()
    assert AsyncMessageBuffer.__init__ is patched  # idempotent: not wrapped twice
    loop = asyncio.new_event_loop()
    try:
        buffer = AsyncMessageBuffer(loop, persistent_messages=False)
        assert isinstance(buffer.message_event, LoopSafeEvent)
    finally:
        loop.close()
    monkeypatch.setattr(viser, "__version__", "9.9.9")
    with pytest.raises(RuntimeError, match="written against viser 1.1.1, found 9.9.9"):
        viser_threads.install()
