"""Forward kinematics of the URDF chain from the XML (numpy; the parser is `salamander_control.urdf`).

Test helper: `link_poses` / `fk` evaluate the chain's homogeneous transforms of a parsed `UrdfModel`
(joint origin xyz/rpy, joint axis, mimic joints computed from their source joints) for one joint
vector or a batch, so that the tests can compare the URDF with the kinematics library;
`params_from_urdf` measures an `ArmParams` from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from salamander_control.urdf import MOVING_TYPES, Joint, UrdfModel, load_urdf


def joint_value(model: UrdfModel, joint: Joint, values: Mapping[str, Any]) -> np.ndarray:
    """Value of `joint` given the actuated joints' `values`; mimics follow their source.

    Raises:
        KeyError: a needed actuated joint is missing from `values`.
    """
    if joint.mimic is not None:
        src = model.joints[joint.mimic.joint]
        return joint.mimic.multiplier * joint_value(model, src, values) + joint.mimic.offset
    return np.atleast_1d(np.asarray(values[joint.name], dtype=float))


def link_poses(
    model: UrdfModel, values: Mapping[str, Any], tip: str = "suction_link"
) -> dict[str, np.ndarray]:
    """Pose in the root frame of every link on the chain to `tip`, each (N, 4, 4)."""
    n = max((np.size(v) for v in values.values()), default=1)
    pose = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    poses = {model.root: pose}
    for joint in model.chain(tip):
        pose = pose @ origin_matrix(joint.xyz, joint.rpy)
        if joint.type in MOVING_TYPES:
            pose = pose @ motion_matrix(joint, np.broadcast_to(joint_value(model, joint, values), (n,)))
        poses[joint.child] = pose
    return poses


def fk(model: UrdfModel, values: Mapping[str, Any], tip: str = "suction_link") -> np.ndarray:
    """Pose of `tip` in the root frame: (4, 4) for scalar values, (N, 4, 4) for arrays of N."""
    pose = link_poses(model, values, tip)[tip]
    scalar = all(np.ndim(v) == 0 for v in values.values())
    return pose[0] if scalar else pose


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
        return fk(model, dict(zip(names, (float(v) for v in q), strict=True)), tip)
    return fk(model, {name: q[:, i] for i, name in enumerate(names)}, tip)


def params_from_urdf(model: UrdfModel | None = None, **overrides: Any) -> Any:
    """An `ArmParams` with the URDF's geometry and per-joint limits (coupled limits stay default).

    Geometry is measured at all-zero joints: base_height is the height of the shoulder axis,
    upper_arm_length shoulder to elbow (beam_pitch) axis, beam_length elbow to wrist pitch axis,
    tool_drop wrist pitch axis to ``suction_link``, pad_mount_yaw the fixed joint's yaw.
    """
    from salamander_control.kinematics import ArmParams

    model = model or load_urdf()
    zeros = {name: 0.0 for name in model.actuated()}
    poses = link_poses(model, zeros)

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
