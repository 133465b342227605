"""Forward kinematics of a URDF chain straight from the XML (xml.etree + numpy, no URDF libraries).

Test helper: `load()` parses ``urdf/salamander.urdf`` into a `UrdfModel`, whose `fk` evaluates the
chain's homogeneous transforms (joint origin xyz/rpy, joint axis, mimic joints computed from their
source joints) for one joint vector or a batch. `limits()` and `params_from_urdf()` let other tests
compare the URDF against `ArmParams`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from salamander_control.testing import REPO as REPO_ROOT

URDF_PATH = REPO_ROOT / "urdf" / "salamander.urdf"
"""The arm's URDF in this repository."""

MOVING_TYPES = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class Mimic:
    """A joint's ``<mimic>``: value = multiplier * source + offset."""

    joint: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class Joint:
    """One ``<joint>`` element; limits are None where the element has none."""

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
    """The links and joints of a parsed URDF."""

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

    def joint_value(self, joint: Joint, values: Mapping[str, Any]) -> np.ndarray:
        """Value of `joint` given the actuated joints' `values`; mimics follow their source.

        Raises:
            KeyError: a needed actuated joint is missing from `values`.
        """
        if joint.mimic is not None:
            src = self.joints[joint.mimic.joint]
            return joint.mimic.multiplier * self.joint_value(src, values) + joint.mimic.offset
        return np.atleast_1d(np.asarray(values[joint.name], dtype=float))

    def link_poses(self, values: Mapping[str, Any], tip: str = "suction_link") -> dict[str, np.ndarray]:
        """Pose in the root frame of every link on the chain to `tip`, each (N, 4, 4)."""
        n = max((np.size(v) for v in values.values()), default=1)
        pose = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
        poses = {self.root: pose}
        for joint in self.chain(tip):
            pose = pose @ origin_matrix(joint.xyz, joint.rpy)
            if joint.type in MOVING_TYPES:
                pose = pose @ motion_matrix(joint, np.broadcast_to(self.joint_value(joint, values), (n,)))
            poses[joint.child] = pose
        return poses

    def fk(self, values: Mapping[str, Any], tip: str = "suction_link") -> np.ndarray:
        """Pose of `tip` in the root frame: (4, 4) for scalar values, (N, 4, 4) for arrays of N."""
        pose = self.link_poses(values, tip)[tip]
        scalar = all(np.ndim(v) == 0 for v in values.values())
        return pose[0] if scalar else pose


def _floats(text: str | None, default: tuple[float, float, float]) -> tuple[float, float, float]:
    if text is None:
        return default
    parts = tuple(float(v) for v in text.split())
    if len(parts) != 3:
        raise ValueError(f"expected three numbers, got {text!r}")
    return parts  # type: ignore[return-value]


def _opt(element: ET.Element | None, attr: str) -> float | None:
    if element is None or element.get(attr) is None:
        return None
    return float(element.get(attr))  # type: ignore[arg-type]


def load(path: str | Path = URDF_PATH) -> UrdfModel:
    """Parse a URDF file.

    Raises:
        ValueError: not a ``<robot>``, or a joint names a link that does not exist.
    """
    root = ET.parse(path).getroot()
    if root.tag != "robot":
        raise ValueError(f"{path}: root element is <{root.tag}>, not <robot>")
    links = tuple(link.get("name", "") for link in root.findall("link"))
    joints: dict[str, Joint] = {}
    for el in root.findall("joint"):  # direct children only (not <ros2_control>/<transmission> joints)
        origin, axis, limit, mimic = el.find("origin"), el.find("axis"), el.find("limit"), el.find("mimic")
        joint = Joint(
            name=el.get("name", ""),
            type=el.get("type", ""),
            parent=el.find("parent").get("link", ""),  # type: ignore[union-attr]
            child=el.find("child").get("link", ""),  # type: ignore[union-attr]
            xyz=_floats(None if origin is None else origin.get("xyz"), (0.0, 0.0, 0.0)),
            rpy=_floats(None if origin is None else origin.get("rpy"), (0.0, 0.0, 0.0)),
            axis=_floats(None if axis is None else axis.get("xyz"), (1.0, 0.0, 0.0)),
            lower=_opt(limit, "lower"),
            upper=_opt(limit, "upper"),
            effort=_opt(limit, "effort"),
            velocity=_opt(limit, "velocity"),
            mimic=None if mimic is None else Mimic(
                mimic.get("joint", ""), float(mimic.get("multiplier", "1")), float(mimic.get("offset", "0"))
            ),
        )
        for link in (joint.parent, joint.child):
            if link not in links:
                raise ValueError(f"{path}: joint {joint.name!r} names unknown link {link!r}")
        if joint.name in joints:
            raise ValueError(f"{path}: duplicate joint {joint.name!r}")
        joints[joint.name] = joint
    materials = tuple(m.get("name", "") for m in root.findall("material"))
    return UrdfModel(root.get("name", ""), links, joints, materials)


