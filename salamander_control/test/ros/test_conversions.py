"""Message conversions, the ghost's messages and the kinematics services' answers, without a ROS graph.

These build and read message objects only (no rclpy.init), so every refusal path is exercised directly;
nodes/test_arm_kinematics_node_ros.py and nodes/test_ik_ghost_node_ros.py show the same over real
services and topics.
"""

from __future__ import annotations

import math

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from hypothesis import given, settings
from hypothesis import strategies as st
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker

from salamander_control.ghost.core import GREEN, RED, evaluate_ghost
from salamander_control.ghost.msgs import LABEL_ID, LINKS_ID, joint_state_msg, marker_array, status_msg
from salamander_control.joint_state import joint_vector
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE, ArmParams, IkStatus, forward_kinematics
from salamander_control.ros.conversions import (
    INVALID_REQUEST,
    ik_status_from_msg,
    ik_status_msg,
    measured_joints,
    point_to_tuple,
    read_stamp,
    tuple_to_point,
    vector_to_joint_state,
)
from salamander_control.ros.kinematics_services import compute_fk_response, solve_ik_response
from salamander_msgs.msg import IkStatus as IkStatusMsg
from salamander_msgs.srv import ComputeFk, SolveIk
from salamander_testing.kin_strategies import feasible_joints

P = ArmParams()
NAMES = list(JOINT_NAMES)
Q = (0.3, 0.2, 0.6, -0.1, 0.4)

# --- conversions -------------------------------------------------------------------------------------


def test_measured_joints_ignore_extras_and_log_a_refusal_throttled():
    logged = []

    def log(text, throttle_duration_sec):
        logged.append((text, throttle_duration_sec))

    velocity = [0.0, 0.0, math.nan, 0.0, 0.0, 0.0]
    msg = JointState(name=["gripper", *NAMES], position=[0.01, *Q], velocity=velocity)
    assert measured_joints(msg, "/joint_states", log) == Q  # positions only: the NaN velocity is not read
    assert measured_joints(msg, "/joint_states", log, velocities=True) is None
    assert logged[-1] == ("ignoring /joint_states: velocities not finite for shoulder_pitch=nan", 2.0)
    twice = JointState(name=[*NAMES, "shoulder_pitch"], position=[*Q, 0.9])  # never "the last one wins"
    assert measured_joints(twice, "/joint_states", log) is None
    assert "'shoulder_pitch' named twice" in logged[-1][0]


def test_joint_state_round_trip_and_stamp():
    stamp = Time(sec=12, nanosec=345)
    msg = vector_to_joint_state(Q, stamp)
    assert list(msg.name) == NAMES and msg.header.stamp == stamp
    assert joint_vector(msg.name, msg.position).positions == Q
    with pytest.raises(ValueError):
        vector_to_joint_state(Q[:3])


class _Logger:
    def __init__(self) -> None:
        self.warnings: list[tuple[str, float]] = []

    def warning(self, text: str, throttle_duration_sec: float) -> None:
        self.warnings.append((text, throttle_duration_sec))


def test_read_stamp_refuses_a_stamp_that_is_no_time_with_a_throttled_warning_and_never_raises():
    logger = _Logger()
    assert read_stamp(Time(sec=12, nanosec=345), "/joy", logger) == 12_000_000_345
    last = Time(sec=2**31 - 1, nanosec=999_999_999)  # 2038: a time, for the reader's ordering to judge
    assert read_stamp(last, "/joy", logger) == (2**31 - 1) * 10**9 + 999_999_999
    assert read_stamp(Time(), "/joy", logger) == 0 and not logger.warnings  # unstamped: the reader decides
    for sec, nanosec, why in ((-100, 0, "sec -100 is negative"), (-(2**31), 0, "is negative"),
                              (0, 10**9, "nanosec 1000000000 is not in [0, 999999999]"),
                              (5, 2**32 - 1, "nanosec 4294967295")):  # fmt: skip
        assert read_stamp(Time(sec=sec, nanosec=nanosec), "/arm/joint_target", logger) is None
        text, throttle = logger.warnings[-1]
        assert text.startswith("ignoring /arm/joint_target: header stamp ") and why in text, text
        assert throttle == 2.0


