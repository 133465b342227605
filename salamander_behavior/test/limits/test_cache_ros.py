"""The shared joint state cache over a real subscription: reading drains what the callback has not had yet.

After a stall of the behaviour server's process, rclpy's executor runs a due timer (the tree's tick)
before the subscription callbacks that waited meanwhile. The tick read the last stored joint state and
stopped a run on "joint state stale: 0.75 s old" with fresh joint states waiting (a loaded test suite).
Here the executor never spins after the match: the callback never runs, as in such a stall.
"""

from __future__ import annotations

import time

import pytest

from salamander_behavior.limits.cache import shared_joint_state_cache
from salamander_control.kinematics import JOINT_NAMES
from salamander_testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros
TOPIC = "/joint_states_cache_test"
STALL_S = 0.3


def joints(state) -> tuple[float, ...] | None:
    """A cached state's positions in motor order (None: nothing cached)."""
    return None if state is None else tuple(state.sample.positions[n] for n in JOINT_NAMES)


def test_a_read_after_a_stall_takes_the_joint_states_that_waited_at_their_receive_time(
    make_node, ros_executor
) -> None:
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    node = make_node("cache_drain_test")
    cache = shared_joint_state_cache(node, TOPIC)
    assert shared_joint_state_cache(node, TOPIC) is cache  # one per node and topic
    pub = node.create_publisher(JointState, TOPIC, qos_profile_sensor_data)
    assert spin_until(ros_executor, lambda: pub.get_subscription_count() > 0, 10.0)
    for k, q in enumerate(((0.1, 0.2, 0.3, 0.0, 0.0), (0.2, 0.3, 0.4, 0.0, 0.0))):
        msg = JointState(name=list(JOINT_NAMES), position=list(q))
        msg.header.stamp = node.get_clock().now().to_msg()
        sent = time.monotonic()
        pub.publish(msg)
        time.sleep(STALL_S)  # the process stalls; its executor does not spin
        state = cache.latest()
        deadline = time.monotonic() + 5.0
        while joints(state) != q and time.monotonic() < deadline:
            state = cache.latest()  # a slow transport: the message may come later
        assert joints(state) == q, k
        # Its age is from its arrival, not from the read after the stall.
        assert sent <= state.received < sent + STALL_S / 2, (state.received - sent)
        assert cache.age(state) >= STALL_S / 2
