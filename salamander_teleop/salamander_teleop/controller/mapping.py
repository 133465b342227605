"""Which gamepad control does what: the teleop's validated, frozen binding table (pure, no rclpy).

Indices refer to `sensor_msgs/Joy` as `joy_node` publishes it, so the same table works behind
`joy_node`, `joy_linux_node` and this package's `gamepad_node`. The defaults are for a Sony DualShock 4
under the Linux joystick driver (hid-sony since kernel 4.10, hid-playstation since 6.2), as joy_node
(SDL2 joystick API) and joy_linux_node (/dev/input/js*) both number it:

    buttons                                 axes (joy_node signs: left/up/released = +1)
    0 CROSS     7 R2 (digital)              0 left stick X  (+1 = left)
    1 CIRCLE    8 SHARE                     1 left stick Y  (+1 = up)
    2 TRIANGLE  9 OPTIONS                   2 L2 trigger    (+1 released, -1 fully pressed)
    3 SQUARE   10 PS                        3 right stick X (+1 = left)
    4 L1       11 L3 (left stick click)     4 right stick Y (+1 = up)
    5 R1       12 R3 (right stick click)    5 R2 trigger    (+1 released, -1 fully pressed)
    6 L2 (digital)                          6 DPAD X (hat)  (+1 = left, -1 = right)
                                            7 DPAD Y (hat)  (+1 = up, -1 = down)

Other setups number differently (the `ds4drv` user-space driver and pre-4.10 kernels put SQUARE at 0;
joy's `game_controller_node` uses the SDL game-controller layout with the DPAD as buttons 11-14): set the
indices in config/teleop.yaml. A button-like control is therefore either a button or one direction of an
axis (the DPAD is a hat axis here), written as a string: "button 3", "axis 7-", "axis 7+" or "none".

The triggers are left unbound by default: joy_linux_node reports 0 for them until they first move, so
"released" is ambiguous until then.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from salamander_control.kinematics import JOINT_NAMES, NUM_JOINTS

AXIS_PRESS_THRESHOLD = 0.5
"""An axis-direction control counts as pressed beyond this deflection (a hat reads exactly +-1)."""
MAX_INDEX = 63
"""Largest button or axis index accepted (a Joy message with more is not a gamepad)."""
MAX_PLACE_SPEED = 0.05
"""Pinned cap of the operator's placement jog, m/s (docs/interfaces.md: at most 50 mm/s)."""
MAX_JOINT_SPEED = 2.0
"""Largest joint jog speed accepted, rad/s at full deflection."""

RANGES: dict[str, tuple[float, float]] = {
    "deadzone": (0.0, 0.9),
    "joy_timeout_s": (0.02, 0.5),  # the dead-pad watchdog: a jog (or a held place jog) stops this soon
    "joint_state_timeout_s": (0.02, 10.0),
    "target_rate_hz": (1.0, 500.0),
    "joy_rate_limit_hz": (1.0, 1000.0),
    "max_lead": (0.001, 0.3),  # how far the arm may still travel once the stick is let go
    "jog_resume_window_s": (0.0, 10.0),
    "place_jog.speed": (0.0, MAX_PLACE_SPEED),
    "place_jog.axis_x": (-1, MAX_INDEX),
    "place_jog.axis_y": (-1, MAX_INDEX),
    **{f"joint_jog.{name}.axis": (-1, MAX_INDEX) for name in JOINT_NAMES},
    **{f"joint_jog.{name}.speed": (-MAX_JOINT_SPEED, MAX_JOINT_SPEED) for name in JOINT_NAMES},
}
"""Each numeric parameter's range, by parameter name: `JoyMapping` refuses values outside it, and the
node's parameter descriptors (controller/params.py) declare it."""

_CONTROL_RE = re.compile(
    r"^\s*(?:(?P<none>none)|button\s*(?P<button>\d+)|axis\s*(?P<axis>\d+)\s*(?P<dir>[+-]))\s*$"
)


