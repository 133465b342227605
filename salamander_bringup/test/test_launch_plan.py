"""The launch-file reader's scoping and namespace rules, without processes: groups, pushed namespaces,
set_remap, let and the $(if)/$(not-equals) substitutions, as launch and launch_ros apply them.

The project's own launch file and the runner around processes are tested in test/test_launch_runner.py.
"""

import textwrap

import pytest

from salamander_bringup.launch_plan import LaunchFileError, load_plan, prefix_namespace, resolve_commands
from salamander_bringup.launch_substitutions import run_command


def plan_of(tmp_path, body, args=None):
    path = tmp_path / "t.launch.xml"
    path.write_text(f"<launch>\n{textwrap.dedent(body)}\n</launch>\n")
    return load_plan(path, args or {}, find_share=lambda pkg: f"/share/{pkg}")


@pytest.mark.parametrize(
    ("base", "namespace", "joined"),
    [
        (None, "", "/"),  # push-ros-namespace of an empty cell: the root
        (None, "cell2", "/cell2"),
        ("/", "arm", "/arm"),
        ("/cell2", "arm", "/cell2/arm"),
        ("/cell2", "/arm", "/arm"),  # absolute replaces
        ("/cell2", "arm/", "/cell2/arm"),  # trailing slash dropped
        ("/cell2", None, "/cell2"),  # a node without namespace= sits in the pushed one
        (None, None, "/"),
    ],
)
def test_namespaces_join_like_launch_ros(base, namespace, joined):
    assert prefix_namespace(base, namespace) == joined


STACK = """
    <arg name="cell" default=""/>
    <group>
      <push-ros-namespace namespace="$(var cell)"/>
      <let name="root" value="$(if $(not-equals $(var ros_namespace) /) $(var ros_namespace))"/>
      <set_remap from="joint_states" to="$(var root)/joint_states"/>
      <node pkg="p" exec="e" name="driver" namespace="arm"/>
      <group>
        <push-ros-namespace namespace="ui"/>
        <set_remap from="target" to="$(var root)/arm/target"/>
        <node pkg="p" exec="e" name="pad">
          <remap from="joy" to="/joy"/>
        </node>
      </group>
      <node pkg="p" exec="e" name="after" namespace="salamander"/>
    </group>
    <node pkg="p" exec="e" name="outside"/>
"""


@pytest.mark.parametrize(("cell", "root"), [("", ""), ("cell2", "/cell2"), ("/cell2/", "/cell2")])
def test_groups_scope_pushed_namespaces_remaps_and_lets(tmp_path, cell, root):
    plan = plan_of(tmp_path, STACK, {"cell": cell})
    nodes = {n.name: n for n in plan.nodes}
    assert [n.fqn for n in plan.nodes] == [
        f"{root}/arm/driver", f"{root}/ui/pad", f"{root}/salamander/after", "/outside"
    ]
    states = ("joint_states", f"{root}/joint_states")
    assert nodes["driver"].remaps == (states,)
    # The scope's rules first (outer, then inner group), then the node's own, as launch_ros orders them.
    assert nodes["pad"].remaps == (states, ("target", f"{root}/arm/target"), ("joy", "/joy"))
    assert nodes["after"].remaps == (states,)  # the inner group's rule ended with it
    assert nodes["outside"].remaps == () and nodes["outside"].namespace == "/"
    assert plan.values == {"cell": cell}  # root and ros_namespace were the group's own
    assert nodes["pad"].command("/bin/e")[-6:] == [
        "-r", f"joint_states:={root}/joint_states", "-r", f"target:={root}/arm/target", "-r", "joy:=/joy",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("$(if true yes no)", "yes"),
        ("$(if 0 yes no)", "no"),
        ("$(if false yes)", ""),  # no else: empty
        ("$(not-equals a b)", "true"),
        ("$(not-equals a a)", "false"),
        ("$(not-equals 1 true)", "false"),  # booleans compare by truth, as launch's EqualsSubstitution
        ("$(not-equals 1.0 1)", "false"),  # numbers by value
        ("$(if $(not-equals $(var x) /) [$(var x)] root)", "[/a]"),
        ("$(if false $(var missing) ok)", "ok"),  # only the branch taken is evaluated
    ],
)
def test_if_and_not_equals_substitutions(tmp_path, expression, value):
    plan = plan_of(tmp_path, f"""
        <arg name="x" default="/a"/>
        <let name="v" value="{expression}"/>
        <node pkg="p" exec="e" name="n"><param name="v" value="$(var v)"/></node>
    """)
    assert plan.nodes[0].params == (("v", value),)


