"""The limit conditions as py_trees behaviours, ticked without ROS: a JointStateCache filled directly."""

from __future__ import annotations

import math
from collections.abc import Callable

import py_trees
import pytest
from py_trees.common import Status

from salamander_behavior.behaviors.conditions import (
    AwayFromSingularity,
    CombinedLimitIndexOk,
    CoupledLimitsClear,
    JointNearLimit,
    JointsWithinLimits,
    LimitCondition,
    VelocityEffortWithinLimits,
    not_near_limit,
)
from salamander_behavior.behaviors.guard import GuardSettings, guard_conditions, guarded
from salamander_behavior.limits import JointStateCache, load_urdf_limits
from salamander_behavior.mock.ports import FakeClock, StaysRunning
from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE, ArmParams, within_limits

ARM = ArmParams()
LIMITS = load_urdf_limits()
MID = (0.0, 0.0, 0.6, 0.0, 0.0)
WIDE = ArmParams(alpha_max=2.0)


def put(cache: JointStateCache, q, velocities=()) -> None:
    assert cache.put(JOINT_NAMES, q, velocities) is None


# One entry per condition: how to build it, a clear state, a violating state (each with velocities).
CASES: dict[str, tuple[Callable[[JointStateCache], LimitCondition], tuple, tuple, str]] = {
    "JointsWithinLimits": (
        lambda c: JointsWithinLimits(limits=LIMITS, margin=0.02, cache=c),
        (MID, ()), ((0.0, 0.0, 1.309 - 0.005, 0.0, 0.0), ()), "beam_pitch 0.005 rad from its upper limit",
    ),
    "JointNearLimit": (
        lambda c: JointNearLimit(limits=LIMITS, margin=0.02, cache=c),
        (MID, ()), ((0.0, 0.0, 1.309 - 0.005, 0.0, 0.0), ()), "beam_pitch 0.005 rad from its upper limit",
    ),
    "VelocityEffortWithinLimits": (
        lambda c: VelocityEffortWithinLimits(limits=LIMITS, cache=c),
        (MID, (0.1,) * 5), (MID, (0.0, 0.0, 2.0, 0.0, 0.0)), "beam_pitch velocity 2.000 is 133%",
    ),
    "CoupledLimitsClear": (
        lambda c: CoupledLimitsClear(arm=ARM, margin=0.01, cache=c),
        (MID, ()), ((0.0, -0.5, 0.95, 0.0, 0.0), ()), "0.050 rad BEYOND",
    ),
    "AwayFromSingularity": (
        lambda c: AwayFromSingularity(arm=WIDE, min_manipulability=0.0008, max_condition=15.0, cache=c),
        (MID, ()), ((0.0, -0.3, -0.3 + math.pi / 2, 0.0, 0.0), ()), "manipulability 0.00000",
    ),
    "CombinedLimitIndexOk": (
        lambda c: CombinedLimitIndexOk(limits=LIMITS, arm=ARM, min_index=0.05, comfort=0.15, cache=c),
        (MID, ()), ((0.0, 1.35 - 0.03, 0.6, 1.5708 - 0.03, math.pi - 0.03), ()), "combined limit index 0.008",
    ),
}


@pytest.mark.parametrize("kind", CASES)
def test_every_path_sets_a_feedback_message(kind: str, cache: JointStateCache, clock: FakeClock) -> None:
    make, (clear_q, clear_v), (bad_q, bad_v), bad_text = CASES[kind]
    near = kind == "JointNearLimit"
    ok, not_ok = (Status.FAILURE, Status.SUCCESS) if near else (Status.SUCCESS, Status.FAILURE)
    unknown = Status.SUCCESS if near else Status.FAILURE

    unset = make(None)  # neither a cache nor setup(node=...)
    assert unset.tick_once() is None and unset.status is unknown
    assert "not set up" in unset.feedback_message
    with pytest.raises(KeyError, match="didn't find 'node' in setup's kwargs"):
        unset.setup()

    b = make(cache)
    b.setup()  # a given cache needs no node
    b.tick_once()
    assert b.status is unknown
    # Without a node the message names the topic as given (with one, as resolved: test_conditions_ros).
    assert f"no joint state received on {names.JOINT_STATES} yet" in b.feedback_message

    put(cache, clear_q, clear_v)
    b.tick_once()
    assert b.status is ok
    assert b.feedback_message.startswith("not near: " if near else "clear: ")

    clock.t += 0.6  # default max_age 0.5 s
    b.tick_once()
    assert b.status is unknown and "joint state stale: 0.60 s old (max_age 0.50 s)" in b.feedback_message

    assert cache.put(["base_yaw", "shoulder_pitch"], [0.0, 0.0]) is None  # valid message, joints missing
    b.tick_once()
    assert b.status is unknown and "joint state lacks beam_pitch" in b.feedback_message

    put(cache, bad_q, bad_v)
    b.tick_once()
    assert b.status is not_ok
    assert b.feedback_message.startswith("near: " if near else "VIOLATED: ")
    assert bad_text in b.feedback_message
    assert b.result is not None and not b.result.ok