@dataclass(frozen=True)
class Control:
    """A button-like control: a button, one direction of an axis (a DPAD hat), or nothing.

    Attributes:
        kind: "button", "axis" or "none".
        index: button or axis index (-1 for "none").
        direction: +1 or -1 for an axis control, 0 otherwise.
    """

    kind: str = "none"
    index: int = -1
    direction: int = 0

    @staticmethod
    def parse(text: str) -> Control:
        """Read "button N", "axis N+", "axis N-" or "none" (case-insensitive).

        Raises:
            ValueError: anything else, or an index above MAX_INDEX.
        """
        match = _CONTROL_RE.match(str(text).lower())
        if match is None:
            raise ValueError(f"{text!r} is not a control: write 'button N', 'axis N+', 'axis N-' or 'none'")
        if match["none"]:
            return Control()
        kind, index = ("button", match["button"]) if match["button"] is not None else ("axis", match["axis"])
        if int(index) > MAX_INDEX:
            raise ValueError(f"{text!r}: index above {MAX_INDEX}")
        direction = 0 if kind == "button" else (1 if match["dir"] == "+" else -1)
        return Control(kind, int(index), direction)

    def __str__(self) -> str:
        """The string form `parse` reads (what the parameter holds)."""
        if self.kind == "button":
            return f"button {self.index}"
        if self.kind == "axis":
            return f"axis {self.index}{'+' if self.direction > 0 else '-'}"
        return "none"

    def pressed(self, axes: Sequence[float], buttons: Sequence[int]) -> bool:
        """Whether the control is held in this Joy sample (arrays long enough: see `JoyMapping.needs`)."""
        if self.kind == "button":
            return buttons[self.index] != 0
        if self.kind == "axis":
            return axes[self.index] * self.direction >= AXIS_PRESS_THRESHOLD
        return False


def _control(text: str) -> Control:
    return Control.parse(text)


