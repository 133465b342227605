"""The arm's URDF read straight from the XML (xml.etree only: no URDF library, no numpy, no rclpy).

`parse_urdf` / `load_urdf` turn a URDF document into a `UrdfModel`: its links and its joints (type,
parent and child link, origin, axis, ``<limit>`` values, ``<mimic>``), with the chain helpers a reader
needs (root link, the joints from the root to a tip, the motor-driven joints, the position limits).
The one parser of the stack: the behaviour server's limit conditions read the per-joint limits through
it (`salamander_behavior.limits.urdf_limits`), and the tests that check the URDF against the arm model
evaluate its forward kinematics from it (`salamander_testing.urdf_chain`).

`find_urdf` locates the file: the copy installed into the package's share folder (found through the
ament index, so an installed build without ``--symlink-install`` works), else the source tree's
``urdf/salamander.urdf``; where neither exists it raises `UrdfNotFoundError`, one line naming both.

Only direct ``<joint>`` children of ``<robot>`` count (not ``<ros2_control>`` or ``<transmission>``
joints). A value is kept as written: what is missing is None, and what a joint needs (limits on a
revolute joint, finite values) is for the reader to require.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

URDF_PATH = Path(__file__).resolve().parents[2] / "urdf" / "salamander.urdf"
"""The arm's URDF in the source tree this package sits in (absent in an installed copy of the package)."""
PACKAGE = "salamander_control"
URDF_SHARE_PATH = Path("urdf") / "salamander.urdf"
"""Where setup.py installs the URDF, relative to the package's share folder."""


class UrdfNotFoundError(FileNotFoundError):
    """Neither the installed nor the source-tree URDF exists; the message is one line for the operator."""


def find_urdf() -> Path:
    """The arm's URDF: the installed share copy (ament index), else the source tree's.

    Raises:
        UrdfNotFoundError: neither exists; the message names every place tried, in one line.
    """
    tried: list[str] = []
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:  # no ROS on this machine: the source tree is the only place
        tried.append("the ament index (ament_index_python not importable)")
    else:
        try:
            installed = Path(get_package_share_directory(PACKAGE)) / URDF_SHARE_PATH
        except (PackageNotFoundError, ValueError):
            tried.append(f"the ament index (no package {PACKAGE!r} on AMENT_PREFIX_PATH)")
        else:
            if installed.is_file():
                return installed
            tried.append(str(installed))
    if URDF_PATH.is_file():
        return URDF_PATH
    tried.append(str(URDF_PATH))
    raise UrdfNotFoundError(
        f"the arm's URDF ({URDF_SHARE_PATH}) was not found; tried {'; '.join(tried)}. Build and source "
        f"the workspace (colcon build; source install/setup.bash) or run from the source tree"
    )

MOVING_TYPES = ("revolute", "continuous", "prismatic")
"""Joint types that move along or about their axis."""


@dataclass(frozen=True)
class Mimic:
    """A joint's ``<mimic>``: value = multiplier * source + offset."""

    joint: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class Joint:
    """One ``<joint>`` element; parent/child are "" and limits None where the element has none."""

    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    axis: tuple[float, float, float]
    lower: float | None
    upper: float | None
    effort: float | None
    velocity: float | None
    mimic: Mimic | None

    @property
    def actuated(self) -> bool:
        """Whether the joint moves and is not a mimic (i.e. it is driven by a motor)."""
        return self.type in MOVING_TYPES and self.mimic is None


@dataclass(frozen=True)
class UrdfModel:
    """The links and joints of a parsed URDF (joints in document order)."""

    name: str
    links: tuple[str, ...]
    joints: dict[str, Joint]
    materials: tuple[str, ...]

    @property
    def root(self) -> str:
        """The single link that is no joint's child.

        Raises:
            ValueError: the links do not form a tree with one root.
        """
        children = [j.child for j in self.joints.values()]
        roots = [link for link in self.links if link not in children]
        if len(roots) != 1:
            raise ValueError(f"expected one root link, got {roots}")
        return roots[0]

    def chain(self, tip: str = "suction_link") -> list[Joint]:
        """Joints from the root link to `tip`, in order.

        Raises:
            KeyError: `tip` is not a link reachable from the root.
        """
        by_child = {j.child: j for j in self.joints.values()}
        out: list[Joint] = []
        link = tip
        while link != self.root:
            joint = by_child[link]
            out.append(joint)
            link = joint.parent
        return out[::-1]

    def actuated(self, tip: str = "suction_link") -> list[str]:
        """Names of the motor-driven joints on the chain to `tip`, root first."""
        return [j.name for j in self.chain(tip) if j.actuated]

    def limits(self) -> dict[str, tuple[float, float]]:
        """(lower, upper) of every joint that has a ``<limit>`` with both bounds."""
        joints = self.joints.values()
        return {j.name: (j.lower, j.upper) for j in joints if j.lower is not None and j.upper is not None}


