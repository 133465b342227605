"""The launch file, its parameter files, the runner that starts it without ros2, and scripts/run.sh.

The launch file is the single source of truth: `ros2 launch` runs it on a full install, the runner here.
These tests pin what it starts (nodes, names, namespaces, parameter files), that it stays valid
launch_xml, that its parameter files are what the nodes will load, and how the runner behaves around
processes: prefixed output, clean stop on Ctrl-C/SIGTERM/--duration, failure when a node dies or hangs.
"""

import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path

import psutil
import pytest
import yaml
from rclpy.action import get_action_client_names_and_types_by_node, get_action_server_names_and_types_by_node
from rclpy.node import Node as RclpyNode
from rclpy.parameter import parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient

from salamander_bringup import runner as runner_module
from salamander_bringup.launch_plan import LaunchPlan, find_executable, load_plan
from salamander_bringup.runner import clean_exit
from salamander_control import names, params_file
from salamander_control.kinematics import ArmParams
from salamander_control.trajectory.params import motion_limit_specs
from salamander_testing import REPO as REPO_ROOT
from salamander_testing.node_process import console_scripts
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import next_domain_id, ros_env, spin_until
from salamander_testing.runner_faults import kill_node, node_pid

ROOT = REPO_ROOT
LAUNCH = ROOT / "launch" / "arm_control.launch.xml"
SETUP_PY = ROOT / "salamander_control" / "setup.py"
ALL_ON = {"gamepad": "true", "sim_operator": "true"}  # every node of the launch file (both off by default)
RUNNER = [sys.executable, "-m", "salamander_bringup.runner"]

# (fully qualified name, executable, parameter files in load order) of the default bring-up: the arm
# stack (issue 3), then the simulated cell, the behaviour server and the gamepad controller (issue 4).
# Every node that uses the arm model loads arm.yaml first (issue 8: the model is written once).
ARM, LIMITS = "arm.yaml", "motion_limits.yaml"
ARM_STACK = [
    ("/arm/sim_hardware", "sim_hardware", ("sim_hardware.yaml",)),
    ("/arm/trajectory_generator", "trajectory_generator", (ARM, LIMITS, "trajectory_generator.yaml")),
    ("/arm/arm_kinematics_node", "arm_kinematics_node", (ARM,)),
    ("/arm/arm_cartesian_motion_node", "arm_cartesian_motion_node", (ARM, LIMITS, "cartesian_motion.yaml")),
    ("/salamander/ik_ghost_node", "ik_ghost_node", (ARM, "ghost.yaml")),
    ("/salamander/cell_sim", "cell_sim", (ARM, "cell.yaml")),
    ("/salamander/behavior_server_node", "behavior_server_node", (ARM, "behavior.yaml")),
    ("/salamander/controller_node", "controller_node", (ARM, "teleop.yaml")),
    ("/salamander/operator_view", "operator_view", ("arm.yaml", "view.yaml")),  # the browser view (issue 10)
]  # fmt: skip
SIMULATED = {"/arm/sim_hardware", "/salamander/cell_sim"}

# launch_xml's attribute names for the actions used (launch's DeclareLaunchArgument, SetLaunchConfiguration
# and GroupAction, launch_ros's PushRosNamespace, SetRemap, Node and its <param>); anything else would be
# a typo `ros2 launch` rejects or silently ignores.
LAUNCH_XML_ATTRS = {
    "launch": set(),
    "arg": {"name", "default", "description"},
    "let": {"name", "value"},
    "group": set(),
    "push-ros-namespace": {"namespace"},
    "set_remap": {"from", "to"},
    "node": {"pkg", "exec", "name", "namespace", "output", "args", "ros_args", "if", "unless", "respawn",
             "respawn_delay"},
    "param": {"name", "value", "from"},
    "remap": {"from", "to"},
}


def plan_summary(plan):
    return [(n.fqn, n.executable, tuple(Path(f).name for f in n.param_files)) for n in plan.nodes]


# --- the launch file and its parameter files -------------------------------------------------------


def test_launch_file_is_launch_xml_with_known_tags_and_attributes():
    root = ET.parse(LAUNCH).getroot()
    assert root.tag == "launch"
    for elem in root.iter():
        assert elem.tag in LAUNCH_XML_ATTRS, f"<{elem.tag}> is not used by this project's launch files"
        unknown = set(elem.attrib) - LAUNCH_XML_ATTRS[elem.tag]
        assert not unknown, f"<{elem.tag} {elem.attrib}>: not launch_xml attributes: {unknown}"
    for node in root.iter("node"):
        assert {"pkg", "exec", "name", "namespace"} <= set(node.attrib), node.attrib
        # Relative: the node's sub-namespace (arm, salamander) goes under the stack's (`cell`).
        assert not node.get("namespace").startswith("/"), node.attrib
        for param in node.iter("param"):
            assert set(param.attrib) in ({"from"}, {"name", "value"}), param.attrib
    use_sim = [a for a in root.iter("arg") if a.get("name") == "use_sim"]
    assert len(use_sim) == 1 and use_sim[0].get("default") == "true"
    gated = [n.get("name") for n in root.iter("node") if n.get("if") == "$(var use_sim)"]
    assert gated == ["sim_hardware", "cell_sim"], "use_sim must gate the simulated hardware and cell only"