def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """URDF's fixed-axis roll/pitch/yaw: R = Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    return rz @ ry @ rx


def origin_matrix(xyz: Sequence[float], rpy: Sequence[float]) -> np.ndarray:
    """Homogeneous transform of a joint's ``<origin>``."""
    t = np.eye(4)
    t[:3, :3] = rpy_matrix(rpy)
    t[:3, 3] = xyz
    return t


def axis_angle_matrices(axis: Sequence[float], angles: np.ndarray) -> np.ndarray:
    """Rotations by `angles` (N,) about the unit vector along `axis` (Rodrigues), (N, 3, 3)."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    a = np.asarray(angles, dtype=float)[:, None, None]
    return np.eye(3) + np.sin(a) * kx + (1.0 - np.cos(a)) * (kx @ kx)


def motion_matrix(joint: Joint, values: np.ndarray) -> np.ndarray:
    """The joint's own motion for `values` (N,): a rotation or a translation along its axis, (N, 4, 4)."""
    n = values.shape[0]
    t = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    if joint.type == "prismatic":
        k = np.asarray(joint.axis) / np.linalg.norm(joint.axis)
        t[:, :3, 3] = values[:, None] * k
    else:
        t[:, :3, :3] = axis_angle_matrices(joint.axis, values)
    return t


def fk_motor_order(model: UrdfModel, q: Any, names: Sequence[str], tip: str = "suction_link") -> np.ndarray:
    """`tip` pose for joint vectors `q` ((5,) or (N, 5)) given in the order of `names`."""
    q = np.asarray(q, dtype=float)
    if q.ndim == 1:
        return model.fk(dict(zip(names, (float(v) for v in q), strict=True)), tip)
    return model.fk({name: q[:, i] for i, name in enumerate(names)}, tip)


def params_from_urdf(model: UrdfModel | None = None, **overrides: Any) -> Any:
    """An `ArmParams` with the URDF's geometry and per-joint limits (coupled limits stay default).

    Geometry is measured at all-zero joints: base_height is the height of the shoulder axis,
    upper_arm_length shoulder to elbow (beam_pitch) axis, beam_length elbow to wrist pitch axis,
    tool_drop wrist pitch axis to ``suction_link``, pad_mount_yaw the fixed joint's yaw.
    """
    from salamander_control.kinematics import ArmParams

    model = model or load()
    zeros = {name: 0.0 for name in model.actuated()}
    poses = model.link_poses(zeros)

    def at(joint: str) -> np.ndarray:
        return poses[model.joints[joint].child][0, :3, 3]

    lim = model.limits()
    fields: dict[str, Any] = {
        "base_height": float(at("shoulder_pitch")[2]),
        "upper_arm_length": float(np.linalg.norm(at("beam_pitch") - at("shoulder_pitch"))),
        "beam_length": float(np.linalg.norm(at("wrist_pitch") - at("beam_pitch"))),
        "tool_drop": float(np.linalg.norm(poses["suction_link"][0, :3, 3] - at("wrist_pitch"))),
        "pad_mount_yaw": model.joints["pad_mount_yaw"].rpy[2],
        "yaw_min": lim["base_yaw"][0],
        "yaw_max": lim["base_yaw"][1],
        "q1_min": lim["shoulder_pitch"][0],
        "q1_max": lim["shoulder_pitch"][1],
        "q2_min": lim["beam_pitch"][0],
        "q2_max": lim["beam_pitch"][1],
        "wrist_pitch_min": lim["wrist_pitch"][0],
        "wrist_pitch_max": lim["wrist_pitch"][1],
        "wrist_yaw_min": lim["wrist_yaw"][0],
        "wrist_yaw_max": lim["wrist_yaw"][1],
    }
    fields.update(overrides)
    return ArmParams(**fields)
