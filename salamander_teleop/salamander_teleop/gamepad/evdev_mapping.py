"""Linux input events (evdev) to `sensor_msgs/Joy` axes and buttons, laid out as joy_node lays them out.

Pure (no evdev, no rclpy): events are (type, code, value) tuples and a device is described by its
absolute axes' ranges and its key codes, so recorded or synthetic events test it without a device.

The layout follows ROS 2 `joy_node` (SDL2's joystick API on Linux), which `joy_linux_node` matches for
ordinary gamepads:

* axes: every absolute axis except the hats, in ascending event-code order, then two axes per hat
  (X, Y) in hat order. Values are normalised to [-1, 1] over the axis' [min, max] and negated, so stick
  left and stick up read +1 and a trigger reads +1 released, -1 fully pressed; a hat reads +1 for left
  and for up. A deadzone around centre is removed and the rest rescaled, as joy_node does.
* buttons: key codes from BTN_JOYSTICK (0x120) upwards in ascending order, then BTN_MISC..0x11f, 1 while
  pressed (the kernel's autorepeat value 2 counts as pressed).

For a DualShock 4 under hid-sony/hid-playstation this gives the table in mapping.py (8 axes, 13 buttons).
Events arrive in frames closed by SYN_REPORT; a frame is applied as a whole. After SYN_DROPPED the
kernel's buffer overflowed: the events up to the next SYN_REPORT are discarded and the caller must
re-read the device's full state (`Frame.RESYNC`), as the evdev documentation prescribes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from salamander_teleop.controller.mapping import apply_deadzone

# Kernel ABI constants (linux/input-event-codes.h); stable, so no evdev import is needed here.
EV_SYN, EV_KEY, EV_ABS = 0x00, 0x01, 0x03
SYN_REPORT, SYN_DROPPED = 0, 3
ABS_X, ABS_Y = 0x00, 0x01
ABS_HAT0X, ABS_HAT3Y = 0x10, 0x17
BTN_MISC, BTN_JOYSTICK, BTN_GAMEPAD_LAST = 0x100, 0x120, 0x13E
KEY_MAX = 0x2FF


@dataclass(frozen=True)
class AbsRange:
    """The [minimum, maximum] of an absolute axis (evdev's AbsInfo min/max)."""

    minimum: int
    maximum: int


def is_gamepad(abs_codes: Iterable[int], key_codes: Iterable[int]) -> bool:
    """Whether a device looks like a gamepad or joystick: X/Y axes and a joystick or gamepad button.

    Screens out the DualShock's motion-sensor device (axes, no buttons) and its touchpad (X/Y with
    BTN_TOUCH/BTN_LEFT, which are outside the joystick and gamepad button ranges).
    """
    abs_set = set(abs_codes)
    has_button = any(BTN_JOYSTICK <= k <= BTN_GAMEPAD_LAST for k in key_codes)
    return ABS_X in abs_set and ABS_Y in abs_set and has_button


@dataclass(frozen=True)
class JoyLayout:
    """Where each event code lands in the Joy arrays.

    Attributes:
        axis_codes: absolute axes other than hats, ascending.
        hats: hat numbers present (0..3), ascending; hat h gives axes ``len(axis_codes) + 2*h'`` (X)
            and that plus one (Y), h' being its position in this tuple.
        button_codes: key codes in Joy button order.
        ranges: (code, AbsRange) of every absolute axis used.
    """

    axis_codes: tuple[int, ...]
    hats: tuple[int, ...]
    button_codes: tuple[int, ...]
    ranges: tuple[tuple[int, AbsRange], ...]

    @staticmethod
    def from_capabilities(abs_ranges: Mapping[int, AbsRange], key_codes: Iterable[int]) -> JoyLayout:
        """Layout of a device with these absolute axes and keys (as evdev's capabilities list them)."""
        plain = tuple(sorted(c for c in abs_ranges if not ABS_HAT0X <= c <= ABS_HAT3Y))
        hats = tuple(sorted({(c - ABS_HAT0X) // 2 for c in abs_ranges if ABS_HAT0X <= c <= ABS_HAT3Y}))
        keys = set(key_codes)
        buttons = tuple(sorted(k for k in keys if BTN_JOYSTICK <= k <= KEY_MAX)) + tuple(
            sorted(k for k in keys if BTN_MISC <= k < BTN_JOYSTICK)
        )
        return JoyLayout(plain, hats, buttons, tuple(sorted(abs_ranges.items())))

    @property
    def num_axes(self) -> int:
        """Length of Joy.axes."""
        return len(self.axis_codes) + 2 * len(self.hats)

    def axis_index(self) -> dict[int, int]:
        """Event code -> Joy axis index (hat X and Y codes included)."""
        index = {code: i for i, code in enumerate(self.axis_codes)}
        for position, hat in enumerate(self.hats):
            base = len(self.axis_codes) + 2 * position
            index[ABS_HAT0X + 2 * hat] = base
            index[ABS_HAT0X + 2 * hat + 1] = base + 1
        return index


def normalise_axis(value: int, limits: AbsRange) -> float:
    """An absolute axis value in joy_node's convention: [min, max] -> [+1, -1] (so left/up are +1)."""
    span = limits.maximum - limits.minimum
    if span <= 0:
        return 0.0
    scaled = 2.0 * (value - limits.minimum) / span - 1.0
    return -min(max(scaled, -1.0), 1.0)


def hat_axis(value: int) -> float:
    """A hat value in joy_node's convention: left (-1) and up (-1) read +1."""
    return -1.0 if value > 0 else (1.0 if value < 0 else 0.0)


class Frame(Enum):
    """What an event means for the caller."""

    NONE = "none"  # nothing to publish yet
    CHANGED = "changed"  # a frame closed with a change: publish now
    RESYNC = "resync"  # events were dropped: re-read the device state and call `reset`


class JoyState:
    """Joy axes and buttons of one device, updated event by event, published frame by frame.

    Args:
        layout: the device's layout.
        deadzone: joy_node's deadzone, fraction of full scale (hats are unaffected).
    """

    def __init__(self, layout: JoyLayout, deadzone: float = 0.05) -> None:
        if not 0.0 <= deadzone < 1.0:
            raise ValueError(f"deadzone must lie in [0, 1), got {deadzone}")
        self._layout = layout
        self._deadzone = deadzone
        self._ranges = dict(layout.ranges)
        self._axis_of = layout.axis_index()
        self._button_of = {code: i for i, code in enumerate(layout.button_codes)}
        self._axes = [0.0] * layout.num_axes
        self._buttons = [0] * len(layout.button_codes)
        self._published = (tuple(self._axes), tuple(self._buttons))
        self._dirty = False
        self._dropping = False

    @property
    def layout(self) -> JoyLayout:
        """The device layout."""
        return self._layout

    def joy(self) -> tuple[tuple[float, ...], tuple[int, ...]]:
        """Axes and buttons as of the last complete frame."""
        return self._published

    def reset(self, abs_values: Mapping[int, int], pressed: Iterable[int]) -> None:
        """Take the device's full state (on open, and after SYN_DROPPED); publishes it as a frame."""
        for code in self._axis_of:
            self._set_abs(code, abs_values.get(code, self._centre(code)))
        down = set(pressed)
        self._buttons = [1 if code in down else 0 for code in self._layout.button_codes]
        self._dropping = False
        self._dirty = False
        self._published = (tuple(self._axes), tuple(self._buttons))

    def apply(self, ev_type: int, code: int, value: int) -> Frame:
        """Apply one event; CHANGED when it closes a frame that changed something."""
        if ev_type == EV_SYN:
            if code == SYN_DROPPED:
                self._dropping = True
                return Frame.NONE
            if code != SYN_REPORT:
                return Frame.NONE
            if self._dropping:
                return Frame.RESYNC
            if not self._dirty:
                return Frame.NONE
            self._dirty = False
            snapshot = (tuple(self._axes), tuple(self._buttons))
            changed = snapshot != self._published
            self._published = snapshot
            return Frame.CHANGED if changed else Frame.NONE
        if self._dropping:
            return Frame.NONE
        if ev_type == EV_ABS and code in self._axis_of:
            self._set_abs(code, value)
            self._dirty = True
        elif ev_type == EV_KEY and code in self._button_of:
            self._buttons[self._button_of[code]] = 1 if value else 0
            self._dirty = True
        return Frame.NONE

    def _centre(self, code: int) -> int:
        limits = self._ranges.get(code)
        return 0 if limits is None else (limits.minimum + limits.maximum) // 2

    def _set_abs(self, code: int, value: int) -> None:
        index = self._axis_of[code]
        if ABS_HAT0X <= code <= ABS_HAT3Y:
            self._axes[index] = hat_axis(value)
        else:
            raw = normalise_axis(value, self._ranges[code])
            self._axes[index] = apply_deadzone(raw, self._deadzone)
