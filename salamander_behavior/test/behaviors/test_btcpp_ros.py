"""The BehaviorTree.CPP ports on a real rclpy node: setup(node=...) subscribes /joint_states, once."""

from __future__ import annotations

import py_trees
import pytest
from py_trees.common import Status

from salamander_behavior.behaviors.btcpp import AreJointsWithinLimits, safe_trajectory_execution
from salamander_behavior.mock.ports import StaysRunning
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE
from salamander_testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros

TIMEOUT = 20.0
LIMITS = "shoulder_pitch,-1.35,1.35;beam_pitch,0.0,1.309"


def test_the_ports_judge_joint_states_from_a_real_topic(make_node, ros_executor) -> None:
    from sensor_msgs.msg import JointState

    tree_node = make_node("btcpp_tree_under_test")
    pub_node = make_node("joint_state_publisher")
    pub = pub_node.create_publisher(JointState, "/joint_states", 10)

    within = AreJointsWithinLimits(joint_limits=LIMITS, margin=0.1)
    motion = StaysRunning()
    safe = safe_trajectory_execution(
        motion, joint_name="beam_pitch", min_limit=0.0, max_limit=1.309, warning_margin=0.15
    )
    root = py_trees.composites.Sequence("ported", memory=False, children=[within, safe])
    tree = py_trees.trees.BehaviourTree(root)
    tree.setup(node=tree_node, timeout=5.0)
    near = safe.children[0].decorated

    assert near.cache is within.cache  # the node's one shared cache ...
    topics = [s.topic_name for s in tree_node.subscriptions]
    assert topics.count("/joint_states") == 1  # ... and one subscription
    assert spin_until(ros_executor, lambda: pub.get_subscription_count() >= 1, TIMEOUT)

    tree.tick()
    assert root.status is Status.FAILURE
    assert within.feedback_message == "not within limits: no joint state received on /joint_states yet"

    def publish(names, q) -> None:
        msg = JointState()
        msg.header.stamp = pub_node.get_clock().now().to_msg()
        msg.name = list(names)
        msg.position = [float(v) for v in q]
        pub.publish(msg)

    def tick_until(names, q, status: Status) -> bool:
        def published_and_ticked() -> bool:
            publish(names, q)
            tree.tick()
            return root.status is status

        return spin_until(ros_executor, published_and_ticked, TIMEOUT)

    why = f"{within.feedback_message} | {near.feedback_message}"
    assert tick_until(JOINT_NAMES, REST_POSTURE, Status.RUNNING), why
    assert within.feedback_message.startswith("within limits: 2 joint(s)")
    assert near.feedback_message.startswith("safe: beam_pitch = 0.590")

    near_q = (0.0, 0.3, 1.25, 0.0, 0.0)  # beam_pitch 0.059 rad below its upper limit: near, not within
    assert tick_until(JOINT_NAMES, near_q, Status.FAILURE), near.feedback_message
    expected = "not within limits: beam_pitch = 1.250 rad outside [0.100, 1.209]"
    assert within.feedback_message.startswith(expected)
    assert motion.terminated[-1] is Status.INVALID

    mid = (0.0, 0.3, 0.6, 0.0, 0.0)
    assert tick_until(JOINT_NAMES, mid, Status.RUNNING), near.feedback_message
    assert tick_until(("base_yaw", "shoulder_pitch"), (0.0, 0.3), Status.FAILURE)  # beam_pitch missing
    assert within.feedback_message == "not within limits: joint state lacks beam_pitch"
    near.tick_once()  # not reached by the sequence (it stopped at `within`): the same cache, judged alone
    assert near.status is Status.SUCCESS
    assert near.feedback_message == "counted as near: joint state lacks beam_pitch"
