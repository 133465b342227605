"""The behaviour server's pure parts: lease keeping, cell state parsing, parameters, goals as leaves."""

from __future__ import annotations

import json
import math

import py_trees
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from py_trees.common import Status

from salamander_behavior.behaviors.base import Ports
from salamander_behavior.behaviors.motion import FixedTarget, MoveTo, OffsetTarget
from salamander_behavior.lease_keeper import LeaseKeeper, LeaseOp
from salamander_behavior.mock.ports import FakeCell, FakeClock, FakeMotion, ListLogger, Script
from salamander_behavior.plan import jobs_from_targets, load_jobs
from salamander_behavior.ports import CartesianTarget, MotionPath
from salamander_behavior.report import CanResult, RunReport
from salamander_behavior.ros.cell_state import CellView, is_newer, parse_cell_state
from salamander_behavior.settings import BehaviorSettings
from salamander_control.kinematics import IkStatus
from salamander_control.sim.cell.targets import load_cell_targets
from salamander_control.testing import REPO as REPO_ROOT

REPO = REPO_ROOT
CELL = REPO / "config" / "cell.yaml"


# --- lease ------------------------------------------------------------------------------------------


def test_lease_is_acquired_then_heartbeated_every_quarter_timeout() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    assert keeper.next_request(0.0) is LeaseOp.ACQUIRE
    assert keeper.next_request(0.1) is None  # one request in flight at a time
    assert "acquired" in keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt")
    assert keeper.held(0.5) and not keeper.held(1.0)  # valid until sent + timeout, conservatively
    assert keeper.next_request(0.2) is None
    assert keeper.next_request(0.26) is LeaseOp.HEARTBEAT
    assert keeper.on_reply(LeaseOp.HEARTBEAT, True, "ok", "bt") is None
    assert keeper.held(1.2) and not keeper.held(1.27)


def test_a_refused_heartbeat_means_lost_and_acquire_again() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    keeper.next_request(0.0)
    keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt")
    keeper.next_request(0.3)
    line = keeper.on_reply(LeaseOp.HEARTBEAT, False, "'bt' does not hold the lease", "")
    assert line.startswith("arm lease lost") and not keeper.held(0.31)
    assert keeper.next_request(0.6) is LeaseOp.ACQUIRE


def test_a_lease_held_by_someone_else_is_retried_and_explained() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0, retry=0.5)
    keeper.next_request(0.0)
    assert keeper.on_reply(LeaseOp.ACQUIRE, False, "lease held by 'gamepad'", "gamepad") is None
    assert "held by 'gamepad'" in keeper.problem
    assert keeper.next_request(0.3) is None and keeper.next_request(0.5) is LeaseOp.ACQUIRE


def test_a_lost_answer_is_given_up_after_the_timeout_and_late_answers_are_ignored() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    keeper.next_request(0.0)
    assert keeper.next_request(0.9) is None
    assert keeper.next_request(1.1) is LeaseOp.ACQUIRE
    assert "no answer" in keeper.problem
    assert keeper.on_reply(LeaseOp.HEARTBEAT, True, "late", "bt") is None and not keeper.held(1.2)


def test_stop_releases_only_a_held_lease() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    assert keeper.stop() is False
    keeper = LeaseKeeper("bt", timeout=1.0)
    keeper.next_request(0.0)
    keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt")
    assert keeper.stop() is True and not keeper.held(0.1) and keeper.next_request(5.0) is None


@given(st.lists(st.tuples(st.floats(0.0, 0.6), st.booleans()), max_size=50))
def test_the_keeper_never_claims_a_lease_past_its_deadline(steps) -> None:
    """Whatever the answers, `held` is never true later than timeout after the last granted request."""
    keeper = LeaseKeeper("bt", timeout=1.0)
    now, last_grant_sent = 0.0, -math.inf
    for dt, grant in steps:
        now += dt
        op = keeper.next_request(now)
        if op is not None:
            keeper.on_reply(op, grant, "x", "bt" if grant else "other")
            if grant:
                last_grant_sent = now
        assert not keeper.held(now) or now < last_grant_sent + 1.0


# --- cell state -------------------------------------------------------------------------------------


