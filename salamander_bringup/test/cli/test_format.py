"""salamanderctl's texts without ROS: ros2 param's exact wording and the status screen's gaps."""

import math

import pytest
from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    ParameterType,
    ParameterValue,
    SetParametersResult,
)

from salamander_bringup.cli.format import (
    Received,
    StatusView,
    format_describe,
    format_get,
    format_set,
    render_status,
)


def test_set_lines_match_ros2_param_set_including_a_successful_sets_reason():
    assert format_set(SetParametersResult(successful=True)) == ("Set parameter successful", True)
    warned = SetParametersResult(successful=True, reason="no longer admit the rest posture")
    assert format_set(warned) == ("Set parameter successful: no longer admit the rest posture", True)
    refused = SetParametersResult(successful=False, reason="alpha_max must lie in [0.0, 2.7]")
    assert format_set(refused) == ("Setting parameter failed: alpha_max must lie in [0.0, 2.7]", False)
    assert format_set(SetParametersResult(successful=False)) == ("Setting parameter failed", False)


def test_get_lines_match_ros2_param_get_per_type():
    P = ParameterType
    assert format_get(ParameterValue(type=P.PARAMETER_DOUBLE, double_value=1.4)) == "Double value is: 1.4"
    assert format_get(ParameterValue(type=P.PARAMETER_BOOL, bool_value=True)) == "Boolean value is: True"
    assert format_get(ParameterValue(type=P.PARAMETER_STRING, string_value="x")) == "String value is: x"
    ints = ParameterValue(type=P.PARAMETER_INTEGER_ARRAY, integer_array_value=[1, 2])
    assert format_get(ints) == "Integer values are: [1, 2]"
    assert format_get(ints, hide_type=True) == "[1, 2]"
    assert format_get(ParameterValue(type=P.PARAMETER_NOT_SET)) == "Parameter not set."


def test_describe_shows_range_step_and_read_only_like_ros2_param_describe():
    desc = ParameterDescriptor(
        name="rate", type=ParameterType.PARAMETER_INTEGER, description="control rate (Hz)", read_only=True,
        integer_range=[IntegerRange(from_value=100, to_value=1000, step=50)],
    )  # fmt: skip
    assert format_describe(desc) == [
        "Parameter name: rate", "  Type: integer", "  Description: control rate (Hz)", "  Constraints:",
        "    Read only: true", "    Min value: 100", "    Max value: 1000", "    Step: 50",
    ]  # fmt: skip
    bare = ParameterDescriptor(name="x", type=ParameterType.PARAMETER_DOUBLE)
    assert format_describe(bare) == ["Parameter name: x", "  Type: double", "  Constraints:"]
    ranged = ParameterDescriptor(
        name="a", type=ParameterType.PARAMETER_DOUBLE,
        floating_point_range=[FloatingPointRange(from_value=0.0, to_value=2.7)],
    )  # fmt: skip
    assert format_describe(ranged)[-2:] == ["    Min value: 0.0", "    Max value: 2.7"]


def test_status_shows_a_dash_for_every_source_that_sent_nothing():
    text = render_status(StatusView(waited=3.0))
    lines = text.splitlines()
    assert lines[2].split() == ["—"] * 5
    for line in lines[3:8]:
        assert line.endswith("—"), line
    assert lines[-1] == "(— = nothing received in 3.0 s)"


def test_status_places_joints_by_name_marks_missing_ones_and_shows_staleness():
    positions = {"beam_pitch": math.radians(33.8), "base_yaw": 0.0, "wrist_yaw": math.nan}
    view = StatusView(
        joints=Received(4.2, {"positions": positions}),
        lease=Received(0.1, {"holder": "", "seconds_to_expiry": 0.0, "timeout": 0.0}),
        stop_hits=Received(0.1, {"data": 0}),
        waited=1.0,
    )
    lines = render_status(view).splitlines()
    # base_yaw, shoulder_pitch (absent), beam_pitch, wrist_pitch (absent), wrist_yaw (NaN), then the age.
    assert lines[2].split() == ["+0.00", "—", "+33.80", "—", "—", "(4.2", "s", "old)"]
    assert lines[3] == "lease          free"
    assert lines[6] == "sim stop hits  0"


def test_status_shows_the_box_estimate_line() -> None:
    view = StatusView(box=Received(0.1, {"text": "offset (1.0, 0.0) mm, ...; from 1 can"}))
    assert render_status(view).splitlines()[7] == "box estimate   offset (1.0, 0.0) mm, ...; from 1 can"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--timeout", "nan", "status"], "a positive number of seconds, got 'nan'"),  # waited for ever
        (["status", "--watch", "--period", "0"], "a positive number of seconds, got '0'"),  # a busy loop
        (["--timeout", "-1", "new-box"], "got '-1'"),
    ],
)
def test_timing_options_must_be_positive_finite_seconds(argv, words, capsys):
    from salamander_bringup.cli.ctl import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2 and words in capsys.readouterr().err
