"""Reading params files as rcl does (pure): wildcard keys, nested forms, order, dotted names.

test_params_ros.py checks the same cases against rcl itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from salamander_control import params_file


@pytest.mark.parametrize(
    ("key", "fqn", "matches"),
    [
        ("/**", "/arm/trajectory_generator", True),
        ("/**", "/talker", True),
        ("/**/trajectory_generator", "/arm/trajectory_generator", True),
        ("/**/trajectory_generator", "/cell2/arm/trajectory_generator", True),
        ("/**/trajectory_generator", "/trajectory_generator", True),
        ("/**/trajectory_generator", "/arm/trajectory_generator2", False),
        ("/*/trajectory_generator", "/arm/trajectory_generator", True),
        ("/*/trajectory_generator", "/cell2/arm/trajectory_generator", False),
        ("/arm/trajectory_generator", "/arm/trajectory_generator", True),
        ("/arm/trajectory_generator", "/cell2/arm/trajectory_generator", False),
        ("/arm/**", "/arm/x/y", True),
        ("/arm/**", "/salamander/x", False),
        ("/**/*", "/talker", True),
        ("/**/*", "/cell2/arm/trajectory_generator", True),
    ],
)
def test_key_patterns(key: str, fqn: str, matches: bool) -> None:
    assert params_file.key_matches(key, fqn) is matches


def test_sections_join_nested_keys_and_flatten_nested_parameters() -> None:
    document = {
        "salamander": {"cell_sim": {"ros__parameters": {"table_z": -0.2}}},
        "/**": {"ros__parameters": {"max_velocity": {"base_yaw": 1.5, "wrist_yaw": 2.0}}},
    }
    assert params_file.sections(document) == [
        ("/salamander/cell_sim", {"table_z": -0.2}),
        ("/**", {"max_velocity.base_yaw": 1.5, "max_velocity.wrist_yaw": 2.0}),
    ]


def test_a_later_file_overrides_the_wildcard_and_sections_apply_in_order_of_first_appearance() -> None:
    arm = {"/**": {"ros__parameters": {"a": 1.0, "b": 1.0, "c": 1.0}}}
    own = {"/**/n": {"ros__parameters": {"b": 2.0}}, "/**/other": {"ros__parameters": {"c": 9.0}}}
    assert params_file.node_values([arm, own], "/ns/n") == {"a": 1.0, "b": 2.0, "c": 1.0}
    # The wildcard section first appears after the node's own: it wins (as in rcl).
    assert params_file.node_values([own, arm], "/ns/n") == {"a": 1.0, "b": 1.0, "c": 1.0}
    # A key seen again in a later file adds to its first appearance: /** keeps its place before /**/n.
    later = {"/**": {"ros__parameters": {"b": 3.0}}}
    assert params_file.node_values([arm, own, later], "/ns/n")["b"] == 2.0


def test_require_section_refuses_a_file_that_only_has_the_wildcard(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "/**:\n  ros__parameters:\n    a: 1.0\n/**/*:\n  ros__parameters:\n    c: 3.0\n"
        "/x/other:\n  ros__parameters:\n    b: 2.0\n"
    )
    assert params_file.node_values([path], "/x/n") == {"a": 1.0, "c": 3.0}
    with pytest.raises(ValueError, match="no section for /x/n"):
        params_file.node_values([path], "/x/n", require_section=True)
    assert params_file.node_values([path], "/x/other", require_section=True) == {"a": 1.0, "c": 3.0, "b": 2.0}


def test_a_command_line_override_wins_only_when_no_earlier_file_uses_the_key_it_goes_to() -> None:
    own = {"/**/n": {"ros__parameters": {"b": 2.0}}}
    dash_p = {"/**": {"ros__parameters": {"b": 9.0}}}  # what `-p b:=9.0` is to rcl
    shared = {"/**/*": {"ros__parameters": {"a": 1.0, "b": 1.0}}}  # how arm.yaml is keyed
    assert params_file.node_values([shared, own, dash_p], "/ns/n") == {"a": 1.0, "b": 9.0}
    trap = {"/**": {"ros__parameters": {"a": 1.0, "b": 1.0}}}  # a shared file keyed /** instead
    assert params_file.node_values([trap, own, dash_p], "/ns/n") == {"a": 1.0, "b": 2.0}


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("a: [1, 2", "not valid YAML"),
        ("- 1\n- 2\n", "a mapping of node names"),
        ("/n:\n  ros__parameters: 3\n", "ros__parameters must be a mapping"),
    ],
)
def test_bad_files_are_refused_with_a_reason(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        params_file.node_values([path], "/n")
