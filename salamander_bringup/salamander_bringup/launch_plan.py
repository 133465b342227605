"""Read a ROS 2 launch XML file into a plan of node processes, without the `launch` package.

The fresh machine has no `ros2 launch` (see the project notes on ROS 2 from wheels), yet the launch file
must stay the single source of truth for which nodes run, with which names, namespaces, remaps and
parameter files. This module understands the subset of launch_xml the project uses and refuses
everything else with a message naming it, so a launch file never runs differently here than under
`ros2 launch`:

- ``<launch>`` holding ``<arg name default description>`` (top level only), ``<let name value>``,
  ``<group>``, ``<push-ros-namespace namespace>``, ``<set_remap from to>`` and ``<node>`` elements;
- ``<node pkg exec name namespace output args ros_args respawn respawn_delay respawn_max_retries if
  unless>`` with ``<param from>``, ``<param name value>`` and ``<remap from to>`` children;
- the substitutions of `launch_substitutions` (``$(var)``, ``$(find-pkg-share)``, ``$(dirname)``,
  ``$(if)``, ``$(not-equals)``, ``$(command)``), evaluated as launch evaluates them.

``respawn`` / ``respawn_delay`` / ``respawn_max_retries`` are read as launch's ExecuteProcess reads them
(`RespawnSpec`): ``respawn`` a condition (true/1/false/0, substitutions allowed), ``respawn_delay`` seconds
>= 0 (absent: at once), ``respawn_max_retries`` an integer (negative, the default, means no limit); the
runner applies them (`respawn.RespawnTracker`).

A ``$(command ...)`` runs while the plan is read (a dry run runs it too); the launch file uses it to
read the URDF into ``robot_description``.

A ``<param name value>`` whose value spans several lines (the URDF) cannot go on the command line as
``-p name:=value`` (rcl parses that value as one line of YAML), so it goes into a params file generated for
the node (`NodePlan.generated_params_yaml`, a YAML string value: the text arrives unchanged); single-line
values stay ``-p`` and are typed by rcl as YAML, as before.

Packages a full ROS 2 install provides only for the rviz view (`VIEWER_PACKAGES`: robot_state_publisher,
rviz2) may be missing on a bare machine: `resolve_executables` skips their nodes with one line per missing
package instead of refusing the launch file; any other missing package is still an error.

Scoping follows launch and launch_ros: a ``<group>`` forgets, at its end, the ``<let>`` values, the
pushed namespace and the ``<set_remap>`` rules set inside it. ``<push-ros-namespace>`` joins its
namespace to the one pushed before (kept, as in launch_ros, in the launch configuration
``ros_namespace``, which ``$(var ros_namespace)`` reads); a node's relative ``namespace`` is joined to
it, an absolute one replaces it. A node gets the ``<set_remap>`` rules in scope first, then its own.

Each node becomes the command line ``ros2 run`` and launch_ros would build:
``<prefix>/lib/<pkg>/<exec> [args] --ros-args [ros_args] -r __node:=N -r __ns:=NS --params-file F ...
-r FROM:=TO ...``. No rclpy; the package lookups read AMENT_PREFIX_PATH like ament_index does; the only
processes are those of ``$(command ...)``.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from salamander_bringup.launch_substitutions import LaunchFileError, Resolver, condition

VIEWER_PACKAGES: Mapping[str, str] = {"robot_state_publisher": "rviz", "rviz2": "rviz"}
"""Packages of a full ROS 2 install that only the rviz view needs -> the launch argument that starts them."""
SUPPORTED_ELEMENTS = ("arg", "let", "group", "push-ros-namespace", "set_remap", "node")
_NODE_ATTRS = {"pkg", "exec", "name", "namespace", "output", "args", "ros_args", "if", "unless",
               "respawn", "respawn_delay", "respawn_max_retries"}
_ARG_ATTRS = {"name", "default", "description"}
_ELEMENT_ATTRS = {"let": {"name", "value"}, "group": set(), "push-ros-namespace": {"namespace"},
                  "set_remap": {"from", "to"}}  # fmt: skip
ROS_NAMESPACE = "ros_namespace"  # the launch configuration launch_ros keeps the pushed namespace in
_OUTPUTS = {"screen", "log", "both"}  # launch's values; the runner shows every node on its screen
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NS_RE = re.compile(r"^(/[A-Za-z_][A-Za-z0-9_]*)+$|^/$")
# A remap's side as rcl parses it: a relative, absolute (/...) or private (~/...) name of tokens.
_REMAP_NAME_RE = re.compile(r"^(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_ARG_OVERRIDE_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):=(.*)$", re.S)


@dataclass(frozen=True)
class LaunchArg:
    """A declared ``<arg>``: `default` None means the caller must give it."""

    name: str
    default: str | None
    description: str


@dataclass(frozen=True)
class RespawnSpec:
    """A node's ``respawn`` attributes, with launch's defaults (no respawn; at once; no retry limit)."""

    respawn: bool = False
    delay: float = 0.0
    """Seconds between the exit and the restart (launch: ``respawn_delay``, absent = 0)."""
    max_retries: int = -1
    """Restarts allowed over the runner's life; negative = unlimited (launch: ``respawn_max_retries``)."""


