"""ParamBinding through the real parameter services: refusals with reasons, warnings on acceptance."""

from __future__ import annotations

import math

import pytest
from rcl_interfaces.srv import DescribeParameters, SetParameters
from rclpy.parameter import Parameter

from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.ros.params import ParamBinding
from salamander_control.testing.ros_helpers import spin_until

pytestmark = pytest.mark.ros


def _call(executor, node, srv_type, name, request):  # noqa: ANN001, ANN202
    client = node.create_client(srv_type, name)
    assert spin_until(executor, client.service_is_ready, 10.0)
    future = client.call_async(request)
    assert spin_until(executor, future.done, 10.0)
    return future.result()


def test_set_over_the_service_refuses_bad_values_and_warns_on_narrowing(make_node, ros_executor) -> None:
    server = make_node("binding_under_test")
    binding = ParamBinding(server, arm_param_specs(), build_arm_params, arm_params_warnings)
    client = make_node("param_client")
    service = "/binding_under_test/set_parameters"

    def set_alpha(value: float) -> object:
        request = SetParameters.Request(parameters=[Parameter("alpha_max", value=value).to_parameter_msg()])
        return _call(ros_executor, client, SetParameters, service, request).results[0]

    for bad in (math.nan, math.inf, 3.0, -0.1):
        result = set_alpha(bad)
        assert not result.successful and "alpha_max" in result.reason
        assert binding.snapshot.alpha_max == 1.40  # the old value stays
    narrowed = set_alpha(1.30)
    assert narrowed.successful and "no longer admit the rest posture" in narrowed.reason
    assert binding.snapshot.alpha_max == 1.30
    widened = set_alpha(1.40)
    assert widened.successful and widened.reason == ""

    describe = _call(
        ros_executor, client, DescribeParameters, "/binding_under_test/describe_parameters",
        DescribeParameters.Request(names=["alpha_max"]),
    ).descriptors[0]
    assert describe.floating_point_range[0].from_value == 0.0
    assert describe.floating_point_range[0].to_value == 2.7
    assert "q2 - q1" in describe.description
