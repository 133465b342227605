"""A behaviour server killed mid-run comes back, does not pick over a held can, and resumes (issue 13.7).

The default launch through the runner (run_on_start; the simulated cell on its kinematic engine without
its uncertainty, `cell_config:=`, so every can lands clear). While can_1 is carried, the
behaviour server is killed with SIGKILL; the runner respawns it 2 s later. The new process reads the
run's progress (can_0 placed, can_1 carried), run_on_start sends it an empty goal, and the pad check
finds can_1 on the pad: it does not pick, it waits; the operator's confirmation (on
/salamander/operator/confirm, after the wait began) places can_1 into its own compartment, and the run
goes on with can_2. The cell's ground truth (/salamander/cell/state) ends with every can in its own
compartment, clear of the walls.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest

from salamander_control import names
from salamander_testing import REPO
from salamander_testing.cell import cell_config_without_uncertainty
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id, ros_env
from salamander_testing.runner_faults import kill_node, kill_nodes

pytestmark = pytest.mark.ros

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
RUNNER = [sys.executable, "-m", "salamander_bringup.runner"]
STEP_TIMEOUT = 90.0
BT = names.absolute(names.BEHAVIOR_SERVER)


class Peer(RosPeer):
    """The operator: the cell's ground truth, and the confirm topic."""

    def __init__(self, domain_id: int, describe) -> None:
        from std_msgs.msg import Bool, String

        super().__init__(domain_id, "restart_operator", BT, describe, STEP_TIMEOUT)
        self.state: dict[str, Any] | None = None
        self.start: dict[str, list[float]] = {}
        self.node.create_subscription(String, names.absolute(names.CELL_STATE), self._on_state, 10)
        self.confirm_pub = self.node.create_publisher(Bool, names.absolute(names.OPERATOR_CONFIRM), 10)
        self.Bool = Bool

    def _on_state(self, msg: Any) -> None:
        self.state = json.loads(msg.data)
        for can in self.state["cans"]:
            self.start.setdefault(can["id"], can["position"])

    def can(self, can_id: str) -> dict[str, Any]:
        assert self.state is not None
        return next(c for c in self.state["cans"] if c["id"] == can_id)

    def carrying(self, can_id: str) -> bool:
        """`can_id` on the pad and moved more than 5 cm from its spot (lifted and on its way)."""
        if self.state is None or self.state["held"] != can_id:
            return False
        return math.dist(self.can(can_id)["position"], self.start[can_id]) > 0.05


@pytest.fixture
def demo(tmp_path):
    domain = next_domain_id()
    log = tmp_path / "runner.log"
    cell = cell_config_without_uncertainty(tmp_path, engine="kinematic")  # every can lands clear
    args = [*RUNNER, str(LAUNCH), f"cell_config:={cell}"]
    runner = ChildProcess(args, ros_env(domain), log, process_group=True)
    peer = Peer(domain, runner.describe)
    peer.domain = domain  # for the operator's CLI
    yield peer, runner
    peer.close()
    runner.stop(timeout=15.0)


def test_a_server_killed_while_carrying_resumes_without_picking_over_the_held_can(demo) -> None:
    peer, runner = demo
    peer.wait(lambda: peer.carrying("can_1"), "can_1 carried (lifted off its spot)", 240.0)
    clear = lambda: (peer.can("can_0")["outcome"] or {}).get("result") == "in_box_clear"  # noqa: E731
    peer.wait(clear, "can_0 clear in its compartment (the cell's ground truth)")
    since = len(runner.lines)
    kill_node(runner, BT)
    carried = "can_1 is recorded as carried"
    assert runner.wait_for_text(carried, since=since, timeout=STEP_TIMEOUT), runner.text()
    waiting = "a can is on the pad before picking can_2: not picking"
    peer.wait_for_line(runner, waiting, since=since, timeout=STEP_TIMEOUT)  # the cell's state now current
    # Not picked, not dropped: can_1 is still on the pad, the vacuum on, can_0 and can_2 untouched.
    peer.wait(lambda: peer.state["held"] == "can_1" and peer.state["vacuum"], "can_1 still held")
    assert peer.can("can_2")["position"] == peer.start["can_2"]
    # The operator confirms, again each second until the server says so (its new subscription may not
    # be matched yet; a repeated confirmation is harmless: one decision per wait).
    for _ in range(int(STEP_TIMEOUT)):
        peer.confirm_pub.publish(peer.Bool(data=True))
        if runner.wait_for_text("confirmed: placing can_1", since=since, timeout=1.0):
            break
    else:
        raise AssertionError(f"the confirmation was not taken\n{runner.text()}")
    done = "run complete: 2 placed"
    assert runner.wait_for_text(done, since=since, timeout=2 * STEP_TIMEOUT), runner.text()

    def all_in_place() -> bool:
        cans = peer.state["cans"] if peer.state else []
        return all((c["outcome"] or {}).get("compartment") == int(c["id"].split("_")[1]) for c in cans)

    peer.wait(all_in_place, "every can in its own compartment")
    assert all(c["outcome"]["result"] == "in_box_clear" for c in peer.state["cans"]), peer.state
    assert "above can_1" not in runner.text()[runner.text().index(waiting):]