def test_plan_has_exactly_the_arm_stack_and_use_sim_false_drops_only_the_sim():
    plan = load_plan(LAUNCH)
    assert plan_summary(plan) == ARM_STACK
    defaults = {"use_sim": "true", "autonomy": "true", "run_on_start": "true", "teleop": "true",
                "gamepad": "false", "cell": "", "rviz": "false", "view": "true", "sim_operator": "false",
                "cell_config": str(LAUNCH.parent / ".." / "config" / "cell.yaml")}
    assert plan.values == defaults
    real = load_plan(LAUNCH, {"use_sim": "false"})
    assert plan_summary(real) == [entry for entry in ARM_STACK if entry[0] not in SIMULATED]
    # The unattended demo runs by itself in simulation; on the robot the operator starts each run.
    bt = "/salamander/behavior_server_node"
    assert ("run_on_start", "true") in next(n for n in plan.nodes if n.fqn == bt).params
    assert ("run_on_start", "false") in next(n for n in real.nodes if n.fqn == bt).params
    # 1 and 0, which conditions take, reach the node as a bool: as "1" rcl made it an integer, which the
    # server's bool parameter refused at every start (respawned without end).
    for given, passed in (("1", "true"), ("0", "false")):
        numeric = load_plan(LAUNCH, {"use_sim": given})
        assert ("run_on_start", passed) in next(n for n in numeric.nodes if n.fqn == bt).params
    for path in {f for n in plan.nodes for f in n.param_files}:
        assert Path(path).resolve().parent == ROOT / "config"


# The nodes ros2 launch and the runner restart when they exit on its own (issue 13 item 9); the launch
# file says why for each. Not the generator (the safety core, its lease), nor the simulators.
RESPAWNING = {"/arm/arm_kinematics_node", "/arm/arm_cartesian_motion_node", "/salamander/ik_ghost_node",
              "/salamander/behavior_server_node", "/salamander/controller_node", "/salamander/gamepad_node",
              "/salamander/operator_view", "/salamander/sim_operator"}


def test_the_respawning_nodes_are_the_safe_ones_and_each_says_why():
    plan = load_plan(LAUNCH, ALL_ON)
    assert {n.fqn for n in plan.nodes if n.respawn.respawn} == RESPAWNING
    respawning = [n.respawn for n in plan.nodes if n.respawn.respawn]
    assert all(r.delay == 2.0 and r.max_retries == -1 for r in respawning)
    text = LAUNCH.read_text()
    for node in plan.nodes:
        assert re.search(rf"{node.name}[^>]*: (yes|no)\.", text), f"no reason given for {node.fqn}"


def _param_files():
    files = {}
    for node in load_plan(LAUNCH, ALL_ON).nodes:
        for path in node.param_files:
            files.setdefault(Path(path).resolve(), set()).add(node.fqn)
    return files


def _is_ros_param_value(value):
    scalar = (bool, int, float, str)
    if isinstance(value, scalar):
        return True
    return isinstance(value, list) and len({type(v) for v in value}) <= 1 and all(
        isinstance(v, scalar) for v in value
    )


def test_param_files_are_ros_params_files_keyed_by_the_nodes_that_load_them():
    for path, fqns in _param_files().items():
        data = yaml.safe_load(path.read_text())
        assert isinstance(data, dict), f"{path.name}: not a mapping"
        # A section that applies to no node loading the file, or a loading node no section applies to,
        # means parameters that silently never apply. Keys are wildcards (/**/* for a file every loading
        # node shares, /**/<node name> otherwise), so the files apply under any cell:= namespace; never
        # /**, under which rcl files a command-line -p, which the node's own section would then override.
        for key in data:
            assert key == "/**/*" or re.fullmatch(r"/\*\*/[A-Za-z_]\w*", key), f"{path.name}: key {key}"
            assert any(params_file.key_matches(key, fqn) for fqn in fqns), (
                f"{path.name}: {key} applies to none of the nodes loading it, {sorted(fqns)}"
            )
        for fqn in fqns:
            keys = [key for key in data if params_file.key_matches(key, fqn)]
            assert keys, f"{path.name}: no section applies to {fqn}"
        for fqn, section in data.items():
            assert isinstance(section, dict) and set(section) == {"ros__parameters"}, f"{path.name}: {fqn}"
            params = section["ros__parameters"]
            assert isinstance(params, dict) and params, f"{path.name}: {fqn} sets no parameters"
            for name, value in params_file.flatten(params).items():
                assert _is_ros_param_value(value), f"{path.name}: {fqn}: {name} = {value!r}"


def test_the_arm_model_and_the_motion_limits_are_written_once_and_every_user_loads_them_first():
    # The generator clamps, the kinematics node solves and the ghost judges with the arm model; written
    # in one file that each of them loads, they cannot disagree at start-up (a one-line edit changes all).
    arm_fields = {f.name for f in fields(ArmParams)}
    motion = {s.name for s in motion_limit_specs()}
    for path in _param_files():
        written = {name for _key, values in params_file.sections(params_file.load(path)) for name in values}
        if path.name == "arm.yaml":
            assert written == arm_fields
        elif path.name == "motion_limits.yaml":
            assert written == motion
        else:
            assert not written & arm_fields, f"{path.name} repeats arm-model values: {written & arm_fields}"
            assert not motion <= written, f"{path.name} repeats the motion limits"
    ArmParams(**params_file.node_values([ROOT / "config" / "arm.yaml"], "/any/node"))  # a valid arm
    for node in load_plan(LAUNCH, ALL_ON).nodes:
        module = importlib.import_module(console_scripts(node.pkg)[node.executable].split(":")[0])
        declared = {s.name for s in module.params.param_specs()}
        files = [Path(f).name for f in node.param_files]
        uses_arm, uses_limits = arm_fields <= declared, motion <= declared
        assert ("arm.yaml" in files) == uses_arm and (not uses_arm or files[0] == "arm.yaml"), node.fqn
        assert ("motion_limits.yaml" in files) == uses_limits, node.fqn
        if uses_limits:
            assert files.index("motion_limits.yaml") == 1, node.fqn  # after arm.yaml, before its own
        values = params_file.node_values(node.param_files, node.fqn)
        assert set(values) <= declared, f"{node.fqn}: undeclared {set(values) - declared}"
        for cell in ("cell2", "site/cell3"):  # the same values whatever namespace the stack is under
            assert params_file.node_values(node.param_files, f"/{cell}{node.fqn}") == values, node.fqn


