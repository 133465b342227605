"""The behaviour server's guard of a can's cycle (guard.py `can_guard`), built without ROS."""

from __future__ import annotations

import py_trees

from salamander_behavior.behaviors.guard import can_guard
from salamander_control import names
from salamander_control.kinematics import ArmParams


def test_a_cans_guard_watches_the_monitor_topic_with_conditions_named_after_the_can() -> None:
    cycle = py_trees.behaviours.Running("can_0 cycle")
    guard = can_guard(ArmParams)(cycle, "can_0")
    assert guard.name == "Guarded[can_0]" and not guard.memory
    *conditions, last = guard.children
    assert last is cycle and conditions
    assert all(c.name.startswith("can_0.") for c in conditions)
    assert {c.topic for c in conditions} == {names.JOINT_STATES_MONITOR}
