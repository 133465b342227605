"""Forward kinematics, position Jacobian and singularity measures (docs/arm_model.md)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from salamander_control.kinematics._validate import finite_vector
from salamander_control.kinematics.model import NUM_JOINTS, ArmParams

_DEFAULT = ArmParams()


class ToolPose(NamedTuple):
    """TCP position in base_link (m) and tool attitude (rad)."""

    tcp: tuple[float, float, float]
    tool_pitch: float
    tool_yaw: float


def wrap_angle(a: float) -> float:
    """Wrap an angle into [-pi, pi]."""
    return math.remainder(a, 2.0 * math.pi)


def forward_kinematics(q: Any, params: ArmParams = _DEFAULT) -> ToolPose:
    """TCP pose of joints `q` (motor order).

    The tool yaw is ``q0 + pad_mount_yaw + q4`` wrapped into [-pi, pi], because the IK and the
    monitor compare yaws modulo a turn.

    Raises:
        ValueError: `q` is not five finite numbers.
    """
    q0, q1, q2, q3, q4 = finite_vector(q, NUM_JOINTS, "q")
    return _fk(q0, q1, q2, q3, q4, params)


def _fk(q0: float, q1: float, q2: float, q3: float, q4: float, p: ArmParams) -> ToolPose:
    r = p.upper_arm_length * math.sin(q1) + p.beam_length * math.cos(q2)
    z_w = p.base_height + p.upper_arm_length * math.cos(q1) - p.beam_length * math.sin(q2)
    tool_yaw = q0 + p.pad_mount_yaw + q4
    s_p = math.sin(q3)
    d = p.tool_drop
    x = r * math.cos(q0) - d * math.cos(tool_yaw) * s_p
    y = r * math.sin(q0) - d * math.sin(tool_yaw) * s_p
    z = z_w - d * math.cos(q3)
    return ToolPose((x, y, z), q3, wrap_angle(tool_yaw))


def wrist_position(q: Any, params: ArmParams = _DEFAULT) -> tuple[float, float, float]:
    """Position of the wrist axis (where tool pitch does not matter)."""
    q0, q1, q2, _, _ = finite_vector(q, NUM_JOINTS, "q")
    r = params.upper_arm_length * math.sin(q1) + params.beam_length * math.cos(q2)
    z_w = params.base_height + params.upper_arm_length * math.cos(q1) - params.beam_length * math.sin(q2)
    return (r * math.cos(q0), r * math.sin(q0), z_w)


def position_jacobian(q: Any, params: ArmParams = _DEFAULT) -> np.ndarray:
    """d(TCP)/dq, a 3x5 array (columns in motor order).

    Raises:
        ValueError: `q` is not five finite numbers.
    """
    q0, q1, q2, q3, q4 = finite_vector(q, NUM_JOINTS, "q")
    p = params
    l1, l2, d = p.upper_arm_length, p.beam_length, p.tool_drop
    r = l1 * math.sin(q1) + l2 * math.cos(q2)
    ty = q0 + p.pad_mount_yaw + q4
    c0, s0, cy, sy = math.cos(q0), math.sin(q0), math.cos(ty), math.sin(ty)
    st, ct = math.sin(q3), math.cos(q3)
    dr1, dr2 = l1 * math.cos(q1), -l2 * math.sin(q2)  # d(reach)/dq1, d(reach)/dq2
    return np.array(
        [
            [-r * s0 + d * sy * st, dr1 * c0, dr2 * c0, -d * cy * ct, d * sy * st],
            [r * c0 - d * cy * st, dr1 * s0, dr2 * s0, -d * sy * ct, -d * cy * st],
            [0.0, -l1 * math.sin(q1), -l2 * math.cos(q2), d * st, 0.0],
        ]
    )


def arm_jacobian(q: Any, params: ArmParams = _DEFAULT) -> np.ndarray:
    """d(wrist)/d(q0, q1, q2), the 3x3 Jacobian whose rank loss is the arm's positional singularity.

    The wrist joints only orient the pad; with the tool attitude commanded, the arm's ability to move
    the TCP is the ability of (base_yaw, shoulder, beam) to move the wrist, so singularity measures
    use this square block.
    """
    return _arm_block(q, params)


def _arm_block(q: Any, params: ArmParams) -> np.ndarray:
    q0, q1, q2, _, _ = finite_vector(q, NUM_JOINTS, "q")
    l1, l2 = params.upper_arm_length, params.beam_length
    r = l1 * math.sin(q1) + l2 * math.cos(q2)
    c0, s0 = math.cos(q0), math.sin(q0)
    return np.array(
        [
            [-r * s0, l1 * math.cos(q1) * c0, -l2 * math.sin(q2) * c0],
            [r * c0, l1 * math.cos(q1) * s0, -l2 * math.sin(q2) * s0],
            [0.0, -l1 * math.sin(q1), -l2 * math.cos(q2)],
        ]
    )


def manipulability(q: Any, params: ArmParams = _DEFAULT) -> float:
    """Yoshikawa manipulability ``|det J_arm|`` = ``|r| * L1 * L2 * |cos(q1 - q2)|``.

    Zero at full stretch or full fold of the two links (cos(q1 - q2) = 0) and with the wrist over
    the base axis (r = 0); `salamander_behavior`'s singularity condition watches it.
    """
    q0, q1, q2, _, _ = finite_vector(q, NUM_JOINTS, "q")
    l1, l2 = params.upper_arm_length, params.beam_length
    r = l1 * math.sin(q1) + l2 * math.cos(q2)
    return abs(r) * l1 * l2 * abs(math.cos(q1 - q2))


def condition_number(q: Any, params: ArmParams = _DEFAULT) -> float:
    """2-norm condition number of the arm Jacobian (1 is isotropic; inf at a singularity)."""
    s = np.linalg.svd(_arm_block(q, params), compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0.0 else math.inf
