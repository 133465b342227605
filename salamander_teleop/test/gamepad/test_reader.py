"""The gamepad reading thread: absent pad, events, unplug and replug, with fake devices (no /dev/input).

A fake device is a pipe (so `select` works on it) plus a queue of (type, code, value) events; unplugging
makes `read` fail with ENODEV as evdev does.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections import namedtuple

from salamander_teleop.gamepad.evdev_mapping import EV_ABS, EV_KEY, EV_SYN, SYN_REPORT
from salamander_teleop.gamepad.reader import GamepadReader

AbsInfo = namedtuple("AbsInfo", "value min max fuzz flat resolution")
Event = namedtuple("Event", "type code value")
STICK = AbsInfo(128, 0, 255, 0, 0, 0)
TRIGGER = AbsInfo(0, 0, 255, 0, 0, 0)
HAT = AbsInfo(0, -1, 1, 0, 0, 0)
KEYS = [304, 305, 307, 308, 310, 311, 312, 313, 314, 315, 316, 317, 318]
R1 = 311


class FakeDevice:
    def __init__(self, path: str = "/dev/input/event7") -> None:
        self.path, self.name = path, "Sony Interactive Entertainment Wireless Controller"
        self._r, self._w = os.pipe()
        self._events: list[Event] = []
        self._lock = threading.Lock()
        self.unplugged = False
        self.closed = False

    def fileno(self) -> int:
        return self._r

    def capabilities(self, verbose: bool = False, absinfo: bool = True):
        kinds = (STICK, STICK, TRIGGER, STICK, STICK, TRIGGER)
        axes = [*enumerate(kinds), (16, HAT), (17, HAT)]
        return {EV_ABS: axes, EV_KEY: list(KEYS)}

    def active_keys(self):
        return []

    def push(self, *events) -> None:
        with self._lock:
            self._events.extend(Event(*e) for e in (*events, (EV_SYN, SYN_REPORT, 0)))
        os.write(self._w, b"x")

    def unplug(self) -> None:
        self.unplugged = True
        os.write(self._w, b"x")

    def read(self):
        os.read(self._r, 4096)
        if self.unplugged:
            raise OSError(errno.ENODEV, "No such device")
        with self._lock:
            events, self._events = self._events, []
        if not events:
            raise BlockingIOError
        return iter(events)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self._r)
            os.close(self._w)


class Opener:
    """Fails `misses` times (no pad), then hands out the devices in order, then fails again."""

    def __init__(self, misses: int, devices: list[FakeDevice]) -> None:
        self.misses, self.devices, self.calls = misses, list(devices), 0

    def __call__(self) -> FakeDevice:
        self.calls += 1
        if self.misses > 0:
            self.misses -= 1
            raise FileNotFoundError("no gamepad among 0 input devices")
        if not self.devices:
            raise FileNotFoundError("no gamepad among 0 input devices")
        return self.devices.pop(0)


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def make(opener):
    logs: list[tuple[str, str]] = []
    changes = threading.Semaphore(0)

    def log(level: str, text: str) -> None:
        logs.append((level, text))

    reader = GamepadReader(opener, 0.05, changes.release, log, retry_period=0.02)
    return reader, logs


def test_absent_pad_is_retried_with_one_log_line_then_opened() -> None:
    pad = FakeDevice()
    opener = Opener(misses=10, devices=[pad])
    reader, logs = make(opener)
    reader.start()
    try:
        assert wait_for(lambda: reader.snapshot() is not None)
        assert opener.calls == 11
        warnings = [t for level, t in logs if level == "warn"]
        assert len(warnings) == 1 and "no gamepad" in warnings[0] and "retrying every" in warnings[0]
        assert any("open: 8 axes, 13 buttons" in t for _, t in logs)
        axes, buttons, frame = reader.snapshot()
        assert axes[2] == 1.0 and buttons == (0,) * 13  # released trigger reads +1
    finally:
        reader.stop()


def test_events_update_the_snapshot_frame_by_frame() -> None:
    pad = FakeDevice()
    reader, _ = make(Opener(0, [pad]))
    reader.start()
    try:
        assert wait_for(lambda: reader.snapshot() is not None)
        first = reader.snapshot()[2]
        pad.push((EV_KEY, R1, 1), (EV_ABS, 1, 0))
        assert wait_for(lambda: reader.snapshot()[2] > first)
        axes, buttons, _ = reader.snapshot()
        assert buttons[5] == 1 and axes[1] == 1.0  # R1 and stick up
    finally:
        reader.stop()


def test_unplug_clears_the_state_and_a_replugged_pad_is_picked_up() -> None:
    first, second = FakeDevice("/dev/input/event7"), FakeDevice("/dev/input/event9")
    opener = Opener(0, [first])
    reader, logs = make(opener)
    reader.start()
    try:
        assert wait_for(lambda: reader.snapshot() is not None)
        first.push((EV_KEY, R1, 1))
        assert wait_for(lambda: reader.snapshot()[1][5] == 1)
        first.unplug()
        assert wait_for(lambda: reader.snapshot() is None)  # nothing stale (R1 held) survives the unplug
        assert first.closed
        assert wait_for(lambda: any("lost" in t for _, t in logs))
        calls = opener.calls
        assert wait_for(lambda: opener.calls >= calls + 3)  # retrying, quietly
        assert sum("no gamepad" in t for _, t in logs) == 0  # the "lost" line covers this outage
        opener.devices.append(second)
        assert wait_for(lambda: reader.snapshot() is not None)
        assert reader.snapshot()[1][5] == 0  # the new pad's own state
        assert any("/dev/input/event9" in t and "open" in t for _, t in logs)
    finally:
        reader.stop()
    assert not reader._thread.is_alive()
