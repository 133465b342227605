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