def test_every_executable_is_a_registered_console_script_that_is_built():
    for node in load_plan(LAUNCH, ALL_ON).nodes:
        scripts = console_scripts(node.pkg)
        assert node.executable in scripts, f"{node.executable} is not a console script in setup.py"
        module, func = scripts[node.executable].split(":")
        assert func == "main"
        assert importlib.util.find_spec(module) is not None, f"{module} (for {node.executable}) is missing"
        assert Path(find_executable(node.pkg, node.executable)).is_file()


def test_setup_py_installs_the_launch_file_and_every_config_file(tmp_path):
    # colcon evaluates setup.py in the package folder and, for --symlink-install, in build/<pkg>/
    # through a symlink; both must find launch/ and config/ at the repository root.
    build = tmp_path / "build" / "salamander_control"
    build.mkdir(parents=True)
    (build / "setup.py").symlink_to(SETUP_PY)
    (build / "setup.cfg").symlink_to(SETUP_PY.with_name("setup.cfg"))
    probe = (
        "from distutils.core import run_setup; import os, json;"
        "d = run_setup('setup.py', script_args=('--dry-run',), stop_after='config');"
        "print(json.dumps([(dst, [os.path.realpath(s) for s in src]) for dst, src in d.data_files]))"
    )
    want_launch = sorted(str(p) for p in (ROOT / "launch").glob("*.launch.xml"))
    # The parameter files and the rviz view (rviz:=true).
    want_config = sorted(str(p) for pattern in ("*.yaml", "*.rviz") for p in (ROOT / "config").glob(pattern))
    want_urdf = [str(ROOT / "urdf" / "salamander.urdf")]  # read by the launch file ($(command cat ...))
    assert (ROOT / "config" / "salamander.rviz").is_file()
    assert str(LAUNCH) in want_launch
    for cwd in (SETUP_PY.parent, build):
        out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        data = {dst: sorted(src) for dst, src in json.loads(out.stdout.splitlines()[-1])}
        assert data["share/salamander_control/launch"] == want_launch, cwd
        assert data["share/salamander_control/config"] == want_config, cwd
        assert data["share/salamander_control/urdf"] == want_urdf, cwd


