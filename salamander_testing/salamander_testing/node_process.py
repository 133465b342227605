"""A node of the stack started as a subprocess in a test's DDS domain, stopped cleanly afterwards.

Runs the installed console script (the entry point `ros2 run` / the launch file use), with the node's
name, namespace and remaps exactly as launch/arm_control.launch.xml places it (`stack_ros_args`, read
from the launch file through `bringup.launch_plan`, for the default stack or ``cell:=...``) and the
test's parameters on the command line. Its output (ROS logs go to stderr) is a `ChildProcess`'s: kept
in memory and in a log file, so a test can wait for a log line and show the node's output when an
assertion fails. Like the launch runner, it starts a node again once that died of a fatal signal before
it was up (`ChildProcess`'s ``startup_retry``).
"""

from __future__ import annotations

import configparser
import functools
from collections.abc import Sequence
from pathlib import Path

from salamander_bringup.launch_plan import NodePlan, load_plan
from salamander_testing import REPO as REPO_ROOT
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import ros_env

REPO = REPO_ROOT
INSTALL = REPO / "install"
"""The colcon install tree: console scripts are in install/<package>/lib/<package>/."""
LAUNCH = REPO / "launch" / "arm_control.launch.xml"
EVERY_NODE = {"use_sim": "true", "autonomy": "true", "teleop": "true", "gamepad": "true",
              "sim_operator": "true"}


@functools.cache
def _placements(cell: str) -> dict[str, NodePlan]:
    plan = load_plan(LAUNCH, {**EVERY_NODE, "cell": cell})
    return {node.name: node for node in plan.nodes}


def stack_ros_args(node: str, cell: str = "") -> list[str]:
    """``-r __ns:=NS -r __node:=NAME -r FROM:=TO ...``: the launch file's placement of a node.

    Args:
        node: the node's name, e.g. ``names.TRAJECTORY_GENERATOR``.
        cell: the stack, as ``cell:=CELL`` of the launch file; "" is the default stack.

    Raises:
        KeyError: the launch file starts no node of that name.
        LaunchFileError: the launch file cannot be read.
    """
    placed = _placements(cell)[node]
    args = ["-r", f"__ns:={placed.namespace}", "-r", f"__node:={placed.name}"]
    for src, dst in placed.remaps:
        args += ["-r", f"{src}:={dst}"]
    return args


def find_executable(executable: str) -> Path:
    """The installed console script `executable`, of whichever Salamander package provides it.

    Raises:
        FileNotFoundError: no package installs it (rebuild with scripts/setup.sh).
    """
    found = sorted(INSTALL.glob(f"*/lib/*/{executable}"))
    if not found:
        raise FileNotFoundError(f"no console script {executable!r} under {INSTALL} (run scripts/setup.sh)")
    return found[0]


def _param_arg(name: str, value: object) -> str:
    if isinstance(value, bool):
        return f"{name}:={'true' if value else 'false'}"
    if isinstance(value, float):
        return f"{name}:={value!r}"  # repr keeps the decimal point: 20.0 stays a double
    return f"{name}:={value}"


class NodeProcess(ChildProcess):
    """One running node: a `ChildProcess` started as the launch file starts the node.

    Args:
        executable: the node's console script (any Salamander package's, e.g. "cell_sim").
        node: the node's name (``names.KINEMATICS_NODE``); namespace and remaps are the launch file's.
        domain_id: the test's ROS_DOMAIN_ID.
        log_dir: where the log file goes (a pytest tmp_path).
        params: parameters to pass with ``-p``.
        params_file: a ``--params-file`` to pass, or several, in order (e.g. config_files.launch_param_files).
        cell: the stack (``cell:=...`` of the launch file) to place the node in; "" is the default.
        ros_args: more ``--ros-args`` arguments (e.g. ``("--log-level", "debug")``).
    """

    def __init__(
        self,
        executable: str,
        node: str,
        domain_id: int,
        log_dir: Path,
        params: dict[str, object] | None = None,
        params_file: Path | Sequence[Path] | None = None,
        cell: str = "",
        ros_args: Sequence[str] = (),
    ) -> None:
        cmd = [str(find_executable(executable)), "--ros-args", *stack_ros_args(node, cell)]
        files = [params_file] if isinstance(params_file, (str, Path)) else list(params_file or ())
        for path in files:
            cmd += ["--params-file", str(path)]
        for key, value in (params or {}).items():
            cmd += ["-p", _param_arg(key, value)]
        stack = cell.strip("/").replace("/", ".")
        log = log_dir / f"{stack + '.' if stack else ''}{node}.log"
        super().__init__([*cmd, *ros_args], ros_env(domain_id), log, startup_retry=True)


def console_scripts(pkg: str) -> dict[str, str]:
    """A package's console scripts, name -> 'module:function', from its setup.cfg."""
    config = configparser.ConfigParser(interpolation=None)
    config.read(REPO / pkg / "setup.cfg")
    lines = config.get("options.entry_points", "console_scripts", fallback="").strip().splitlines()
    return {name.strip(): target.strip() for name, target in (line.split("=", 1) for line in lines)}