def _number(el: ET.Element | None, attr: str, joint: str) -> float | None:
    text = None if el is None else el.get(attr)
    if el is None or text is None:
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise ValueError(f"joint {joint!r}: <{el.tag} {attr}={text!r}> is not a number") from exc


def _triple(el: ET.Element | None, attr: str, joint: str, default: float) -> tuple[float, float, float]:
    """Three numbers, or the default vector ``(default, 0, 0)`` where the attribute is missing."""
    text = None if el is None else el.get(attr)
    if el is None or text is None:
        return (default, 0.0, 0.0)
    try:
        x, y, z = (float(v) for v in text.split())
    except ValueError as exc:
        raise ValueError(f"joint {joint!r}: <{el.tag} {attr}={text!r}> is not three numbers") from exc
    return (x, y, z)


def _mimic(el: ET.Element | None, joint: str) -> Mimic | None:
    if el is None:
        return None
    multiplier, offset = _number(el, "multiplier", joint), _number(el, "offset", joint)
    return Mimic(el.get("joint", ""), 1.0 if multiplier is None else multiplier, offset or 0.0)


def _link(el: ET.Element | None) -> str:
    return "" if el is None else el.get("link", "")


def parse_urdf(xml_text: str) -> UrdfModel:
    """Parse a URDF document.

    Raises:
        ValueError: not well-formed XML, a root element other than ``<robot>``, a joint name given
            twice, a joint whose parent or child is not a link of the document, or an attribute that
            should be a number (or three) and is not.
    """
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"URDF is not well-formed XML: {exc}") from exc
    if root.tag != "robot":
        raise ValueError(f"URDF root element is <{root.tag}>, not <robot>")
    links = tuple(link.get("name", "") for link in root.findall("link"))
    joints: dict[str, Joint] = {}
    for el in root.findall("joint"):  # direct children only (not <ros2_control>/<transmission> joints)
        name = el.get("name", "")
        if name in joints:
            raise ValueError(f"duplicate joint {name!r}")
        origin, limit = el.find("origin"), el.find("limit")
        joint = Joint(
            name=name,
            type=el.get("type", ""),
            parent=_link(el.find("parent")),
            child=_link(el.find("child")),
            xyz=_triple(origin, "xyz", name, 0.0),
            rpy=_triple(origin, "rpy", name, 0.0),
            axis=_triple(el.find("axis"), "xyz", name, 1.0),  # URDF's default axis is x
            lower=_number(limit, "lower", name),
            upper=_number(limit, "upper", name),
            effort=_number(limit, "effort", name),
            velocity=_number(limit, "velocity", name),
            mimic=_mimic(el.find("mimic"), name),
        )
        for link in (joint.parent, joint.child):
            if link and link not in links:
                raise ValueError(f"joint {name!r} names unknown link {link!r}")
        joints[name] = joint
    materials = tuple(m.get("name", "") for m in root.findall("material"))
    return UrdfModel(root.get("name", ""), links, joints, materials)


def read_urdf(path: str | Path, parse: Callable[[str], T]) -> T:
    """`parse` the text of a URDF file, naming the file in any error.

    Raises:
        FileNotFoundError: no such file (the message says which path was tried).
        ValueError: what `parse` raised, prefixed with the path.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"URDF not found at {path}") from exc
    try:
        return parse(text)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def load_urdf(path: str | Path | None = None) -> UrdfModel:
    """`parse_urdf` of a file (default: the arm's URDF, `find_urdf`); errors as `read_urdf`."""
    return read_urdf(find_urdf() if path is None else path, parse_urdf)
