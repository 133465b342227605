"""Every node of the project's packages starts through `run_node` (the clean Ctrl-C/SIGTERM stop, issue 13
item 10), and the launch runner holds SIGINT during start-up for exactly those packages (`held_signals`).
"""

import ast
import importlib
import inspect

from salamander_bringup.launch_plan import load_plan
from salamander_control.ros.held_signals import HELD_SIGINT_PACKAGES
from salamander_testing import REPO
from salamander_testing.node_process import console_scripts

PACKAGES = (
    "salamander_control", "salamander_sim", "salamander_behavior", "salamander_teleop", "salamander_view"
)


def test_every_node_entry_point_runs_through_run_node():
    assert HELD_SIGINT_PACKAGES == set(PACKAGES)
    nodes = 0
    for pkg in PACKAGES:
        for name, target in console_scripts(pkg).items():
            module_name, func = target.split(":")
            if ".nodes." not in module_name:
                continue  # command-line tools (salamanderctl, workspace_plot): not started by the runner
            main = getattr(importlib.import_module(module_name), func)
            calls = [n for n in ast.walk(ast.parse(inspect.getsource(main)))
                     if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "run_node"]  # fmt: skip
            assert calls, f"{pkg}/{name}: main() does not call run_node"
            nodes += 1
    assert nodes >= 9
    launched = load_plan(REPO / "launch" / "arm_control.launch.xml", {"gamepad": "true"}).nodes
    for node in launched:
        if node.pkg in HELD_SIGINT_PACKAGES:
            assert ".nodes." in console_scripts(node.pkg)[node.executable], node.fqn
