"""The behaviour server's parameters (params.py): config/behavior.yaml, refusals, typed values."""

from __future__ import annotations

import math

import pytest

from salamander_behavior.params import BehaviorSettings
from salamander_control import names, params_file
from salamander_control.kinematics import ArmParams
from salamander_testing import REPO
from salamander_testing.config_files import node_config


def test_config_yaml_lists_every_parameter_with_its_default() -> None:
    # behavior.yaml holds the node's own parameters, config/arm.yaml (loaded first) the arm model.
    from salamander_behavior.params import param_specs

    own = params_file.node_values([REPO / "config" / "behavior.yaml"], names.BEHAVIOR_SERVER, True)
    params = node_config("behavior_server_node", names.BEHAVIOR_SERVER)
    specs = param_specs()
    assert params == {s.name: s.default for s in specs}
    arm_fields = set(ArmParams.__dataclass_fields__)
    assert {s.name for s in specs} == set(BehaviorSettings.__dataclass_fields__) - {"arm"} | arm_fields
    assert set(own) == {s.name for s in specs} - arm_fields  # the arm model is written only in arm.yaml
    assert params["manual_place"] is False


@pytest.mark.parametrize(
    "values",
    [{"release_speed": 0.0}, {"manual_timeout_s": 121.0}, {"client_id": ""}, {"settle_s": math.inf}],
)
def test_invalid_settings_are_refused(values) -> None:
    with pytest.raises(ValueError):
        BehaviorSettings.from_values(values)


def test_settings_from_values_keeps_types() -> None:
    s = BehaviorSettings.from_values({"manual_place": True, "manual_timeout_s": 5, "other": 1})
    assert s.manual_place is True and s.manual_timeout_s == 5.0 and isinstance(s.manual_timeout_s, float)
    assert s.adjust_limits.timeout == 5.0 and s.adjust_limits.max_offset == 0.030


def test_the_kept_operator_parameters_are_checked_like_a_set() -> None:
    from salamander_behavior.params import OPERATOR_PARAMS, kept_value, param_specs

    specs = {s.name: s for s in param_specs()}
    assert all(not specs[name].read_only for name in OPERATOR_PARAMS)  # an operator sets them live
    assert kept_value("manual_place", True) is True
    assert kept_value("max_offset_z", 0.02) == 0.02
    for name, value, why in (("transit_speed", 0.5, "not a parameter a restart keeps"),
                             ("manual_place", 1, "must be a bool"), ("allow_z", "true", "must be a bool"),
                             ("max_offset_z", True, "must be a number"),
                             ("max_offset_z", 0.5, "must lie in [0.001, 0.03]")):  # fmt: skip
        with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
            kept_value(name, value)


def test_the_start_line_says_where_each_operator_parameter_came_from() -> None:
    from salamander_behavior.params import sources_text

    launch = {"manual_place": False, "allow_z": False, "max_offset_z": 0.03}
    assert sources_text(launch, {}) == (
        "manual_place false (launch file), allow_z false (launch file), max_offset_z 0.03 (launch file)"
    )
    text = sources_text(launch, {"manual_place": True, "allow_z": False})
    assert text.startswith("manual_place true (kept from before the restart; launch file said false), ")
    assert "allow_z false (kept from before the restart; the launch file says the same)" in text