@pytest.mark.parametrize(
    ("body", "args", "message"),
    [
        ('<node pkg="p" exec="e" name="n" launch-prefix="gdb"/>', {},
         "unsupported attribute(s) launch-prefix"),
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
        ("<group><arg name='a' default='1'/></group>", {}, "<arg name='a'> inside a <group>"),
        ("<group scoped='false'/>", {}, "unsupported attribute(s) scoped"),
        ("<push-ros-namespace/>", {}, "needs namespace="),
        ("<set_remap from='a'/>", {}, "needs to="),
        ("<let name='a' value='1'><x/></let>", {}, "<let> takes no child elements"),
        ("<arg name='c' default=''/><push-ros-namespace namespace='$(var c)'/>", {"c": "2cell"},
         "the resulting namespace '/2cell' is invalid"),
        ("<set_remap from='a' to='//a'/>", {}, "invalid name '//a' in the remap 'a' -> '//a'"),
        ("<node pkg='p' exec='e' name='n'><remap from='a b' to='c'/></node>", {}, "invalid name 'a b'"),
        ("<let name='v' value=\"$(if 'a b x)\"/>", {}, "unterminated quote in $(if 'a b x)"),
        ("<let name='v' value=\"$(if 'a b' x)\"/>", {}, "condition 'a b' is neither true"),  # one word
        ("<let name='v' value='$(command false)'/>", {}, "the command 'false' exited with code 1"),
        ("<let name='v' value='$(command no_such_cmd)'/>", {}, "the command 'no_such_cmd' failed to run"),
        ("<let name='v' value='$(command \"sh -c &apos;echo oops >&amp;2&apos;\")'/>", {},
         "wrote to stderr: oops"),
        ("<let name='v' value='$(command true often)'/>", {}, "takes fail, warn or ignore, not 'often'"),
        ("<let name='v' value='$(if maybe x)'/>", {}, "condition 'maybe' is neither true/1 nor false/0"),
        ("<let name='v' value='$(if true)'/>", {}, "wrong arguments in $(if true)"),
        ("<let name='v' value='$(not-equals a)'/>", {}, "wrong arguments in $(not-equals a)"),
        # No <push-ros-namespace> before: launch_ros has not set the configuration either.
        ("<let name='v' value='$(var ros_namespace)'/>", {}, "$(var ros_namespace) names no declared"),
    ],
)
def test_reader_refuses_what_it_does_not_support_with_a_clear_message(tmp_path, body, args, message):
    with pytest.raises(LaunchFileError) as info:
        plan_of(tmp_path, body, args)
    assert message in str(info.value)


def test_command_substitution_runs_without_a_shell_and_its_stdout_is_the_value(tmp_path):
    (tmp_path / "model.urdf").write_text("<robot name='r'>\n  <link name='a: b'/>\n</robot>\n")
    plan = plan_of(tmp_path, """
        <let name="text" value="$(command 'cat $(dirname)/model.urdf')"/>
        <node pkg="p" exec="e" name="n">
          <param name="robot_description" value="$(var text)"/>
          <param name="echoed" value="$(command 'echo a;b')"/>
          <param name="quiet" value="$(command &quot;sh -c 'echo x; echo warn >&amp;2'&quot; ignore)"/>
        </node>
    """)
    params = dict(plan.nodes[0].params)
    assert params["robot_description"] == (tmp_path / "model.urdf").read_text()  # unchanged, to the byte
    assert params["echoed"] == "a;b\n"  # no shell: ';' is just a character
    assert params["quiet"] == "x\n"
    assert run_command("printf %s 'two words'") == "two words"


