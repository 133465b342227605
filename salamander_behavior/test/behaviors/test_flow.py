"""The holds of behaviors/flow.py and vacuum.py ask for a tick at their end (`Ports.wake_after`).

A hold that ends between two of the server's ticks (20 Hz) would otherwise end up to a tick period late:
`settle_s` after the release and `grip_confirm_s` after the grip, each once per can.
"""

from __future__ import annotations

from py_trees.common import Status

from salamander_behavior.behaviors.base import WAKE_LATE_S, Ports
from salamander_behavior.behaviors.flow import Wait
from salamander_behavior.behaviors.vacuum import WaitForPartPresent
from salamander_behavior.mock.ports import FakeClock, FakeGripper, FakeMotion, ListLogger
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.report import RunReport

SETTINGS = BehaviorSettings(settle_s=0.1, grip_confirm_s=0.1)


def ports_with_wakes() -> tuple[Ports, FakeClock, FakeGripper, list[float]]:
    clock, motion, wakes = FakeClock(), FakeMotion(), []
    gripper = FakeGripper(motion, {}, clock)
    ports = Ports(motion, gripper, clock, lambda: SETTINGS, ListLogger(), RunReport(),
                  wake_after=wakes.append)  # fmt: skip
    return ports, clock, gripper, wakes


def test_a_wait_asks_for_a_tick_at_its_end() -> None:
    ports, clock, _gripper, wakes = ports_with_wakes()
    leaf = Wait("settle", "settle_s")
    leaf.setup(ports=ports)
    leaf.tick_once()
    assert leaf.status is Status.RUNNING and wakes == [SETTINGS.settle_s + WAKE_LATE_S]
    clock.advance(wakes[0])  # the woken tick ends it
    leaf.tick_once()
    assert leaf.status is Status.SUCCESS and len(wakes) == 1


def test_a_grip_hold_asks_for_a_tick_at_its_end_once_the_switch_agrees() -> None:
    ports, clock, gripper, wakes = ports_with_wakes()
    leaf = WaitForPartPresent("can_0 gripped?", "can_0", True, "attach_timeout_s", "grip_confirm_s")
    leaf.setup(ports=ports)
    leaf.tick_once()
    assert leaf.status is Status.RUNNING and wakes == []  # the switch says nothing yet: no hold
    gripper.holding = "can_0"
    clock.advance(0.03)
    leaf.tick_once()
    leaf.tick_once()  # the hold runs: asked once, when it began
    assert leaf.status is Status.RUNNING and wakes == [SETTINGS.grip_confirm_s + WAKE_LATE_S]
    clock.advance(wakes[0])
    leaf.tick_once()
    assert leaf.status is Status.SUCCESS and len(wakes) == 1
