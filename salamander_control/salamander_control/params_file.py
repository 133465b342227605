"""Which values a node gets from a list of ROS 2 params files, worked out as rcl does it (pure, no rclpy).

The stack's config is layered: every node that uses the arm model loads ``config/arm.yaml`` (one
``/**/*`` section: every node) first, then its own file, whose section is keyed with a wildcard such as
``/**/trajectory_generator`` so it applies whatever namespace the stack is launched under. Tests, the
cell loader and the benches read the files through `node_values`, so they see what the node sees.

The rules (checked against rclpy with real nodes: test/test_launch_runner.py):

- a section key is a node name pattern; nested mappings (``salamander: cell_sim: ros__parameters``)
  are joined with ``/``, and a key without a leading ``/`` is absolute;
- in a pattern, the token ``**`` matches any number of name tokens (none too) and ``*`` exactly one;
  other tokens match themselves;
- sections are applied in the order their keys first appear, over all the files in order; a key that
  appears again (in a later file) adds to its first appearance. So with ``arm.yaml`` loaded first, a
  node's own section overrides it, and a value given twice for one key keeps the later one. There is no
  "the more specific key wins": a command-line ``-p name:=value`` is filed under ``/**`` (pass it here
  as the document ``{"/**": {"ros__parameters": {name: value}}}`` in its place), so it only wins if no
  earlier file uses the key ``/**`` itself; that is why the shared files are keyed ``/**/*`` instead;
- nested mappings inside ``ros__parameters`` are dotted names: ``max_velocity: {base_yaw: 1.5}`` is
  the parameter ``max_velocity.base_yaw``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

ROS_PARAMETERS = "ros__parameters"
WILDCARD_TOKENS = frozenset({"*", "**"})


def load(path: str | Path) -> Any:
    """One params file as YAML data.

    Raises:
        OSError: the file cannot be read.
        ValueError: not YAML (the message names the file).
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from exc


def flatten(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A ``ros__parameters`` mapping as parameter names: nested mappings become dotted names (a.b)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def sections(document: Any) -> list[tuple[str, dict[str, Any]]]:
    """The (node key, flattened parameters) sections of one params file, in file order.

    Raises:
        ValueError: the document is not a mapping of node names.
    """
    if not isinstance(document, Mapping):
        raise ValueError("a params file must be a mapping of node names")
    out: list[tuple[str, dict[str, Any]]] = []

    def walk(node: Mapping[str, Any], key: str) -> None:
        for name, value in node.items():
            if name == ROS_PARAMETERS:
                if value is not None and not isinstance(value, Mapping):
                    raise ValueError(f"{key or '/'}: {ROS_PARAMETERS} must be a mapping, got {value!r}")
                out.append((key if key.startswith("/") else "/" + key, flatten(value or {})))
            elif isinstance(value, Mapping):
                walk(value, f"{key}/{name}" if key else str(name))

    walk(document, "")
    return out


def key_matches(key: str, fqn: str) -> bool:
    """Whether the section `key` (``/**``, ``/**/name``, ``/ns/*``, ``/ns/name``...) applies to node `fqn`."""
    parts = []
    for token in key.strip("/").split("/"):
        if token == "**":
            parts.append(r"(?:/[^/]+)*")
        elif token == "*":
            parts.append(r"/[^/]+")
        else:
            parts.append("/" + re.escape(token))
    return re.fullmatch("".join(parts), "/" + fqn.strip("/")) is not None


def merged_sections(documents: Iterable[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The sections of several files as rcl holds them: keys in order of first appearance, merged."""
    merged: dict[str, dict[str, Any]] = {}
    for document in documents:
        for key, params in sections(document):
            merged.setdefault(key, {}).update(params)
    return list(merged.items())


def node_values(files: Sequence[str | Path] | Iterable[Any], fqn: str, require_section: bool = False) -> dict:
    """The parameter values node `fqn` gets from params files loaded in this order.

    Args:
        files: paths (read with `load`) or already-loaded YAML documents, in --params-file order.
        fqn: the node's fully qualified name, e.g. "/arm/trajectory_generator".
        require_section: refuse files in which only catch-all sections (``/**``, ``/**/*``) apply to
            the node (its own section is missing: its parameters would silently stay at their defaults).

    Raises:
        OSError / ValueError: a file cannot be read or is not a params file.
        ValueError: `require_section` and no section but a catch-all one applies to the node.
    """
    documents = [load(f) if isinstance(f, (str, Path)) else f for f in files]
    values: dict[str, Any] = {}
    named = False
    for key, params in merged_sections(documents):
        if key_matches(key, fqn):
            values.update(params)
            named = named or not set(key.strip("/").split("/")) <= WILDCARD_TOKENS
    if require_section and not named:
        raise ValueError(f"the params file has no section for {fqn}")
    return values
