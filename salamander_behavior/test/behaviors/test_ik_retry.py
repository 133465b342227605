"""IK retry variants (behaviors/ik_retry.py) and MoveTo's retry loop, on the fake ports."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from py_trees.common import Status

from salamander_behavior.behaviors.base import Ports
from salamander_behavior.behaviors.ik_retry import IkRetry, variants
from salamander_behavior.behaviors.motion import FixedTarget, MoveTo
from salamander_behavior.mock.ports import FakeClock, FakeGripper, FakeMotion, ListLogger, Rig, Script
from salamander_behavior.params import MAX_PAD_TILT, MIN_PITCH_OFFSET, BehaviorSettings
from salamander_behavior.plan import jobs_from_targets
from salamander_behavior.ports import CartesianTarget, MotionPath, MotionRequest
from salamander_behavior.report import CanResult, RunReport
from salamander_control.cell.targets import load_cell_targets
from salamander_control.kinematics import IkStatus
from salamander_testing import REPO

TARGET = CartesianTarget(0.38, 0.18, -0.065, 0.0, 0.44)
IK_FAIL = Script(
    polls=1, succeed=False, status=IkStatus.COUPLED_LIMIT, message="early fail, ...: coupled_limit"
)
REFUSED = Script(polls=1, succeed=False, status=0, message="early fail, ...: branch 'down' refused")
OK = Script(polls=2)


def leaf_on(motion: FakeMotion, retry: IkRetry = IkRetry.PICK, settings: BehaviorSettings | None = None):
    leaf = MoveTo(
        "descend to can_1", FixedTarget(TARGET), MotionPath.LINEAR, "approach_speed", "contact", retry
    )
    clock, log = FakeClock(), ListLogger()
    ports = Ports(
        motion,
        FakeGripper(motion, {}, clock),
        clock,
        lambda: settings or BehaviorSettings(),
        log,
        RunReport(),
    )
    leaf.setup(ports=ports)
    return leaf, log


def run(leaf, ticks: int = 100) -> Status:
    for _ in range(ticks):
        leaf.tick_once()
        if leaf.status is not Status.RUNNING:
            break
    return leaf.status


def sent(motion: FakeMotion) -> list[tuple[str, float]]:
    return [(h.request.branch, round(h.request.target.tool_pitch, 3)) for h in motion.handles]


def test_a_first_ik_failure_leads_to_the_variants_and_the_one_that_worked_is_logged() -> None:
    motion = FakeMotion({"descend to can_1": [IK_FAIL, IK_FAIL, REFUSED, IK_FAIL, OK]})
    leaf, log = leaf_on(motion)
    assert run(leaf) is Status.SUCCESS
    # planned, then the other branch(es) at the planned pitch, then +0.05 on each branch: the 2nd pitched one
    assert sent(motion) == [("", 0.0), ("up", 0.0), ("down", 0.0), ("up", 0.05), ("down", 0.05)]
    assert all(h.request.path is MotionPath.LINEAR for h in motion.handles)  # the path never changes
    assert all(h.request.target.position == TARGET.position for h in motion.handles)  # nor the position
    assert ("info", "IK retry: descend to can_1 solved with branch=down, tool_pitch=+0.05") in log.lines
    warnings = [m for level, m in log.lines if level == "warning"]
    assert warnings == [
        "IK retry: descend to can_1: IK early-fail coupled_limit: early fail, ...: coupled_limit; "
        "trying 10 variant(s) (branch and tool pitch)"
    ]
    assert leaf.feedback_message.endswith("(IK retry: branch=down, tool_pitch=+0.05)")


def test_success_on_the_second_variant() -> None:
    motion = FakeMotion({"descend to can_1": [IK_FAIL, IK_FAIL, OK]})
    leaf, log = leaf_on(motion)
    assert run(leaf) is Status.SUCCESS
    assert sent(motion) == [("", 0.0), ("up", 0.0), ("down", 0.0)]
    assert ("info", "IK retry: descend to can_1 solved with branch=down, tool_pitch=+0.00") in log.lines


@pytest.mark.parametrize(
    "first",
    [
        Script(
            polls=1, succeed=False, status=0, message="timeout: trajectory finished but ..."
        ),  # not the IK's
        Script(polls=1, succeed=False, status=0, message="goal rejected by arm_cartesian_motion_node"),
        Script(polls=3, succeed=False, status=IkStatus.COUPLED_LIMIT, message="braked", early=False),  # moved
    ],
)
def test_a_failure_that_is_not_an_early_ik_fail_is_not_retried(first: Script) -> None:
    motion = FakeMotion({"descend to can_1": [first, OK]})
    leaf, log = leaf_on(motion)
    assert run(leaf) is Status.FAILURE
    assert len(motion.handles) == 1
    assert "IK retry" not in log.text()


def test_a_variant_that_moved_the_arm_and_failed_ends_the_retries() -> None:
    moved = Script(
        polls=3, succeed=False, status=IkStatus.Q2_OUT_OF_RANGE, message="aborted mid-way", early=False
    )
    motion = FakeMotion({"descend to can_1": [IK_FAIL, moved, OK]})
    leaf, log = leaf_on(motion)
    assert run(leaf) is Status.FAILURE
    assert len(motion.handles) == 2
    assert leaf.feedback_message.startswith("IK retry variant branch=up, tool_pitch=+0.00 failed: ")


def test_when_no_variant_solves_it_the_move_fails_with_the_first_reason() -> None:
    motion = FakeMotion({"descend to can_1": IK_FAIL})
    leaf, _ = leaf_on(motion)
    assert run(leaf) is Status.FAILURE
    assert len(motion.handles) == 1 + 2 + 2 * 4
    assert leaf.feedback_message == (
        "IK early-fail coupled_limit: early fail, ...: coupled_limit; "
        "no IK retry variant solved it (10 tried)"
    )


def test_retries_follow_the_parameter_and_the_policy() -> None:
    motion = FakeMotion({"descend to can_1": IK_FAIL})
    leaf, _ = leaf_on(motion, settings=BehaviorSettings(ik_retry=False))
    assert run(leaf) is Status.FAILURE and len(motion.handles) == 1
    motion = FakeMotion({"descend to can_1": IK_FAIL})
    leaf, _ = leaf_on(motion, IkRetry.BRANCH)
    assert run(leaf) is Status.FAILURE
    assert sent(motion) == [("", 0.0), ("up", 0.0), ("down", 0.0)]  # the pitch is never varied
    motion = FakeMotion({"descend to can_1": IK_FAIL})
    leaf, _ = leaf_on(motion, IkRetry.NONE)
    assert run(leaf) is Status.FAILURE and len(motion.handles) == 1


@given(
    offsets=st.lists(
        st.floats(-MAX_PAD_TILT, MAX_PAD_TILT).filter(lambda v: abs(v) >= MIN_PITCH_OFFSET),
        max_size=6,
        unique=True,
    ),
    pitch=st.floats(-0.3, 0.3),
    branch=st.sampled_from(["", "up", "down"]),
)
def test_variants_keep_the_position_and_path_and_tilt_the_pad_at_most_max_pad_tilt(
    offsets, pitch, branch
) -> None:
    settings = BehaviorSettings(ik_retry_pitch_offsets=tuple(offsets))  # the parameter accepts them
    target = CartesianTarget(0.3, 0.1, -0.06, pitch, 0.3)
    request = MotionRequest(target, MotionPath.LINEAR, 0.3, "m", branch)
    for policy in (IkRetry.PICK, IkRetry.BRANCH):
        out = variants(request, policy, settings.ik_retry_pitch_offsets)
        assert request not in out and len(set(out)) == len(out)
        for v in out:
            assert v.path is request.path and v.label == "m" and v.speed_scale == 0.3
            assert v.target.position == target.position and v.target.tool_yaw == target.tool_yaw
            assert abs(v.target.tool_pitch - pitch) <= MAX_PAD_TILT + 1e-12
            if policy is IkRetry.BRANCH:
                assert v.target.tool_pitch == pitch


@pytest.mark.parametrize("offsets", [(0.2,), (-0.11,), (0.0,), (0.005,), (0.05, 0.05), (float("nan"),)])
def test_pitch_offsets_beyond_the_pad_tolerance_are_refused(offsets) -> None:
    with pytest.raises(ValueError, match="ik_retry_pitch_offsets"):
        BehaviorSettings(ik_retry_pitch_offsets=offsets)


def test_in_the_tree_a_retried_descent_picks_the_can_instead_of_skipping_it() -> None:
    jobs = jobs_from_targets(load_cell_targets(REPO / "config" / "cell.yaml"))
    rig = Rig(jobs, scripts={"descend to can_1": [IK_FAIL, IK_FAIL, IK_FAIL, OK]})
    assert rig.run() == "SUCCESS"
    assert all(r.result is CanResult.PLACED for r in rig.report.records())
    assert "IK retry: descend to can_1 solved with branch=up, tool_pitch=+0.05" in rig.log.text()