def test_a_multi_line_param_goes_to_a_generated_params_file_that_yaml_reads_back_unchanged(tmp_path):
    import yaml

    urdf = '<?xml version="1.0"?>\n<!-- Chain: a -> b, "quoted" \'too\' -->\n<robot name="r"/>\n'
    (tmp_path / "m.urdf").write_text(urdf)
    plan = plan_of(tmp_path, """
        <node pkg="p" exec="e" name="rsp" namespace="arm">
          <param name="robot_description" value="$(command 'cat $(dirname)/m.urdf')"/>
          <param name="frame_prefix" value="ghost/"/>
        </node>
        <node pkg="p" exec="e" name="plain"><param name="x" value="1"/></node>
    """)
    rsp, plain = plan.nodes
    assert rsp.file_params == (("robot_description", urdf),) and plain.file_params == ()
    assert yaml.safe_load(rsp.generated_params_yaml()) == {
        "/arm/rsp": {"ros__parameters": {"robot_description": urdf}}
    }
    assert plain.generated_params_yaml() is None
    with pytest.raises(ValueError, match="need a generated params file"):
        rsp.command("/bin/e")
    resolved = resolve_commands(plan, tmp_path, find_exe=lambda pkg, exe: f"/lib/{pkg}/{exe}",
                                installed=lambda pkg: True)  # fmt: skip
    generated = tmp_path / "arm__rsp.params.yaml"
    assert resolved.commands[0] == [
        "/lib/p/e", "--ros-args", "-r", "__node:=rsp", "-r", "__ns:=/arm",
        "--params-file", str(generated), "-p", "frame_prefix:=ghost/",
    ]  # fmt: skip
    assert yaml.safe_load(generated.read_text())["/arm/rsp"]["ros__parameters"]["robot_description"] == urdf
    assert resolved.commands[1][-2:] == ["-p", "x:=1"] and resolved.skipped == ()


def test_nodes_of_a_missing_viewer_package_are_skipped_with_one_line_per_package(tmp_path, monkeypatch):
    monkeypatch.setenv("ROS_DISTRO", "kilted")
    plan = plan_of(tmp_path, """
        <node pkg="robot_state_publisher" exec="robot_state_publisher" name="a" namespace="arm"/>
        <node pkg="stack" exec="e" name="n"/>
        <node pkg="robot_state_publisher" exec="robot_state_publisher" name="b" namespace="ui"/>
        <node pkg="rviz2" exec="rviz2" name="rviz"/>
    """)
    present = {"stack", "rviz2"}
    resolved = resolve_commands(plan, tmp_path, find_exe=lambda pkg, exe: f"/lib/{pkg}/{exe}",
                                installed=present.__contains__)  # fmt: skip
    assert resolved.skipped == (
        "rviz: package robot_state_publisher is not installed here; skipping /arm/a, /ui/b "
        "(install ros-kilted-robot-state-publisher)",
    )
    assert [n.fqn for n in resolved.plan.nodes] == ["/n", "/rviz"]
    assert [c[0] for c in resolved.commands] == ["/lib/stack/e", "/lib/rviz2/rviz2"]


def test_a_missing_package_of_the_stack_itself_is_still_an_error(tmp_path):
    plan = plan_of(tmp_path, '<node pkg="stack" exec="e" name="n"/>')
    with pytest.raises(LaunchFileError, match="package 'stack' not found"):
        resolve_commands(plan, tmp_path, installed=lambda pkg: False)
