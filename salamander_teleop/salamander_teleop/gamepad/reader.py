"""A background thread that keeps a gamepad open: reads its events, survives absence and unplugging.

No rclpy: the ROS node gives it a callback to run when a frame changed (it triggers a guard condition,
so publishing happens on the executor). A missing device is retried every `retry_period` with one clear
log line per outage, not one per attempt; an unplugged device (read fails) is closed and retried the
same way, and `snapshot()` returns None meanwhile so nothing stale is published.

The device is anything with evdev's `InputDevice` interface (fileno, read, capabilities, active_keys,
close, path, name); `open_gamepad` opens a real one, the tests pass fakes.
"""

from __future__ import annotations

import select
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from salamander_teleop.gamepad.evdev_mapping import (
    EV_ABS,
    EV_KEY,
    AbsRange,
    Frame,
    JoyLayout,
    JoyState,
    is_gamepad,
)

POLL_S = 0.2
"""Longest the thread blocks in select before it checks whether it should stop, s."""


class Device(Protocol):
    """The part of evdev.InputDevice the reader uses."""

    path: str
    name: str

    def fileno(self) -> int: ...  # noqa: D102
    def read(self) -> Iterable[Any]: ...  # noqa: D102
    def capabilities(self, verbose: bool = False, absinfo: bool = True) -> dict[int, list[Any]]: ...  # noqa: D102
    def active_keys(self) -> list[int]: ...  # noqa: D102
    def close(self) -> None: ...  # noqa: D102


def device_state(device: Device) -> tuple[dict[int, AbsRange], list[int], dict[int, int], list[int]]:
    """(axis ranges, key codes, current axis values, pressed keys) read from an open device."""
    caps = device.capabilities(absinfo=True)
    ranges = {code: AbsRange(info.min, info.max) for code, info in caps.get(EV_ABS, [])}
    values = {code: info.value for code, info in caps.get(EV_ABS, [])}
    return ranges, list(caps.get(EV_KEY, [])), values, list(device.active_keys())


def open_gamepad(path: str = "", name_contains: str = "") -> Device:
    """Open the gamepad at `path`, or the first input device that is a gamepad (name filter optional).

    Raises:
        OSError: the device cannot be opened, is not a gamepad, or no gamepad is present; the message
            says which (it goes into the node's log).
    """
    import evdev  # only here: the rest of the module (and its tests) does not need the C extension

    candidates = [path] if path else sorted(evdev.list_devices())
    for candidate in candidates:
        device = evdev.InputDevice(candidate)  # raises OSError (e.g. FileNotFoundError) when absent
        caps = device.capabilities(absinfo=False)
        named = name_contains.lower() in device.name.lower()
        if named and is_gamepad(caps.get(EV_ABS, []), caps.get(EV_KEY, [])):
            return device
        device.close()
        if path:
            raise OSError(f"{path} ({device.name!r}) is not a gamepad matching {name_contains!r}")
    raise FileNotFoundError(f"no gamepad{f' named like {name_contains!r}' if name_contains else ''} among "
                            f"{len(candidates)} input devices (is the pad connected, /dev/input readable?)")


class GamepadReader:
    """Owns the device and the reading thread.

    Args:
        opener: opens the device (raises OSError when it cannot).
        deadzone: joy_node deadzone applied to the axes.
        on_change: called from the reading thread after a frame changed the state, or the device was
            opened or lost (keep it short: trigger a guard condition).
        log: called as log(level, message) with level "info" or "warn", from the reading thread.
        retry_period: seconds between attempts to open a missing device.
    """

    def __init__(
        self,
        opener: Callable[[], Device],
        deadzone: float,
        on_change: Callable[[], None],
        log: Callable[[str, str], None],
        retry_period: float = 1.0,
    ) -> None:
        self._opener = opener
        self._deadzone = deadzone
        self._on_change = on_change
        self._log = log
        self._retry = retry_period
        self._lock = threading.Lock()
        self._state: JoyState | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gamepad_reader", daemon=True)
        self.frames = 0
        """Frames taken (opening counts as one); the node publishes when it grows."""

    def start(self) -> None:
        """Start the reading thread."""
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and close the device."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def snapshot(self) -> tuple[tuple[float, ...], tuple[int, ...], int] | None:
        """(axes, buttons, frame number) of the last complete frame; None while no device is open."""
        with self._lock:
            if self._state is None:
                return None
            axes, buttons = self._state.joy()
            return axes, buttons, self.frames

    def _run(self) -> None:
        outage_logged = False
        while not self._stop.is_set():
            try:
                device = self._opener()
            except OSError as exc:
                if not outage_logged:
                    self._log("warn", f"no gamepad: {exc}; retrying every {self._retry:g} s")
                    outage_logged = True
                self._stop.wait(self._retry)
                continue
            outage_logged = False
            try:
                self._serve(device)
            except OSError as exc:
                self._log("warn", f"gamepad {device.path} lost ({exc}); retrying every {self._retry:g} s")
                outage_logged = True
            except Exception as exc:  # a driver quirk must not kill the thread and leave the node mute
                self._log("warn", f"gamepad {device.path}: unexpected {exc!r}; reopening")
                self._stop.wait(self._retry)
            finally:
                with self._lock:
                    self._state = None
                try:
                    device.close()
                except OSError:
                    pass
                self._on_change()

    def _serve(self, device: Device) -> None:
        ranges, keys, values, pressed = device_state(device)
        state = JoyState(JoyLayout.from_capabilities(ranges, keys), self._deadzone)
        state.reset(values, pressed)
        layout = state.layout
        self._log("info", f"gamepad {device.path} ({device.name!r}) open: {layout.num_axes} axes, "
                          f"{len(layout.button_codes)} buttons")
        with self._lock:
            self._state = state
            self.frames += 1
        self._on_change()
        while not self._stop.is_set():
            ready, _, _ = select.select([device.fileno()], [], [], POLL_S)
            if not ready:
                continue
            try:
                events = list(device.read())
            except BlockingIOError:
                continue
            changed = False
            with self._lock:
                for event in events:
                    frame = state.apply(event.type, event.code, event.value)
                    if frame is Frame.RESYNC:
                        _, _, values, pressed = device_state(device)
                        state.reset(values, pressed)
                        frame = Frame.CHANGED
                    if frame is Frame.CHANGED:
                        self.frames += 1
                        changed = True
            if changed:
                self._on_change()