def _in_place_or_held(peer: Peer) -> list[str]:
    """The cans that are neither on their spot, on the pad, nor clear in their own compartment."""
    wrong = []
    for c in peer.state["cans"] if peer.state else []:
        outcome = c["outcome"] or {}
        on_spot = math.dist(c["position"], peer.start[c["id"]]) < 1e-3
        own = outcome.get("compartment") == int(c["id"].split("_")[1])
        own = own and outcome.get("result") == "in_box_clear"
        if not (on_spot or own or peer.state["held"] == c["id"]):
            wrong.append(f"{c['id']}: {c['position']} {outcome}")
    return wrong


def _safely_held(peer: Peer) -> None:
    """After a stopped run: no can astray, a can still on the pad held with the vacuum on."""
    assert not _in_place_or_held(peer), peer.state
    if peer.state["held"]:
        assert peer.state["vacuum"], peer.state


def test_killing_each_respawning_node_mid_run_ends_completed_or_held_with_no_can_astray(demo) -> None:
    """Issue 13.9: every node the launch respawns is SIGKILLed mid-run; the runner restarts each.

    While can_0 is carried: the IK service, the ghost, the teleop controller and the browser view at
    once (none is on the run's path; the burst of four restarts loads the machine). While can_1 is
    carried (if the run went on): the Cartesian node, whose MoveCartesian goal the tree follows; the
    generator brakes the arm on the line and holds, the tree notices the lost action server and stops
    the run with the can on the pad, vacuum on. The run ends completed or safely held: never a can
    anywhere but on its spot, on the pad (vacuum on) or clear in its own compartment. (The behaviour
    server's own kill, and resuming with the can on the pad after an operator's confirmation: the test
    above.)
    """
    peer, runner = demo
    peer.wait(lambda: peer.carrying("can_0"), "can_0 carried (lifted off its spot)", 240.0)
    others = [names.absolute(n) for n in (
        names.KINEMATICS_NODE, names.IK_GHOST_NODE, names.CONTROLLER_NODE, names.OPERATOR_VIEW)]  # fmt: skip
    since = len(runner.lines)
    kill_nodes(runner, others)
    line = peer.wait_for_line(runner, "can_0: placed", "run stopped: ", since=since, timeout=STEP_TIMEOUT)
    placed = "can_0: placed" in line
    assert not _in_place_or_held(peer), peer.state
    if placed:
        # The burst of restarts can starve the simulated arm past the joint states' 0.5 s bound, or the
        # behaviour server past its 1 s lease; the tree then stops the run before can_1 (seen in suite
        # runs: "can_1: not started, run stopped: ... joint state stale: 0.54 s old"; the lease lapsed
        # on can_1's transit, which skipped can_1 before it was a fault of the stack), a safe end this
        # test accepts like any other.
        def stopped() -> bool:
            return any("run stopped: " in line for line in runner.lines[since:])

        def going_on() -> bool:
            return peer.carrying("can_1") or stopped()

        peer.wait(going_on, "can_1 carried, or the run stopped", STEP_TIMEOUT)
        if not stopped():
            since = len(runner.lines)
            kill_nodes(runner, [names.absolute(names.CARTESIAN_MOTION_NODE)])
    end = peer.wait_for_line(runner, "run complete: ", "run stopped: ", since=since, timeout=2 * STEP_TIMEOUT)
    _safely_held(peer)

    if "run complete: " in end:  # every can placed after all: each in its own compartment, clear
        peer.wait(lambda: all(c["outcome"] for c in peer.state["cans"]), "every can's outcome (the cell's)")
        results = [(c["outcome"] or {}).get("result") for c in peer.state["cans"]]
        assert results == ["in_box_clear"] * 3, peer.state
    assert "Traceback" not in runner.text(), runner.text()