@dataclass(frozen=True)
class NodePlan:
    """One node process, every substitution resolved."""

    pkg: str
    executable: str
    name: str
    namespace: str
    param_files: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    remaps: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    ros_args: tuple[str, ...] = ()
    respawn: RespawnSpec = RespawnSpec()

    @property
    def fqn(self) -> str:
        """Fully qualified node name, e.g. /arm/trajectory_generator (what params files are keyed by)."""
        return f"{self.namespace.rstrip('/')}/{self.name}"

    @property
    def file_params(self) -> tuple[tuple[str, str], ...]:
        """The ``<param name value>`` pairs that need a generated params file (a multi-line value)."""
        return tuple((name, value) for name, value in self.params if _needs_params_file(value))

    def generated_params_yaml(self) -> str | None:
        """Text of the params file for `file_params`, keyed by the node's name; None when there are none.

        Each value is a YAML string (PyYAML quotes a multi-line string, never a plain scalar), so rcl
        hands the node the text unchanged, as launch_ros does for a URDF read with ``$(command)``.
        """
        if not self.file_params:
            return None
        return yaml.safe_dump({self.fqn: {"ros__parameters": dict(self.file_params)}}, sort_keys=False)

    def command(self, executable_path: str, generated_params_file: str | None = None) -> list[str]:
        """The argv that starts this node, in launch_ros's order.

        Args:
            executable_path: the node's executable (`find_executable`).
            generated_params_file: where `generated_params_yaml` was written; required when the node
                has `file_params` (loaded after the ``<param from>`` files, before the ``-p`` values).

        Raises:
            ValueError: the node has `file_params` but no `generated_params_file` was given.
        """
        if self.file_params and generated_params_file is None:
            raise ValueError(f"{self.fqn}: multi-line parameter(s) need a generated params file")
        cmd = [executable_path, *self.args]
        if self.ros_args:
            cmd += ["--ros-args", *self.ros_args]
        cmd += ["--ros-args", "-r", f"__node:={self.name}", "-r", f"__ns:={self.namespace}"]
        for path in self.param_files:
            cmd += ["--params-file", path]
        if self.file_params:
            cmd += ["--params-file", str(generated_params_file)]
        for name, value in self.params:
            if _needs_params_file(value):
                continue
            cmd += ["-p", f"{name}:={value}"]
        for src, dst in self.remaps:
            cmd += ["-r", f"{src}:={dst}"]
        return cmd


@dataclass(frozen=True)
class LaunchPlan:
    """What a launch file starts for given arguments."""

    path: str
    declared: tuple[LaunchArg, ...]
    values: Mapping[str, str]
    nodes: tuple[NodePlan, ...]


def _needs_params_file(value: str) -> bool:
    return "\n" in value or "\r" in value


def parse_overrides(tokens: Sequence[str]) -> dict[str, str]:
    """``name:=value`` command-line tokens (as ros2 launch takes them) to a dict."""
    out: dict[str, str] = {}
    for token in tokens:
        match = _ARG_OVERRIDE_RE.match(token)
        if not match:
            raise LaunchFileError(f"launch argument {token!r} is not of the form name:=value")
        out[match.group(1)] = match.group(2)
    return out


def package_prefix(pkg: str, ament_prefix_path: str | None = None) -> str:
    """The install prefix holding `pkg`, found through the ament resource index like ament_index does."""
    search = os.environ.get("AMENT_PREFIX_PATH", "") if ament_prefix_path is None else ament_prefix_path
    for prefix in filter(None, search.split(os.pathsep)):
        if os.path.isfile(os.path.join(prefix, "share", "ament_index", "resource_index", "packages", pkg)):
            return prefix
    raise LaunchFileError(
        f"package {pkg!r} not found in AMENT_PREFIX_PATH (source scripts/env.sh; build with scripts/setup.sh)"
    )


