"""The IK ghost's pure core (salamander_control.ghost.core) and its mailbox, without ROS.

Properties over thousands of random joint vectors: inside every limit the ghost is green and sits on the
measured joints; outside, it is red with the reason of the first limit crossed in the spec's check
order; for any finite input it either answers or refuses with ValueError, and a green answer is always
inside the limits and reproduces the measured TCP.
"""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from salamander_control.ghost.core import GREEN, LABEL_LIFT, RED, arm_points, evaluate_ghost
from salamander_control.kinematics import (
    REST_POSTURE,
    ArmParams,
    IkStatus,
    forward_kinematics,
    within_limits,
    wrist_position,
)
from salamander_control.latest_sample import LatestSample, PutResult
from salamander_msgs.msg import IkStatus as IkStatusMsg
from salamander_testing.kin_strategies import feasible_joints

P = ArmParams()
TOL = 1e-9
MARGIN = 1e-7  # keep random joints this far from any bound: inside LIMIT_TOL the IK snaps onto the bound
UP_MARGIN = 0.02  # |q1 - q2| <= pi/2 - this keeps the measured pose clearly on the UP elbow branch


def dist(a, b) -> float:
    return math.dist(a, b)


def wrapped_diff(a: float, b: float) -> float:
    return abs(math.remainder(a - b, 2.0 * math.pi))


# --- the status table: one definition ---------------------------------------------------------------


def test_msg_constants_equal_library_enum_name_by_name():
    constants = type(IkStatusMsg)._Metaclass_IkStatus__constants  # what rosidl generated from the .msg
    assert constants == {status.name: status.value for status in IkStatus}


# --- arm_points --------------------------------------------------------------------------------------


@settings(max_examples=1000, deadline=None)
@given(q=st.tuples(*[st.floats(-4.0, 4.0) for _ in range(5)]))
def test_arm_points_agree_with_the_library_and_have_the_link_lengths(q):
    pts = arm_points(q, P)
    assert pts.base == (0.0, 0.0, 0.0)
    assert pts.shoulder == (0.0, 0.0, P.base_height)
    assert dist(pts.wrist, wrist_position(q, P)) < TOL
    assert dist(pts.tcp, forward_kinematics(q, P).tcp) < TOL
    assert dist(pts.shoulder, pts.elbow) == pytest.approx(P.upper_arm_length, abs=TOL)
    assert dist(pts.elbow, pts.wrist) == pytest.approx(P.beam_length, abs=TOL)
    assert dist(pts.wrist, pts.tcp) == pytest.approx(P.tool_drop, abs=TOL)
    assert pts.chain() == (pts.base, pts.shoulder, pts.elbow, pts.wrist, pts.tcp)


def test_arm_points_follow_the_absolute_link_attitudes():
    # Upper arm vertical, beam horizontal pointing along +y (base yaw 90 deg), pad hanging down.
    pts = arm_points((math.pi / 2, 0.0, 0.0, 0.0, 0.0), P)
    assert dist(pts.elbow, (0.0, 0.0, P.base_height + P.upper_arm_length)) < TOL
    assert dist(pts.wrist, (0.0, P.beam_length, P.base_height + P.upper_arm_length)) < TOL
    assert dist(pts.tcp, (0.0, P.beam_length, P.base_height + P.upper_arm_length - P.tool_drop)) < TOL


def test_arm_points_use_the_given_geometry():
    longer = P.with_changes(upper_arm_length=0.5, base_height=0.2)
    pts = arm_points(REST_POSTURE, longer)
    assert pts.shoulder == (0.0, 0.0, 0.2)
    assert dist(pts.shoulder, pts.elbow) == pytest.approx(0.5)


# --- evaluate_ghost: inside the limits ---------------------------------------------------------------


@settings(max_examples=1500, deadline=None)
@given(q=feasible_joints())
def test_feasible_joints_give_a_green_ghost_on_the_measured_joints(q):
    ghost = evaluate_ghost(q, P)
    assert ghost.ok, (q, ghost.status)
    assert ghost.reason == "ok" and ghost.label is None and ghost.color == GREEN
    assert max(abs(a - b) for a, b in zip(ghost.joints, q, strict=True)) <= TOL, (q, ghost.joints)
    measured = arm_points(q, P)
    for a, b in zip(ghost.points.chain(), measured.chain(), strict=True):
        assert dist(a, b) <= 1e-8
    pose = forward_kinematics(q, P)
    assert ghost.tcp == pose.tcp and ghost.tool_pitch == q[3] and ghost.tool_yaw == pose.tool_yaw


def test_rest_posture_is_green_and_reports_its_pose():
    ghost = evaluate_ghost(REST_POSTURE, P)
    assert ghost.status is IkStatus.OK
    assert dist(ghost.tcp, (0.0787, 0.0, 0.0374)) < 1e-3  # docs/arm_model.md's reference point


