"""The limit conditions on a real rclpy node: setup(node=...) subscribes /joint_states, the guard reacts."""

from __future__ import annotations

import math

import py_trees
import pytest
from py_trees.common import Status

from salamander_behavior.behaviors.conditions import CoupledLimitsClear, JointsWithinLimits
from salamander_behavior.behaviors.guard import guarded
from salamander_behavior.mock.ports import StaysRunning
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE
from salamander_testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros

TIMEOUT = 20.0
BEYOND_ALPHA = (0.0, -0.5, 0.91, 0.0, 0.0)  # q2 - q1 = 1.41 > alpha_max 1.40; per-joint limits all fine


def test_setup_subscribes_once_and_the_guard_flips_on_the_coupled_limit(make_node, ros_executor) -> None:
    from sensor_msgs.msg import JointState

    tree_node = make_node("behavior_tree_under_test")
    pub_node = make_node("joint_state_publisher")
    pub = pub_node.create_publisher(JointState, "/joint_states", 10)

    within = JointsWithinLimits(margin=0.02)
    coupled = CoupledLimitsClear(margin=0.01)
    motion = StaysRunning()
    root = guarded(motion, [within, coupled])
    tree = py_trees.trees.BehaviourTree(root)
    tree.setup(node=tree_node, timeout=5.0)

    assert within.node is tree_node and coupled.cache is within.cache  # one cache per node...
    topics = [s.topic_name for s in tree_node.subscriptions]
    assert topics.count("/joint_states") == 1  # ...and one subscription, not one per condition
    assert spin_until(ros_executor, lambda: pub.get_subscription_count() >= 1, TIMEOUT)

    def publish(q) -> None:
        msg = JointState()
        msg.header.stamp = pub_node.get_clock().now().to_msg()
        msg.name = list(JOINT_NAMES)
        msg.position = [float(v) for v in q]
        pub.publish(msg)

    def tick_until(q, status: Status) -> bool:
        def published_and_ticked() -> bool:
            publish(q)
            tree.tick()
            return root.status is status

        return spin_until(ros_executor, published_and_ticked, TIMEOUT)

    tree.tick()  # nothing received yet: the guard does not let the motion run blind
    assert root.status is Status.FAILURE
    assert within.feedback_message == "not clear: no joint state received on /joint_states yet"

    assert tick_until(REST_POSTURE, Status.RUNNING), f"{within.feedback_message} | {coupled.feedback_message}"
    assert coupled.feedback_message.startswith("clear: q2 - q1 = 1.375 rad")

    assert tick_until(BEYOND_ALPHA, Status.FAILURE), coupled.feedback_message
    assert root.current_child is coupled
    expected = "q2 - q1 = 1.410 rad vs alpha_max 1.400: 0.010 rad BEYOND (margin 0.010)"
    assert coupled.feedback_message == f"VIOLATED: {expected}"
    assert motion.terminated[-1] is Status.INVALID  # the running motion was stopped

    refused_before = within.cache.refused
    publish((math.nan, 0.0, 0.5, 0.0, 0.0))  # bad data is refused in the callback and changes nothing
    assert spin_until(ros_executor, lambda: within.cache.refused > refused_before, TIMEOUT)
    assert within.cache.latest().sample.vector(JOINT_NAMES) == pytest.approx(BEYOND_ALPHA)

    assert tick_until(REST_POSTURE, Status.RUNNING), coupled.feedback_message  # back inside: runs again
