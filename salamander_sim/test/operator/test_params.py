"""The simulated operator's parameters: defaults, the stick's limits, refusals with the reason."""

from __future__ import annotations

import pytest

from salamander_control import params_file
from salamander_sim.operator import params
from salamander_sim.operator.params import MAX_JOG_SPEED, OperatorSettings
from salamander_testing import REPO


def defaults() -> dict:
    return {spec.name: spec.default for spec in params.param_specs()}


def test_defaults_build_the_default_snapshot_and_config_file_repeats_them():
    assert params.build_config(defaults()) == OperatorSettings()
    shipped = params_file.node_values([REPO / "config" / "sim_operator.yaml"], "/salamander/sim_operator")
    assert shipped == {k: v for k, v in defaults().items() if k != "cell_config"}


@pytest.mark.parametrize(("name", "value", "why"), [
    ("jog_speed", MAX_JOG_SPEED + 0.001, "jog_speed must lie in"),  # faster than the stick
    ("jog_rate_hz", 3.0, "jog_rate_hz must lie in"),  # twists would go stale (0.3 s) between two
    ("look_sigma_xy", float("nan"), "finite"),
    ("seed", -1, "seed must lie in"),
])  # fmt: skip
def test_values_outside_the_limits_are_refused_by_the_spec(name, value, why):
    spec = next(s for s in params.param_specs() if s.name == name)
    assert why in (spec.check(value) or "")


def test_a_reaction_range_upside_down_is_refused():
    with pytest.raises(ValueError, match="reaction_time_min_s .* must not exceed reaction_time_max_s"):
        params.build_config({**defaults(), "reaction_time_min_s": 0.6, "reaction_time_max_s": 0.5})


def test_seed_and_cell_config_are_read_only_the_rest_live():
    read_only = {s.name for s in params.param_specs() if s.read_only}
    assert read_only == {"seed", "cell_config"}
