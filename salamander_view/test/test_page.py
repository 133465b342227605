"""page.Panel's "manual_place" checkbox against the parameter, over a stand-in for viser's GUI API.

The stand-in keeps viser 1.1.1's rules that matter here: a handle holds the tab's value (a click
changes it before the server knows), a server write is sent only if it differs from that value, and
every change runs the update callbacks (with the clicking client's id, or None for a server write).
"""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import pytest

from salamander_view.page import CLICK_GRACE_S, Panel, PanelView


class Handle:
    """One widget: its value as viser's server copy holds it, and what was sent to the tab."""

    def __init__(self, value: Any = None) -> None:
        self._value = value
        self.sent: list[Any] = []
        self._callbacks: list[Any] = []
        self.disabled = False
        self.content = ""
        self.color = ""

    @property
    def value(self) -> Any:
        return self._value

    @value.setter
    def value(self, value: Any) -> None:  # a server write
        if value == self._value:
            return
        self.sent.append(value)
        self._value = value
        for cb in self._callbacks:
            cb(SimpleNamespace(client_id=None))

    def click(self, value: Any, client_id: int) -> None:
        """The tab's own change: the browser already shows it; viser's copy follows, then callbacks."""
        self.click_arrives(value)
        self.run_callbacks(client_id)

    def click_arrives(self, value: Any) -> None:
        """The first half of a click: viser's copy takes the tab's value (its callbacks run later)."""
        self._value = value

    def run_callbacks(self, client_id: int) -> None:
        """The second half: viser's thread runs the update callbacks, which read the copy."""
        for cb in self._callbacks:
            cb(SimpleNamespace(client_id=client_id))

    def on_update(self, cb: Any) -> None:
        self._callbacks.append(cb)

    on_click = on_trigger = on_update


class Gui:
    def __init__(self) -> None:
        self.checkboxes: dict[str, Handle] = {}

    def add_checkbox(self, label: str, initial_value: bool) -> Handle:
        self.checkboxes[label] = Handle(initial_value)
        return self.checkboxes[label]

    def add_folder(self, _label: str) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def configure_theme(self, **_kwargs: Any) -> None:
        pass

    def __getattr__(self, _name: str) -> Any:  # add_markdown, add_button, add_progress_bar, ...
        return lambda *_a, **_k: Handle()


class Tab:
    """One browser tab's panel with a hand-driven clock; `controls` gets what it sends."""

    def __init__(self, client_id: int = 1) -> None:
        self.now = 100.0
        self.controls: list[tuple[int, str, object]] = []
        self.gui = Gui()
        client = SimpleNamespace(gui=self.gui, client_id=client_id)
        self.panel = Panel(client, lambda *c: self.controls.append(c), False, "test", clock=lambda: self.now)
        self.box = self.gui.checkboxes["manual_place"]
        self.client_id = client_id

    def frame(self, param: bool | None) -> None:
        self.panel.show(PanelView(manual_place=param))


@pytest.fixture
def tab() -> Tab:
    t = Tab()
    t.frame(False)
    return t


def test_the_checkbox_follows_the_parameter_and_a_server_write_is_no_click(tab):
    tab.frame(True)
    assert tab.box.value is True and tab.box.sent == [True]
    tab.frame(True)
    tab.frame(False)
    assert tab.box.sent == [True, False]
    assert tab.controls == []  # the page's own writes never go back to the server


def test_a_click_is_sent_and_not_undone_while_the_parameter_has_not_followed_yet(tab):
    tab.box.click(True, tab.client_id)
    assert tab.controls == [(1, "manual_place", True)]
    for _ in range(5):  # frames while the set travels: the tab keeps its tick
        tab.now += 0.1
        tab.frame(False)
    assert tab.box.sent == [] and tab.box.value is True
    tab.frame(True)  # the parameter followed
    assert tab.box.sent == [] and tab.box.value is True


def test_a_click_the_parameter_never_follows_is_undone_after_the_grace(tab):
    # A click the node refused (no token, no parameter service): the tab must not go on showing it.
    tab.box.click(True, tab.client_id)
    tab.now += CLICK_GRACE_S - 0.01
    tab.frame(False)
    assert tab.box.sent == []
    tab.now += 0.02
    tab.frame(False)
    assert tab.box.sent == [False] and tab.box.value is False


def test_a_click_and_a_change_from_elsewhere_between_two_frames_end_at_the_parameter(tab):
    # The browser test's flake: the tab clicked True; the parameter went True and back to False (from
    # salamanderctl, say) before the view's next frame. A panel that remembered only what it had
    # written itself (False) saw nothing to send, and the tab showed True for good.
    tab.box.click(True, tab.client_id)
    tab.now += CLICK_GRACE_S
    tab.frame(False)
    assert tab.box.value is False and tab.box.sent == [False]


def test_a_click_then_the_parameter_following_ends_the_grace_for_later_changes(tab):
    tab.box.click(True, tab.client_id)
    tab.frame(True)
    tab.frame(False)  # a change from elsewhere right after: shown at once
    assert tab.box.sent == [False]


def test_another_tabs_click_does_not_hold_this_tab_back():
    a, b = Tab(1), Tab(2)
    for t in (a, b):
        t.frame(False)
    a.box.click(True, a.client_id)
    b.frame(False)
    b.frame(True)
    assert b.box.sent == [True]


def test_a_frame_between_a_click_and_its_callback_keeps_the_click(tab):
    # The browser test's flake (2026-12-06, 2 of 11 runs of the module): viser updates its copy, then
    # runs the callback on its own thread. A frame in between wrote the parameter (False) over the
    # click, and the callback read that and sent "manual_place := False": the click was lost.
    tab.box.click_arrives(True)
    tab.now += 0.05
    tab.frame(False)  # the node's frame timer, before the callback
    assert tab.box.sent == [] and tab.box.value is True
    tab.box.run_callbacks(tab.client_id)
    assert tab.controls == [(1, "manual_place", True)]
    tab.now += CLICK_GRACE_S - 0.1
    tab.frame(False)  # still within the grace: the set is on its way
    assert tab.box.sent == []
    tab.frame(True)
    assert tab.box.sent == [] and tab.box.value is True