def test_hysteresis_in_the_tree_stops_flicker_at_the_coupled_margin(cache: JointStateCache) -> None:
    cond = CoupledLimitsClear(arm=ARM, margin=0.01, release=0.01, cache=cache)
    q1 = -0.5

    def tick_at(slack: float) -> Status:  # slack past the margin: q2 - q1 = alpha_max - margin - slack
        put(cache, (0.0, q1, q1 + ARM.alpha_max - 0.01 - slack, 0.0, 0.0))
        cond.tick_once()
        return cond.status

    noisy = [0.02, -0.001, 0.004, -0.002, 0.009, 0.001, 0.0095, 0.011, 0.005, 0.0005, 0.009, 0.012]
    statuses = [tick_at(s) for s in noisy]
    S, F = Status.SUCCESS, Status.FAILURE
    assert statuses == [S, F, F, F, F, F, F, S, S, S, S, S]
    assert cond.hysteresis.flips == 2
    tick_at(0.004)
    assert cond.status is S
    tick_at(-0.0001)
    assert cond.status is F
    tick_at(0.004)
    assert cond.feedback_message.startswith("VIOLATED (latched until 0.01 past the threshold): q2 - q1")


def test_no_band_would_flicker_on_the_same_input(cache: JointStateCache) -> None:
    cond = CoupledLimitsClear(arm=ARM, margin=0.01, release=0.0, cache=cache)
    flips = 0
    last = None
    for slack in [0.02, -0.001, 0.004, -0.002, 0.009, 0.001, 0.0095, 0.011]:
        put(cache, (0.0, -0.5, -0.5 + ARM.alpha_max - 0.01 - slack, 0.0, 0.0))
        cond.tick_once()
        flips += last is not None and cond.status != last
        last = cond.status
    assert flips == 4  # the band above is what removes these


def test_guard_stops_the_motion_in_the_tick_the_coupled_margin_is_crossed(cache: JointStateCache) -> None:
    motion = StaysRunning()
    root = guarded(motion, cache=cache, limits=LIMITS, arm=ARM)
    tree = py_trees.trees.BehaviourTree(root)
    tree.setup()
    put(cache, REST_POSTURE)
    for _ in range(3):
        tree.tick()
    assert root.status is Status.RUNNING and motion.ticks == 3  # default guard admits rest
    q = (0.0, -0.5, -0.5 + ARM.alpha_max - 0.005, 0.0, 0.0)  # 0.005 rad inside alpha_max, margin 0.01
    assert within_limits(q, ARM)  # still inside the hard limit: the guard acts before it, not after
    put(cache, q)
    tree.tick()
    assert root.status is Status.FAILURE
    assert motion.ticks == 3  # not ticked again in the failing tick
    assert motion.terminated == [Status.INVALID]  # stopped (where a real motion cancels its goal)
    failing = root.current_child
    assert failing.name == "move.CoupledLimitsClear"
    expected = "q2 - q1 = 1.395 rad vs alpha_max 1.400: 0.005 rad inside (margin 0.010)"
    assert failing.feedback_message == f"VIOLATED: {expected}"


def test_guard_stops_a_stream_that_went_stale(cache: JointStateCache, clock: FakeClock) -> None:
    motion = StaysRunning()
    root = guarded(motion, cache=cache, limits=LIMITS, arm=ARM, settings=GuardSettings(max_age=0.2))
    put(cache, MID)
    root.tick_once()
    assert root.status is Status.RUNNING
    clock.t += 0.25
    root.tick_once()
    assert root.status is Status.FAILURE and motion.terminated == [Status.INVALID]
    assert "stale" in root.current_child.feedback_message


def drive_towards_alpha(cache: JointStateCache, clock: FakeClock, lookahead: float) -> tuple[float, int]:
    """Close the loop: the motion raises beam_pitch 1 rad/s at a 10 Hz tick until the guard stops it."""
    dt, speed = 0.1, 1.0
    q = [0.0, -0.5, 0.48, 0.0, 0.0]  # q2 - q1 = 0.98: 1.08, 1.18, 1.28, 1.38 (margin band 1.35-1.40)

    def step() -> None:
        q[2] += speed * dt
        clock.t += dt
        put(cache, q, (0.0, 0.0, speed, 0.0, 0.0))

    motion = StaysRunning(step)
    settings = GuardSettings(coupled_margin=0.05, lookahead=lookahead)
    root = guarded(motion, cache=cache, limits=LIMITS, arm=ARM, settings=settings)
    put(cache, q, (0.0, 0.0, speed, 0.0, 0.0))
    for _ in range(50):
        root.tick_once()
        if root.status is not Status.RUNNING:
            break
    assert root.status is Status.FAILURE and motion.terminated == [Status.INVALID]
    return q[2] - q[1], motion.ticks


