"""The URDF against the kinematics library (docs/arm_model.md "In the URDF"): same FK, same joint limits.

The chain FK is computed from the XML alone (`salamander_testing.urdf_chain`); nothing here needs
rclpy or a URDF library, so a wrong origin, axis sign or mimic multiplier shows up as a TCP mismatch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import (
    JOINT_NAMES,
    REST_POSTURE,
    ArmParams,
    forward_kinematics,
    forward_kinematics_batch,
    wrist_position,
)
from salamander_control.urdf import URDF_PATH, Mimic, UrdfModel, load_urdf
from salamander_testing import urdf_chain

TCP_TOL = 1e-9  # m
ANGLE_TOL = 1e-9  # rad
DEFAULTS = ArmParams()
SPEC_CHAIN = ["base_yaw", "shoulder_pitch", "beam_pitch", "wrist_yaw", "wrist_pitch"]
"""Actuated joints root to tip, per the spec's chain order (motor order is JOINT_NAMES)."""


@pytest.fixture(scope="module")
def model() -> UrdfModel:
    return load_urdf()


def _wrap(a: np.ndarray | float) -> np.ndarray:
    return np.asarray(a) - 2.0 * np.pi * np.round(np.asarray(a) / (2.0 * np.pi))


def _tool_angles(rot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pitch, yaw, roll-residue) of rotations R = Rz(yaw) @ Ry(pitch); well defined at any pitch.

    Column 1 of Rz(yaw) Ry(pitch) is (-sin yaw, cos yaw, 0) and row 2 is (-sin pitch, 0, cos pitch).
    """
    pitch = np.arctan2(-rot[..., 2, 0], rot[..., 2, 2])
    yaw = np.arctan2(-rot[..., 0, 1], rot[..., 1, 1])
    return pitch, yaw, rot[..., 2, 1]


def _check_pose(model: UrdfModel, q: np.ndarray) -> None:
    """URDF suction_link pose == library FK for joint vectors `q` (N, 5) in motor order."""
    pose = urdf_chain.fk_motor_order(model, q, JOINT_NAMES)
    ref = forward_kinematics_batch(q)
    tcp_err = np.abs(pose[:, :3, 3] - ref.tcp).max(axis=1)
    worst = int(np.argmax(tcp_err))
    assert tcp_err[worst] <= TCP_TOL, f"TCP off by {tcp_err[worst]:.3e} m at q={q[worst].tolist()}"

    rot = pose[:, :3, :3]
    pitch, yaw, roll_residue = _tool_angles(rot)
    assert np.abs(roll_residue).max() <= ANGLE_TOL, "suction_link has a roll component"
    assert np.abs(_wrap(pitch - ref.tool_pitch)).max() <= ANGLE_TOL
    assert np.abs(_wrap(yaw - ref.tool_yaw)).max() <= ANGLE_TOL
    # The pad points along suction_link's -z: TCP = wrist - tool_drop * z_axis.
    wrist = np.array([wrist_position(row) for row in q])
    approach = (pose[:, :3, 3] - wrist) / DEFAULTS.tool_drop
    assert np.abs(approach + rot[:, :, 2]).max() <= 1e-8


def test_links_form_one_tree_rooted_at_base_link(model: UrdfModel) -> None:
    assert model.name == "salamander"
    assert model.root == "base_link"
    assert len(set(model.links)) == len(model.links)
    children = [j.child for j in model.joints.values()]
    assert sorted(children) == sorted(set(model.links) - {"base_link"})
    chain = model.chain("suction_link")
    assert [j.parent for j in chain[1:]] == [j.child for j in chain[:-1]]
    assert len(chain) == len(model.joints), "every joint lies on the base_link -> suction_link chain"


def test_joint_order_types_and_axes_follow_the_spec(model: UrdfModel) -> None:
    assert [(j.name, j.type) for j in model.chain()] == [
        ("base_yaw", "revolute"),
        ("shoulder_pitch", "revolute"),
        ("elbow_mimic", "revolute"),
        ("beam_pitch", "revolute"),
        ("wrist_level_mimic", "revolute"),
        ("wrist_yaw", "revolute"),
        ("pad_mount_yaw", "fixed"),
        ("wrist_pitch", "revolute"),
        ("tool_drop", "fixed"),
    ]
    axes = {j.name: j.axis for j in model.chain() if j.type != "fixed"}
    assert axes == {
        "base_yaw": (0.0, 0.0, 1.0),
        "shoulder_pitch": (0.0, 1.0, 0.0),
        "elbow_mimic": (0.0, 1.0, 0.0),
        "beam_pitch": (0.0, 1.0, 0.0),
        "wrist_level_mimic": (0.0, 1.0, 0.0),
        "wrist_yaw": (0.0, 0.0, 1.0),
        "wrist_pitch": (0.0, 1.0, 0.0),
    }


def test_actuated_joints_are_the_motors(model: UrdfModel) -> None:
    """The URDF has no notion of motor order; it must hold exactly JOINT_NAMES, in the spec's chain order."""
    assert JOINT_NAMES == ("base_yaw", "shoulder_pitch", "beam_pitch", "wrist_pitch", "wrist_yaw")
    assert model.actuated() == SPEC_CHAIN
    assert sorted(model.actuated()) == sorted(JOINT_NAMES)
    moving = [j.name for j in model.joints.values() if j.type != "fixed"]
    assert sorted(moving) == sorted([*JOINT_NAMES, "elbow_mimic", "wrist_level_mimic"])