@dataclass(frozen=True)
class JoyMapping:
    """Bindings, rates and timeouts of the controller; construction validates everything.

    Attributes:
        auto_mode: switches to auto mode (the behaviour tree drives the arm). Spec: DPAD_DOWN.
        manual_mode: switches back to manual joint jog. Project choice: DPAD_UP.
        confirm: publishes operator/confirm = true, once per press. Spec: SQUARE.
        abort: publishes operator/confirm = false (abort the manual placement), once per press. CIRCLE.
        rest_preset: in manual mode, sends the rest posture as the joint target. TRIANGLE.
        run_start: in auto mode, starts a pick-and-place run of every can not yet placed (a
            RunPickPlace goal to the behaviour server). OPTIONS.
        run_cancel: cancels the running pick-and-place run (in either mode: a stop is always at hand).
            SHARE.
        new_box: tells the behaviour server a new box is in (its box estimate is forgotten), once per
            press, in either mode. L1 (a shoulder button no other binding uses, away from the sticks).
        place_jog_enable: the deadman of the `place_jog` binding in auto mode. Spec: R1.
        place_jog_axis_x, place_jog_axis_y: stick axes for base_link +x / +y (left stick up / left).
        place_jog_invert_x, place_jog_invert_y: flip a direction (an operator facing the arm).
        place_jog_speed: m/s at full deflection (the twist's norm never exceeds it).
        joint_axes: per joint (motor order), the axis that jogs it in manual mode (-1 = none).
        joint_speeds: per joint, rad/s at full deflection; the sign sets the direction.
        deadzone: stick deflection ignored around centre (the rest is rescaled to start at 0).
        joy_timeout_s: a Joy whose stamp is older than this is refused, s; the jog stops when the newest
            accepted Joy gets this old (a dead stream never leaves a twist or a jog running).
        joint_state_timeout_s: joint jog needs a /joint_states message at most this old, s.
        target_rate_hz: while jogging, a target or twist at least this often, Hz (the timer's rate).
        joy_rate_limit_hz: outputs per second driven directly by Joy messages, on average, Hz (short
            bursts allowed, so a backlog after a stall still gets its newest Joy answered).
        max_lead: the jogged target never leads the measured joints by more than this, rad.
        jog_resume_window_s: a jog restarted within this time continues from the last target, s;
            later ones start from the measured joints (the arm may have moved since).
    """

    auto_mode: Control = Control("axis", 7, -1)
    manual_mode: Control = Control("axis", 7, 1)
    confirm: Control = Control("button", 3)
    abort: Control = Control("button", 1)
    rest_preset: Control = Control("button", 2)
    run_start: Control = Control("button", 9)
    run_cancel: Control = Control("button", 8)
    new_box: Control = Control("button", 4)
    place_jog_enable: Control = Control("button", 5)
    place_jog_axis_x: int = 1
    place_jog_axis_y: int = 0
    place_jog_invert_x: bool = False
    place_jog_invert_y: bool = False
    place_jog_speed: float = 0.05
    joint_axes: tuple[int, ...] = (0, 1, 4, 6, 3)
    joint_speeds: tuple[float, ...] = (0.5, 0.3, -0.3, 0.5, 0.8)
    deadzone: float = 0.1
    joy_timeout_s: float = 0.2
    joint_state_timeout_s: float = 0.5
    target_rate_hz: float = 50.0
    joy_rate_limit_hz: float = 100.0
    max_lead: float = 0.15
    jog_resume_window_s: float = 0.5

    def __post_init__(self) -> None:
        """Reject out-of-range numbers and bindings that would make one input do two things."""
        object.__setattr__(self, "joint_axes", tuple(int(a) for a in self.joint_axes))
        object.__setattr__(self, "joint_speeds", tuple(float(r) for r in self.joint_speeds))
        if len(self.joint_axes) != NUM_JOINTS or len(self.joint_speeds) != NUM_JOINTS:
            raise ValueError(f"joint_axes and joint_speeds need {NUM_JOINTS} entries (one per joint)")
        plain = ("deadzone", "joy_timeout_s", "joint_state_timeout_s", "target_rate_hz", "joy_rate_limit_hz",
                 "max_lead", "jog_resume_window_s")
        numbers = [(name, getattr(self, name)) for name in plain]
        numbers.append(("place_jog.speed", self.place_jog_speed))
        numbers += [(f"joint_jog.{n}.speed", s) for n, s in zip(JOINT_NAMES, self.joint_speeds, strict=True)]
        for name, value in numbers:
            _in_range(name, value, *RANGES[name])
        for name, axis in (*self._joint_axis_names(), ("place_jog.axis_x", self.place_jog_axis_x),
                           ("place_jog.axis_y", self.place_jog_axis_y)):
            if not RANGES[name][0] <= axis <= RANGES[name][1]:
                raise ValueError(f"{name} must be -1 (none) or an axis index in [0, {MAX_INDEX}], got {axis}")
        self._check_conflicts()

    def _joint_axis_names(self) -> list[tuple[str, int]]:
        return [(f"joint_jog.{n}.axis", a) for n, a in zip(JOINT_NAMES, self.joint_axes, strict=True)]

    def controls(self) -> dict[str, Control]:
        """The button-like controls by parameter name."""
        return {
            "auto_mode": self.auto_mode,
            "manual_mode": self.manual_mode,
            "confirm": self.confirm,
            "abort": self.abort,
            "rest_preset": self.rest_preset,
            "run_start": self.run_start,
            "run_cancel": self.run_cancel,
            "new_box": self.new_box,
            "place_jog.enable": self.place_jog_enable,
        }

    def _check_conflicts(self) -> None:
        joint = [(n, a) for n, a in self._joint_axis_names() if a >= 0]
        place = [(n, a) for n, a in (("place_jog.axis_x", self.place_jog_axis_x),
                                     ("place_jog.axis_y", self.place_jog_axis_y)) if a >= 0]
        for group in (joint, place):
            seen: dict[int, str] = {}
            for name, axis in group:
                if axis in seen:
                    raise ValueError(f"{name} and {seen[axis]} both use axis {axis}")
                seen[axis] = name
        stick_axes = {a: n for n, a in joint + place}
        used: dict[tuple[str, int, int], str] = {}
        for name, control in self.controls().items():
            if control.kind == "none":
                continue
            if control.kind == "axis" and control.index in stick_axes:
                raise ValueError(f"{name} ({control}) uses axis {control.index}, which "
                                 f"{stick_axes[control.index]} also jogs: one input would do two things")
            key = (control.kind, control.index, control.direction)
            if key in used:
                raise ValueError(f"{name} and {used[key]} are both bound to {control}")
            used[key] = name

    def needs(self) -> tuple[int, int]:
        """(axes, buttons) a Joy message must have at least for every binding to be readable."""
        axes = [*self.joint_axes, self.place_jog_axis_x, self.place_jog_axis_y]
        buttons: list[int] = []
        for control in self.controls().values():
            if control.kind == "axis":
                axes.append(control.index)
            elif control.kind == "button":
                buttons.append(control.index)
        return max([-1, *axes]) + 1, max([-1, *buttons]) + 1

    # Parameters: one flat name per field, as in config/teleop.yaml.
    def to_params(self) -> dict[str, Any]:
        """The parameter values that describe this mapping (the node's declared defaults)."""
        out: dict[str, Any] = {name: str(c) for name, c in self.controls().items()}
        out.update({
            "place_jog.axis_x": self.place_jog_axis_x,
            "place_jog.axis_y": self.place_jog_axis_y,
            "place_jog.invert_x": self.place_jog_invert_x,
            "place_jog.invert_y": self.place_jog_invert_y,
            "place_jog.speed": self.place_jog_speed,
        })
        for name, axis, speed in zip(JOINT_NAMES, self.joint_axes, self.joint_speeds, strict=True):
            out[f"joint_jog.{name}.axis"] = axis
            out[f"joint_jog.{name}.speed"] = speed
        for f in fields(self):
            if f.name in _PLAIN:
                out[f.name] = getattr(self, f.name)
        return out

    @staticmethod
    def from_params(values: Mapping[str, Any]) -> JoyMapping:
        """Build from parameter values (extra keys ignored, missing ones default).

        Raises:
            ValueError: a control string that does not parse, or any check of the constructor.
        """
        base = JoyMapping().to_params()
        v = {**base, **{k: values[k] for k in base if k in values}}
        return JoyMapping(
            auto_mode=_control(v["auto_mode"]),
            manual_mode=_control(v["manual_mode"]),
            confirm=_control(v["confirm"]),
            abort=_control(v["abort"]),
            rest_preset=_control(v["rest_preset"]),
            run_start=_control(v["run_start"]),
            run_cancel=_control(v["run_cancel"]),
            new_box=_control(v["new_box"]),
            place_jog_enable=_control(v["place_jog.enable"]),
            place_jog_axis_x=int(v["place_jog.axis_x"]),
            place_jog_axis_y=int(v["place_jog.axis_y"]),
            place_jog_invert_x=bool(v["place_jog.invert_x"]),
            place_jog_invert_y=bool(v["place_jog.invert_y"]),
            place_jog_speed=float(v["place_jog.speed"]),
            joint_axes=tuple(int(v[f"joint_jog.{n}.axis"]) for n in JOINT_NAMES),
            joint_speeds=tuple(float(v[f"joint_jog.{n}.speed"]) for n in JOINT_NAMES),
            **{name: float(v[name]) for name in _PLAIN},
        )


_PLAIN = ("deadzone", "joy_timeout_s", "joint_state_timeout_s", "target_rate_hz", "joy_rate_limit_hz",
          "max_lead", "jog_resume_window_s")


def _in_range(name: str, value: float, lo: float, hi: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must lie in [{lo}, {hi}], got {value}")


def apply_deadzone(value: float, deadzone: float) -> float:
    """Stick value with the centre `deadzone` removed and the rest rescaled to [-1, 1].

    Rescaling (as joy_node does) keeps the response continuous: just past the deadzone is a crawl, not a
    jump to `deadzone` times full speed. Input beyond +-1 is clipped.
    """
    magnitude = min(abs(value), 1.0)
    if magnitude <= deadzone:
        return 0.0
    return math.copysign((magnitude - deadzone) / (1.0 - deadzone), value)
