"""Every topic, service, action and node name of the stack, in one place.

The names marked (spec) are fixed by ../shared/spec/interfaces.md: operators' runbooks, gamepad setups
and rviz configs depend on them. The rest are the project's own and documented here.
"""

from __future__ import annotations

# Namespaces and nodes.
ARM_NS = "/arm"
SALAMANDER_NS = "/salamander"
TRAJECTORY_GENERATOR = "/arm/trajectory_generator"  # (spec)
KINEMATICS_NODE = "/arm/arm_kinematics_node"  # (spec)
CARTESIAN_MOTION_NODE = "/arm/arm_cartesian_motion_node"  # (spec)
SIM_HARDWARE = "/arm/sim_hardware"
IK_GHOST_NODE = "/salamander/ik_ghost_node"
BEHAVIOR_SERVER = "/salamander/behavior_server_node"  # (spec)

# Joint space.
JOINT_STATES = "/joint_states"  # (spec) sensor_msgs/JointState, measured
JOINT_TARGET = "/arm/joint_target"  # (spec) sensor_msgs/JointState, goal for the trajectory generator
JOINT_COMMAND = "/arm/joint_command"  # sensor_msgs/JointState, trajectory generator -> hardware

# Trajectory generator.
LEASE_SERVICE = "/arm/lease"  # salamander_msgs/srv/ArmLease
LEASE_STATE = "/arm/lease_state"  # salamander_msgs/msg/LeaseState, latched (transient local)
CLAMP_REPORT = "/arm/clamp_report"  # salamander_msgs/msg/ClampReport, on every clamped cycle

# Simulated hardware.
SIM_STOP_HITS = "/arm/sim/stop_hits"  # std_msgs/UInt64, latched: commands that ran into a physical stop

# Kinematics and Cartesian motion.
SOLVE_IK = "/arm/solve_ik"  # salamander_msgs/srv/SolveIk
COMPUTE_FK = "/arm/compute_fk"  # salamander_msgs/srv/ComputeFk
MOVE_CARTESIAN = "/arm/move_cartesian"  # salamander_msgs/action/MoveCartesian
RETARGET_CARTESIAN = "/arm/retarget_cartesian"  # salamander_msgs/srv/RetargetCartesian

# IK ghost (spec).
GHOST_STATUS = "/salamander/ik_ghost/status"  # salamander_msgs/msg/IkStatus
GHOST_JOINT_STATE = "/salamander/ik_ghost/joint_state"  # sensor_msgs/JointState
GHOST_MARKERS = "/salamander/ik_ghost/markers"  # visualization_msgs/MarkerArray

# Operator (spec).
OPERATOR_JOG = "/salamander/operator/jog"  # geometry_msgs/Twist, m/s in base_link
OPERATOR_CONFIRM = "/salamander/operator/confirm"  # std_msgs/Bool
JOY = "/joy"  # sensor_msgs/Joy

# Simulated cell.
CELL_SIM = "/salamander/cell_sim"
CELL_VACUUM = "/salamander/cell/vacuum"  # std_srvs/SetBool, true = vacuum on
CELL_STATE = "/salamander/cell/state"  # std_msgs/String, JSON (format in sim/cell/report.py)
CELL_MARKERS = "/salamander/cell/markers"  # visualization_msgs/MarkerArray, base_link
CELL_VACUUM_STATE = "/salamander/cell/vacuum_state"  # std_msgs/Bool, latched (transient local)

# Gamepad teleop (salamander_teleop).
CONTROLLER_NODE = "/salamander/controller_node"
GAMEPAD_NODE = "/salamander/gamepad_node"
TELEOP_MODE = "/salamander/teleop/mode"  # std_msgs/String, latched (transient local): "manual" or "auto"

# Behaviour server.
BEHAVIOR_TREE = "/salamander/behavior/tree"  # std_msgs/String, latched: the pick-and-place tree with statuses
