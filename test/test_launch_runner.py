"""The launch file, its parameter files, the runner that starts it without ros2, and scripts/run.sh.

The launch file is the single source of truth: `ros2 launch` runs it on a full install, the runner here.
These tests pin what it starts (nodes, names, namespaces, parameter files), that it stays valid
launch_xml, that its parameter files are what the nodes will load, and how the runner behaves around
processes: prefixed output, clean stop on Ctrl-C/SIGTERM/--duration, failure when a node dies or hangs.
"""

import ast
import importlib.util
import json
import os
import queue
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path

import psutil
import pytest
import yaml
from rclpy.parameter import parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient

from salamander_control.bringup.launch_plan import LaunchFileError, find_executable, load_plan
from salamander_control.kinematics import ArmParams
from salamander_control.testing import REPO as REPO_ROOT
from salamander_control.testing.ros_helpers import next_domain_id, ros_env, spin_until

ROOT = REPO_ROOT
LAUNCH = ROOT / "launch" / "arm_control.launch.xml"
SETUP_PY = ROOT / "salamander_control" / "setup.py"
ALL_ON = {"gamepad": "true"}  # every node of the launch file (the gamepad node is off by default)
RUNNER = [sys.executable, "-m", "salamander_control.bringup.runner"]

# (fully qualified name, executable, parameter file) of the default bring-up: the arm stack (issue 3),
# then the simulated cell, the behaviour server and the gamepad controller (issue 4).
ARM_STACK = [
    ("/arm/sim_hardware", "sim_hardware", "sim_hardware.yaml"),
    ("/arm/trajectory_generator", "trajectory_generator", "trajectory_generator.yaml"),
    ("/arm/arm_kinematics_node", "arm_kinematics_node", "kinematics.yaml"),
    ("/arm/arm_cartesian_motion_node", "arm_cartesian_motion_node", "cartesian_motion.yaml"),
    ("/salamander/ik_ghost_node", "ik_ghost_node", "kinematics.yaml"),
    ("/salamander/cell_sim", "cell_sim", "cell.yaml"),
    ("/salamander/behavior_server_node", "behavior_server_node", "behavior.yaml"),
    ("/salamander/controller_node", "controller_node", "teleop.yaml"),
]
SIMULATED = {"/arm/sim_hardware", "/salamander/cell_sim"}

# launch_xml's attribute names for the actions used (launch's DeclareLaunchArgument, launch_ros's Node
# and its <param>); anything else would be a typo `ros2 launch` rejects or silently ignores.
LAUNCH_XML_ATTRS = {
    "launch": set(),
    "arg": {"name", "default", "description"},
    "node": {"pkg", "exec", "name", "namespace", "output", "args", "ros_args", "if", "unless"},
    "param": {"name", "value", "from"},
}


def plan_summary(plan):
    return [(n.fqn, n.executable, Path(f).name) for n in plan.nodes for f in n.param_files]


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
        for param in node.iter("param"):
            assert set(param.attrib) in ({"from"}, {"name", "value"}), param.attrib
    use_sim = [a for a in root.iter("arg") if a.get("name") == "use_sim"]
    assert len(use_sim) == 1 and use_sim[0].get("default") == "true"
    gated = [n.get("name") for n in root.iter("node") if n.get("if") == "$(var use_sim)"]
    assert gated == ["sim_hardware", "cell_sim"], "use_sim must gate the simulated hardware and cell only"


def test_plan_has_exactly_the_arm_stack_and_use_sim_false_drops_only_the_sim():
    plan = load_plan(LAUNCH)
    assert plan_summary(plan) == ARM_STACK
    assert plan.values == {"use_sim": "true", "autonomy": "true", "teleop": "true", "gamepad": "false"}
    real = load_plan(LAUNCH, {"use_sim": "false"})
    assert plan_summary(real) == [entry for entry in ARM_STACK if entry[0] not in SIMULATED]
    for path in {f for n in plan.nodes for f in n.param_files}:
        assert Path(path).resolve().parent == ROOT / "config"


def _param_files():
    files = {}
    for node in load_plan(LAUNCH, ALL_ON).nodes:
        for path in node.param_files:
            files.setdefault(Path(path).resolve(), set()).add(node.fqn)
    return files


