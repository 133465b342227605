"""A follower's set reaches the owner even when the owner's service is discovered after its pair.

ros/coupled_limits_sync.py over real topics and services in one process: a stand-in owner publishes the
latched pair on /arm/coupled_limits but serves /arm/trajectory_generator/set_parameters_atomically only
later, as a node that has just started can see it (the topic discovered, the service not yet: seen in a
whole-suite run on a loaded machine). An operator's set on the follower in that gap waits for the
service and is forwarded once it appears; with no service at all it stays local after the bounded wait.
The whole stack's behaviour: test/test_coupled_limits_ros.py.
"""

from __future__ import annotations

import math
import time

import pytest

from salamander_testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros


def _stand_in_and_follower(make_node, ros_executor):
    from rclpy.parameter import Parameter

    from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
    from salamander_control.ros.qos import LATCHED
    from salamander_msgs.msg import CoupledLimits

    owner = make_node("stand_in_owner")
    pub = owner.create_publisher(CoupledLimits, "/arm/coupled_limits", LATCHED)
    pub.publish(CoupledLimits(alpha_max=1.40, beta_max=0.87, source="/arm/trajectory_generator", revision=3))
    node = make_node("controller_node", namespace="/arm")
    node.declare_parameter("alpha_max", 1.50)
    node.declare_parameter("beta_max", 0.90)
    follower = follow_coupled_limits(node)
    assert spin_until(ros_executor, lambda: node.get_parameter("alpha_max").value == 1.40, 10.0)
    assert follower.owner is not None and follower.owner.revision == 3
    assert node.set_parameters([Parameter("alpha_max", value=1.30)])[0].successful  # the operator's set
    return owner, node


def test_a_set_made_before_the_owners_service_is_discovered_is_forwarded_when_it_is(make_node, ros_executor):
    from rcl_interfaces.msg import SetParametersResult
    from rcl_interfaces.srv import SetParametersAtomically
    from rclpy.parameter import parameter_value_to_python

    owner, node = _stand_in_and_follower(make_node, ros_executor)
    spin_until(ros_executor, lambda: False, 0.3)  # the follower's wait runs (the service is still missing)
    received: list[dict[str, object]] = []

    def serve(request, response):
        received.append({p.name: parameter_value_to_python(p.value) for p in request.parameters})
        response.result = SetParametersResult(successful=True)
        return response

    service = "/arm/trajectory_generator/set_parameters_atomically"
    owner.create_service(SetParametersAtomically, service, serve)
    assert spin_until(ros_executor, lambda: bool(received), 10.0), "the set never reached the owner"
    assert received == [{"alpha_max": 1.30}]
    assert node.get_parameter("alpha_max").value == 1.30  # kept here meanwhile


def test_without_the_owners_service_the_set_stays_local_after_the_bounded_wait(make_node, ros_executor):
    from salamander_control.ros.coupled_limits_sync import FORWARD_WAIT_S

    _, node = _stand_in_and_follower(make_node, ros_executor)
    timers = len(list(node.timers))
    assert timers >= 1  # the wait's poll
    start = time.monotonic()
    assert spin_until(ros_executor, lambda: len(list(node.timers)) < timers, FORWARD_WAIT_S + 5.0)
    assert time.monotonic() - start >= FORWARD_WAIT_S - 0.5  # it waited, then gave up (and said so)
    assert node.get_parameter("alpha_max").value == 1.30


def test_a_pair_that_is_not_finite_is_ignored_and_the_owners_last_pair_stays(make_node, ros_executor):
    from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
    from salamander_control.ros.qos import LATCHED
    from salamander_msgs.msg import CoupledLimits

    owner = make_node("stand_in_owner")
    pub = owner.create_publisher(CoupledLimits, "/arm/coupled_limits", LATCHED)
    node = make_node("controller_node", namespace="/arm")
    node.declare_parameter("alpha_max", 1.50)
    node.declare_parameter("beta_max", 0.90)
    follower = follow_coupled_limits(node)
    values_set: list[float] = []
    node.add_post_set_parameters_callback(lambda params: values_set.extend(p.value for p in params))
    pub.publish(CoupledLimits(alpha_max=1.40, beta_max=0.87, source="/arm/trajectory_generator", revision=3))
    assert spin_until(ros_executor, lambda: node.get_parameter("alpha_max").value == 1.40, 10.0)
    # The latched topic keeps one message, so a burst would reach the subscription as its last message
    # only: each bad pair goes straight to the subscription's callback, as the executor would hand it over.
    for bad in (float("nan"), float("inf"), -float("inf")):
        follower._on_limits(CoupledLimits(alpha_max=bad, beta_max=0.87, source="rogue", revision=4))
        follower._on_limits(CoupledLimits(alpha_max=1.40, beta_max=bad, source="rogue", revision=5))
    assert (node.get_parameter("alpha_max").value, node.get_parameter("beta_max").value) == (1.40, 0.87)
    assert all(math.isfinite(v) for v in values_set), values_set  # never adopted, not even for a moment
    assert follower.owner is not None and follower.owner.revision == 3  # the owner's pair is still known
