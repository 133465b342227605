"""The part-present switch as the tree hears it (ros/part_present.py): value, arrival, change, age."""

from __future__ import annotations

import math

from salamander_behavior.mock.ports import FakeClock
from salamander_behavior.ports import PartReading
from salamander_behavior.ros.part_present import PartPresentSignal


def test_nothing_heard_is_never_fresh() -> None:
    clock = FakeClock()
    reading = PartPresentSignal(clock).reading()
    assert reading.value is None and not reading.fresh(clock(), 1e9)
    assert reading.age(clock()) == math.inf
    assert reading.stale_text(clock()) == "no part-present signal received"


def test_arrival_and_change_times_are_kept_apart() -> None:
    clock = FakeClock(10.0)
    signal = PartPresentSignal(clock)
    signal.put(False)
    clock.advance(0.5)
    signal.put(True)
    clock.advance(0.2)
    signal.put(True)  # a repeat: arrival moves on, the change stays
    assert signal.reading() == PartReading(True, 10.7, 10.5)
    clock.advance(0.4)
    assert signal.reading().fresh(clock(), 0.5) and math.isclose(signal.reading().age(clock()), 0.4)
    clock.advance(2.1)
    assert not signal.reading().fresh(clock(), 0.5)
    assert signal.reading().stale_text(clock()) == "part-present signal 2.5 s old"
