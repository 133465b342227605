"""The parameter files of the stack as the launch file gives them to each node, for the tests.

A test that starts a node "as the stack does" passes `launch_param_files(name)` (e.g. config/arm.yaml,
config/motion_limits.yaml, config/trajectory_generator.yaml for the generator), and a test that checks
a file against the code reads `node_config(name)`: the values the node gets from all of its files
(`salamander_control.params_file`, rcl's rules). The launch file stays the one place that says which
node loads what.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from salamander_bringup.launch_plan import NodePlan, load_plan
from salamander_control import params_file
from salamander_testing import REPO

CONFIG = REPO / "config"
LAUNCH = REPO / "launch" / "arm_control.launch.xml"
ARM_YAML = CONFIG / "arm.yaml"
MOTION_LIMITS_YAML = CONFIG / "motion_limits.yaml"


def launch_node(name: str) -> NodePlan:
    """The node called `name` (e.g. "trajectory_generator") in the default launch, every node enabled.

    Raises:
        KeyError: no node of that name.
    """
    nodes = {node.name: node for node in load_plan(LAUNCH, {"gamepad": "true"}).nodes}
    if name not in nodes:
        raise KeyError(f"{name!r} is not a node of {LAUNCH.name}: {', '.join(nodes)}")
    return nodes[name]


def launch_param_files(name: str) -> list[Path]:
    """The `--params-file`s the launch file gives node `name`, in order."""
    return [Path(path).resolve() for path in launch_node(name).param_files]


def node_config(name: str, fqn: str | None = None) -> dict[str, Any]:
    """The parameter values node `name` gets from its launch files (under `fqn`, default its launch name)."""
    node = launch_node(name)
    return params_file.node_values(node.param_files, fqn or node.fqn)