def test_dry_run_of_run_sh_prints_the_ros2_run_command_of_every_node():
    out = subprocess.run([str(ROOT / "scripts" / "run.sh"), "--dry-run"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"launch file: {LAUNCH}"
    assert "arg use_sim:=true" in lines
    commands = [line for line in lines if line.startswith("[")]
    assert len(commands) == len(ARM_STACK)
    pkgs = {n.executable: n.pkg for n in load_plan(LAUNCH).nodes}
    for line, (fqn, exe, param_files) in zip(commands, ARM_STACK, strict=True):
        ns, name = fqn.rsplit("/", 1)
        files = " ".join(f"--params-file {ROOT / 'launch'}/../config/{f}" for f in param_files)
        assert line.startswith(
            f"[{name}] {find_executable(pkgs[exe], exe)} --ros-args -r __node:={name} -r __ns:={ns} {files}"
        )
    real = subprocess.run(
        [str(ROOT / "scripts" / "run.sh"), "use_sim:=false", "--dry-run"], capture_output=True, text=True
    )
    assert real.returncode == 0, real.stderr
    assert "[sim_hardware]" not in real.stdout and "[cell_sim]" not in real.stdout
    assert real.stdout.count("--ros-args") == len(ARM_STACK) - len(SIMULATED)
    # A simulated start is a new world: its run progress starts fresh (SALAMANDER_PROGRESS_DIR, progress.py);
    # the robot's stays in $ROS_HOME, across starts.
    fresh = "the run's progress would start fresh"
    assert fresh in out.stderr and fresh not in real.stderr


def test_dry_run_with_a_cell_moves_every_node_under_it():
    out = subprocess.run([str(ROOT / "scripts" / "run.sh"), "--dry-run", "cell:=cell2"], capture_output=True,
                         text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "arg cell:=cell2" in out.stdout.splitlines()
    commands = [line for line in out.stdout.splitlines() if line.startswith("[")]
    assert len(commands) == len(ARM_STACK)
    for line, (fqn, _exe, _file) in zip(commands, ARM_STACK, strict=True):
        ns, name = fqn.rsplit("/", 1)
        assert f" -r __node:={name} -r __ns:=/cell2{ns} " in line, line
        assert " -r joint_states:=/cell2/joint_states " in line, line


# --- names: the pinned ones in the default launch, a whole second stack under cell:=... ------------

PINNED_NODES = ["/arm/trajectory_generator", "/arm/arm_kinematics_node", "/arm/arm_cartesian_motion_node",
                "/salamander/behavior_server_node"]  # fmt: skip
PINNED_NAMES = ["/joint_states", "/arm/joint_target", "/salamander/ik_ghost/status",
                "/salamander/ik_ghost/joint_state", "/salamander/operator/jog",
                "/salamander/operator/confirm", "/joy"]  # fmt: skip


def _node_class(node):
    """The rclpy Node subclass the console script of a planned node runs (the one its module defines)."""
    module = importlib.import_module(console_scripts(node.pkg)[node.executable].split(":")[0])
    classes = [
        v for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, RclpyNode) and v.__module__ == module.__name__
    ]  # fmt: skip
    assert len(classes) == 1, f"{module.__name__}: {classes}"
    return classes[0]


def _names_used(node):
    """Every topic, service and action `node` (an rclpy Node) has, as the ROS graph shows them, without
    the ones every node has (its parameter services, /rosout, /parameter_events)."""
    name, ns, fqn = node.get_name(), node.get_namespace(), node.get_fully_qualified_name()
    found = set()
    for query in (
        node.get_publisher_names_and_types_by_node, node.get_subscriber_names_and_types_by_node,
        node.get_service_names_and_types_by_node, node.get_client_names_and_types_by_node,
    ):  # fmt: skip
        found |= {topic for topic, _types in query(name, ns)}
    actions = set()
    for query in (get_action_server_names_and_types_by_node, get_action_client_names_and_types_by_node):
        actions |= {action for action, _types in query(node, name, ns)}
    found = {n for n in found if not any(n.startswith(f"{a}/_action/") for a in actions)}
    everyones = ("/rosout", "/parameter_events")
    return {n for n in found | actions if not n.startswith(fqn + "/") and n not in everyones}


@pytest.mark.ros
@pytest.mark.parametrize("cell", ["", "cell2"])
def test_every_node_placed_by_the_launch_file_uses_only_names_of_its_own_stack(ros_context, cell):
    """Each node built as the launch file places it (namespace, remaps, parameters): every name it
    publishes, subscribes, serves or calls is a name of the stack it belongs to (names.absolute: a missing
    remap would leave e.g. /salamander/joint_states), and the default launch has every pinned name."""
    plan = load_plan(LAUNCH, {**ALL_ON, "cell": cell})
    stack = {names.absolute(name, cell) for name in names.HOMES}
    used = set()
    for planned in plan.nodes:
        args = ["--ros-args", "-r", f"__ns:={planned.namespace}", "-r", f"__node:={planned.name}"]
        args += [f for path in planned.param_files for f in ("--params-file", path)]
        args += [f for key, value in planned.params for f in ("-p", f"{key}:={value}")]
        args += [f for src, dst in planned.remaps for f in ("-r", f"{src}:={dst}")]
        node = _node_class(planned)(context=ros_context, cli_args=args)
        try:
            assert node.get_fully_qualified_name() == planned.fqn == names.absolute(planned.name, cell)
            names_used = _names_used(node)
        finally:
            node.destroy_node()
        assert names_used, planned.fqn
        assert names_used <= stack, f"{planned.fqn} uses names outside its stack: {names_used - stack}"
        used |= names_used
    if cell:
        assert all(n.startswith("/cell2/") for n in used)
        assert {n.fqn for n in plan.nodes} == {"/cell2" + fqn for fqn, *_ in ARM_STACK} | {
            "/cell2/salamander/gamepad_node", "/cell2/salamander/sim_operator"
        }
    else:
        assert set(PINNED_NODES) <= {n.fqn for n in plan.nodes}
        assert set(PINNED_NAMES) <= used


# --- the launch-file reader on its own: what it refuses, clearly ------------------------------------


def write_launch(tmp_path, body, name="t.launch.xml"):
    path = tmp_path / name
    path.write_text(f"<launch>\n{textwrap.dedent(body)}\n</launch>\n")
    return path


def test_reader_resolves_nested_substitutions_conditions_and_builds_the_launch_ros_command(tmp_path):
    (tmp_path / "p.yaml").write_text("/ns/n:\n  ros__parameters: {a: 1}\n")
    path = write_launch(tmp_path, """
        <arg name="pkg" default="demo"/>
        <arg name="real" default="False"/>
        <node pkg="$(var pkg)" exec="e" name="n" namespace="ns" args="--x 'a b'" ros_args="--log-level debug"
              unless="$(var real)">
          <param from="$(dirname)/p.yaml"/>
          <param name="share" value="$(find-pkg-share $(var pkg))/cfg"/>
          <remap from="in" to="/out"/>
        </node>
        <node pkg="p" exec="e" name="m" if="$(var real)"/>
    """)
    plan = load_plan(path, find_share=lambda pkg: f"/opt/share/{pkg}")
    assert [n.fqn for n in plan.nodes] == ["/ns/n"]
    assert plan.nodes[0].command("/bin/e") == [
        "/bin/e", "--x", "a b", "--ros-args", "--log-level", "debug",
        "--ros-args", "-r", "__node:=n", "-r", "__ns:=/ns", "--params-file", f"{tmp_path}/p.yaml",
        "-p", "share:=/opt/share/demo/cfg", "-r", "in:=/out",
    ]  # fmt: skip
    assert [n.fqn for n in load_plan(path, {"real": "1"}, find_share=lambda pkg: pkg).nodes] == ["/m"]


def test_runner_exits_2_and_starts_nothing_on_a_bad_launch_file(tmp_path):
    path = write_launch(tmp_path, '<node pkg="p" exec="e" name="n" launch-prefix="gdb"/>')
    out = subprocess.run([*RUNNER, str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "runner: error:" in out.stderr and "launch-prefix" in out.stderr
    assert out.stdout == ""


# --- the runner around real processes (stand-in nodes in a fake ament prefix) ----------------------


def standin_prefix(prefix: Path, pkg: str) -> None:
    """An install prefix in which `pkg` is an ament package whose executable `standin` runs
    test/runner_standin_node.py."""
    (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / pkg).touch()
    exe = prefix / "lib" / pkg / "standin"
    exe.parent.mkdir(parents=True)
    script = Path(__file__).with_name("runner_standin_node.py")
    exe.write_text(f"#!{sys.executable}\nimport runpy\n"
                   f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    exe.chmod(0o755)


@pytest.fixture
def standin(tmp_path):
    """A launch file of stand-in nodes (test/runner_standin_node.py) and the environment to run it."""
    prefix = tmp_path / "prefix"
    standin_prefix(prefix, "standin_pkg")
    (tmp_path / "talker.yaml").write_text("/fixture/talker:\n  ros__parameters:\n    greeting: hello\n")
    launch = write_launch(tmp_path, """
        <arg name="crash" default="false"/>
        <node pkg="standin_pkg" exec="standin" name="talker" namespace="/fixture" output="screen">
          <param from="$(dirname)/talker.yaml"/>
        </node>
        <node pkg="standin_pkg" exec="standin" name="listener" namespace="fixture" output="screen">
          <param name="greeting" value="hi"/>
        </node>
        <node pkg="standin_pkg" exec="standin" name="crasher" namespace="/fixture"
              args="--exit-after 1.0 --exit-code 3" if="$(var crash)"/>
    """, name="standin.launch.xml")
    env = ros_env(next_domain_id())
    env["AMENT_PREFIX_PATH"] = f"{prefix}{os.pathsep}{env.get('AMENT_PREFIX_PATH', '')}"
    return launch, env


@pytest.fixture
def run_runner(tmp_path):
    """start(args, env) -> the runner as a ChildProcess in a process group of its own (like a shell job:
    a terminal's Ctrl-C goes to the whole group); stopped after the test."""
    started = []

    def start(args, env):
        log = tmp_path / f"runner_{len(started)}.log"
        runner = ChildProcess([*RUNNER, *args], env, log, process_group=True)
        started.append(runner)
        return runner

    yield start
    for runner in started:
        runner.stop(timeout=15.0)


def pids_in(text):
    return [int(p) for p in re.findall(r"pid=(\d+)", text)]


def assert_prefixed(runner, labels):
    for line in runner.lines:
        assert re.match(rf"^\[({'|'.join(labels)})\] ", line), f"unprefixed line {line!r}"
    assert "\033[" not in runner.text(), "colour codes on a pipe"


@pytest.mark.ros
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_runner_starts_nodes_like_ros2_run_prefixes_output_and_stops_cleanly(standin, run_runner, how):
    launch, env = standin
    runner = run_runner([str(launch)], env)
    assert runner.wait_for_text(
        "[talker] up as /fixture/talker greeting=hello",  # name, namespace and the params file applied
        "[listener] up as /fixture/listener greeting=hi",  # relative namespace made absolute; -p applied
    ), runner.text()
    if how == "ctrl-c":
        os.killpg(runner.proc.pid, signal.SIGINT)  # what a terminal does: the whole foreground group
    else:
        runner.proc.send_signal(signal.SIGTERM)
    assert runner.wait() == 0, runner.text()
    assert "[talker] stopped cleanly" in runner.lines and "[listener] stopped cleanly" in runner.lines
    assert_prefixed(runner, ["talker", "listener", "runner"])
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)], "node processes left behind"


@pytest.mark.ros
def test_runner_stops_the_rest_and_fails_when_a_node_dies(standin, run_runner):
    launch, env = standin
    runner = run_runner([str(launch), "crash:=true"], env)
    assert runner.wait() == 1, runner.text()
    assert "[crasher] crashing with code 3" in runner.lines
    assert "[runner] /fixture/crasher exited unexpectedly with code 3" in runner.lines
    assert "[runner] stopping (a node died)" in runner.lines
    assert_prefixed(runner, ["talker", "listener", "crasher", "runner"])
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)], "node processes left behind"


@pytest.mark.parametrize("second_interrupt", [False, True])
def test_runner_kills_a_node_that_ignores_sigint_and_fails(standin, run_runner, second_interrupt):
    launch, env = standin
    no_ros = write_launch(launch.parent, """
        <node pkg="standin_pkg" exec="standin" name="stubborn" args="--ignore-sigint"/>
    """, name="hang.launch.xml")
    runner = run_runner([str(no_ros), "--stop-timeout", "30" if second_interrupt else "1"], env)
    assert runner.wait_for_text("[stubborn] ignoring SIGINT"), runner.text()
    runner.proc.send_signal(signal.SIGINT)
    why = "second interrupt" if second_interrupt else "not stopped after 1 s"
    if second_interrupt:  # an impatient operator presses Ctrl-C again: kill now, not after the stop timeout
        assert runner.wait_for_text("[runner] stopping (SIGINT)"), runner.text()
        for _ in range(20):  # again and again: a press within REPEAT_WINDOW_S of the first is the same stop
            runner.proc.send_signal(signal.SIGINT)
            if runner.wait_for_text(f"[runner] /stubborn {why}: killing it", timeout=0.5):
                break
    assert runner.wait(timeout=15) == 1, runner.text()
    assert f"[runner] /stubborn {why}: killing it" in runner.lines
    assert "[runner] stopped, with failures (exit code 1)" in runner.lines
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)]