def test_point_round_trip():
    assert point_to_tuple(tuple_to_point((0.1, -0.2, 0.3))) == (0.1, -0.2, 0.3)
    with pytest.raises(ValueError):
        tuple_to_point((1.0, 2.0))


def test_ik_status_msg_takes_the_reason_from_the_library_table():
    msg = ik_status_msg(IkStatus.COUPLED_LIMIT, (0.1, 0.2, 0.3), 0.4, 0.5, Time(sec=7))
    assert msg.status == IkStatusMsg.COUPLED_LIMIT and msg.reason == "coupled_limit"
    assert msg.header.frame_id == "base_link" and msg.header.stamp.sec == 7
    assert (msg.tcp.x, msg.tool_pitch, msg.tool_yaw) == (0.1, 0.4, 0.5)
    assert ik_status_from_msg(msg.status) is IkStatus.COUPLED_LIMIT
    with pytest.raises(ValueError):
        ik_status_from_msg(INVALID_REQUEST)


# --- the ghost's messages ----------------------------------------------------------------------------


def test_green_ghost_messages():
    stamp = Time(sec=3, nanosec=5)
    ghost = evaluate_ghost(REST_POSTURE, P)
    status = status_msg(ghost, stamp)
    assert status.status == IkStatusMsg.OK and status.reason == "ok" and status.header.stamp == stamp
    joints = joint_state_msg(ghost, stamp)
    assert joint_vector(joints.name, joints.position).positions == pytest.approx(REST_POSTURE, abs=1e-9)
    markers = marker_array(ghost, stamp, 1.0).markers
    links = next(m for m in markers if m.id == LINKS_ID)
    assert links.type == Marker.LINE_STRIP and links.header.frame_id == "base_link"
    assert [point_to_tuple(p) for p in links.points] == list(ghost.points.chain())
    assert (links.color.r, links.color.g, links.color.b, links.color.a) == pytest.approx(GREEN)
    assert links.lifetime.sec == 1
    label = next(m for m in markers if m.id == LABEL_ID)
    assert label.action == Marker.DELETE  # a label left from a red ghost disappears


def test_red_ghost_messages_claim_no_joints_and_show_the_reason():
    stamp = Time(sec=4)
    ghost = evaluate_ghost(REST_POSTURE, P.with_changes(alpha_max=1.30))
    assert status_msg(ghost, stamp).status == IkStatusMsg.COUPLED_LIMIT
    assert joint_state_msg(ghost, stamp) is None
    markers = marker_array(ghost, stamp, 0.0).markers
    label = next(m for m in markers if m.id == LABEL_ID)
    assert label.type == Marker.TEXT_VIEW_FACING and label.action == Marker.ADD
    assert label.text == "coupled_limit"
    assert (label.color.r, label.color.g, label.color.b, label.color.a) == pytest.approx(RED)
    assert all(m.lifetime.sec == 0 and m.lifetime.nanosec == 0 for m in markers)


# --- the kinematics services' answers ----------------------------------------------------------------


def fk_request(q, names=NAMES) -> ComputeFk.Request:
    return ComputeFk.Request(name=list(names), position=[float(v) for v in q])


def ik_request(q, seed=(), branch="") -> SolveIk.Request:
    pose = forward_kinematics(q, P)
    return SolveIk.Request(
        tcp=tuple_to_point(pose.tcp), tool_pitch=pose.tool_pitch, tool_yaw=pose.tool_yaw,
        seed=list(seed), branch=branch,
    )  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(q=feasible_joints())
def test_fk_then_ik_answers_the_same_joints(q):
    fk = compute_fk_response(fk_request(q), P)
    assert fk.success and fk.message == "ok"
    req = SolveIk.Request(tcp=fk.tcp, tool_pitch=fk.tool_pitch, tool_yaw=fk.tool_yaw, seed=list(q))
    ik = solve_ik_response(req, P)
    assert (ik.status, ik.reason, list(ik.name)) == (IkStatusMsg.OK, "ok", NAMES)
    assert list(ik.position) == pytest.approx(q, abs=1e-9)


def test_ik_failure_carries_the_library_reason_and_no_joints():
    ik = solve_ik_response(ik_request(REST_POSTURE), P.with_changes(alpha_max=1.30))
    assert (ik.status, ik.reason) == (IkStatusMsg.COUPLED_LIMIT, "coupled_limit")
    assert list(ik.name) == [] and list(ik.position) == []
    far = SolveIk.Request(tcp=Point(x=2.0), tool_pitch=0.0, tool_yaw=0.0)
    assert solve_ik_response(far, P).reason == "out_of_reach"