def find_package_share(pkg: str) -> str:
    """``$(find-pkg-share pkg)``: <prefix>/share/<pkg>."""
    return os.path.join(package_prefix(pkg), "share", pkg)


def find_executable(pkg: str, executable: str) -> str:
    """Path of `executable` of `pkg` as ``ros2 run`` finds it: <prefix>/lib/<pkg>/<executable>."""
    path = os.path.join(package_prefix(pkg), "lib", pkg, executable)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise LaunchFileError(
            f"executable {executable!r} of package {pkg!r} not found at {path} "
            "(rebuild with scripts/setup.sh)"
        )
    return path


def package_installed(pkg: str, ament_prefix_path: str | None = None) -> bool:
    """Whether `pkg` is in the ament resource index of some prefix of AMENT_PREFIX_PATH."""
    try:
        package_prefix(pkg, ament_prefix_path)
    except LaunchFileError:
        return False
    return True


@dataclass(frozen=True)
class ResolvedPlan:
    """A plan ready to start: its nodes (viewer nodes of missing packages dropped) and their commands."""

    plan: LaunchPlan
    commands: tuple[list[str], ...]
    skipped: tuple[str, ...]
    """One line per missing viewer package, naming the launch argument, the package and the nodes."""


def resolve_commands(
    plan: LaunchPlan,
    params_dir: str | os.PathLike[str],
    find_exe: Callable[[str, str], str] = find_executable,
    installed: Callable[[str], bool] = package_installed,
) -> ResolvedPlan:
    """Each node's command line, the way ``ros2 run`` finds its executable.

    The nodes of a missing `VIEWER_PACKAGES` package are left out with one line saying so and how to
    install it (``ros-$ROS_DISTRO-<pkg>``); the generated params files (`NodePlan.generated_params_yaml`)
    are written into `params_dir`, which must outlive the nodes' start-up.

    Raises:
        LaunchFileError: another package or an executable is missing.
    """
    missing = {n.pkg for n in plan.nodes if n.pkg in VIEWER_PACKAGES and not installed(n.pkg)}
    distro = os.environ.get("ROS_DISTRO") or "<distro>"
    skipped = tuple(
        f"{VIEWER_PACKAGES[pkg]}: package {pkg} is not installed here; skipping "
        + ", ".join(n.fqn for n in plan.nodes if n.pkg == pkg)
        + f" (install ros-{distro}-{pkg.replace('_', '-')})"
        for pkg in sorted(missing)
    )
    nodes = tuple(n for n in plan.nodes if n.pkg not in missing)
    commands = []
    for node in nodes:
        text, generated = node.generated_params_yaml(), None
        if text is not None:
            generated = os.path.join(params_dir, node.fqn.strip("/").replace("/", "__") + ".params.yaml")
            Path(generated).write_text(text)
        commands.append(node.command(find_exe(node.pkg, node.executable), generated))
    return ResolvedPlan(replace(plan, nodes=nodes), tuple(commands), skipped)


def prefix_namespace(base: str | None, namespace: str | None) -> str:
    """launch_ros's joining of a namespace to the one pushed before: relative joins, absolute replaces.

    The result is absolute, without a trailing '/' (except the root '/'); '' and None mean the root.
    """
    if namespace is None:
        combined = base or ""
    elif not base or namespace.startswith("/"):
        combined = namespace
    else:
        combined = ("" if base == "/" else base) + "/" + namespace
    if combined != "/":
        combined = combined.rstrip("/")
    return combined if combined.startswith("/") else "/" + combined


def _respawn_spec(attrs: Mapping[str, str], where: str) -> RespawnSpec:
    """The resolved ``respawn*`` attributes, checked as launch's ExecuteProcess.parse checks them."""
    respawn = condition(attrs["respawn"], f"{where} respawn=") if "respawn" in attrs else False
    delay = 0.0
    if "respawn_delay" in attrs:
        try:
            delay = float(attrs["respawn_delay"])
        except ValueError:
            delay = math.nan
        if not (math.isfinite(delay) and delay >= 0.0):
            raise LaunchFileError(
                f"{where}: respawn_delay must be a non-negative number of seconds, "
                f"not {attrs['respawn_delay']!r}"
            )
    retries = -1
    if "respawn_max_retries" in attrs:
        try:
            retries = int(attrs["respawn_max_retries"])
        except ValueError:
            raise LaunchFileError(
                f"{where}: respawn_max_retries must be an integer, not {attrs['respawn_max_retries']!r}"
            ) from None
    return RespawnSpec(respawn, delay, retries)