@pytest.mark.ros
def test_a_stop_signal_sent_to_the_runner_and_its_group_at_once_is_one_clean_stop(standin, run_runner):
    """`timeout -s INT` (and supervisors like it) signal the runner, then its process group: the runner
    gets the signal twice within microseconds. That is one stop, not an operator's second Ctrl-C (which
    would kill every node): each node stops cleanly. Before, a fresh clone's `timeout -s INT 420
    ./scripts/up.sh` ended with every node killed (-9) and exit code 1."""
    launch, env = standin
    runner = run_runner([str(launch)], env)
    assert runner.wait_for_text("[talker] up as", "[listener] up as"), runner.text()
    os.kill(runner.proc.pid, signal.SIGINT)  # what timeout does: the child ...
    os.killpg(runner.proc.pid, signal.SIGINT)  # ... then its group (the runner alone: nodes have their own)
    assert runner.wait() == 0, runner.text()
    assert "[runner] all nodes stopped cleanly" in runner.lines
    assert not any("killing it" in line for line in runner.lines), runner.text()


def test_a_stop_request_within_the_repeat_window_is_the_same_stop_one_after_it_kills(monkeypatch):
    """The rule behind the test above, deterministic: the signal handler's `request_stop` on a clock."""
    clock = [100.0]
    monkeypatch.setattr(runner_module.time, "monotonic", lambda: clock[0])
    supervisor = runner_module.Supervisor(LaunchPlan("x.launch.xml", (), {}, ()), io.StringIO(), 5.0)
    supervisor.request_stop("SIGINT")
    clock[0] += runner_module.REPEAT_WINDOW_S * 0.9
    supervisor.request_stop("SIGINT")  # the same signal again (timeout: the child, then its group)
    assert supervisor._stop_reason == "SIGINT" and not supervisor._kill_now
    clock[0] += runner_module.REPEAT_WINDOW_S * 0.2  # past the window since the first: a second Ctrl-C
    supervisor.request_stop("SIGTERM")
    assert supervisor._stop_reason == "SIGINT" and supervisor._kill_now


