"""Every topic, service, action and node name of the stack, in one place.

Inside the nodes every name is relative: a node resolves it against its own namespace, as ROS does,
and the launch file (launch/arm_control.launch.xml) places the nodes and remaps the names that live in
another namespace of the stack. Each constant below is registered with its home, the sub-namespace of
the stack it lives in (`ARM_NS`, `SALAMANDER_NS`, or the stack's root ""), and the comment gives the
absolute name of the default launch. Those marked (spec) are pinned: operators' runbooks, gamepad
setups and rviz configs depend on them. All of them, with types, QoS and rates: docs/interfaces.md.

A stack started with ``cell:=cell2`` has the same names under ``/cell2`` (``/cell2/joint_states``,
``/cell2/arm/trajectory_generator``). Code outside the nodes (tests, the operator CLI, the benches)
reaches a stack through `absolute(name, cell)`; `cell_namespace` reads a cell the way the launch file
does. test/test_launch_runner.py builds every node as the launch file places it and checks that each
name it uses resolves to `absolute(name, cell)`: a name used outside its home without a remap fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

# The sub-namespaces of a stack; the launch file pushes the stack's own namespace (`cell`) above them.
ROOT_NS = ""
ARM_NS = "arm"
SALAMANDER_NS = "salamander"

_HOME: dict[str, str] = {}


def _at(home: str, name: str) -> str:
    """Register `name` (relative) as living in the sub-namespace `home` of the stack."""
    assert name not in _HOME, f"{name} is registered twice"
    _HOME[name] = home
    return name


# Nodes.
TRAJECTORY_GENERATOR = _at(ARM_NS, "trajectory_generator")  # (spec) /arm/trajectory_generator
KINEMATICS_NODE = _at(ARM_NS, "arm_kinematics_node")  # (spec) /arm/arm_kinematics_node
CARTESIAN_MOTION_NODE = _at(ARM_NS, "arm_cartesian_motion_node")  # (spec) /arm/arm_cartesian_motion_node
SIM_HARDWARE = _at(ARM_NS, "sim_hardware")  # /arm/sim_hardware
IK_GHOST_NODE = _at(SALAMANDER_NS, "ik_ghost_node")  # /salamander/ik_ghost_node
BEHAVIOR_SERVER = _at(SALAMANDER_NS, "behavior_server_node")  # (spec) /salamander/behavior_server_node
CELL_SIM = _at(SALAMANDER_NS, "cell_sim")  # /salamander/cell_sim
SIM_OPERATOR = _at(SALAMANDER_NS, "sim_operator")  # /salamander/sim_operator: simulated operator
CONTROLLER_NODE = _at(SALAMANDER_NS, "controller_node")  # /salamander/controller_node
GAMEPAD_NODE = _at(SALAMANDER_NS, "gamepad_node")  # /salamander/gamepad_node
# The rviz view (launch argument rviz:=true, full ROS 2 install): robot_state_publisher and rviz2 nodes.
ROBOT_STATE_PUBLISHER = _at(ARM_NS, "robot_state_publisher")  # /arm/robot_state_publisher: the arm's TF
GHOST_STATE_PUBLISHER = _at(SALAMANDER_NS, "ik_ghost_state_publisher")  # /salamander/ik_ghost_state_publisher
RVIZ = _at(SALAMANDER_NS, "rviz")  # /salamander/rviz: rviz2 with config/salamander.rviz
# The browser operator view (salamander_view, launch argument view:=true).
OPERATOR_VIEW = _at(SALAMANDER_NS, "operator_view")  # /salamander/operator_view: the browser view

# Joint space.
JOINT_STATES = _at(ROOT_NS, "joint_states")  # (spec) /joint_states: sensor_msgs/JointState, measured
JOINT_TARGET = _at(ARM_NS, "joint_target")  # (spec) /arm/joint_target: JointState, the generator's goal
JOINT_TARGET_DEPTH = 100
"""History depth of /arm/joint_target on both ends: a Cartesian line's final deceleration goes out as one
burst of up to `cartesian.linear_goal.MAX_TAIL` (80) samples, none of which may be dropped."""
JOINT_COMMAND = _at(ARM_NS, "joint_command")  # /arm/joint_command: JointState, generator -> hardware
# /joint_states again at the monitors' rate: the generator republishes the valid ones it receives at most
# monitor_rate_hz (25) times a second, for the nodes that look at the arm 20-50 times a second (the IK
# ghost, the behaviour server, the teleop controller, the operator view; docs/design/cpu.md).
JOINT_STATES_MONITOR = _at(ARM_NS, "joint_states_monitor")  # /arm/joint_states_monitor: JointState

# Trajectory generator.
LEASE_SERVICE = _at(ARM_NS, "lease")  # /arm/lease: salamander_msgs/srv/ArmLease
LEASE_STATE = _at(ARM_NS, "lease_state")  # /arm/lease_state: salamander_msgs/msg/LeaseState, latched
CLAMP_REPORT = _at(ARM_NS, "clamp_report")  # /arm/clamp_report: salamander_msgs/msg/ClampReport
COUPLED_LIMITS = _at(ARM_NS, "coupled_limits")  # /arm/coupled_limits: salamander_msgs/msg/CoupledLimits
# The owner of the coupled limits (the generator) takes a set forwarded by any other node here
# (ros/coupled_limits_sync.py): /arm/trajectory_generator/set_parameters_atomically.
COUPLED_LIMITS_SET = _at(ARM_NS, f"{TRAJECTORY_GENERATOR}/set_parameters_atomically")

# Simulated hardware.
SIM_STOP_HITS = _at(ARM_NS, "sim/stop_hits")  # /arm/sim/stop_hits: std_msgs/UInt64, latched
# The simulated cell's wrench on the tool (cell_sim -> sim_hardware, which turns it into joint efforts).
SIM_TOOL_WRENCH = _at(SALAMANDER_NS, "sim/tool_wrench")  # /salamander/sim/tool_wrench: WrenchStamped

# Kinematics and Cartesian motion.
SOLVE_IK = _at(ARM_NS, "solve_ik")  # /arm/solve_ik: salamander_msgs/srv/SolveIk
COMPUTE_FK = _at(ARM_NS, "compute_fk")  # /arm/compute_fk: salamander_msgs/srv/ComputeFk
MOVE_CARTESIAN = _at(ARM_NS, "move_cartesian")  # /arm/move_cartesian: salamander_msgs/action/MoveCartesian
RETARGET_CARTESIAN = _at(ARM_NS, "retarget_cartesian")  # /arm/retarget_cartesian: srv/RetargetCartesian

# IK ghost (spec).
GHOST_STATUS = _at(SALAMANDER_NS, "ik_ghost/status")  # /salamander/ik_ghost/status: IkStatus
GHOST_JOINT_STATE = _at(SALAMANDER_NS, "ik_ghost/joint_state")  # /salamander/ik_ghost/joint_state
GHOST_MARKERS = _at(SALAMANDER_NS, "ik_ghost/markers")  # /salamander/ik_ghost/markers: MarkerArray

# The robot model and TF (rviz view). The arm's frames are the URDF's links; the ghost's are the same
# links prefixed `ghost/`, anchored to base_link by the ghost node's static transform (ghost/anchor.py).
ROBOT_DESCRIPTION = _at(ROOT_NS, "robot_description")  # /robot_description: String, latched, the URDF
GHOST_ROBOT_DESCRIPTION = _at(SALAMANDER_NS, "ik_ghost/robot_description")  # the ghost's URDF, latched
TF = _at(ROOT_NS, "tf")  # /tf: tf2_msgs/TFMessage (robot_state_publisher's moving joints)
TF_STATIC = _at(ROOT_NS, "tf_static")  # /tf_static: TFMessage, latched (fixed joints, the ghost's anchor)

# Operator (spec).
OPERATOR_JOG = _at(SALAMANDER_NS, "operator/jog")  # /salamander/operator/jog: Twist, m/s in base_link
OPERATOR_CONFIRM = _at(SALAMANDER_NS, "operator/confirm")  # /salamander/operator/confirm: std_msgs/Bool
JOY = _at(ROOT_NS, "joy")  # /joy: sensor_msgs/Joy

# The gripper's hardware contract (the simulated cell, the robot's driver or the test stand-in provides it;
# docs/interfaces.md, "Hardware contract").
GRIPPER_VACUUM = _at(SALAMANDER_NS, "gripper/vacuum")  # /salamander/gripper/vacuum: std_srvs/SetBool
PART_PRESENT = _at(SALAMANDER_NS, "gripper/part_present")  # /salamander/gripper/part_present: Bool

# Simulated cell: its ground truth, for reports and tests (the behaviour tree never reads these).
CELL_STATE = _at(SALAMANDER_NS, "cell/state")  # /salamander/cell/state: String, JSON (cell_sim)
CELL_MARKERS = _at(SALAMANDER_NS, "cell/markers")  # /salamander/cell/markers: MarkerArray, base_link
CELL_VACUUM_STATE = _at(SALAMANDER_NS, "cell/vacuum_state")  # /salamander/cell/vacuum_state: Bool, latched

# Gamepad teleop (salamander_teleop).
TELEOP_MODE = _at(SALAMANDER_NS, "teleop/mode")  # /salamander/teleop/mode: String, latched, manual|auto

# Behaviour server.
BEHAVIOR_TREE = _at(SALAMANDER_NS, "behavior/tree")  # /salamander/behavior/tree: String, latched
RUN_PICK_PLACE = _at(SALAMANDER_NS, "run_pick_place")  # /salamander/run_pick_place: action RunPickPlace
# /salamander/run_pick_place/reset_progress: std_srvs/Trigger, forget the run's progress (cans done, carried)
RESET_PROGRESS = _at(SALAMANDER_NS, "run_pick_place/reset_progress")
# The box estimate (where the box really stands, from placed cans): shown, and cleared for a new box.
BOX_ESTIMATE = _at(SALAMANDER_NS, "box/estimate")  # /salamander/box/estimate: String, JSON, latched
NEW_BOX = _at(SALAMANDER_NS, "box/new_box")  # /salamander/box/new_box: std_srvs/Trigger, forget the estimate
# The behaviour server's parameter services, which the operator view calls to read and set manual_place.
BEHAVIOR_GET_PARAMETERS = _at(SALAMANDER_NS, f"{BEHAVIOR_SERVER}/get_parameters")
BEHAVIOR_SET_PARAMETERS = _at(SALAMANDER_NS, f"{BEHAVIOR_SERVER}/set_parameters")

HOMES: Mapping[str, str] = MappingProxyType(_HOME)
"""Every name above -> its home, the sub-namespace of the stack it lives in ("" = the stack's root)."""

_TOKEN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def cell_namespace(cell: str = "") -> str:
    """The namespace of the stack the launch file starts with ``cell:=CELL``, as a prefix of names.

    '' for the default stack (at /); '/cell2' for 'cell2' or '/cell2' (the launch file joins the cell
    like push-ros-namespace does).

    Raises:
        ValueError: `cell` is not a valid ROS namespace.
    """
    tokens = cell.strip("/").split("/") if cell.strip("/") else []
    if not all(_TOKEN_RE.match(token) for token in tokens):
        raise ValueError(f"invalid cell {cell!r}: a ROS namespace such as cell2 (letters, digits, _)")
    return "".join(f"/{token}" for token in tokens)


def absolute(name: str, cell: str = "") -> str:
    """The absolute name of `name` (a constant of this module) in the stack started with ``cell:=CELL``.

    E.g. ``absolute(JOINT_TARGET) == "/arm/joint_target"`` and
    ``absolute(TRAJECTORY_GENERATOR, "cell2") == "/cell2/arm/trajectory_generator"``.

    Raises:
        KeyError: `name` is not a name of this module.
        ValueError: `cell` is not a valid ROS namespace.
    """
    parts = (cell_namespace(cell).lstrip("/"), _HOME[name], name)
    return "/" + "/".join(part for part in parts if part)
