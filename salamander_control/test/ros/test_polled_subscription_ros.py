"""PolledReader (ros/polled_subscription.py) over real topics: taken on demand, in order, with real ages.

- a polled subscription of the owner's (remapped, namespaced) topic receives what is published there, and
  `take` returns it oldest first, once;
- the receive times are the messages' own: one taken 0.3 s after it arrived is 0.3 s old;
- the owner's executor never takes them: spun while they wait, it leaves them all to `take`;
- the helper node is hidden (leading underscore) and unsubscribe/destroy leave nothing behind.
"""

from __future__ import annotations

import time

import pytest

from salamander_testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros


def _take_until(reader, sub, count, timeout=10.0):
    got, end = [], time.monotonic() + timeout
    while len(got) < count and time.monotonic() < end:
        got += reader.take(sub)
    return got


def test_a_polled_subscription_returns_the_history_in_order_with_the_messages_own_ages(
        ros_context, make_node, ros_executor):  # fmt: skip
    from rclpy.qos import qos_profile_sensor_data
    from std_msgs.msg import Float64

    from salamander_control.ros.polled_subscription import PolledReader

    owner = make_node("owner", namespace="/arm", cli_args=["--ros-args", "-r", "level:=/elsewhere/level"])
    peer = make_node("peer")
    pub = peer.create_publisher(Float64, "/elsewhere/level", qos_profile_sensor_data)
    reader = PolledReader(owner)
    sub = reader.subscribe(Float64, "level", qos_profile_sensor_data)
    assert sub.topic_name == "/elsewhere/level"  # the owner's remapping, not the helper's
    assert "_owner_polled" in peer.get_node_names() or spin_until(
        ros_executor, lambda: "_owner_polled" in peer.get_node_names(), 10.0)
    assert spin_until(ros_executor, lambda: pub.get_subscription_count() >= 1, 10.0)

    for value in (1.0, 2.0, 3.0):
        pub.publish(Float64(data=value))
    spin_until(ros_executor, lambda: False, 0.2)  # the owner's executor runs: it must not take them
    got = _take_until(reader, sub, 3)
    assert [m.data for m, _ in got] == [1.0, 2.0, 3.0]
    assert [t for _, t in got] == sorted(t for _, t in got)
    assert reader.take(sub) == []  # each message once

    pub.publish(Float64(data=4.0))
    (msg, received), = _take_until(reader, sub, 1)
    assert msg.data == 4.0 and time.monotonic() - received < 0.25
    pub.publish(Float64(data=5.0))
    arrived = time.monotonic()
    time.sleep(0.3)  # the age to be measured (not a synchronisation: the message is already there)
    (msg, received), = _take_until(reader, sub, 1)
    assert msg.data == 5.0 and 0.25 <= time.monotonic() - received <= time.monotonic() - arrived + 0.25

    reader.unsubscribe(sub)
    assert spin_until(ros_executor, lambda: pub.get_subscription_count() == 0, 10.0)
    reader.destroy()
    assert spin_until(ros_executor, lambda: "_owner_polled" not in peer.get_node_names(), 10.0)
