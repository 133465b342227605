"""The operator view's panel (viser GUI), one per browser tab. No rclpy.

Each connected client gets its own panel (`Panel`), so a token typed in one tab is never shown in
another and each tab's buttons are enabled for that tab alone. The node's frame timer calls
`Panel.show(view)` with one `PanelView` for everyone (plus the tab's own authorisation); a widget is
written only when its value changed. Clicks go to the node's `on_control(client_id, control, arg)`,
which queues them (it never acts from viser's thread).

The "manual_place" checkbox is the one widget the browser changes by itself (a click ticks it before
the server has the value). It is compared with viser's copy of the tab's value, not with what the panel
last wrote: a tab left showing its own click when the parameter went elsewhere (a refused click, or a
click and a change from outside both between two frames) is set back to the parameter. For
`CLICK_GRACE_S` after the tab's own click it is left alone while the parameter has not followed yet, so
the box does not flicker back while the set travels (docs/design/operator_view.md). A click counts from
the moment viser's copy differs from what the panel last wrote, not only from its callback: viser
updates its copy first and runs the callback on a thread of its own, and a frame in between that wrote
the parameter's value over the click made the callback read and send that value instead.

Widgets (their labels are what the browser tests click): "start run", "cancel run", the checkbox
"manual_place", the nudge buttons "+x" "-x" "+y" "-y", "confirm", "abort", "new box" (a new box is in:
the behaviour server forgets its box estimate); with a token: the text
field "access token" and "unlock". The nudges also have keys (viser's command hotkeys, `NUDGE_KEYS`:
I/K = +x/-x, J/L = +y/-y, not the camera's WASDQE and arrows; ignored while typing in a field), sent
as "nudge_key" (`controls.NudgeTrain.hold`: a held key jogs while held).

In the DOM (viser 1.1.1, Mantine): a button is a <button> whose text is its label; an input's label is
a <label for=...> (split by <wbr> after "_"), whose `for` is the checkbox's id but not the text field's
(find that one as the <input> in the label's row).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from salamander_view.controls import AXES
from salamander_view.gauges import Gauge

LEVEL_COLOURS = {"ok": "blue", "near": "orange", "over": "red"}
NUDGE_KEYS = {"+x": "I", "-x": "K", "+y": "J", "-y": "L"}
"""The nudge hotkeys (an inverted T on the right hand, clear of viser's camera keys)."""
CLICK_GRACE_S = 3.0
"""s after a tab's own click on "manual_place" in which the checkbox waits for the parameter to follow."""


@dataclass(frozen=True)
class PanelView:
    """Everything the panel shows, computed once per frame by the node."""

    status_md: str = ""
    gauges: tuple[Gauge, ...] = ()
    reasons: dict[str, str] = field(default_factory=dict)  # control -> "" or why it is disabled
    manual_place: bool | None = None


def status_markdown(rows: list[tuple[str, str]]) -> str:
    """A two-column markdown table of (what, value)."""
    lines = ["| | |", "|---|---|"]
    lines += [f"| {what} | {value} |" for what, value in rows]
    return "\n".join(lines)


def gauge_text(g: Gauge) -> str:
    """One gauge's line: value, range and margin in degrees."""
    deg = math.degrees
    return (
        f"**{g.label}** {deg(g.value):+.1f}° in [{deg(g.lo):+.1f}, {deg(g.hi):+.1f}], "
        f"margin {deg(g.margin):.1f}°"
    )


class Panel:
    """One client's panel (see the module docstring)."""

    def __init__(self, client: Any, on_control: Callable[[int, str, object], None], token_needed: bool,
                 address: str, clock: Callable[[], float] = time.monotonic) -> None:
        gui = client.gui
        cid = client.client_id
        self.client_id = cid
        self._shown: dict[str, object] = {}
        self._clock = clock
        self._clicked: tuple[bool, float] | None = None  # the tab's last manual_place click and when
        self._written = False  # the checkbox's value as the panel last wrote it (its initial value)

        def on_manual(event: Any) -> None:
            # Only the tab's own clicks (client_id set): not our own writes of the parameter's value,
            # which would send the value back to the server (and, without a token, log a refusal).
            if event.client_id is not None:
                self._clicked = (bool(self.manual.value), clock())
                on_control(cid, "manual_place", self.manual.value)
        gui.configure_theme(control_width="large", show_share_button=False)
        gui.add_markdown(f"**Salamander operator view** · {address}")
        self.token = self.unlock = None
        if token_needed:
            with gui.add_folder("Access"):
                self.token = gui.add_text("access token", initial_value="")
                self.unlock = gui.add_button("unlock")
                self.unlock.on_click(lambda _e: on_control(cid, "token", self.token.value))
        with gui.add_folder("Run"):
            self.start = gui.add_button("start run")
            self.cancel = gui.add_button("cancel run")
            self.manual = gui.add_checkbox("manual_place", initial_value=False)
            self.start.on_click(lambda _e: on_control(cid, "start_run", None))
            self.cancel.on_click(lambda _e: on_control(cid, "cancel_run", None))
            self.manual.on_update(on_manual)
        with gui.add_folder("Place by hand (ManualAdjust)"):
            self.nudges = {}
            for direction in AXES:
                button = gui.add_button(direction)
                button.on_click(lambda _e, d=direction: on_control(cid, "nudge", d))
                self.nudges[direction] = button
            self.keys = {}
            for direction, key in NUDGE_KEYS.items():
                command = gui.add_command(
                    f"nudge {direction}", hotkey=key, description=f"key {key}: jog the placement {direction}"
                )
                command.on_trigger(lambda _e, d=direction: on_control(cid, "nudge_key", d))
                self.keys[direction] = command
            self.confirm = gui.add_button("confirm")
            self.abort = gui.add_button("abort")
            self.confirm.on_click(lambda _e: on_control(cid, "confirm", True))
            self.abort.on_click(lambda _e: on_control(cid, "confirm", False))
        with gui.add_folder("Box"):
            self.new_box = gui.add_button("new box")
            self.new_box.on_click(lambda _e: on_control(cid, "new_box", None))
        self.reasons = gui.add_markdown("")
        with gui.add_folder("Status"):
            self.status = gui.add_markdown("")
        with gui.add_folder("Limits"):
            self.gauge_md: list[Any] = []
            self.gauge_bars: list[Any] = []
            for _ in range(7):
                self.gauge_md.append(gui.add_markdown(""))
                self.gauge_bars.append(gui.add_progress_bar(50.0, color="blue"))

    def _set(self, key: str, handle: Any, attr: str, value: object) -> None:
        if self._shown.get(key) != value:
            self._shown[key] = value
            setattr(handle, attr, value)

    def _show_manual(self, value: bool | None) -> None:
        """The checkbox at the parameter's `value` (None: not known yet), but see CLICK_GRACE_S."""
        if value is None:
            return
        now, tab = self._clock(), bool(self.manual.value)
        if tab != self._written and (self._clicked is None or self._clicked[0] != tab):
            # The tab changed it and its callback has not run yet (viser runs it on a thread of its own):
            # a click all the same. Written over now, the callback would read this write and send it.
            self._clicked = (tab, now)
        clicked = self._clicked
        if clicked is not None:
            if value != clicked[0] and now - clicked[1] < CLICK_GRACE_S:
                return
            self._clicked = None
        self.manual.value = value  # viser sends it only if the tab's value differs
        self._written = value

    def show(self, view: PanelView) -> None:
        """Bring the widgets up to `view` (only what changed is sent)."""
        r = view.reasons
        self._set("start", self.start, "disabled", bool(r.get("start_run")))
        self._set("cancel", self.cancel, "disabled", bool(r.get("cancel_run")))
        self._set("manual_dis", self.manual, "disabled", bool(r.get("manual_place")))
        self._show_manual(view.manual_place)
        for direction, button in self.nudges.items():
            self._set(f"nudge{direction}", button, "disabled", bool(r.get("nudge")))
            self._set(f"key{direction}", self.keys[direction], "disabled", bool(r.get("nudge")))
        self._set("confirm", self.confirm, "disabled", bool(r.get("confirm")))
        self._set("abort", self.abort, "disabled", bool(r.get("abort")))
        self._set("new_box", self.new_box, "disabled", bool(r.get("new_box")))
        label = {"start_run": "start run", "cancel_run": "cancel run", "manual_place": "manual_place",
                 "nudge": "nudge", "confirm": "confirm", "abort": "abort", "new_box": "new box"}  # fmt: skip
        why = [f"- {label[c]}: {reason}" for c, reason in r.items() if reason and c in label]
        self._set("reasons", self.reasons, "content", "\n".join(why) or "every control applies now")
        self._set("status", self.status, "content", view.status_md)
        for i, (md, bar) in enumerate(zip(self.gauge_md, self.gauge_bars, strict=True)):
            if i >= len(view.gauges):
                continue
            g = view.gauges[i]
            self._set(f"g{i}", md, "content", gauge_text(g))
            self._set(f"b{i}", bar, "value", round(100.0 * g.fraction, 1))
            self._set(f"c{i}", bar, "color", LEVEL_COLOURS[g.level])
