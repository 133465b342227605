"""The view in the launch file: on by default, off with view:=false and nothing else changes."""

from __future__ import annotations

import yaml

from salamander_bringup.launch_plan import load_plan
from salamander_control import names
from salamander_testing import REPO
from salamander_view.params import ViewSettings, build_config, param_specs

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
VIEW = names.absolute(names.OPERATOR_VIEW)


def _summary(plan):
    return [(n.fqn, n.executable, n.param_files, n.params, n.remaps) for n in plan.nodes]


def test_view_is_on_by_default_and_view_false_drops_only_it():
    with_view = load_plan(LAUNCH)
    without = load_plan(LAUNCH, {"view": "false"})
    assert VIEW in {n.fqn for n in with_view.nodes}
    assert _summary(without) == [s for s in _summary(with_view) if s[0] != VIEW]


def test_view_reads_the_lease_state_of_its_own_stack_and_config_keeps_it_local():
    for cell, prefix in (("", ""), ("cell2", "/cell2")):
        view = next(n for n in load_plan(LAUNCH, {"cell": cell}).nodes if n.name == names.OPERATOR_VIEW)
        assert ("lease_state", f"{prefix}/arm/lease_state") in view.remaps
    section = yaml.safe_load((REPO / "config" / "view.yaml").read_text())["/**/operator_view"]
    values = {s.name: s.default for s in param_specs()} | section["ros__parameters"]
    assert build_config(values).host == "127.0.0.1" == ViewSettings().host
    assert {s.name for s in param_specs() if s.read_only} == {"host", "port", "access_token", "urdf_path"}
