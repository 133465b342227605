"""Every respawning node killed mid-run: the run completes or holds safely, no can ends outside the box
(issue 13.7 and 13.9).

The default launch through the runner (run_on_start, the simulated cell without its uncertainty: the
true cell is the believed one, so every can lands clear); every kill is a SIGKILL, the
crash of the fault campaign, and the runner respawns the node 2 s later (launch file, respawn="true"):

1. While can_0 is carried: the IK service, the ghost, the teleop controller and the operator view, all at
   once. None of them is on the motion's path: can_0 stays on the pad and the run goes on.
2. While can_1 is carried: the behaviour server. The new process reads the run's progress (can_0 placed,
   can_1 carried), run_on_start sends it an empty goal, and the pad check finds can_1 on the pad: it does
   not pick, it waits; the operator's confirmation (on /salamander/operator/confirm, after the wait
   began) places can_1 into its own compartment, and the run goes on with can_2.
3. While can_2 is carried: the Cartesian node. Its goal dies with it; the tree notices within about a
   second and the run stops with can_2 on the pad, the vacuum on (never released over the table). A new
   run started by the operator (the RunPickPlace action) finds can_2 on the pad, waits for the
   confirmation and places it.

The cell's ground truth (/salamander/cell/state) ends with every can in its own compartment, clear of
the walls.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest

from salamander_control import names
from salamander_control.testing import REPO
from salamander_control.testing.cell import cell_config_without_uncertainty
from salamander_control.testing.process import ChildProcess
from salamander_control.testing.ros_helpers import RosPeer, next_domain_id, ros_env
from salamander_control.testing.runner_faults import kill_node, kill_nodes

pytestmark = pytest.mark.ros

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
RUNNER = [sys.executable, "-m", "salamander_control.bringup.runner"]
STEP_TIMEOUT = 90.0
BT = names.absolute(names.BEHAVIOR_SERVER)
OFF_THE_PATH = [
    names.absolute(n)
    for n in (names.KINEMATICS_NODE, names.IK_GHOST_NODE, names.CONTROLLER_NODE, names.OPERATOR_VIEW)
]


class Peer(RosPeer):
    """The operator: the cell's ground truth, the confirm topic and the run action."""

    def __init__(self, domain_id: int, describe) -> None:
        from rclpy.action import ActionClient
        from std_msgs.msg import Bool, String

        from salamander_msgs.action import RunPickPlace

        super().__init__(domain_id, "respawn_operator", BT, describe, STEP_TIMEOUT)
        self.state: dict[str, Any] | None = None
        self.start: dict[str, list[float]] = {}
        self.node.create_subscription(String, names.absolute(names.CELL_STATE), self._on_state, 10)
        self.confirm_pub = self.node.create_publisher(Bool, names.absolute(names.OPERATOR_CONFIRM), 10)
        self.run = ActionClient(self.node, RunPickPlace, names.absolute(names.RUN_PICK_PLACE))
        self.Bool, self.Goal = Bool, RunPickPlace.Goal

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

    def holding(self, can_id: str) -> bool:
        return self.state is not None and self.state["held"] == can_id and self.state["vacuum"]

    def confirm_until(self, runner: ChildProcess, said: str, since: int) -> None:
        """Confirm each second until the server says `said` (its new subscription may not be matched
        yet; a repeated confirmation is harmless: one decision per wait)."""
        for _ in range(int(STEP_TIMEOUT)):
            self.confirm_pub.publish(self.Bool(data=True))
            if runner.wait_for_text(said, since=since, timeout=1.0):
                return
        raise AssertionError(f"the confirmation was not taken\n{runner.text()}")


@pytest.fixture
def demo(tmp_path):
    domain = next_domain_id()
    log = tmp_path / "runner.log"
    cell = f"cell_config:={cell_config_without_uncertainty(tmp_path, engine='kinematic')}"  # lands clear
    runner = ChildProcess([*RUNNER, str(LAUNCH), cell], ros_env(domain), log, process_group=True)
    peer = Peer(domain, runner.describe)
    yield peer, runner
    peer.close()
    runner.stop(timeout=15.0)


def test_killing_each_respawning_node_mid_run_ends_with_every_can_in_its_compartment(demo) -> None:
    peer, runner = demo
    # 1. The nodes off the motion's path, while can_0 is carried.
    peer.wait(lambda: peer.carrying("can_0"), "can_0 carried (lifted off its spot)", 240.0)
    kill_nodes(runner, OFF_THE_PATH)
    peer.wait(lambda: peer.can("can_0")["outcome"] is not None, "can_0 placed")
    assert peer.can("can_0")["outcome"]["result"] == "in_box_clear", peer.state

    # 2. The behaviour server, while can_1 is carried.
    peer.wait(lambda: peer.carrying("can_1"), "can_1 carried (lifted off its spot)")
    since = len(runner.lines)
    kill_node(runner, BT)
    carried = "can_1 is recorded as carried"
    assert runner.wait_for_text(carried, since=since, timeout=STEP_TIMEOUT), runner.text()
    waiting = "a can is on the pad before picking can_2: not picking"
    assert runner.wait_for_text(waiting, since=since, timeout=STEP_TIMEOUT), runner.text()
    # Not picked, not dropped: can_1 is still on the pad, the vacuum on, can_0 and can_2 untouched.
    peer.wait(lambda: peer.holding("can_1"), "can_1 still held")
    assert peer.can("can_2")["position"] == peer.start["can_2"]
    peer.confirm_until(runner, "confirmed: placing can_1", since)
    assert "above can_1" not in runner.text()[runner.text().index(waiting):]

    # 3. The Cartesian node, while can_2 is carried: the run stops holding can_2.
    peer.wait(lambda: peer.carrying("can_2"), "can_2 carried (lifted off its spot)", 2 * STEP_TIMEOUT)
    since = len(runner.lines)
    kill_node(runner, names.absolute(names.CARTESIAN_MOTION_NODE))
    stopped = "run stopped"
    assert runner.wait_for_text(stopped, since=since, timeout=STEP_TIMEOUT), runner.text()
    seen = peer.state["t"]  # a second of ground truth after the stop: the pad still holds can_2
    peer.wait(lambda: peer.state["t"] >= seen + 1.0, "a second of the cell's ground truth after the stop")
    assert peer.holding("can_2"), peer.state
    assert peer.can("can_1")["outcome"]["result"] == "in_box_clear", peer.state
    # The operator starts a new run: can_2 is on the pad, so it is placed on confirmation, not picked.
    since = len(runner.lines)
    peer.wait(peer.run.server_is_ready, "the RunPickPlace action server")
    handle = peer.answer(peer.run.send_goal_async(peer.Goal(cans=[])), "the answer to the new run")
    assert handle.accepted, runner.text()
    waiting = "a can is on the pad before picking can_2: not picking"
    assert runner.wait_for_text(waiting, since=since, timeout=STEP_TIMEOUT), runner.text()
    peer.confirm_until(runner, "confirmed: placing can_2", since)
    result = peer.answer(handle.get_result_async(), "the new run's result")
    assert result.result.success, (result.result.message, runner.text())

    def all_in_place() -> bool:
        cans = peer.state["cans"] if peer.state else []
        return all((c["outcome"] or {}).get("compartment") == int(c["id"].split("_")[1]) for c in cans)

    peer.wait(all_in_place, "every can in its own compartment")
    assert all(c["outcome"]["result"] == "in_box_clear" for c in peer.state["cans"]), peer.state
