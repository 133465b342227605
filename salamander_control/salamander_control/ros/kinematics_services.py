"""Answers of the kinematics node's services, as pure functions of (request, arm model).

Every request gets an answer: a malformed one (NaN, a seed that is not five joints, an unknown branch,
joints missing or unknown) is answered with a failure and a reason that says what to fix, never with an
exception (which would take the service node down). No rclpy here, so every branch is testable without
a ROS graph.
"""

from __future__ import annotations

from salamander_control.joint_state import joint_vector
from salamander_control.kinematics import (
    JOINT_NAMES,
    NUM_JOINTS,
    ArmParams,
    forward_kinematics,
    solve_ik_pitched,
    within_limits,
)
from salamander_control.ros.conversions import INVALID_REQUEST, invalid_reason, point_to_tuple, tuple_to_point
from salamander_msgs.srv import ComputeFk, SolveIk

_BRANCHES = {"": None, "up": "up", "down": "down"}


def solve_ik_response(request: SolveIk.Request, params: ArmParams) -> SolveIk.Response:
    """Answer a SolveIk request with `params` (read once by the caller, so one answer sees one model).

    Returns:
        status/reason from the library on a well-formed request (joints in motor order when Ok, empty
        otherwise); `INVALID_REQUEST` with ``"invalid_request: <why>"`` when the request is malformed.
    """
    response = SolveIk.Response()
    if len(request.seed) not in (0, NUM_JOINTS):
        return _invalid(response, f"seed must have 0 or {NUM_JOINTS} values, got {len(request.seed)}")
    if request.branch not in _BRANCHES:
        return _invalid(response, f"branch must be '', 'up' or 'down', got {request.branch!r}")
    seed = tuple(request.seed) if len(request.seed) else None
    try:
        result = solve_ik_pitched(
            point_to_tuple(request.tcp),
            request.tool_pitch,
            request.tool_yaw,
            params,
            seed=seed,
            branch=_BRANCHES[request.branch],
        )
    except ValueError as exc:  # the library names the bad argument (NaN/inf tcp, pitch, yaw or seed)
        return _invalid(response, str(exc))
    response.status = int(result.status)
    response.reason = result.reason
    if result.q is not None:
        response.name = list(JOINT_NAMES)
        response.position = [float(v) for v in result.q]
    return response


def _invalid(response: SolveIk.Response, why: str) -> SolveIk.Response:
    response.status = INVALID_REQUEST
    response.reason = invalid_reason(why)
    return response


def compute_fk_response(request: ComputeFk.Request, params: ArmParams) -> ComputeFk.Response:
    """Answer a ComputeFk request: all five joints by name -> TCP, tool pitch and tool yaw.

    Joints outside the arm's limits are still answered (FK is defined everywhere, and a monitor may
    need the pose of an arm that overshot), with a note in `message`.

    Returns:
        success with the pose, or success false and a message naming the problem (lengths differ, a
        joint unknown, repeated or missing, a position NaN/inf).
    """
    response = ComputeFk.Response()
    try:
        q = joint_vector(request.name, request.position, allow_extra=False).positions
        pose = forward_kinematics(q, params)
    except ValueError as exc:  # a JointStateError, or joints so large that the tool yaw overflows
        response.success = False
        response.message = f"cannot compute FK: {exc}"
        return response
    response.success = True
    response.tcp = tuple_to_point(pose.tcp)
    response.tool_pitch = pose.tool_pitch
    response.tool_yaw = pose.tool_yaw
    inside = within_limits(q, params)
    response.message = "ok" if inside else "ok; note: the joints are outside the arm's limits"
    return response