def test_an_output_that_closes_stops_the_stack_and_never_blocks_a_relay():
    """`./scripts/run.sh | head`: the write failed in a relay thread, which died with the node's pipe
    unread; once it filled, the node blocked on its own log (the generator too)."""

    class Closed(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            Closed.writes += 1
            raise BrokenPipeError(32, "Broken pipe")

        def isatty(self) -> bool:
            return False

    supervisor = runner_module.Supervisor(LaunchPlan("x.launch.xml", (), {}, ()), Closed(), 5.0)
    supervisor.say("a line")  # no exception: the relay goes on draining
    supervisor.say("another")
    assert Closed.writes == 1 and supervisor._stop_reason == "its output was closed"


def test_death_by_sigint_is_a_clean_stop_only_for_nodes_outside_the_project():
    # run_node never lets a SIGINT end a project node: dead of it (-2), it raised KeyboardInterrupt
    # somewhere, with a traceback (issue 23 item 2: the runner said "all nodes stopped cleanly" then).
    assert clean_exit(0, "salamander_control") and not clean_exit(-signal.SIGINT, "salamander_sim")
    assert not clean_exit(128 + signal.SIGINT, "salamander_behavior")
    assert clean_exit(-signal.SIGINT, "rviz2") and clean_exit(128 + signal.SIGINT, "robot_state_publisher")


def py_spy_reads_a_child() -> bool:
    """Whether py-spy, as the runner runs it, can read a child process of this one (ptrace allowed)."""
    tool = runner_module.py_spy()
    assert tool is not None, "py-spy is pinned in requirements.txt"
    waiting = [sys.executable, "-c", "import sys; print('up', flush=True); sys.stdin.read()"]
    with subprocess.Popen(waiting, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as child:
        try:
            assert child.stdout is not None and child.stdout.readline() == b"up\n"  # its interpreter runs
            read = subprocess.run([tool, "dump", "--pid", str(child.pid)], capture_output=True, timeout=30)
        finally:
            child.communicate(b"")
    return read.returncode == 0


@pytest.mark.ros
def test_a_project_node_that_hangs_in_its_stop_prints_its_stacks_before_it_is_killed(standin, run_runner):
    """A node of the project's packages (started through run_node) that does not stop in time is asked
    for its threads' stacks (faulthandler), and py-spy reads their native frames, before the kill: the log
    names the frame it hung in, and the C function below it."""
    launch, env = standin
    prefix = launch.parent / "project_prefix"  # the stand-in, registered under a project package's name
    standin_prefix(prefix, "salamander_control")
    env = {**env, "AMENT_PREFIX_PATH": f"{prefix}{os.pathsep}{env['AMENT_PREFIX_PATH']}"}
    hang = write_launch(launch.parent, """
        <node pkg="salamander_control" exec="standin" name="hung" args="--hang-on-stop"/>
    """, name="hang_on_stop.launch.xml")
    runner = run_runner([str(hang), "--stop-timeout", "1"], env)
    assert runner.wait_for_text("[hung] up as /hung"), runner.text()
    runner.proc.send_signal(signal.SIGINT)
    assert runner.wait(timeout=15) == 1, runner.text()
    lines = runner.lines
    asked = lines.index("[runner] /hung not stopped after 1 s: its threads' stacks follow")
    killed = lines.index("[runner] /hung not stopped after 1 s: killing it")
    dump = lines[asked:killed]
    assert any(re.search(r"^\[hung\] .*line \d+ in destroy_node$", line) for line in dump), runner.text()
    # ... then py-spy's frames, native ones among them: the stand-in waits on an Event in destroy_node,
    # which faulthandler's dump ends at; under it, CPython's lock wait in C. Where this machine forbids a
    # parent to ptrace its child (a container without it), the runner says so instead, in one line.
    if not py_spy_reads_a_child():
        refused = "[runner] /hung: py-spy could not read its native frames: "
        assert any(line.startswith(refused) for line in dump), runner.text()
        return
    native = dump.index("[runner] /hung: native frames of its Python threads (py-spy) follow")
    frames = dump[native:]
    python_frame = re.compile(r"^\[hung\] +\S*destroy_node \(runner_standin_node\.py:\d+\)$")
    native_frame = re.compile(r"^\[hung\] +PyThread_acquire_lock\w* \(libpython")
    assert any(python_frame.search(f) for f in frames), runner.text()
    assert any(native_frame.search(f) for f in frames), runner.text()
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)]


