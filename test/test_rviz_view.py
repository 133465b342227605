"""The rviz view (issue 10, part 1): config/salamander.rviz and the launch file's `rviz:=true` nodes.

rviz2 and robot_state_publisher are not on this machine, so the view is checked by what it names: every
topic of the .rviz file is one the stack publishes (names.py, and the robot_description topics of the two
robot_state_publishers the launch file starts), every frame is a URDF link with or without the ghost's
`ghost/` prefix; the launch file with rviz:=true adds exactly those three nodes with the URDF, the ghost's
frame prefix and remaps that resolve (as rcl resolves them) to the names the .rviz file reads, in the
default stack and in a second cell. The runner skips the missing packages with one line each (dry run);
with stand-ins for them it lists all eleven nodes.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rclpy.node import Node

from salamander_bringup.launch_plan import (
    VIEWER_PACKAGES,
    NodePlan,
    load_plan,
    package_installed,
    resolve_commands,
)
from salamander_control import names
from salamander_control.ghost.anchor import GHOST_FRAME_PREFIX, ghost_anchor
from salamander_control.ros.conversions import BASE_FRAME
from salamander_control.urdf import URDF_PATH, load_urdf
from salamander_testing import REPO as ROOT

LAUNCH = ROOT / "launch" / "arm_control.launch.xml"
RVIZ = ROOT / "config" / "salamander.rviz"
RUNNER = [sys.executable, "-m", "salamander_bringup.runner", str(LAUNCH)]
LINKS = set(load_urdf(URDF_PATH).links)
GHOST_PREFIX = GHOST_FRAME_PREFIX.rstrip("/")  # rviz's TF Prefix adds the '/' itself
VIEW_NODES = [  # (name constant, package, executable) of the nodes rviz:=true adds
    (names.ROBOT_STATE_PUBLISHER, "robot_state_publisher", "robot_state_publisher"),
    (names.GHOST_STATE_PUBLISHER, "robot_state_publisher", "robot_state_publisher"),
    (names.RVIZ, "rviz2", "rviz2"),
]


def rviz_displays():
    config = yaml.safe_load(RVIZ.read_text())
    return config["Visualization Manager"], config["Visualization Manager"]["Displays"]


def display_topic(display):
    for key in ("Topic", "Description Topic"):
        if key in display:
            return display[key]["Value"]
    return None


def expand(name: str, namespace: str) -> str:
    """A topic name as rcl expands it for a node in `namespace` (no ~: the stack uses none)."""
    return name if name.startswith("/") else f"{namespace.rstrip('/')}/{name}"


def resolved(node: NodePlan, name: str) -> str:
    """The name `name` of `node` after its remap rules, first match wins (rcl's rule)."""
    full = expand(name, node.namespace)
    for src, dst in node.remaps:
        if expand(src, node.namespace) == full:
            return expand(dst, node.namespace)
    return full


# --- the .rviz file ----------------------------------------------------------------------------------


def test_rviz_file_shows_the_arm_the_translucent_ghost_its_status_and_the_cell_in_base_link():
    manager, displays = rviz_displays()
    assert manager["Global Options"]["Fixed Frame"] == BASE_FRAME == load_urdf(URDF_PATH).root
    by_class = {}
    for display in displays:
        by_class.setdefault(display["Class"], []).append(display)
    assert len(by_class["rviz_default_plugins/Grid"]) == 1
    arm, ghost = by_class["rviz_default_plugins/RobotModel"]
    assert (arm["Description Source"], ghost["Description Source"]) == ("Topic", "Topic")
    assert display_topic(arm) == names.absolute(names.ROBOT_DESCRIPTION) == "/robot_description"
    assert display_topic(ghost) == names.absolute(names.GHOST_ROBOT_DESCRIPTION)
    for model in (arm, ghost):  # robot_state_publisher latches robot_description
        assert model["Description Topic"]["Durability Policy"] == "Transient Local"
        assert model["Enabled"] is True
    assert (arm["TF Prefix"], arm["Alpha"]) == ("", 1)
    assert ghost["TF Prefix"] == GHOST_PREFIX == "ghost" and 0.2 <= ghost["Alpha"] <= 0.6
    markers = {display_topic(d): d for d in by_class["rviz_default_plugins/MarkerArray"]}
    # The ghost's status colouring (green / red with the reason) and the cell's cans, box and pad.
    assert set(markers) == {names.absolute(names.GHOST_MARKERS), names.absolute(names.CELL_MARKERS)}
    assert all(d["Enabled"] for d in markers.values())


def test_rviz_file_names_only_topics_and_frames_the_stack_publishes():
    manager, displays = rviz_displays()
    stack_topics = {names.absolute(name) for name in names.HOMES}
    topics = [display_topic(d) for d in displays if display_topic(d) is not None]
    assert topics and set(topics) <= stack_topics, set(topics) - stack_topics
    frames = {manager["Global Options"]["Fixed Frame"]}
    for display in displays:
        frames |= {f for f in display.get("Frames", {}) if f != "All Enabled"}
        for key in ("Reference Frame", "Target Frame"):
            if display.get(key) not in (None, "<Fixed Frame>"):
                frames.add(display[key])
        if display["Class"] == "rviz_default_plugins/RobotModel" and display["TF Prefix"]:
            frames |= {f"{display['TF Prefix']}/{link}" for link in LINKS}
    known = LINKS | {GHOST_FRAME_PREFIX + link for link in LINKS}
    assert frames <= known, frames - known
    assert {BASE_FRAME, "ghost/base_link"} <= frames
    # The ghost's tree hangs on base_link through the ghost node's static transform.
    anchor = ghost_anchor()
    assert (anchor.parent, anchor.child) == (BASE_FRAME, GHOST_FRAME_PREFIX + BASE_FRAME)


# --- the launch file with rviz:=true -----------------------------------------------------------------


@pytest.mark.parametrize("cell", ["", "cell2"])
def test_rviz_true_adds_the_two_state_publishers_and_rviz2_wired_to_what_the_rviz_file_reads(cell):
    base = load_plan(LAUNCH, {"cell": cell})
    plan = load_plan(LAUNCH, {"cell": cell, "rviz": "true"})
    assert plan.nodes[: len(base.nodes)] == base.nodes  # the stack itself is unchanged
    extra = plan.nodes[len(base.nodes) :]
    assert [(n.fqn, n.pkg, n.executable) for n in extra] == [
        (names.absolute(name, cell), pkg, exe) for name, pkg, exe in VIEW_NODES
    ]
    arm, ghost, rviz = extra
    urdf = URDF_PATH.read_text()
    assert dict(arm.params) == {"robot_description": urdf}
    assert dict(ghost.params) == {"robot_description": urdf, "frame_prefix": GHOST_FRAME_PREFIX}
    assert arm.param_files == ghost.param_files == rviz.param_files == ()
    at = {name: names.absolute(name, cell) for name in names.HOMES}
    # robot_state_publisher reads joint_states, publishes robot_description and /tf, /tf_static.
    assert resolved(arm, "joint_states") == at[names.JOINT_STATES]
    assert resolved(arm, "robot_description") == at[names.ROBOT_DESCRIPTION]
    assert resolved(ghost, "joint_states") == at[names.GHOST_JOINT_STATE]
    assert resolved(ghost, "robot_description") == at[names.GHOST_ROBOT_DESCRIPTION]
    for node in extra:  # TF is the stack's own: two cells' identical frames do not mix
        assert resolved(node, "/tf") == at[names.TF] and resolved(node, "/tf_static") == at[names.TF_STATIC]
    _, displays = rviz_displays()
    for topic in {display_topic(d) for d in displays} - {None}:  # rviz reads the stack it was started in
        assert resolved(rviz, topic) == names.absolute(_name_of(topic), cell), topic
    assert list(rviz.args) == ["-d", f"{ROOT / 'launch'}/../config/salamander.rviz"]
    assert Path(rviz.args[1]).resolve() == RVIZ
    # The ghost node (in the stack's group) publishes its anchor where the publishers' TF is.
    ghost_node = next(n for n in plan.nodes if n.name == names.IK_GHOST_NODE)
    assert resolved(ghost_node, names.TF_STATIC) == at[names.TF_STATIC]


def _name_of(topic):
    """The names.py constant whose default absolute name is `topic`."""
    (name,) = [n for n in names.HOMES if names.absolute(n) == topic]
    return name


def test_rviz_false_starts_none_of_the_view_nodes():
    plan = load_plan(LAUNCH, {"gamepad": "true"})
    assert plan.values["rviz"] == "false"
    assert not {n.pkg for n in plan.nodes} & set(VIEWER_PACKAGES)


# --- the runner: missing packages skipped, present ones started with the generated params file ------


def _env_without_viewers():
    prefixes = os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)
    kept = [p for p in prefixes if p and not any(package_installed(pkg, p) for pkg in VIEWER_PACKAGES)]
    return {**os.environ, "AMENT_PREFIX_PATH": os.pathsep.join(kept), "ROS_DISTRO": "kilted"}