def flatten(params, prefix=""):
    """A params-file section as parameter names: nested mappings are dotted names (a.b), as rcl reads them."""
    out = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


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
        # A section for a node that does not load the file, or a loading node without a section, means
        # parameters that silently never apply.
        assert set(data) == fqns, f"{path.name}: sections {sorted(data)} but loaded by {sorted(fqns)}"
        for fqn, section in data.items():
            assert isinstance(section, dict) and set(section) == {"ros__parameters"}, f"{path.name}: {fqn}"
            params = section["ros__parameters"]
            assert isinstance(params, dict) and params, f"{path.name}: {fqn} sets no parameters"
            for name, value in flatten(params).items():
                assert _is_ros_param_value(value), f"{path.name}: {fqn}: {name} = {value!r}"


def test_arm_model_parameters_agree_in_every_file_and_form_a_valid_arm():
    # The generator clamps, the kinematics node solves and the ghost judges with these; if the files
    # disagree, the IK plans motions the clamp then bends.
    arm_fields = {f.name for f in fields(ArmParams)}
    seen = {}
    for path in _param_files():
        for fqn, section in yaml.safe_load(path.read_text()).items():
            for name, value in flatten(section["ros__parameters"]).items():
                if name in arm_fields:
                    seen.setdefault(name, {})[f"{path.name}:{fqn}"] = value
    for name, where in seen.items():
        assert len(set(where.values())) == 1, f"{name} differs between files: {where}"
    ArmParams(**{name: float(next(iter(where.values()))) for name, where in seen.items()})


