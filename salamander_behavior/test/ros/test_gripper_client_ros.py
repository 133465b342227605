"""`GripperIO` over real topics: the part-present switch wakes the tree on a change, and a read after a stall
takes the messages that waited, each at its receive time."""

from __future__ import annotations

import time

import pytest
from std_msgs.msg import Bool

from salamander_behavior.ros.gripper_client import GripperIO
from salamander_control import names
from salamander_testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros


def test_a_change_of_the_part_present_switch_wakes_the_server(make_node, ros_executor) -> None:
    changes: list[bool] = []
    gripper = GripperIO(make_node("tree_gripper"), lambda: 0.0, lambda: 1.0, lambda: changes.append(True))
    publisher = make_node("switch").create_publisher(Bool, names.PART_PRESENT, 10)
    for value in (False, False, True, True, False):
        publisher.publish(Bool(data=value))
        assert spin_until(ros_executor, lambda v=value: gripper.part_present().value is v)
    assert len(changes) == 2  # False -> True and True -> False; the first message and repeats are none


def test_a_read_after_a_stall_takes_the_switch_messages_that_waited_at_their_receive_time(
    make_node, ros_executor
) -> None:
    """After a stall the tick runs before the callbacks that waited: reading the switch takes them first,
    each at its receive time (the pad check had stopped a run on "part-present signal 0.5 s old" so)."""
    stall_s = 0.3
    gripper = GripperIO(make_node("tree_gripper"), time.monotonic, lambda: 1.0)
    publisher = make_node("switch").create_publisher(Bool, names.PART_PRESENT, 10)
    assert spin_until(ros_executor, lambda: publisher.get_subscription_count() > 0)
    for value in (True, False):
        sent = time.monotonic()
        publisher.publish(Bool(data=value))
        time.sleep(stall_s)  # the process stalls: its executor does not spin, no callback runs
        reading = gripper.part_present()
        deadline = time.monotonic() + 5.0
        while reading.value is not value and time.monotonic() < deadline:
            reading = gripper.part_present()  # a slow transport: the message may come later
        assert reading.value is value
        assert sent <= reading.received_at < sent + stall_s / 2, reading.received_at - sent  # not the read
