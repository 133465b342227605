"""docs/parameters.md is the render of the nodes' ParamSpec tables, and the renderer says what it must."""

import re

import pytest

from salamander_control.param_spec import ParamSpec
from salamander_testing import REPO, param_docs


def test_docs_parameters_md_is_up_to_date() -> None:
    committed = (REPO / "docs" / "parameters.md").read_text()
    assert committed == param_docs.render_default(), (
        "docs/parameters.md is out of date: run `python -m salamander_testing.param_docs`"
    )


def test_every_node_of_the_table_gives_specs_with_unique_names() -> None:
    for node, source in param_docs.NODES:
        specs = param_docs.load(source)
        names = [s.name for s in specs]
        assert specs, node
        assert len(names) == len(set(names)), f"{node} declares a parameter twice"


def test_shared_group_is_written_once_and_referenced() -> None:
    group = [ParamSpec("a", 1.0, "shared a", 0.0, 2.0), ParamSpec("b", True, "shared b")]
    own = ParamSpec("c", "x", "own c", read_only=True)
    text = param_docs.render([("/n1", [*group, own]), ("/n2", group)], [("grp", "The group", group)])
    assert text.count("| `a` |") == 1
    assert text.count("](#grp)") == 2
    assert "| `c` | string | `\"x\"` |  | read-only | own c |" in text
    assert "Declares the 2 parameters of [the group](#grp), and nothing else." in text


def test_a_group_declared_differently_is_listed_in_full() -> None:
    group = [ParamSpec("a", 1.0, "shared a", 0.0, 2.0)]
    other = [ParamSpec("a", 1.0, "another description", 0.0, 2.0)]
    text = param_docs.render([("/n1", other)], [("grp", "The group", group)])
    assert "| `a` | double | `1.0` | [0.0, 2.0] |  | another description |" in text
    assert "](#grp)" not in text


def test_types_values_and_ranges() -> None:
    assert [param_docs.type_name(v) for v in (True, 3, 0.5, "s", [0.1, 0.2], ["a"])] == [
        "bool", "integer", "double", "string", "double[]", "string[]"
    ]
    assert param_docs.value_text([0.3, 0.18]) == "[0.3, 0.18]"
    assert param_docs.value_text(False) == "false"
    assert param_docs.range_text(ParamSpec("x", 1.0, "d", 0.0, 2.0)) == "[0.0, 2.0]"
    assert param_docs.range_text(ParamSpec("x", 1.0, "d", 0.5)) == ">= 0.5"
    assert param_docs.range_text(ParamSpec("x", 1.0, "d", None, 2.0)) == "<= 2.0"
    assert param_docs.range_text(ParamSpec("x", 1.0, "d")) == ""


def test_a_pipe_in_a_description_does_not_break_the_table() -> None:
    text = "\n".join(param_docs.table([ParamSpec("x", 1.0, "a | b")]))
    assert "a \\| b" in text


@pytest.mark.parametrize("source", ["no_colon", ":attr", "module:"])
def test_a_malformed_source_is_refused_with_the_reason(source: str) -> None:
    with pytest.raises(ValueError, match="module:attribute"):
        param_docs.load(source)


def test_a_source_that_is_not_specs_is_refused() -> None:
    with pytest.raises(ValueError, match="must give ParamSpecs"):
        param_docs.load("salamander_control.kinematics:JOINT_NAMES")


def test_check_mode_reports_a_stale_file(tmp_path) -> None:  # noqa: ANN001
    out = tmp_path / "parameters.md"
    out.write_text("stale\n")
    assert param_docs.main(["--check", "--out", str(out)]) == 1
    assert param_docs.main(["--out", str(out)]) == 0
    assert param_docs.main(["--check", "--out", str(out)]) == 0


def test_the_table_lists_every_node_of_the_launch_file() -> None:
    """Every node of the project's packages (not robot_state_publisher or rviz2, which are ROS's own)."""
    launch = (REPO / "launch" / "arm_control.launch.xml").read_text()
    launched = set(re.findall(r'<node\b[^>]*\bpkg="salamander_\w+"[^>]*\bname="([^"]+)"', launch))
    documented = {node.rpartition("/")[2] for node, _ in param_docs.NODES}
    assert launched and launched == documented