@pytest.mark.ros
def test_runner_skips_the_nodes_of_a_missing_viewer_package_and_starts_the_rest(standin, run_runner):
    # rviz:=true on a machine without rviz2 (the bare machine): one line saying what is missing and how
    # to install it, then the rest runs as usual; a missing package of the stack itself stays an error.
    launch, env = standin
    viewer = write_launch(launch.parent, """
        <node pkg="standin_pkg" exec="standin" name="talker" namespace="/fixture"/>
        <node pkg="rviz2" exec="rviz2" name="rviz" namespace="/fixture" args="-d x.rviz"/>
    """, name="viewer.launch.xml")
    env = {**env, "ROS_DISTRO": "kilted"}
    runner = run_runner([str(viewer), "--duration", "60"], env)
    assert runner.wait_for_text("[talker] up as /fixture/talker"), runner.text()
    assert runner.lines[0] == ("[runner] rviz: package rviz2 is not installed here; skipping /fixture/rviz "
                               "(install ros-kilted-rviz2)")  # fmt: skip
    assert "started /fixture/talker" in runner.text() and "started /fixture/rviz" not in runner.text()
    runner.proc.send_signal(signal.SIGINT)
    assert runner.wait() == 0, runner.text()
    broken = write_launch(launch.parent, '<node pkg="no_such_pkg" exec="e" name="n"/>', name="bad.launch.xml")
    out = subprocess.run([*RUNNER, str(broken)], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 2 and "package 'no_such_pkg' not found" in out.stderr, out.stderr


def test_runner_stops_cleanly_after_duration(standin, run_runner):
    launch, env = standin
    plain = write_launch(launch.parent, """
        <node pkg="standin_pkg" exec="standin" name="a" args="--plain"/>
        <node pkg="standin_pkg" exec="standin" name="b" args="--plain"/>
    """, name="plain.launch.xml")
    start = time.monotonic()
    runner = run_runner([str(plain), "--duration", "2"], env)
    assert runner.wait() == 0, runner.text()
    assert time.monotonic() - start >= 2.0
    assert "[runner] stopping (--duration 2 s elapsed)" in runner.lines
    assert "[a] stopped cleanly" in runner.lines and "[b] stopped cleanly" in runner.lines


# --- respawn (launch's respawn / respawn_delay / respawn_max_retries) around real processes ---------


def _respawn_launch(launch, delay, retries=""):
    return write_launch(launch.parent, f"""
        <node pkg="standin_pkg" exec="standin" name="keeper" args="--plain" respawn="true"
              respawn_delay="{delay}" {retries}/>
        <node pkg="standin_pkg" exec="standin" name="fragile" args="--plain"/>
    """, name="respawn.launch.xml")


def test_runner_respawns_a_killed_respawn_node_and_a_non_respawn_death_stops_the_stack(standin, run_runner):
    launch, env = standin
    runner = run_runner([str(_respawn_launch(launch, 0.5))], env)
    assert runner.wait_for_text("[keeper] up pid=", "[fragile] up pid="), runner.text()
    first = node_pid(runner, "/keeper")
    again = kill_node(runner, "/keeper")  # SIGKILL: a crash
    assert "[runner] /keeper exited with code -9; respawning in 0.5 s (respawn 1)" in runner.lines
    assert runner.wait_for_text(f"[keeper] up pid={again}"), runner.text()
    # Any exit is respawned, a clean one too (launch's rule): the stand-in exits 0 on SIGINT.
    third = kill_node(runner, "/keeper", signal.SIGINT, exit_code=0)
    assert "[runner] /keeper exited with code 0; respawning in 0.5 s (respawn 2)" in runner.lines
    assert runner.wait_for_text(f"[keeper] up pid={third}"), runner.text()
    assert runner.alive() and not psutil.pid_exists(first)
    kill_node(runner, "/fragile", expect_respawn=False)
    assert runner.wait() == 1, runner.text()
    assert "[runner] stopping (a node died)" in runner.lines
    assert "[keeper] stopped cleanly" in runner.lines
    assert sum("started /" in line or "respawned /" in line for line in runner.lines) == 4, runner.text()
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)], "node processes left behind"


def test_runner_ctrl_c_during_a_respawn_delay_stops_cleanly_without_restarting(standin, run_runner):
    launch, env = standin
    runner = run_runner([str(_respawn_launch(launch, 30))], env)
    assert runner.wait_for_text("[keeper] up pid=", "[fragile] up pid="), runner.text()
    pid = node_pid(runner, "/keeper")
    os.kill(pid, signal.SIGKILL)
    assert runner.wait_for_text("[runner] /keeper exited with code -9; respawning in 30 s (respawn 1)"), (
        runner.text()
    )
    start = time.monotonic()
    os.killpg(runner.proc.pid, signal.SIGINT)
    assert runner.wait(timeout=15) == 0, runner.text()
    assert time.monotonic() - start < 10.0  # the 30 s delay is not waited out
    assert "[runner] /keeper: respawn cancelled (SIGINT)" in runner.lines
    assert "[runner] all nodes stopped cleanly" in runner.lines
    assert "[fragile] stopped cleanly" in runner.lines
    assert not any("respawned /keeper" in line for line in runner.lines)
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)], "node processes left behind"


def test_runner_stops_the_stack_when_the_respawn_retries_are_spent(standin, run_runner):
    launch, env = standin
    runner = run_runner([str(_respawn_launch(launch, 0, 'respawn_max_retries="1"'))], env)
    assert runner.wait_for_text("[keeper] up pid=", "[fragile] up pid="), runner.text()
    kill_node(runner, "/keeper")
    assert "[runner] /keeper exited with code -9; respawning in 0 s (respawn 1)" in runner.lines
    assert runner.wait_for_text("[keeper] up pid=", since=len(runner.lines) - 1), runner.text()
    kill_node(runner, "/keeper", expect_respawn=False)
    assert runner.wait() == 1, runner.text()
    assert "[runner] /keeper exited unexpectedly with code -9 (respawn_max_retries=1 spent)" in runner.lines
    assert "[fragile] stopped cleanly" in runner.lines


# --- the real stack ---------------------------------------------------------------------------------