def state(**changes) -> str:
    data = {
        "t": 1.5,
        "vacuum": True,
        "held": "can_0",
        "contact": "can_0",
        "cans": [
            {
                "id": "can_0",
                "position": [0.3, 0.18, -0.05],
                "attached": True,
                "on": "gripper",
                "outcome": None,
            },
            {
                "id": "can_1",
                "position": [0.38, -0.18, -0.177],
                "attached": False,
                "on": "floor",
                "outcome": {"result": "in_box_clear", "text": "in box, clear of walls"},
            },
        ],
    }
    data.update(changes)
    return json.dumps(data)


def test_cell_state_is_parsed() -> None:
    view = parse_cell_state(state())
    assert view.held == "can_0" and view.vacuum and view.t == 1.5
    assert view.cans[1].outcome == "in box, clear of walls" and view.cans[0].position == (0.3, 0.18, -0.05)
    assert view.cans[1].result == "in_box_clear" and view.cans[0].result is None


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[1, 2]",
        state(t=float("nan")).replace("NaN", "NaN"),
        state(held="can_9"),
        state(cans=[{"id": "can_0", "position": [0.0, 0.0], "attached": False}]),
        json.dumps({"t": 1.0, "vacuum": True}),
        state(
            cans=[{"id": "can_0", "position": [0.0, 0.0, 0.0], "attached": False, "outcome": {"result": 3}}]
        ),
    ],
)
def test_malformed_cell_states_are_refused(text) -> None:
    with pytest.raises(ValueError):
        parse_cell_state(text)


def test_out_of_order_states_are_dropped_but_a_restarted_cell_is_accepted() -> None:
    old = CellView(10.0, False, None, ())
    assert not is_newer(old, CellView(9.9, False, None, ()))
    assert is_newer(old, CellView(10.0, False, None, ()))
    assert is_newer(old, CellView(0.2, False, None, ()))  # simulator restarted


# --- parameters ---------------------------------------------------------------------------------------


def test_config_yaml_lists_every_parameter_with_its_default() -> None:
    from salamander_behavior.params import behavior_param_specs

    params = yaml.safe_load((REPO / "config" / "behavior.yaml").read_text())
    params = params["/salamander/behavior_server_node"]["ros__parameters"]
    specs = behavior_param_specs()
    assert params == {s.name: s.default for s in specs}
    assert {s.name for s in specs} == set(BehaviorSettings.__dataclass_fields__)
    assert params["manual_place"] is False


@pytest.mark.parametrize(
    "values",
    [{"release_speed": 0.0}, {"manual_timeout_s": 121.0}, {"client_id": ""}, {"settle_s": math.inf}],
)
def test_invalid_settings_are_refused(values) -> None:
    with pytest.raises(ValueError):
        BehaviorSettings.from_values(values)


def test_settings_from_values_keeps_types() -> None:
    s = BehaviorSettings.from_values({"manual_place": True, "manual_timeout_s": 5, "other": 1})
    assert s.manual_place is True and s.manual_timeout_s == 5.0 and isinstance(s.manual_timeout_s, float)
    assert s.adjust_limits.timeout == 5.0 and s.adjust_limits.max_offset == 0.030


# --- plan ----------------------------------------------------------------------------------------------


def test_jobs_follow_the_cell_targets() -> None:
    targets = load_cell_targets(CELL)
    jobs = jobs_from_targets(targets)
    assert [j.can for j in jobs] == ["can_0", "can_1", "can_2"]
    for job, (pick, place) in zip(jobs, targets.pairs(), strict=True):
        assert job.contact.position == pick.contact and job.place_release.position == place.place_release
        assert job.place_release.z == pytest.approx(job.place_above.z + targets.release_dz - targets.place_dz)
        assert job.above.tool_pitch == 0.0 and job.above.tool_yaw == pytest.approx(math.atan2(*pick.xy[::-1]))
    assert jobs[0].adjust_name == "place_can_0"


def test_targets_refuse_nan() -> None:
    with pytest.raises(ValueError):
        CartesianTarget(0.3, math.nan, 0.0)


# --- MoveTo ---------------------------------------------------------------------------------------------


def one_leaf(leaf, motion=None, settings=None):
    motion = motion or FakeMotion()
    clock = FakeClock()
    log = ListLogger()
    ports = Ports(
        motion, FakeCell(motion, {}), clock, lambda: settings or BehaviorSettings(), log, RunReport()
    )
    leaf.setup(ports=ports)
    return leaf, motion, clock, log


