"""Kinematics of the Salamander arm: pure Python and numpy, no rclpy (docs/arm_model.md).

Public API (other packages and operators' scripts depend on these names):
`ArmParams`, `JOINT_NAMES`, `forward_kinematics`, `solve_ik_pitched`, `IkStatus`, `IkResult`,
`ElbowBranch`, `project_to_feasible`, `Bound`, `position_jacobian`, `manipulability`,
`condition_number`, `forward_kinematics_batch`, `solve_ik_batch`, `within_limits`.
"""

from salamander_control.kinematics.batch import forward_kinematics_batch, solve_ik_batch
from salamander_control.kinematics.feasible import (
    Bound,
    Projection,
    polygon_vertices,
    project_to_feasible,
    violated_bounds,
)
from salamander_control.kinematics.fk import (
    ToolPose,
    arm_jacobian,
    condition_number,
    forward_kinematics,
    manipulability,
    position_jacobian,
    wrap_angle,
    wrist_position,
)
from salamander_control.kinematics.ik import (
    LIMIT_TOL,
    REACH_TOL,
    ElbowBranch,
    IkResult,
    branch_of,
    solve_ik_pitched,
)
from salamander_control.kinematics.model import (
    ALPHA_BETA_RANGE,
    JOINT_NAMES,
    NUM_JOINTS,
    REST_POSTURE,
    ArmParams,
    within_limits,
)
from salamander_control.kinematics.status import IkStatus

__all__ = [
    "ALPHA_BETA_RANGE",
    "JOINT_NAMES",
    "LIMIT_TOL",
    "NUM_JOINTS",
    "REACH_TOL",
    "REST_POSTURE",
    "ArmParams",
    "Bound",
    "ElbowBranch",
    "IkResult",
    "IkStatus",
    "Projection",
    "ToolPose",
    "arm_jacobian",
    "branch_of",
    "condition_number",
    "forward_kinematics",
    "forward_kinematics_batch",
    "manipulability",
    "polygon_vertices",
    "position_jacobian",
    "project_to_feasible",
    "solve_ik_batch",
    "solve_ik_pitched",
    "violated_bounds",
    "within_limits",
    "wrap_angle",
    "wrist_position",
]