def _check_attrs(elem: ET.Element, allowed: set[str], where: str) -> None:
    unknown = sorted(set(elem.attrib) - allowed)
    if unknown:
        raise LaunchFileError(
            f"{where}: unsupported attribute(s) {', '.join(unknown)} "
            f"(supported: {', '.join(sorted(allowed))})"
        )


def _declare_arg(elem: ET.Element, resolve: Resolver, overrides: Mapping[str, str]) -> LaunchArg:
    where = f"<arg name={elem.get('name')!r}>"
    _check_attrs(elem, _ARG_ATTRS, where)
    if list(elem):
        raise LaunchFileError(f"{where}: <arg> takes no child elements")
    name = elem.get("name")
    if not name:
        raise LaunchFileError("<arg> without a name")
    default = elem.get("default")
    if name in overrides:
        resolve.values[name] = overrides[name]
    elif default is not None:
        resolve.values[name] = resolve(default, where)
    else:
        raise LaunchFileError(f"launch argument {name!r} is required (give {name}:=VALUE)")
    return LaunchArg(name, default, elem.get("description", ""))


def _remap(elem: ET.Element, resolve: Resolver, where: str) -> tuple[str, str]:
    """A ``from``/``to`` pair, both checked to be names rcl can parse (a bad one would stop the node)."""
    rule = (resolve(elem.attrib["from"], where), resolve(elem.attrib["to"], where))
    for side in rule:
        if not _REMAP_NAME_RE.match(side):
            raise LaunchFileError(
                f"{where}: invalid name {side!r} in the remap {rule[0]!r} -> {rule[1]!r} "
                "(tokens of letters, digits and _ joined by /, optionally starting with / or ~/)"
            )
    return rule