def _console_scripts(pkg: str = "salamander_control"):
    tree = ast.parse((ROOT / pkg / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    entries = [ast.literal_eval(e) for e in value.elts]
                    return {n.strip(): t.strip() for n, t in (e.split("=", 1) for e in entries)}
    raise AssertionError("no console_scripts in setup.py")


def test_every_executable_is_a_registered_console_script_that_is_built():
    for node in load_plan(LAUNCH, ALL_ON).nodes:
        scripts = _console_scripts(node.pkg)
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
    want_config = sorted(str(p) for p in (ROOT / "config").glob("*.yaml"))
    assert str(LAUNCH) in want_launch
    for cwd in (SETUP_PY.parent, build):
        out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        data = {dst: sorted(src) for dst, src in json.loads(out.stdout.splitlines()[-1])}
        assert data["share/salamander_control/launch"] == want_launch, cwd
        assert data["share/salamander_control/config"] == want_config, cwd


def test_dry_run_of_run_sh_prints_the_ros2_run_command_of_every_node():
    out = subprocess.run([str(ROOT / "scripts" / "run.sh"), "--dry-run"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"launch file: {LAUNCH}"
    assert "arg use_sim:=true" in lines
    commands = [line for line in lines if line.startswith("[")]
    assert len(commands) == len(ARM_STACK)
    pkgs = {n.executable: n.pkg for n in load_plan(LAUNCH).nodes}
    for line, (fqn, exe, param_file) in zip(commands, ARM_STACK, strict=True):
        ns, name = fqn.rsplit("/", 1)
        assert line.startswith(
            f"[{name}] {find_executable(pkgs[exe], exe)} --ros-args -r __node:={name} "
            f"-r __ns:={ns} --params-file {ROOT / 'launch'}/../config/{param_file}"
        )
    real = subprocess.run(
        [str(ROOT / "scripts" / "run.sh"), "use_sim:=false", "--dry-run"], capture_output=True, text=True
    )
    assert real.returncode == 0, real.stderr
    assert "[sim_hardware]" not in real.stdout and "[cell_sim]" not in real.stdout
    assert real.stdout.count("--ros-args") == len(ARM_STACK) - len(SIMULATED)


# --- the launch-file reader on its own: what it refuses, clearly ------------------------------------


def write_launch(tmp_path, body, name="t.launch.xml"):
    path = tmp_path / name
    path.write_text(f"<launch>\n{textwrap.dedent(body)}\n</launch>\n")
    return path


@pytest.mark.parametrize(
    ("body", "args", "message"),
    [
        ('<node pkg="p" exec="e" name="n" respawn="true"/>', {}, "unsupported attribute(s) respawn"),
        ('<node pkg="p" exec="e" name="n" args="$(env HOME)"/>', {}, "unsupported substitution $(env HOME)"),
        ('<include file="x.launch.xml"/>', {}, "unsupported element <include>"),
        ('<arg name="a" default="1"/>', {"b": "2"}, "unknown launch argument(s) b (declared: a)"),
        ('<arg name="a"/>', {}, "launch argument 'a' is required"),
        ('<arg name="a" default="yes"/><node pkg="p" exec="e" name="n" if="$(var a)"/>', {}, "neither true"),
        ('<node pkg="p" exec="e" name="n"><param from="$(dirname)/nope.yaml"/></node>', {}, "nope.yaml"),
        ('<node pkg="p" exec="e" name="n"/><node pkg="p" exec="e" name="n"/>', {}, "more than one node"),
        ('<node pkg="p" exec="e" name="n" namespace="$(var x)"/>', {}, "$(var x) names no declared argument"),
        ('<node pkg="p" exec="e" name="n"><param name="a"/></node>', {}, "unsupported"),
        ('<node pkg="p" exec="e" name="n" namespace="$(dirname"/>', {}, "unterminated substitution"),
    ],
)
def test_reader_refuses_what_it_does_not_support_with_a_clear_message(tmp_path, body, args, message):
    with pytest.raises(LaunchFileError) as info:
        load_plan(write_launch(tmp_path, body), args, find_share=lambda pkg: f"/share/{pkg}")
    assert message in str(info.value)


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


@pytest.fixture
def standin(tmp_path):
    """A launch file of stand-in nodes (test/runner_standin_node.py) and the environment to run it."""
    prefix = tmp_path / "prefix"
    (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / "standin_pkg").touch()
    exe = prefix / "lib" / "standin_pkg" / "standin"
    exe.parent.mkdir(parents=True)
    script = Path(__file__).with_name("runner_standin_node.py")
    exe.write_text(f"#!{sys.executable}\nimport runpy\n"
                   f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    exe.chmod(0o755)
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


class RunnerProcess:
    """The runner as a subprocess with its output lines collected by a thread, waitable with deadlines."""

    def __init__(self, args, env):
        self.proc = subprocess.Popen(
            [*RUNNER, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            process_group=0,  # like a shell job: a terminal's Ctrl-C goes to this whole group
        )
        self.lines = []
        self._queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))

    def wait_for_lines(self, *wanted, timeout=30.0):
        deadline = time.monotonic() + timeout
        while not all(any(w in line for line in self.lines) for w in wanted):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"runner output lacks {wanted} after {timeout} s:\n" + "\n".join(self.lines))
            try:
                self.lines.append(self._queue.get(timeout=min(remaining, 0.5)))
            except queue.Empty:
                pass

    def wait(self, timeout=30.0):
        rc = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5.0)  # the runner's exit closes the pipe: the reader ends at EOF
        while not self._queue.empty():
            self.lines.append(self._queue.get_nowait())
        return rc

    def text(self):
        return "\n".join(self.lines)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def run_runner():
    started = []

    def start(args, env):
        runner = RunnerProcess(args, env)
        started.append(runner)
        return runner

    yield start
    for runner in started:
        runner.stop()


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
    runner.wait_for_lines(
        "[talker] up as /fixture/talker greeting=hello",  # name, namespace and the params file applied
        "[listener] up as /fixture/listener greeting=hi",  # relative namespace made absolute; -p applied
    )
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
    runner.wait_for_lines("[stubborn] ignoring SIGINT")
    runner.proc.send_signal(signal.SIGINT)
    if second_interrupt:  # an impatient operator's second Ctrl-C: kill now, not after the stop timeout
        runner.wait_for_lines("[runner] stopping (SIGINT)")
        runner.proc.send_signal(signal.SIGINT)
    assert runner.wait(timeout=15) == 1, runner.text()
    why = "second interrupt" if second_interrupt else "not stopped after 1 s"
    assert f"[runner] /stubborn {why}: killing it" in runner.lines
    assert "[runner] stopped, with failures (exit code 1)" in runner.lines
    assert not [p for p in pids_in(runner.text()) if psutil.pid_exists(p)]


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


# --- the real stack ---------------------------------------------------------------------------------


@pytest.mark.ros
def test_arm_stack_comes_up_with_every_config_value_applied_and_stops_cleanly(
    ros_context, ros_executor, make_node, run_runner
):
    runner = run_runner([str(LAUNCH), "gamepad:=true"], ros_env(ros_context.get_domain_id()))
    probe = make_node("bringup_probe")
    expected = {}
    for path in _param_files():
        for fqn, section in yaml.safe_load(path.read_text()).items():
            expected[fqn] = flatten(section["ros__parameters"])
    plan = load_plan(LAUNCH, ALL_ON)
    for node in plan.nodes:  # <param name= value=> in the launch file wins over the file, as in ROS
        for name, value in node.params:
            expected[node.fqn][name] = value
    assert sorted(expected) == sorted(n.fqn for n in plan.nodes)
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
