"""Limit checks without ROS or py_trees: URDF limits, checks, combined index, hysteresis, properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_behavior.limits import (
    Hysteresis,
    JointLimit,
    JointSample,
    JointStateCache,
    JointStateError,
    check_combined,
    check_coupled,
    check_positions,
    check_singularity,
    check_velocity_effort,
    combined_index,
    joint_near_limit,
    load_urdf_limits,
    parse_urdf_limits,
)
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE, ArmParams, manipulability

ARM = ArmParams()
LIMITS = load_urdf_limits()
BY_NAME = {lim.name: lim for lim in LIMITS}


def sample(q=REST_POSTURE, velocities=(), efforts=()) -> JointSample:
    return JointSample.from_arrays(JOINT_NAMES, q, velocities, efforts)


def with_joint(name: str, value: float, base=REST_POSTURE) -> tuple[float, ...]:
    q = list(base)
    q[JOINT_NAMES.index(name)] = value
    return tuple(q)


MID = (0.0, 0.0, 0.6, 0.0, 0.0)
"""A posture far from every per-joint and coupled limit (> 0.6 rad from all)."""


# ------------------------------------------------------------------ URDF


def test_urdf_limits_are_the_five_motor_joints_with_the_spec_values() -> None:
    assert {lim.name for lim in LIMITS} == set(JOINT_NAMES)  # mimic joints and fixed joints left out
    for name, lo, hi in zip(JOINT_NAMES, ARM.joint_lower, ARM.joint_upper, strict=True):
        assert (BY_NAME[name].lower, BY_NAME[name].upper) == (lo, hi)
    assert (BY_NAME["beam_pitch"].velocity, BY_NAME["beam_pitch"].effort) == (1.5, 30.0)
    assert (BY_NAME["wrist_yaw"].velocity, BY_NAME["wrist_yaw"].effort) == (3.0, 3.0)


URDF_HEAD = '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'


def test_urdf_parser_skips_continuous_mimic_and_fixed_joints() -> None:
    text = URDF_HEAD + """
      <joint name="spin" type="continuous"><parent link="a"/><child link="b"/>
        <limit effort="1" velocity="2"/></joint>
      <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/>
        <limit lower="-0.1" upper="0.2" effort="0" velocity="0.5"/></joint>
      <joint name="follower" type="revolute"><parent link="b"/><child link="c"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="slide"/></joint>
      <joint name="weld" type="fixed"><parent link="b"/><child link="c"/></joint>
    </robot>"""
    assert parse_urdf_limits(text) == (JointLimit("slide", -0.1, 0.2, 0.5, None),)  # effort 0 = not given


@pytest.mark.parametrize(
    ("joint", "match"),
    [
        ('<joint name="j" type="revolute"><limit effort="1" velocity="1"/></joint>', "no <limit lower"),
        ('<joint name="j" type="revolute"/>', "no <limit lower"),
        ('<joint name="j" type="revolute"><limit lower="1" upper="-1"/></joint>', "must be <"),
        ('<joint name="j" type="revolute"><limit lower="nan" upper="1"/></joint>', "finite"),
        ('<joint name="j" type="revolute"><limit lower="x" upper="1"/></joint>', "not a number"),
        ('<joint name="j" type="revolute"><limit lower="0" upper="1" velocity="-2"/></joint>', "positive"),
    ],
)
def test_urdf_parser_refuses_joints_it_cannot_bound(joint: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_urdf_limits(URDF_HEAD + joint + "</robot>")


def test_urdf_parser_refuses_non_urdf_documents() -> None:
    with pytest.raises(ValueError, match="not <robot>"):
        parse_urdf_limits("<sdf/>")
    with pytest.raises(ValueError, match="well-formed"):
        parse_urdf_limits("<robot>")
    with pytest.raises(FileNotFoundError, match="nowhere.urdf"):
        load_urdf_limits("/nowhere.urdf")


# ------------------------------------------------------------------ joint state samples


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((["a", "b"], [0.0]), "2 names but 1 positions"),
        ((["a", "a"], [0.0, 1.0]), "'a' named twice"),
        ((["a"], [math.nan]), "positions not finite for a"),
        ((["a"], [0.0], [math.inf]), "velocities not finite for a"),
        ((["a", "b"], [0.0, 0.0], [], [1.0]), "2 names but 1 efforts"),
        (([], []), "names no joint"),
    ],
)
def test_malformed_joint_states_are_refused_as_a_whole(args: tuple, match: str) -> None:
    with pytest.raises(JointStateError, match=match):
        JointSample.from_arrays(*args)


def test_a_missing_joint_cannot_be_judged_and_the_error_names_it() -> None:
    partial = JointSample.from_positions({"base_yaw": 0.0, "shoulder_pitch": 0.0})
    with pytest.raises(JointStateError, match="lacks beam_pitch, wrist_yaw, wrist_pitch"):
        check_positions(LIMITS, partial, 0.02)
    with pytest.raises(JointStateError, match="lacks beam_pitch"):
        check_coupled(partial, ARM, 0.01)


def test_extra_joints_in_the_state_are_ignored() -> None:
    s = JointSample.from_arrays([*JOINT_NAMES, "pump"], [*MID, 99.0])
    assert check_positions(LIMITS, s, 0.02).ok


# ------------------------------------------------------------------ (1) + (2) positions


def test_a_joint_one_hundredth_inside_its_limit_with_margin_five_hundredths_is_near() -> None:
    s = sample(with_joint("beam_pitch", 1.309 - 0.01, MID))
    near, prox, margin = joint_near_limit(LIMITS, s, 0.05)
    assert near and margin == 0.05
    assert (prox.joint, prox.side) == ("beam_pitch", "upper")
    assert prox.distance == pytest.approx(0.01, abs=1e-12)
    result = check_positions(LIMITS, s, 0.05)
    assert not result.ok and result.worst == "beam_pitch"
    assert result.slack == pytest.approx(-0.04, abs=1e-12)
    assert result.message == "beam_pitch 0.010 rad from its upper limit (margin 0.050)"


def test_near_reports_the_lower_side_and_a_joint_beyond_its_limit() -> None:
    s = sample(with_joint("shoulder_pitch", -1.35 - 0.02, MID))
    near, prox, _ = joint_near_limit(LIMITS, s, 0.0)
    assert near and (prox.joint, prox.side) == ("shoulder_pitch", "lower")
    assert prox.distance == pytest.approx(-0.02, abs=1e-12)
    assert "0.020 rad beyond its lower limit" in check_positions(LIMITS, s, 0.0).message


def test_exactly_at_the_margin_is_not_near_and_a_hair_inside_is() -> None:
    limits = [JointLimit("j", -1.0, 1.0)]
    assert not joint_near_limit(limits, JointSample.from_positions({"j": 0.75}), 0.25).near  # exact floats
    assert joint_near_limit(limits, JointSample.from_positions({"j": math.nextafter(0.75, 1)}), 0.25).near


def test_near_can_watch_chosen_joints_only() -> None:
    s = sample(with_joint("wrist_pitch", 1.5708 - 0.001, MID))
    assert joint_near_limit(LIMITS, s, 0.05).proximity.joint == "wrist_pitch"
    assert not joint_near_limit(LIMITS, s, 0.05, joints={"shoulder_pitch", "beam_pitch"}).near
    with pytest.raises(ValueError, match="no limits for elbow"):
        joint_near_limit(LIMITS, s, 0.05, joints={"elbow"})


# ------------------------------------------------------------------ (3) velocity / effort


def test_velocity_and_effort_are_skipped_when_the_state_carries_none() -> None:
    result = check_velocity_effort(LIMITS, sample(MID))
    assert result.ok and result.slack == math.inf and "no velocities" in result.message


def test_velocity_over_the_urdf_limit_names_the_joint() -> None:
    v = [0.0, 0.0, -1.6, 0.0, 0.0]  # beam_pitch limit 1.5 rad/s
    result = check_velocity_effort(LIMITS, sample(MID, velocities=v))
    assert not result.ok and result.worst == "beam_pitch"
    assert result.slack == pytest.approx(1.0 - 1.6 / 1.5)
    assert "beam_pitch velocity 1.600 is 107% of its limit 1.5" in result.message
    # Half the limit allowed: 0.8 rad/s is over, 0.7 is not.
    assert not check_velocity_effort(LIMITS, sample(MID, velocities=[0, 0, 0.8, 0, 0]), 0.5).ok
    assert check_velocity_effort(LIMITS, sample(MID, velocities=[0, 0, 0.7, 0, 0]), 0.5).ok


def test_effort_over_the_urdf_limit_names_the_joint() -> None:
    e = [0.0, 0.0, 0.0, 0.0, 3.5]  # wrist_yaw limit 3.0
    result = check_velocity_effort(LIMITS, sample(MID, efforts=e))
    assert not result.ok and result.worst == "wrist_yaw" and "effort" in result.message


# ------------------------------------------------------------------ (4) coupled


def test_rest_posture_is_only_a_fortieth_of_a_radian_inside_alpha_max() -> None:
    result = check_coupled(sample(), ARM, 0.0)
    assert result.worst == "alpha_max"
    assert result.slack == pytest.approx(1.40 - (math.radians(33.8) + math.radians(45.0)))
    assert result.slack == pytest.approx(0.02468, abs=1e-5)
    assert check_coupled(sample(), ARM, 0.02).ok
    assert not check_coupled(sample(), ARM, 0.03).ok  # a 0.03 rad margin would lock the arm at rest


def test_coupled_limits_follow_the_formula_on_both_sides() -> None:
    # alpha: q2 - q1 <= alpha_max - margin.   q1 = -0.5, q2 = 0.85 -> q2 - q1 = 1.35 = 1.40 - 0.05.
    at_alpha = sample((0.0, -0.5, 0.85, 0.0, 0.0))
    assert check_coupled(at_alpha, ARM, 0.04).ok
    assert not check_coupled(at_alpha, ARM, 0.06).ok
    # beta: q1 - q2 <= beta_max - margin.     q1 = 1.0, q2 = 0.2 -> q1 - q2 = 0.80 = 0.87 - 0.07.
    at_beta = sample((0.0, 1.0, 0.2, 0.0, 0.0))
    result = check_coupled(at_beta, ARM, 0.1)
    assert not result.ok and result.worst == "beta_max"
    assert result.slack == pytest.approx(-0.03)
    assert check_coupled(at_beta, ARM.with_changes(beta_max=0.95), 0.1).ok  # alpha/beta from ArmParams


def test_coupled_violation_message_says_beyond() -> None:
    result = check_coupled(sample((0.0, -0.5, 0.95, 0.0, 0.0)), ARM, 0.0)
    assert not result.ok and "0.050 rad BEYOND" in result.message


# ------------------------------------------------------------------ (5) singularity


def test_rest_is_clear_of_the_default_singularity_thresholds() -> None:
    result = check_singularity(sample(), ARM, 0.0008, 15.0)
    assert result.ok
    assert result.message == "manipulability 0.00161 (min 0.0008); condition number 10.32 (max 15)"


def test_stretched_links_are_singular_once_alpha_is_widened() -> None:
    wide = ARM.with_changes(alpha_max=2.0)
    q = (0.0, -0.3, -0.3 + math.pi / 2, 0.0, 0.0)  # q2 - q1 = pi/2: links aligned, cos(q1 - q2) = 0
    stretched = sample(q)
    assert manipulability(q, wide) < 1e-3
    result = check_singularity(stretched, wide, 0.0008, None)
    assert not result.ok and result.worst == "manipulability"
    exact = sample((0.0, 0.0, math.pi / 2, 0.0, 0.0))  # cos(q1 - q2) = 6e-17: condition number ~1e16
    result = check_singularity(exact, wide, None, 15.0)
    assert not result.ok and result.slack == pytest.approx(-1.0)


def test_singularity_check_needs_a_threshold() -> None:
    with pytest.raises(ValueError, match="needs"):
        check_singularity(sample(), ARM)
    with pytest.raises(ValueError, match=">= 1"):
        check_singularity(sample(), ARM, None, 0.5)


# ------------------------------------------------------------------ (6) combined index


def test_combined_index_falls_as_several_joints_approach_together_each_inside_its_margin() -> None:
    comfort, margin = 0.2, 0.05
    q = list(MID)
    values = [combined_index(LIMITS, sample(q), ARM, comfort).value]
    for name in ("shoulder_pitch", "wrist_pitch", "wrist_yaw"):  # each to 0.1 rad from its upper limit
        q = list(with_joint(name, BY_NAME[name].upper - 0.1, q))
        assert check_positions(LIMITS, sample(q), margin).ok  # every joint still clear of its own margin
        values.append(combined_index(LIMITS, sample(q), ARM, comfort).value)
    assert values == pytest.approx([1.0, 0.5, 0.25, 0.125])
    assert check_combined(LIMITS, sample(q), ARM, 0.2, comfort).ok is False
    assert check_combined(LIMITS, sample(q), ARM, 0.1, comfort).ok is True


def test_combined_index_counts_the_coupled_limits_and_is_zero_at_any_limit() -> None:
    index = combined_index(LIMITS, sample(), ARM, 0.15)  # rest: 0.0247 rad inside alpha_max
    assert index.value == pytest.approx(0.02468 / 0.15, abs=1e-4)
    assert index.tightest(1)[0][0] == "alpha_max"
    assert combined_index(LIMITS, sample(), None, 0.15).value == 1.0  # without the coupled factors
    at_limit = sample(with_joint("base_yaw", math.pi, MID))
    assert combined_index(LIMITS, at_limit, ARM, 0.15).value == 0.0
    result = check_combined(LIMITS, at_limit, ARM, 0.0, 0.15)
    assert result.ok and result.slack == 0.0  # min_index 0 admits even a joint at its limit


# ------------------------------------------------------------------ hysteresis


def test_hysteresis_does_not_flicker_on_ping_pong_inside_the_band() -> None:
    h = Hysteresis(enter=0.0, exit=0.01)
    assert h.update(0.02) is False
    assert h.update(-0.001) is True  # crossed enter
    for metric in [0.005, -0.002, 0.009, 0.0, 0.0099] * 20:  # ping-pong between enter and exit
        assert h.update(metric) is True
    assert h.update(0.01) is False  # back at exit: clear
    for metric in [0.005, 0.0, 0.0099] * 20:  # inside the band from the clear side: stays clear
        assert h.update(metric) is False
    assert h.flips == 2


def test_hysteresis_without_a_band_follows_the_threshold_and_nan_is_violated() -> None:
    h = Hysteresis(0.0, 0.0)
    assert [h.update(m) for m in (0.1, -0.1, 0.0, -1e-12, math.inf)] == [False, True, False, True, False]
    assert h.update(math.nan) is True
    assert h.update(-math.inf) is True
    with pytest.raises(ValueError, match="enter <= exit"):
        Hysteresis(0.1, 0.0)


# ------------------------------------------------------------------ cache


def test_cache_keeps_the_last_good_state_and_refuses_bad_or_late_ones() -> None:
    now = [100.0]
    cache = JointStateCache(clock=lambda: now[0])
    assert cache.latest() is None and cache.age() is None
    assert cache.put(JOINT_NAMES, MID, stamp=10.0) is None
    now[0] = 100.3
    assert "not finite" in cache.put(JOINT_NAMES, [math.nan, 0, 0, 0, 0], stamp=10.1)
    assert "out of order" in cache.put(JOINT_NAMES, REST_POSTURE, stamp=9.9)
    assert cache.latest().sample.vector(JOINT_NAMES) == MID
    assert cache.age() == pytest.approx(0.3)
    assert (cache.accepted, cache.refused) == (1, 2)
    assert cache.put(JOINT_NAMES, REST_POSTURE, stamp=3.0) is None  # 7 s older: a clock reset, accepted
    assert cache.put(JOINT_NAMES, MID, stamp=3.1) is None
    assert cache.put(JOINT_NAMES, REST_POSTURE) is None  # unstamped: not ordered


def test_cache_refuses_a_stamp_that_is_no_time_as_malformed() -> None:
    from sensor_msgs.msg import JointState

    cache = JointStateCache()
    good = JointState(name=list(JOINT_NAMES), position=list(MID))
    good.header.stamp.sec = 10
    assert cache.put_message(good) is None
    for sec, nanosec in ((-100, 0), (-(2**31), 999_999_999), (11, 10**9), (11, 2**32 - 1)):
        bad = JointState(name=list(JOINT_NAMES), position=list(REST_POSTURE))
        bad.header.stamp.sec, bad.header.stamp.nanosec = sec, nanosec
        assert "header stamp" in cache.put_message(bad)
        assert cache.newest_malformed
    assert cache.latest().sample.vector(JOINT_NAMES) == MID and (cache.accepted, cache.refused) == (1, 4)


# ------------------------------------------------------------------ properties

MARGIN, COUPLED_MARGIN, COMFORT = 0.05, 0.05, 0.15
WELL_INSIDE = max(MARGIN, COUPLED_MARGIN, COMFORT) + 0.01
"""Distance from every bound that counts as "well inside" for every check at once."""


@st.composite
def well_inside(draw: st.DrawFn) -> tuple[float, ...]:
    """Joint vectors at least WELL_INSIDE from every per-joint and coupled bound."""
    d = WELL_INSIDE
    frac = st.floats(0.0, 1.0)

    def within(lo: float, hi: float) -> float:
        return lo + draw(frac) * (hi - lo)

    q1 = within(ARM.q1_min + d, ARM.q1_max - d)
    lo = max(ARM.q2_min + d, q1 - ARM.beta_max + d)
    hi = min(ARM.q2_max - d, q1 + ARM.alpha_max - d)
    if lo > hi:
        q1 = 0.0
        lo, hi = ARM.q2_min + d, ARM.q2_max - d
    q2 = within(lo, hi)
    return (
        within(ARM.yaw_min + d, ARM.yaw_max - d), q1, q2,
        within(ARM.wrist_pitch_min + d, ARM.wrist_pitch_max - d),
        within(ARM.wrist_yaw_min + d, ARM.wrist_yaw_max - d),
    )


speeds = st.lists(st.floats(-1.0, 1.0), min_size=5, max_size=5)


@settings(max_examples=2000, deadline=None)
@given(well_inside(), speeds, speeds)
def test_property_well_inside_every_limit_every_check_is_clear(q, v, e) -> None:
    velocities = [x * BY_NAME[n].velocity for x, n in zip(v, JOINT_NAMES, strict=True)]
    efforts = [x * BY_NAME[n].effort for x, n in zip(e, JOINT_NAMES, strict=True)]
    s = sample(q, velocities, efforts)
    assert check_positions(LIMITS, s, MARGIN).ok
    assert not joint_near_limit(LIMITS, s, MARGIN).near
    assert check_coupled(s, ARM, COUPLED_MARGIN).ok
    assert check_velocity_effort(LIMITS, s).ok
    assert check_singularity(s, ARM, 0.0008, 15.0).ok  # the default polygon holds no singular posture
    assert check_combined(LIMITS, s, ARM, 1.0, COMFORT).ok  # every factor saturated: index exactly 1


@settings(max_examples=2000, deadline=None)
@given(well_inside(), st.sampled_from(JOINT_NAMES), st.sampled_from(["lower", "upper"]), st.floats(1e-6, 0.5))
def test_property_beyond_a_per_joint_bound_the_position_checks_are_violated(q, name, side, beyond) -> None:
    lim = BY_NAME[name]
    value = lim.upper + beyond if side == "upper" else lim.lower - beyond
    s = sample(with_joint(name, value, q))
    result = check_positions(LIMITS, s, 0.0)
    assert not result.ok and result.slack < 0.0
    near = joint_near_limit(LIMITS, s, 0.0)
    assert near.near and (near.proximity.joint, near.proximity.side) == (name, side)
    assert not check_combined(LIMITS, s, ARM, 1e-9, COMFORT).ok  # index 0: below any positive minimum


@settings(max_examples=2000, deadline=None)
@given(st.floats(-1.35, 1.35), st.floats(0.0, 1.309), st.floats(0.0, 0.1))
def test_property_the_coupled_check_is_exactly_the_spec_inequality(q1, q2, margin) -> None:
    ok = q2 - q1 <= ARM.alpha_max - margin and q1 - q2 <= ARM.beta_max - margin
    assert check_coupled(sample((0.0, q1, q2, 0.0, 0.0)), ARM, margin).ok is ok


@settings(max_examples=1000, deadline=None)
@given(well_inside(), st.sampled_from(JOINT_NAMES), st.floats(1.0001, 3.0), st.booleans())
def test_property_velocity_or_effort_beyond_its_limit_is_violated(q, name, ratio, effort) -> None:
    values = [0.0] * 5
    lim = BY_NAME[name]
    values[JOINT_NAMES.index(name)] = -ratio * (lim.effort if effort else lim.velocity)
    s = sample(q, efforts=values) if effort else sample(q, velocities=values)
    result = check_velocity_effort(LIMITS, s)
    assert not result.ok and result.worst == name


@settings(max_examples=1000, deadline=None)
@given(
    well_inside(),
    st.sampled_from(["base_yaw", "wrist_pitch", "wrist_yaw"]),  # q1/q2 also move the coupled slacks
    st.sampled_from(["lower", "upper"]),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_property_moving_a_joint_towards_its_limit_never_raises_the_index(q, name, side, t0, t1) -> None:
    lim, i = BY_NAME[name], JOINT_NAMES.index(name)
    target = lim.upper if side == "upper" else lim.lower
    near_t, far_t = max(t0, t1), min(t0, t1)
    far = sample(with_joint(name, q[i] + far_t * (target - q[i]), q))
    near = sample(with_joint(name, q[i] + near_t * (target - q[i]), q))
    assert combined_index(LIMITS, near, ARM, COMFORT).value <= combined_index(LIMITS, far, ARM, COMFORT).value
