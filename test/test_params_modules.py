"""One convention for every node's parameters, in every package.

Each node's parameters live in a pure `params.py` in its concept folder exposing `param_specs()` and
`build_config(values)` (and optionally `config_warnings(snapshot)`); the node only binds them with
`ParamBinding(self, params.param_specs(), params.build_config, ...)`. These tests find every such module,
check that none imports rclpy (so tools, docs and tests can read the tables without ROS), that the
defaults build a snapshot, and that every node binds its parameters this way.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import pytest

from salamander_control.param_spec import ParamSpec
from salamander_testing import REPO

PACKAGES = (
    "salamander_control", "salamander_sim", "salamander_behavior", "salamander_teleop", "salamander_view"
)
RATE = re.compile(r"(^|[._])(rate|period|timeout|window|settle|delay|lifetime)($|[._])")


def params_modules() -> list[str]:
    """Every `params.py` of the three packages except the ROS binding itself (ros/params.py)."""
    found = []
    for pkg in PACKAGES:
        root = REPO / pkg
        for path in sorted((root / pkg).rglob("params.py")):
            if path.parent.name == "ros":
                continue
            found.append(".".join(path.relative_to(root).with_suffix("").parts))
    return found


MODULES = params_modules()


def test_every_node_package_has_its_params_modules() -> None:
    assert {
        "salamander_control.kinematics.params",
        "salamander_control.trajectory.params",
        "salamander_control.cartesian.params",
        "salamander_control.ghost.params",
        "salamander_sim.params",
        "salamander_sim.cell.params",
        "salamander_behavior.params",
        "salamander_teleop.controller.params",
        "salamander_teleop.gamepad.params",
        "salamander_view.params",
    } <= set(MODULES)


def test_no_params_module_imports_rclpy() -> None:
    # One fresh interpreter: import the modules one by one and name the first that pulls rclpy in.
    probe = (
        "import importlib, sys\n"
        f"for name in {MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        "    if 'rclpy' in sys.modules:\n"
        "        sys.exit(f'{name} imports rclpy')\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr or result.stdout


@pytest.mark.parametrize("name", MODULES)
def test_params_module_lists_specs_whose_defaults_build_a_snapshot(name: str) -> None:
    module = importlib.import_module(name)
    specs = module.param_specs()
    assert specs and all(isinstance(s, ParamSpec) for s in specs)
    names = [s.name for s in specs]
    assert len(names) == len(set(names)), f"{name}: a parameter declared twice"
    assert all(s.check(s.default) is None for s in specs), name
    snapshot = module.build_config({s.name: s.default for s in specs})
    if hasattr(module, "config_warnings"):
        assert module.config_warnings(snapshot) == []  # the defaults are not notable


@pytest.mark.parametrize("name", MODULES)
def test_rates_end_in_hz_and_durations_in_s(name: str) -> None:
    for spec in importlib.import_module(name).param_specs():
        last = spec.name.rsplit(".", 1)[-1]
        if RATE.search(last) and not last.endswith(("_hz", "_s")):
            pytest.fail(f"{name}: {spec.name} names a rate or a duration without its unit (_hz / _s)")


def test_every_node_binds_its_params_module() -> None:
    nodes = sorted(p for pkg in PACKAGES for p in (REPO / pkg / pkg / "nodes").glob("*.py"))
    bound = 0
    for path in nodes:
        text = path.read_text()
        if "ParamBinding(" not in text:
            continue
        bound += 1
        call = text[text.index("ParamBinding(") :]
        convention = r"ParamBinding\(\s*self,\s*params\.param_specs\(\),\s*params\.build_config\b"
        assert re.match(convention, call), (
            f"{path.name}: bind the parameters as ParamBinding(self, params.param_specs(), "
            "params.build_config, ...)"
        )
        assert re.search(r"^from \S+ import params$", text, re.M), f"{path.name}: import its params module"
    assert bound == 11  # every node of the stack
