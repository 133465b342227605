"""The simulated vacuum switch's dead time (salamander_sim/cell/switch.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from salamander_sim.cell.switch import DelayedSwitch


def test_a_change_shows_after_the_delay_and_a_shorter_blip_never() -> None:
    switch = DelayedSwitch(0.03)
    assert switch.update(True, 1.00) is False
    assert switch.update(True, 1.02) is False
    assert switch.update(True, 1.03) is True
    assert switch.update(False, 2.00) is True  # a blip of 20 ms ...
    assert switch.update(True, 2.02) is True  # ... never shows
    assert switch.update(False, 3.00) is True
    assert switch.update(False, 3.05) is False


def test_bad_delays_and_times_are_refused() -> None:
    for bad in (-0.01, math.nan, math.inf):
        with pytest.raises(ValueError):
            DelayedSwitch(bad)
    switch = DelayedSwitch(0.0)
    with pytest.raises(ValueError):
        switch.update(True, math.nan)
    assert switch.value is False
    assert switch.update(True, 0.0) is True  # no delay: at once


@given(
    delay=st.floats(0.0, 0.2),
    steps=st.lists(st.tuples(st.floats(0.001, 0.1), st.booleans()), min_size=1, max_size=60),
)
def test_the_output_only_takes_a_value_the_input_held_for_the_delay(delay, steps) -> None:
    switch = DelayedSwitch(delay)
    t, history = 0.0, [(0.0, False)]
    for dt, raw in steps:
        t += dt
        before = switch.value
        out = switch.update(raw, t)
        history.append((t, raw))
        if out != before:
            # The input has been `out` without interruption since at least `delay` ago.
            since = t
            for when, value in reversed(history):
                if value != out:
                    break
                since = when
            assert out == raw and t - since >= delay - 1e-9