def test_ik_branch_is_honoured():
    wide = P.with_changes(alpha_max=2.6)  # the DOWN branch exists only with alpha_max beyond pi/2
    q_down = (0.0, -0.9, 1.0, 0.0, 0.0)  # q2 - q1 = 1.9 > pi/2: elbow below the shoulder-wrist line
    down = solve_ik_response(ik_request(q_down, branch="down"), wide)
    assert down.reason == "ok" and list(down.position) == pytest.approx(q_down, abs=1e-9)
    # Restricted to UP, the mirror elbow would need the beam beyond its range: refused, not switched.
    assert solve_ik_response(ik_request(q_down, branch="up"), wide).reason == "q2_out_of_range"


@pytest.mark.parametrize(
    ("request_", "text"),
    [
        (SolveIk.Request(tcp=Point(x=math.nan)), "tcp must be finite"),
        (SolveIk.Request(tcp=Point(x=0.3), tool_pitch=math.inf), "tool_pitch must be finite"),
        (SolveIk.Request(tcp=Point(x=0.3), seed=[0.0, 0.1, 0.5]), "seed must have 0 or 5 values, got 3"),
        (SolveIk.Request(tcp=Point(x=0.3), seed=[0.0, math.nan, 0.5, 0.0, 0.0]), "seed must be finite"),
        (SolveIk.Request(tcp=Point(x=0.3), branch="sideways"), "branch must be '', 'up' or 'down'"),
    ],
)
def test_malformed_ik_requests_are_answered_invalid(request_, text):
    ik = solve_ik_response(request_, P)
    assert ik.status == INVALID_REQUEST
    assert ik.reason.startswith("invalid_request: ") and text in ik.reason
    assert list(ik.name) == [] and list(ik.position) == []


@pytest.mark.parametrize(
    ("request_", "text"),
    [
        (fk_request(Q[:4], NAMES), "5 names but 4 positions"),
        (fk_request([*Q, 0.0], [*NAMES, "gripper"]), "unknown joint 'gripper'"),
        (fk_request(Q[:4], NAMES[:4]), "lacks wrist_yaw"),
        (fk_request([0.0, math.nan, 0.0, 0.0, 0.0]), "not finite"),
        (fk_request([1e308, 0.0, 0.5, 0.0, 1e308]), "cannot compute FK"),
    ],
)
def test_malformed_fk_requests_fail_with_a_message(request_, text):
    fk = compute_fk_response(request_, P)
    assert not fk.success and text in fk.message


def test_fk_outside_the_limits_is_answered_with_a_note():
    fk = compute_fk_response(fk_request((0.0, -0.8, 0.65, 0.0, 0.0)), P)  # beyond alpha_max
    assert fk.success and "outside the arm's limits" in fk.message


finite_or_not = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=1000, deadline=None)
@given(
    xyz=st.tuples(finite_or_not, finite_or_not, finite_or_not),
    angles=st.tuples(finite_or_not, finite_or_not),
    seed=st.lists(finite_or_not, max_size=6),
    branch=st.sampled_from(["", "up", "down", "x"]),
)
def test_no_ik_request_raises(xyz, angles, seed, branch):
    tcp = tuple_to_point(xyz)
    req = SolveIk.Request(tcp=tcp, tool_pitch=angles[0], tool_yaw=angles[1], seed=seed, branch=branch)
    ik = solve_ik_response(req, P)
    assert ik.status == INVALID_REQUEST or ik.reason == IkStatus(ik.status).reason
    if ik.status == IkStatusMsg.OK:
        assert all(math.isfinite(v) for v in ik.position) and len(ik.position) == 5


@settings(max_examples=1000, deadline=None)
@given(
    names=st.lists(st.sampled_from([*NAMES, "gripper"]), max_size=7),
    positions=st.lists(finite_or_not, max_size=7),
)
def test_no_fk_request_raises(names, positions):
    fk = compute_fk_response(ComputeFk.Request(name=names, position=positions), P)
    assert fk.success == (fk.message.startswith("ok"))
    if fk.success:
        assert all(math.isfinite(v) for v in point_to_tuple(fk.tcp))