def test_dry_run_with_rviz_on_a_machine_without_rviz_says_what_is_missing_and_lists_the_rest():
    out = subprocess.run([*RUNNER, "rviz:=true", "--dry-run"], capture_output=True, text=True,
                         env=_env_without_viewers(), timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:3] == [
        "rviz: package robot_state_publisher is not installed here; skipping /arm/robot_state_publisher, "
        "/salamander/ik_ghost_state_publisher (install ros-kilted-robot-state-publisher)",
        "rviz: package rviz2 is not installed here; skipping /salamander/rviz (install ros-kilted-rviz2)",
        f"launch file: {LAUNCH}",
    ]
    commands = [line for line in lines if line.startswith("[")]
    assert len(commands) == len(load_plan(LAUNCH).nodes)
    assert "arg rviz:=true" in lines
    assert not [c for c in commands if "robot_state_publisher" in c or "rviz2" in c]


@pytest.fixture
def viewer_prefix(tmp_path):
    """An ament prefix with stand-in robot_state_publisher and rviz2 executables (never run)."""
    prefix = tmp_path / "viewers"
    for pkg, exe in {("robot_state_publisher", "robot_state_publisher"), ("rviz2", "rviz2")}:
        (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True, exist_ok=True)
        (prefix / "share" / "ament_index" / "resource_index" / "packages" / pkg).touch()
        path = prefix / "lib" / pkg / exe
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return prefix


