"""Joint-limit watching without ROS: URDF limits, joint-state samples, checks, hysteresis, cache.

`salamander_behavior.behaviors.conditions` turns these into py_trees behaviours; everything here is pure
Python
(numpy through the kinematics library), unit-tested without rclpy or py_trees.
"""

from salamander_behavior.limits.cache import CachedState, JointStateCache
from salamander_behavior.limits.checks import (
    CheckResult,
    JointProximity,
    NearLimit,
    check_coupled,
    check_positions,
    check_singularity,
    check_velocity_effort,
    coupled_slacks,
    joint_near_limit,
    nearest_limit,
    proximities,
)
from salamander_behavior.limits.combined import CombinedIndex, check_combined, combined_index, limit_factor
from salamander_behavior.limits.hysteresis import Hysteresis
from salamander_behavior.limits.sample import JointSample
from salamander_behavior.limits.urdf_limits import (
    JointLimit,
    default_urdf_path,
    limits_by_name,
    load_urdf_limits,
    parse_urdf_limits,
)
from salamander_control.joint_state import JointStateError

__all__ = [
    "CachedState",
    "CheckResult",
    "CombinedIndex",
    "Hysteresis",
    "JointLimit",
    "JointProximity",
    "JointSample",
    "JointStateCache",
    "NearLimit",
    "JointStateError",
    "check_combined",
    "check_coupled",
    "check_positions",
    "check_singularity",
    "check_velocity_effort",
    "combined_index",
    "coupled_slacks",
    "default_urdf_path",
    "joint_near_limit",
    "limit_factor",
    "limits_by_name",
    "load_urdf_limits",
    "nearest_limit",
    "parse_urdf_limits",
    "proximities",
]