def test_mimic_joints_undo_shoulder_and_beam(model: UrdfModel) -> None:
    mimics = {j.name: j.mimic for j in model.joints.values() if j.mimic is not None}
    assert mimics == {
        "elbow_mimic": Mimic("shoulder_pitch", -1.0, 0.0),
        "wrist_level_mimic": Mimic("beam_pitch", -1.0, 0.0),
    }
    # Each mimic directly follows its source on the chain and carries the mirrored range.
    names = [j.name for j in model.chain()]
    limits = model.limits()
    for name, mimic in mimics.items():
        assert names.index(name) == names.index(mimic.joint) + 1
        lo, hi = limits[mimic.joint]
        assert limits[name] == (-hi, -lo)


def test_per_joint_limits_equal_armparams_defaults(model: UrdfModel) -> None:
    limits = model.limits()
    for name, lo, hi in zip(JOINT_NAMES, DEFAULTS.joint_lower, DEFAULTS.joint_upper, strict=True):
        assert limits[name] == (lo, hi), name


def test_effort_and_velocity_limits_are_positive(model: UrdfModel) -> None:
    for joint in model.joints.values():
        if joint.type != "fixed":
            assert joint.effort is not None and joint.effort > 0.0, joint.name
            assert joint.velocity is not None and joint.velocity > 0.0, joint.name


def test_geometry_equals_armparams_defaults(model: UrdfModel) -> None:
    from_urdf = urdf_chain.params_from_urdf(model)
    for field in ("base_height", "upper_arm_length", "beam_length", "tool_drop", "pad_mount_yaw"):
        assert getattr(from_urdf, field) == pytest.approx(getattr(DEFAULTS, field), abs=1e-12), field
    assert from_urdf.joint_lower == DEFAULTS.joint_lower
    assert from_urdf.joint_upper == DEFAULTS.joint_upper


def test_every_link_with_a_visual_uses_a_defined_material() -> None:
    import xml.etree.ElementTree as ET

    root = ET.parse(URDF_PATH).getroot()
    defined = {m.get("name") for m in root.findall("material")}
    visuals = root.findall("link/visual")
    assert len(visuals) >= 8
    for visual in visuals:
        material = visual.find("material")
        assert material is not None and material.get("name") in defined