def test_dry_run_with_rviz_where_the_packages_exist_lists_the_three_nodes(viewer_prefix):
    env = _env_without_viewers()
    env["AMENT_PREFIX_PATH"] = f"{viewer_prefix}{os.pathsep}{env['AMENT_PREFIX_PATH']}"
    out = subprocess.run([*RUNNER, "rviz:=true", "--dry-run"], capture_output=True, text=True, env=env,
                         timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "not installed here" not in out.stdout
    commands = {line.split(" ", 1)[0]: line for line in out.stdout.splitlines() if line.startswith("[")}
    rsp = f"{viewer_prefix}/lib/robot_state_publisher/robot_state_publisher"
    arm, ghost = commands["[robot_state_publisher]"], commands["[ik_ghost_state_publisher]"]
    assert arm.startswith(f"[robot_state_publisher] {rsp} --ros-args -r __node:=robot_state_publisher "
                          "-r __ns:=/arm --params-file ")  # fmt: skip
    assert arm.endswith("arm__robot_state_publisher.params.yaml -r /tf:=/tf -r /tf_static:=/tf_static"
                        " -r joint_states:=/joint_states"
                        " -r robot_description:=/robot_description")  # fmt: skip
    assert "salamander__ik_ghost_state_publisher.params.yaml -p frame_prefix:=ghost/ " in ghost
    assert ghost.endswith(" -r joint_states:=ik_ghost/joint_state"
                          " -r robot_description:=ik_ghost/robot_description")  # fmt: skip
    assert commands["[rviz]"].startswith(
        f"[rviz] {viewer_prefix}/lib/rviz2/rviz2 -d {ROOT}/launch/../config/salamander.rviz --ros-args "
    )
    assert len(commands) == len(load_plan(LAUNCH, {"rviz": "true"}).nodes) == len(load_plan(LAUNCH).nodes) + 3


@pytest.mark.ros
def test_rcl_hands_robot_state_publisher_the_urdf_unchanged_from_the_generated_params_file(
    ros_context, tmp_path
):
    plan = load_plan(LAUNCH, {"rviz": "true"})
    resolved_plan = resolve_commands(plan, tmp_path, find_exe=lambda _pkg, exe: exe,
                                     installed=lambda _pkg: True)  # fmt: skip
    for planned, command in zip(resolved_plan.plan.nodes, resolved_plan.commands, strict=True):
        if planned.pkg != "robot_state_publisher":
            continue
        cli_args = command[command.index("--ros-args", 1) :]  # what the node's rcl parses
        node = Node("rsp_probe", context=ros_context, cli_args=cli_args,
                    automatically_declare_parameters_from_overrides=True)  # fmt: skip
        try:
            assert node.get_fully_qualified_name() == planned.fqn
            assert node.get_parameter("robot_description").value == URDF_PATH.read_text()
            if planned.name == names.GHOST_STATE_PUBLISHER:
                assert node.get_parameter("frame_prefix").value == GHOST_FRAME_PREFIX
        finally:
            node.destroy_node()