# --- evaluate_ghost: outside the limits --------------------------------------------------------------


def expected_status(q, p: ArmParams) -> IkStatus:
    """The spec's check order for a pose on the UP branch in front of the base: q1, q2, wrist, coupled."""
    _, q1, q2, q3, _ = q
    if not p.q1_min <= q1 <= p.q1_max:
        return IkStatus.Q1_OUT_OF_RANGE
    if not p.q2_min <= q2 <= p.q2_max:
        return IkStatus.Q2_OUT_OF_RANGE
    if not p.wrist_pitch_min <= q3 <= p.wrist_pitch_max:
        return IkStatus.WRIST_OUT_OF_RANGE
    if q2 - q1 > p.alpha_max or q1 - q2 > p.beta_max:
        return IkStatus.COUPLED_LIMIT
    return IkStatus.OK


def _clear_of_bounds(q, p: ArmParams) -> bool:
    _, q1, q2, q3, _ = q
    gaps = (
        q1 - p.q1_min, q1 - p.q1_max, q2 - p.q2_min, q2 - p.q2_max,
        q3 - p.wrist_pitch_min, q3 - p.wrist_pitch_max,
        q2 - q1 - p.alpha_max, q1 - q2 - p.beta_max,
    )  # fmt: skip
    return all(abs(g) > MARGIN for g in gaps)


@st.composite
def joints_around_limits(draw: st.DrawFn, spill: float = 0.3):
    """Joints up to `spill` rad beyond the q1/q2/coupled limits and far beyond the wrist pitch limits,
    kept on the UP branch with the wrist in front of the base axis (where the measured pose is the IK's
    only candidate, so the expected status is unambiguous)."""
    q0 = draw(st.floats(P.yaw_min, P.yaw_max))
    q1 = draw(st.floats(P.q1_min - spill, P.q1_max + spill))
    lo = max(P.q2_min - spill, q1 - (math.pi / 2 - UP_MARGIN))
    hi = min(P.q2_max + spill, q1 + (math.pi / 2 - UP_MARGIN))
    assume(lo < hi)
    q2 = draw(st.floats(lo, hi))
    q3 = draw(st.one_of(st.floats(P.wrist_pitch_min, P.wrist_pitch_max), st.floats(-2.5, 2.5)))
    q4 = draw(st.floats(P.wrist_yaw_min, P.wrist_yaw_max))
    q = (q0, q1, q2, q3, q4)
    assume(P.upper_arm_length * math.sin(q1) + P.beam_length * math.cos(q2) > 0.02)
    assume(_clear_of_bounds(q, P))
    return q


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(q=joints_around_limits())
def test_ghost_status_is_the_first_limit_crossed(q):
    ghost = evaluate_ghost(q, P)
    expected = expected_status(q, P)
    assert ghost.status is expected, (q, ghost.status, expected)
    if expected is IkStatus.OK:
        assert max(abs(a - b) for a, b in zip(ghost.joints, q, strict=True)) <= TOL
    else:
        assert ghost.joints is None and ghost.color == RED and ghost.label == expected.reason
        # Red: drawn on the measured joints, labelled above the arm's highest point.
        assert ghost.points == arm_points(q, P)
        assert ghost.label_position[2] == pytest.approx(max(p[2] for p in ghost.points.chain()) + LABEL_LIFT)


@st.composite
def joints_beyond_a_coupled_limit(draw: st.DrawFn):
    """q1 and q2 inside their boxes with q2 - q1 beyond alpha_max or q1 - q2 beyond beta_max (UP branch)."""
    beyond_alpha = draw(st.booleans())
    q1 = draw(st.floats(P.q1_min, P.q1_max))
    if beyond_alpha:  # q2 in (q1 + alpha_max, q1 + pi/2 - margin]
        lo, hi = max(P.q2_min, q1 + P.alpha_max + MARGIN), min(P.q2_max, q1 + math.pi / 2 - UP_MARGIN)
    else:  # q2 in [q1 - pi/2 + margin, q1 - beta_max)
        lo, hi = max(P.q2_min, q1 - math.pi / 2 + UP_MARGIN), min(P.q2_max, q1 - P.beta_max - MARGIN)
    assume(lo < hi)
    q2 = draw(st.floats(lo, hi))
    q0, q3, q4 = draw(st.floats(P.yaw_min, P.yaw_max)), draw(st.floats(-1.5, 1.5)), draw(st.floats(-3.0, 3.0))
    q = (q0, q1, q2, q3, q4)
    assume(P.upper_arm_length * math.sin(q1) + P.beam_length * math.cos(q2) > 0.02)
    return q


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(q=joints_beyond_a_coupled_limit())
def test_joints_beyond_a_coupled_limit_are_red_with_coupled_limit(q):
    ghost = evaluate_ghost(q, P)
    assert ghost.reason == "coupled_limit", (q, ghost.status)
    assert ghost.joints is None and ghost.color == RED