@pytest.mark.parametrize(
    ("q", "tcp"),
    [
        (REST_POSTURE, (0.0787, 0.0, 0.0374)),
        ((0.0, math.radians(80.0), math.radians(30.0), 0.0, 0.0), (0.5986, 0.0, -0.1029)),
    ],
)
def test_spec_reference_points(
    model: UrdfModel, q: tuple[float, ...], tcp: tuple[float, ...]
) -> None:
    pose = urdf_chain.fk_motor_order(model, q, JOINT_NAMES)
    assert pose[:3, 3] == pytest.approx(tcp, abs=1e-4)


def test_sign_conventions(model: UrdfModel) -> None:
    """+q1 moves the elbow to +x; +q2 points the beam down; the pad hangs below the wrist at pitch 0."""
    def link(name: str, q: tuple[float, ...]) -> np.ndarray:
        values = dict(zip(JOINT_NAMES, q, strict=True))
        return urdf_chain.link_poses(model, values)[name][0]

    elbow = link("elbow_link", (0.0, 0.3, 0.0, 0.0, 0.0))[:3, 3]
    assert elbow[0] > 0.0
    beam = link("beam_link", (0.0, 0.0, 0.3, 0.0, 0.0))[:3, 0]
    assert beam[2] < 0.0 and beam[0] > 0.0
    for q in ((0.0, 0.7, 0.2, 0.0, 0.0), (1.0, -0.5, 1.0, 0.0, 2.0)):
        mount = link("wrist_mount_link", q)[:3, :3]
        assert mount[:, 2] == pytest.approx((0.0, 0.0, 1.0), abs=1e-12), "wrist mount must stay level"
        tcp = link("suction_link", q)[:3, 3]
        assert tcp == pytest.approx(np.array(wrist_position(q)) - (0.0, 0.0, 0.1), abs=1e-12)


def test_fk_matches_library_on_seeded_batch(model: UrdfModel) -> None:
    """5000 joint vectors: within the per-joint limits, plus margins (FK must agree everywhere)."""
    rng = np.random.default_rng(20240611)
    lo = np.array(DEFAULTS.joint_lower)
    hi = np.array(DEFAULTS.joint_upper)
    inside = rng.uniform(lo, hi, size=(4000, 5))
    wide = rng.uniform(-2.0 * np.pi, 2.0 * np.pi, size=(1000, 5))
    q = np.vstack((inside, wide))
    _check_pose(model, q)
    # Scalar library FK on a subset too (the batch FK is itself checked against it elsewhere).
    pose = urdf_chain.fk_motor_order(model, q[:500], JOINT_NAMES)
    scalar = np.array([forward_kinematics(row).tcp for row in q[:500]])
    assert np.abs(pose[:, :3, 3] - scalar).max() <= TCP_TOL


def test_fk_matches_library_at_limit_corners(model: UrdfModel) -> None:
    grid = np.meshgrid(*zip(DEFAULTS.joint_lower, DEFAULTS.joint_upper, strict=True))
    corners = np.array(grid).reshape(5, -1).T  # all 32 corners of the per-joint box
    _check_pose(model, corners)


_angle = st.floats(min_value=-2.0 * math.pi, max_value=2.0 * math.pi, allow_nan=False, allow_infinity=False)


@settings(max_examples=1500, deadline=None)
@given(st.tuples(_angle, _angle, _angle, _angle, _angle))
def test_fk_matches_library_hypothesis(model: UrdfModel, q: tuple[float, ...]) -> None:
    pose = urdf_chain.fk_motor_order(model, q, JOINT_NAMES)
    ref = forward_kinematics(q)
    assert np.abs(pose[:3, 3] - np.array(ref.tcp)).max() <= TCP_TOL
    pitch, yaw, roll_residue = _tool_angles(pose[:3, :3])
    assert abs(float(roll_residue)) <= ANGLE_TOL
    assert abs(float(_wrap(pitch - ref.tool_pitch))) <= ANGLE_TOL
    assert abs(float(_wrap(yaw - ref.tool_yaw))) <= ANGLE_TOL