def test_guard_with_lookahead_stops_before_entering_the_margin(
    cache: JointStateCache, clock: FakeClock
) -> None:
    d, ticks = drive_towards_alpha(cache, clock, lookahead=0.1)
    assert d <= ARM.alpha_max - 0.05  # never inside the margin band
    assert d == pytest.approx(1.28) and ticks == 3


def test_guard_without_lookahead_stops_inside_the_margin_but_before_the_limit(cache, clock) -> None:
    d, ticks = drive_towards_alpha(cache, clock, lookahead=0.0)
    assert ARM.alpha_max - 0.05 < d <= ARM.alpha_max  # one step (0.1 rad) late, still not past the limit
    assert d == pytest.approx(1.38) and ticks == 4


def test_default_guard_conditions_all_pass_at_rest(cache: JointStateCache) -> None:
    put(cache, REST_POSTURE, (0.0,) * 5)
    conditions = guard_conditions(cache=cache, limits=LIMITS)
    assert [type(c).__name__ for c in conditions] == [
        "JointsWithinLimits", "CoupledLimitsClear", "VelocityEffortWithinLimits",
        "AwayFromSingularity", "CombinedLimitIndexOk",
    ]
    for c in conditions:
        c.tick_once()
        assert c.status is Status.SUCCESS, c.feedback_message


def test_a_coupled_margin_wider_than_rest_allows_blocks_the_arm_at_rest(cache: JointStateCache) -> None:
    put(cache, REST_POSTURE)
    motion = StaysRunning()
    root = guarded(motion, cache=cache, limits=LIMITS, settings=GuardSettings(coupled_margin=0.03))
    root.tick_once()
    assert root.status is Status.FAILURE and motion.ticks == 0
    assert "alpha_max" in root.current_child.feedback_message


def test_alpha_beta_are_read_live_from_the_arm_provider(cache: JointStateCache) -> None:
    arm = [ARM]
    cond = CoupledLimitsClear(arm=lambda: arm[0], margin=0.01, cache=cache)
    put(cache, REST_POSTURE)
    cond.tick_once()
    assert cond.status is Status.SUCCESS
    arm[0] = ARM.with_changes(alpha_max=1.37)  # operators narrow alpha_max below rest
    cond.tick_once()
    assert cond.status is Status.FAILURE and "alpha_max 1.370" in cond.feedback_message


def test_the_guards_per_joint_bounds_are_the_live_arm_models_not_the_urdfs(cache: JointStateCache) -> None:
    """A recalibrated arm (config/arm.yaml or a parameter set) moves the stops the guard judges against."""
    arm = [ARM]
    motion = StaysRunning()
    root = guarded(motion, cache=cache, limits=LIMITS, arm=lambda: arm[0])
    put(cache, (0.0, 0.5, 0.6, 0.0, 0.0), (0.0,) * 5)
    root.tick_once()
    assert root.status is Status.RUNNING and motion.ticks == 1
    arm[0] = ARM.with_changes(q1_max=0.51)  # the shoulder's stop, recalibrated: 0.01 rad from it
    root.tick_once()
    assert root.status is Status.FAILURE and motion.ticks == 1
    assert "shoulder_pitch 0.010 rad from its upper limit" in root.current_child.feedback_message
    arm[0] = ARM.with_changes(q1_max=0.6)
    root.tick_once()
    assert root.status is Status.RUNNING, root.current_child.feedback_message
    index = CombinedLimitIndexOk(limits=LIMITS, arm=lambda: arm[0], min_index=0.05, cache=cache)
    index.tick_once()
    at_0_6 = index.feedback_message
    arm[0] = ARM.with_changes(q1_max=0.505)
    index.tick_once()
    assert index.status is Status.FAILURE and index.feedback_message != at_0_6, index.feedback_message
    urdf_only = JointsWithinLimits(limits=LIMITS, cache=cache)  # no arm: the limits as given
    urdf_only.tick_once()
    assert urdf_only.status is Status.SUCCESS


def test_inverted_near_limit_fails_safe_when_the_state_is_unknown(cache: JointStateCache) -> None:
    guard = not_near_limit(limits=LIMITS, margin=0.02, cache=cache)
    guard.tick_once()
    assert guard.status is Status.FAILURE  # unknown counts as near
    assert "counted as near" in guard.children[0].feedback_message
    put(cache, MID)
    guard.tick_once()
    assert guard.status is Status.SUCCESS


def test_bad_parameters_are_refused_when_the_tree_is_built() -> None:
    with pytest.raises(ValueError, match="margin"):
        JointsWithinLimits(limits=LIMITS, margin=-0.1)
    with pytest.raises(ValueError, match="no limits for elbow"):
        JointNearLimit(limits=LIMITS, joints=["elbow"])
    with pytest.raises(ValueError, match="needs min_manipulability"):
        AwayFromSingularity(min_manipulability=None, max_condition=None)
    with pytest.raises(ValueError, match="min_index"):
        CombinedLimitIndexOk(limits=LIMITS, min_index=1.5)
    with pytest.raises(ValueError, match="max_age"):
        CoupledLimitsClear(max_age=0.0)