@pytest.mark.parametrize(
    ("q", "reason"),
    [
        ((0.0, -0.8, 0.65, 0.0, 0.0), "coupled_limit"),  # q2 - q1 = 1.45 > alpha_max 1.40
        ((0.0, 1.2, 0.2, 0.0, 0.0), "coupled_limit"),  # q1 - q2 = 1.0 > beta_max 0.87
        ((0.0, 1.45, 0.8, 0.0, 0.0), "q1_out_of_range"),
        ((0.0, 0.3, 1.4, 0.0, 0.0), "q2_out_of_range"),
        ((0.0, 0.3, 0.5, 1.8, 0.0), "wrist_out_of_range"),
    ],
)
def test_examples_beyond_each_limit(q, reason):
    assert evaluate_ghost(q, P).reason == reason


def test_a_narrowed_alpha_turns_the_rest_posture_red():
    assert evaluate_ghost(REST_POSTURE, P.with_changes(alpha_max=1.30)).reason == "coupled_limit"


@settings(max_examples=500, deadline=None)
@given(q=feasible_joints(), turns=st.tuples(st.sampled_from([-1, 1]), st.sampled_from([-1, 1])))
def test_yaw_a_turn_beyond_its_range_is_the_same_pose_and_solves(q, turns):
    # An encoder past +-pi by a whole turn: the IK answers the in-range representation.
    measured = (q[0] + 2 * math.pi * turns[0], q[1], q[2], q[3], q[4] + 2 * math.pi * turns[1])
    ghost = evaluate_ghost(measured, P)
    assert ghost.ok
    assert within_limits(ghost.joints, P)
    assert wrapped_diff(ghost.joints[0], measured[0]) <= TOL
    assert wrapped_diff(ghost.joints[4], measured[4]) <= TOL
    assert max(abs(ghost.joints[i] - q[i]) for i in (1, 2, 3)) <= TOL


@settings(max_examples=2000, deadline=None)
@given(q=st.tuples(*[st.floats(allow_nan=False, allow_infinity=False) for _ in range(5)]))
def test_any_finite_joints_answer_safely(q):
    try:
        ghost = evaluate_ghost(q, P)
    except ValueError:
        return  # refused (e.g. a tool yaw that overflows): the node skips such a joint state
    if ghost.ok:
        assert within_limits(ghost.joints, P)
        pose = forward_kinematics(ghost.joints, P)
        assert dist(pose.tcp, ghost.tcp) <= TOL
        assert pose.tool_pitch == pytest.approx(ghost.tool_pitch, abs=TOL)
        assert wrapped_diff(pose.tool_yaw, ghost.tool_yaw) <= TOL
    else:
        assert ghost.joints is None and ghost.label == ghost.reason


@pytest.mark.parametrize(
    "q",
    [
        (0.0, math.nan, 0.5, 0.0, 0.0),
        (0.0, 0.1, 0.5, 0.0),
        (0.0, 0.0, 0.0, 0.0, 1e308, 0.0),
        (1e308, 0.0, 0.5, 0.0, 1e308),  # finite, but base + wrist yaw overflows
    ],
)
def test_unusable_joints_raise_value_error(q):
    with pytest.raises(ValueError):
        evaluate_ghost(q, P)


# --- LatestSample -------------------------------------------------------------------------------------


def test_latest_sample_keeps_only_the_newest_and_hands_it_out_once():
    box: LatestSample[str] = LatestSample()
    assert box.take() is None
    assert box.put(100, "a") is PutResult.STORED
    assert box.put(200, "b") is PutResult.STORED
    assert box.take() == "b"
    assert box.take() is None
    assert box.put(200, "b again") is PutResult.STORED  # same stamp: a republished state is fine
    assert box.take() == "b again"


def test_latest_sample_drops_a_late_message_but_accepts_a_clock_reset():
    box: LatestSample[str] = LatestSample(clock_reset_ns=1_000)
    box.put(10_000, "new")
    assert box.put(9_500, "late") is PutResult.OUT_OF_ORDER
    assert box.take() == "new"
    assert box.put(9_900, "late again") is PutResult.OUT_OF_ORDER
    assert box.take() is None  # a late message never shows up, even when nothing newer is waiting
    assert box.put(0, "after reset") is PutResult.CLOCK_RESET
    assert box.put(500, "next") is PutResult.STORED
    assert box.take() == "next"


def test_latest_sample_under_concurrent_puts_ends_with_the_newest_stamp():
    box: LatestSample[int] = LatestSample(clock_reset_ns=10**18)
    stamps = [list(range(t, 40_000, 4)) for t in range(4)]

    def writer(mine):
        for s in mine:
            box.put(s, s)

    threads = [threading.Thread(target=writer, args=(mine,)) for mine in stamps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert box.take() == max(max(m) for m in stamps)