class _Reader:
    """Walks the launch file's elements in order, keeping launch's scopes (see the module docstring)."""

    def __init__(self, path: str, overrides: Mapping[str, str], find_share: Callable[[str], str]) -> None:
        self.path = path
        self.overrides = overrides
        self.resolve = Resolver(os.path.dirname(path), {}, find_share)
        self.remaps: list[tuple[str, str]] = []  # the <set_remap> rules in scope
        self.declared: list[LaunchArg] = []
        self.nodes: list[NodePlan] = []

    def read(self, parent: ET.Element, top: bool) -> None:
        for elem in parent:
            if elem.tag == "arg" and top:
                self.declared.append(_declare_arg(elem, self.resolve, self.overrides))
            elif elem.tag == "node":
                node = self._node(elem)
                if node is not None:
                    self.nodes.append(node)
            elif elem.tag in _ELEMENT_ATTRS:
                self._scope_element(elem)
            elif elem.tag == "arg":
                raise LaunchFileError(f"{self.path}: <arg name={elem.get('name')!r}> inside a <group>; "
                                      "the runner takes <arg> at the top level only")  # fmt: skip
            else:
                raise LaunchFileError(
                    f"{self.path}: unsupported element <{elem.tag}> (the runner takes "
                    + ", ".join(f"<{tag}>" for tag in SUPPORTED_ELEMENTS) + ")"
                )

    def _scope_element(self, elem: ET.Element) -> None:
        where = f"<{elem.tag} {dict(elem.attrib)}>"
        _check_attrs(elem, _ELEMENT_ATTRS[elem.tag], where)
        missing = sorted(_ELEMENT_ATTRS[elem.tag] - set(elem.attrib))
        if missing:
            raise LaunchFileError(f"{where}: needs {', '.join(missing)}=")
        if elem.tag != "group" and list(elem):
            raise LaunchFileError(f"{where}: <{elem.tag}> takes no child elements")
        values = self.resolve.values
        if elem.tag == "group":
            saved_values, saved_remaps = dict(values), list(self.remaps)
            self.read(elem, top=False)
            values.clear()
            values.update(saved_values)
            self.remaps = saved_remaps
        elif elem.tag == "let":
            values[self.resolve(elem.attrib["name"], where)] = self.resolve(elem.attrib["value"], where)
        elif elem.tag == "push-ros-namespace":
            pushed = self.resolve(elem.attrib["namespace"], where)
            pushed = prefix_namespace(values.get(ROS_NAMESPACE), pushed)
            if not _NS_RE.match(pushed):
                raise LaunchFileError(f"{where}: the resulting namespace {pushed!r} is invalid")
            values[ROS_NAMESPACE] = pushed
        else:
            self.remaps.append(_remap(elem, self.resolve, where))

    def _node(self, elem: ET.Element) -> NodePlan | None:
        resolve = self.resolve
        where = f"<node name={elem.get('name')!r}>"
        _check_attrs(elem, _NODE_ATTRS, where)
        if "if" in elem.attrib and not condition(resolve(elem.get("if", ""), where), where):
            return None
        if "unless" in elem.attrib and condition(resolve(elem.get("unless", ""), where), where):
            return None
        attrs = {key: resolve(value, where) for key, value in elem.attrib.items()
                 if key not in ("if", "unless")}  # fmt: skip
        for required in ("pkg", "exec", "name"):
            if not attrs.get(required):
                raise LaunchFileError(f"{where}: the runner needs a non-empty {required}= on every node")
        if not _NAME_RE.match(attrs["name"]):
            raise LaunchFileError(f"{where}: invalid node name {attrs['name']!r}")
        namespace = prefix_namespace(resolve.values.get(ROS_NAMESPACE), attrs.get("namespace"))
        if not _NS_RE.match(namespace):
            raise LaunchFileError(f"{where}: invalid namespace {namespace!r}")
        if attrs.get("output", "screen") not in _OUTPUTS:
            raise LaunchFileError(f"{where}: output must be one of {', '.join(sorted(_OUTPUTS))}")
        files: list[str] = []
        params: list[tuple[str, str]] = []
        remaps: list[tuple[str, str]] = list(self.remaps)  # launch_ros: the scope's rules, then the node's
        for child in elem:
            cwhere = f"{where} <{child.tag}>"
            if list(child):
                raise LaunchFileError(f"{cwhere}: nested elements are not supported")
            if child.tag == "param" and set(child.attrib) == {"from"}:
                files.append(resolve(child.attrib["from"], cwhere))
            elif child.tag == "param" and set(child.attrib) == {"name", "value"}:
                params.append((resolve(child.attrib["name"], cwhere), resolve(child.attrib["value"], cwhere)))
            elif child.tag == "remap" and set(child.attrib) == {"from", "to"}:
                remaps.append(_remap(child, resolve, cwhere))
            else:
                raise LaunchFileError(
                    f"{cwhere} {dict(child.attrib)}: unsupported; the runner takes <param from>, "
                    "<param name value> and <remap from to>"
                )
        return NodePlan(
            pkg=attrs["pkg"],
            executable=attrs["exec"],
            name=attrs["name"],
            namespace=namespace,
            param_files=tuple(files),
            params=tuple(params),
            remaps=tuple(remaps),
            args=tuple(shlex.split(attrs.get("args", ""))),
            ros_args=tuple(shlex.split(attrs.get("ros_args", ""))),
            respawn=_respawn_spec(attrs, where),
        )


def load_plan(
    path: str | os.PathLike[str],
    overrides: Mapping[str, str] | None = None,
    find_share: Callable[[str], str] = find_package_share,
) -> LaunchPlan:
    """Parse the launch file at `path` with `overrides` (name -> value) into a LaunchPlan.

    Raises:
        LaunchFileError: unreadable XML, an unsupported tag/attribute/substitution, an unknown or
            missing argument, an invalid or duplicate node name, an invalid namespace or remap, or a
            parameter file that is missing.
    """
    path = os.path.abspath(path)
    overrides = dict(overrides or {})
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise LaunchFileError(f"{path}: {exc}") from exc
    if root.tag != "launch":
        raise LaunchFileError(f"{path}: the root element is <{root.tag}>, not <launch>")
    reader = _Reader(path, overrides, find_share)
    reader.read(root, top=True)
    declared, nodes = reader.declared, reader.nodes
    unknown = sorted(set(overrides) - {a.name for a in declared})
    if unknown:
        names = ", ".join(a.name for a in declared) or "none"
        raise LaunchFileError(f"unknown launch argument(s) {', '.join(unknown)} (declared: {names})")
    fqns = [n.fqn for n in nodes]
    duplicates = sorted({f for f in fqns if fqns.count(f) > 1})
    if duplicates:
        raise LaunchFileError(f"{path}: more than one node named {', '.join(duplicates)}")
    missing = [f"{n.fqn}: {f}" for n in nodes for f in n.param_files if not Path(f).is_file()]
    if missing:
        raise LaunchFileError("parameter file(s) not found:\n  " + "\n  ".join(missing))
    return LaunchPlan(path, tuple(declared), dict(reader.resolve.values), tuple(nodes))