def test_an_ik_early_fail_is_reported_with_its_reason() -> None:
    script = Script(polls=1, succeed=False, status=IkStatus.COUPLED_LIMIT, message="early fail at 40%")
    target = CartesianTarget(0.3, 0.0, 0.0)
    leaf, motion, clock, log = one_leaf(
        MoveTo("m", FixedTarget(target), MotionPath.LINEAR, "release_speed"), FakeMotion({"m": script})
    )
    statuses = [leaf.tick_once() or leaf.status for _ in range(2)]
    assert statuses == [Status.RUNNING, Status.FAILURE]
    assert leaf.feedback_message == "IK early-fail coupled_limit: early fail at 40%"
    assert ("error", "m: IK early-fail coupled_limit: early fail at 40%") in log.lines
    assert motion.handles[0].request.speed_scale == 0.5 and motion.handles[0].request.target == target


def test_a_preempted_move_cancels_its_goal() -> None:
    leaf, motion, _, _ = one_leaf(
        MoveTo("m", FixedTarget(CartesianTarget(0.3, 0.0, 0.0)), MotionPath.JOINT, "transit_speed"),
        FakeMotion(default=Script(polls=100)),
    )
    leaf.tick_once()
    leaf.tick_once()
    assert leaf.status is Status.RUNNING and "joint move" in leaf.feedback_message
    leaf.stop(Status.INVALID)
    assert motion.handles[0].cancelled and leaf.feedback_message == "stopped: goal cancelled"


def test_an_offset_beyond_thirty_mm_is_refused_before_any_goal() -> None:
    base = CartesianTarget(0.3, -0.18, -0.05)
    writer = py_trees.blackboard.Client(name="test")
    writer.register_key(key="/place_offset/can_x", access=py_trees.common.Access.WRITE)
    writer.set("/place_offset/can_x", (0.025, 0.025))
    leaf, motion, _, _ = one_leaf(
        MoveTo("m", OffsetTarget(base, "can_x"), MotionPath.LINEAR, "release_speed")
    )
    leaf.tick_once()
    assert leaf.status is Status.FAILURE and "not within 30 mm" in leaf.feedback_message
    assert motion.handles == []
    writer.set("/place_offset/can_x", (0.02, 0.0))
    leaf.tick_once()
    assert motion.handles[0].request.target == base.shifted(0.02, 0.0)


def test_report_summary() -> None:
    report = RunReport()
    report.record("can_0", CanResult.PLACED, "ok")
    report.record("can_1", CanResult.SKIPPED, "above can_1: IK early-fail out_of_reach: x")
    rim = "released over the box but knocked off by wall -y, on the box rim"
    report.record("can_2", CanResult.MISSED, rim)
    assert report.summary() == "1 placed, 1 missed, 1 skipped, 0 aborted"
    assert report.lines()[1] == "can_1: skipped: above can_1: IK early-fail out_of_reach: x"
    assert report.lines()[2] == f"can_2: missed: {rim}"


def test_snapshot_shows_every_behavior_with_its_status() -> None:
    from salamander_behavior.mock.ports import Rig
    from salamander_behavior.nodes.behavior_server_node import snapshot_text

    rig = Rig(load_jobs(CELL)[:1])
    rig.run(until=lambda: len(rig.motion.labels) == 3)
    text = snapshot_text(rig.root, rig.report)
    assert text.splitlines()[0] == "run: RUNNING (0 placed, 0 missed, 0 skipped, 0 aborted)"
    assert "above can_0 [✓]" in text and "lift can_0 [*]" in text and "place_release [-]" in text
    assert "ManualAdjust[place_can_0]" in text


def test_docs_tree_md_shows_the_tree_the_code_builds() -> None:
    from salamander_behavior.render_tree import example_tree, tree_markdown

    committed = (REPO / "docs" / "tree.md").read_text(encoding="utf-8")
    assert committed == tree_markdown(example_tree(CELL)), (
        "regenerate: python -m salamander_behavior.render_tree"
    )
    assert (REPO / "docs" / "tree.png").stat().st_size > 10_000


def test_bench_tree_quick_runs_and_prints_its_table() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_tree.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Salamander behaviour tree benchmark results" in proc.stdout
    assert "| full tree (" in proc.stdout and "target: full tree p99 <= 1.0 ms:" in proc.stdout
