"""ParamBinding through the real parameter services (refusals with reasons, warnings on acceptance, half-open
ranges), and params files as rcl reads them (what `salamander_control.params_file` says).
"""

from __future__ import annotations

import math

import pytest
from rcl_interfaces.srv import DescribeParameters, SetParameters
from rclpy.parameter import Parameter

from salamander_control import params_file
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.param_spec import ParamSpec
from salamander_control.ros.params import INT64_MIN, ParamBinding, descriptor
from salamander_control.trajectory import params as trajectory_params
from salamander_testing import REPO
from salamander_testing.ros_helpers import spin_until

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
        DescribeParameters.Request(names=["alpha_max", "wrist_pitch_max"]),
    ).descriptors
    assert describe[0].floating_point_range[0].from_value == 0.0
    assert describe[0].floating_point_range[0].to_value == 2.7
    assert "q2 - q1" in describe[0].description
    # A per-joint limit narrows its joint's travel, never widens it past the stops (was: +-2 pi, so a
    # window of 6.0-6.2 rad sent the wrist 4.4 rad into its stop).
    assert describe[1].floating_point_range[0].to_value == 1.5708 and "not widen" in describe[1].description
    for name, value, ok in (("wrist_pitch_max", 6.2, False), ("q1_min", -1.4, False), ("q1_max", 1.2, True)):
        request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        result = _call(ros_executor, client, SetParameters, service, request).results[0]
        assert result.successful is ok and (ok or name in result.reason), (name, result.reason)
    arm = binding.snapshot
    assert (arm.wrist_pitch_max, arm.q1_min, arm.q1_max) == (1.5708, -1.35, 1.2)


def test_a_half_open_range_is_described_with_an_open_end_and_enforced(make_node, ros_executor) -> None:
    specs = [
        ParamSpec("timeout_s", 1.0, "only a minimum (s)", min_value=0.1),
        ParamSpec("samples", 5, "only a maximum", max_value=10),
    ]
    server = make_node("half_open_under_test")
    binding = ParamBinding(server, specs, dict)
    client = make_node("half_open_client")
    service = "/half_open_under_test/set_parameters"

    def set_param(name: str, value: object) -> object:
        request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        return _call(ros_executor, client, SetParameters, service, request).results[0]

    assert set_param("timeout_s", 1e6).successful and binding.snapshot["timeout_s"] == 1e6
    for bad in (0.05, -1.0, math.inf):
        result = set_param("timeout_s", bad)
        assert not result.successful and "timeout_s" in result.reason, bad
    assert binding.snapshot["timeout_s"] == 1e6  # the old value stays
    assert set_param("samples", -(10**9)).successful
    refused = set_param("samples", 11)
    assert not refused.successful and "samples" in refused.reason

    described = _call(
        ros_executor, client, DescribeParameters, "/half_open_under_test/describe_parameters",
        DescribeParameters.Request(names=["timeout_s", "samples"]),
    ).descriptors
    floats, ints = described[0].floating_point_range[0], described[1].integer_range[0]
    assert (floats.from_value, floats.to_value) == (0.1, math.inf)
    assert (ints.from_value, ints.to_value) == (INT64_MIN, 10)


def test_descriptor_of_a_spec_without_a_range_has_none() -> None:
    plain = descriptor(ParamSpec("x", 1.0, "no range"))
    assert not plain.floating_point_range and not plain.integer_range


@pytest.mark.parametrize(
    ("files", "fqn"),
    [
        (["arm", "own"], "/arm/n"),
        (["arm", "own"], "/cell2/arm/n"),
        (["own", "arm"], "/arm/n"),
        (["arm", "own", "again"], "/n"),
        (["nested"], "/x/n"),
        (["nested"], "/x/y/n"),
        (["shared", "own", "-p"], "/arm/n"),  # arm.yaml's key /**/*: the -p wins
        (["arm", "own", "-p"], "/arm/n"),  # a shared file keyed /**: the node's own file wins over -p
        (["-p", "shared", "own"], "/n"),
    ],
)
def test_rcl_gives_a_node_what_params_file_says(tmp_path, make_node, files, fqn) -> None:
    texts = {
        "arm": "/**:\n  ros__parameters:\n    a: 1.0\n    b: 1.0\n    c: 1.0\n    m: {x: 1.0, y: 1.0}\n",
        "own": "/**/n:\n  ros__parameters:\n    b: 2.0\n    m: {y: 2.0}\n/**/other:\n  ros__parameters:\n"
        "    c: 9.0\n",
        "again": "/**:\n  ros__parameters:\n    b: 3.0\n",
        "nested": "/*/n:\n  ros__parameters:\n    a: 7.0\nx:\n  n:\n    ros__parameters:\n      c: 8.0\n",
        "shared": "/**/*:\n  ros__parameters:\n    a: 1.0\n    b: 1.0\n    c: 1.0\n",
    }
    paths: list = []  # files, and `-p b:=9.0` as the document rcl files it as
    args = ["--ros-args"]
    for name in files:
        if name == "-p":
            paths.append({"/**": {"ros__parameters": {"b": 9.0}}})
            args += ["-p", "b:=9.0"]
            continue
        paths.append(tmp_path / f"{name}.yaml")
        paths[-1].write_text(texts[name])
        args += ["--params-file", str(paths[-1])]
    namespace, _, name = fqn.rpartition("/")
    node = make_node(
        name, namespace=namespace or "/", cli_args=args, automatically_declare_parameters_from_overrides=True
    )
    builtin = {"use_sim_time", "start_type_description_service"}
    got = {k: p.value for k, p in node.get_parameters_by_prefix("").items() if k not in builtin}
    assert got == params_file.node_values(paths, fqn)


def test_the_shipped_generator_files_give_it_the_arm_model_the_limits_and_its_own_values(make_node) -> None:
    config = REPO / "config"
    paths = [config / "arm.yaml", config / "motion_limits.yaml", config / "trajectory_generator.yaml"]
    args = ["--ros-args"] + [arg for path in paths for arg in ("--params-file", str(path))]
    node = make_node("trajectory_generator", namespace="/cell2/arm", cli_args=args)
    binding = ParamBinding(node, trajectory_params.param_specs(), trajectory_params.build_config)
    expected = params_file.node_values(paths, "/cell2/arm/trajectory_generator")
    assert {"alpha_max", "max_jerk.wrist_yaw", "stream_delay_s"} <= set(expected)
    assert {name: binding.values[name] for name in expected} == expected