@pytest.mark.ros
def test_arm_stack_comes_up_with_every_config_value_applied_and_stops_cleanly(
    ros_context, ros_executor, make_node, run_runner
):
    every_node = [f"{k}:={v}" for k, v in ALL_ON.items()]
    runner = run_runner([str(LAUNCH), *every_node], ros_env(ros_context.get_domain_id()))
    probe = make_node("bringup_probe")
    plan = load_plan(LAUNCH, ALL_ON)
    expected = {}
    for node in plan.nodes:  # what its files give it, merged as rcl does (arm.yaml first, its own last)
        expected[node.fqn] = params_file.node_values(node.param_files, node.fqn)
        for name, value in node.params:  # <param name= value=> in the launch file wins over the files
            expected[node.fqn][name] = yaml.safe_load(value)  # typed as rcl reads `-p name:=value`
    assert all(expected.values()) and sorted(expected) == sorted(n.fqn for n in plan.nodes)
    for fqn, params in expected.items():
        client = AsyncParameterClient(probe, fqn)
        assert spin_until(ros_executor, client.services_are_ready, timeout=30.0), (
            f"{fqn} did not come up:\n{runner.text()}"
        )
        future = client.get_parameters(list(params))
        assert spin_until(ros_executor, future.done, timeout=10.0)
        # A key the node does not declare comes back unset: the file would silently not apply.
        got = dict(zip(params, (parameter_value_to_python(v) for v in future.result().values), strict=False))
        assert got == params, f"{fqn}: running values differ from the parameter file"
    assert runner.proc.poll() is None, runner.text()
    runner.proc.send_signal(signal.SIGINT)
    assert runner.wait() == 0, runner.text()
    assert "[runner] all nodes stopped cleanly" in runner.lines


# --- a crash while a node is being built (before run_node says it is up: READY=1) ------------------


@pytest.fixture
def project_standin(standin, tmp_path):
    """(launch(args) -> a launch file of one stand-in node of a project package plus a plain one, env).

    The runner starts again only a node of the project's packages (they run `run_node`, which says when
    the node is up), so the stand-in is installed as salamander_sim's in a prefix before the real one."""
    _, env = standin
    prefix = tmp_path / "project_prefix"
    standin_prefix(prefix, "salamander_sim")
    env = {**env, "AMENT_PREFIX_PATH": f"{prefix}{os.pathsep}{env['AMENT_PREFIX_PATH']}"}

    def launch(args):
        return write_launch(tmp_path, f"""
            <node pkg="salamander_sim" exec="standin" name="built" namespace="/fixture" args="{args}"/>
            <node pkg="standin_pkg" exec="standin" name="bystander" args="--plain"/>
        """, name="startup.launch.xml")

    return launch, env


@pytest.mark.ros
def test_a_node_that_crashes_while_it_is_built_is_started_again_once_and_the_stack_runs_on(
    project_standin, run_runner, tmp_path
):
    launch, env = project_standin
    runner = run_runner([str(launch(f"--segv-while-built --once {tmp_path / 'crashed'}"))], env)
    assert runner.wait_for_text("[built] crashing while built pid="), runner.text()
    assert runner.wait_for_text("[built] up as /fixture/built", "[bystander] up pid="), runner.text()
    crashed = next(line for line in runner.lines if "before it was up" in line)
    assert crashed.startswith("[runner] /fixture/built died of SIGSEGV (code -11) before it was up"), crashed
    assert "start-up retry 1 of 1" in crashed
    assert runner.alive()
    os.killpg(runner.proc.pid, signal.SIGINT)
    assert runner.wait() == 0, runner.text()
    assert "[built] stopped cleanly" in runner.lines and "[runner] all nodes stopped cleanly" in runner.lines
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)], "node processes left behind"


@pytest.mark.ros
@pytest.mark.parametrize("args", ["--segv-while-built", "--segv-after 0.5"])
def test_a_second_crash_before_it_is_up_or_one_after_it_stops_the_stack(project_standin, run_runner, args):
    """Started again once only; and a node that said it was up is a running node: its crash stops the
    stack as any death does (no respawn here)."""
    launch, env = project_standin
    runner = run_runner([str(launch(args))], env)
    assert runner.wait() == 1, runner.text()
    retried = [line for line in runner.lines if "before it was up" in line]
    assert len(retried) == (1 if args == "--segv-while-built" else 0), runner.text()
    assert "[runner] /fixture/built exited unexpectedly with code -11" in runner.lines, runner.text()
    assert "[runner] stopping (a node died)" in runner.lines
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)], "node processes left behind"


@pytest.mark.ros
@pytest.mark.parametrize("once", [True, False])
def test_the_test_kit_starts_a_node_that_crashed_while_built_again_once_as_the_runner_does(tmp_path, once):
    """`ChildProcess(startup_retry=True)` (every `NodeProcess`): the same rule for the nodes a test starts."""
    script = Path(__file__).with_name("runner_standin_node.py")
    args = ["--segv-while-built", *(["--once", str(tmp_path / "crashed")] if once else [])]
    proc = ChildProcess([sys.executable, str(script), *args], ros_env(next_domain_id()), startup_retry=True)
    try:
        if once:
            assert proc.wait_for_text("up as /standin"), proc.describe()
            assert proc.alive()
        else:
            assert proc.wait(timeout=60) == -signal.SIGSEGV, proc.describe()
        retried = [line for line in proc.lines if "before it was up" in line]
        assert len(retried) == 1, proc.text()
        assert retried[0].startswith("[test kit] died of SIGSEGV (code -11)"), proc.text()
        assert sum("crashing while built" in line for line in proc.lines) == (1 if once else 2)
    finally:
        proc.stop()
    assert proc.proc.returncode == (0 if once else -signal.SIGSEGV), proc.describe()
    assert not proc._reader.is_alive()  # the output's reader ended with the last process (it once spun on)
