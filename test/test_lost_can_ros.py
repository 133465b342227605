"""A can torn off the pad in transit is not counted as removed: the next run waits for the operator
(issue 23, item 8), over real processes.

The arm (trajectory generator, Cartesian node), the behaviour server (run_on_start off) and the stand-in
robot of `salamander_testing.standin_robot` (the hardware contract alone), told to lose the first part
it carries 15 mm off the can's top (`--lose-first-above-z`: the switch drops as the lift begins, the
valve still open). A run of can_0 stops with can_0 "lost", and the abort line asks for the operator's
confirmation that the cell is clear, no restart. The next run (can_1) begins by waiting for that
confirmation: the arm stands still (the measured joints, and no motion step in the server's log) until
the operator confirms on /salamander/operator/confirm; then it goes on to can_1 (the test cancels it
once the arm moves: the rest of the cycle is other tests' business, and every second of it on a loaded
machine is a chance for an unrelated stop).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from salamander_behavior import progress
from salamander_control import names
from salamander_testing import REPO
from salamander_testing.config_files import launch_param_files
from salamander_testing.node_process import NodeProcess
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id, ros_env

pytestmark = pytest.mark.ros

RUN_TIMEOUT = 150.0
STEP_TIMEOUT = 45.0
STILL_SAMPLES = 50  # joint states watched while the run waits (~1 s at the stand-in's 50 Hz)
BT = names.BEHAVIOR_SERVER
WAITING = "can_0 fell off the pad in transit in an earlier run and may lie anywhere in the cell"
READY, CLEAR_ASKED = "arm and gripper ready?", "cell clear of can_0?"  # the leaves before any motion


class Peer(RosPeer):
    """The operator: the measured joints, the RunPickPlace action client, the confirm topic."""

    def __init__(self, domain_id: int, describe) -> None:
        from rclpy.action import ActionClient
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool

        from salamander_msgs.action import RunPickPlace

        at = names.absolute
        super().__init__(domain_id, "lost_can_operator", at(BT), describe, STEP_TIMEOUT)
        self.joints: list[tuple[float, ...]] = []
        self.steps: list[str] = []  # the running leaf of each feedback of the last goal, in order
        self.node.create_subscription(
            JointState, at(names.JOINT_STATES), self._on_joints, qos_profile_sensor_data
        )
        self.confirm_pub = self.node.create_publisher(Bool, at(names.OPERATOR_CONFIRM), 10)
        self.action = ActionClient(self.node, RunPickPlace, at(names.RUN_PICK_PLACE))
        self.Goal, self.Bool = RunPickPlace.Goal, Bool

    def _on_joints(self, msg: Any) -> None:
        self.joints.append(tuple(msg.position))

    def send(self, *cans: str) -> Any:
        self.wait(self.action.server_is_ready, "the RunPickPlace action server")
        self.steps = []  # this goal's
        sent = self.action.send_goal_async(self.Goal(cans=list(cans)), feedback_callback=self._on_feedback)
        handle = self.answer(sent, f"goal {list(cans)}")
        assert handle.accepted, self.describe()
        return handle

    def _on_feedback(self, msg: Any) -> None:
        self.steps.append(msg.feedback.step)

    def moving(self) -> list[str]:
        """The feedback steps that move the arm (every step but the waits before the first motion)."""
        return [step for step in self.steps if step not in ("", READY, CLEAR_ASKED)]

    def result(self, handle: Any) -> Any:
        future = handle.get_result_async()
        self.wait(future.done, "the run's result", RUN_TIMEOUT)
        return future.result().result


@pytest.fixture
def stack(tmp_path):
    domain = next_domain_id()
    procs: list[ChildProcess] = []
    standin = [sys.executable, "-m", "salamander_testing.standin_robot", "--lose-first-above-z", "-0.05",
               "--rate-hz", "50"]  # fmt: skip
    procs.append(ChildProcess(standin, ros_env(domain), tmp_path / "standin.log"))
    for exe in (names.TRAJECTORY_GENERATOR, names.CARTESIAN_MOTION_NODE):
        procs.append(NodeProcess(exe, exe, domain, tmp_path, params_file=launch_param_files(exe)))
    params = {"cell_config": str(REPO / "config" / "cell.yaml"), "run_on_start": False,
              "transit_speed": 1.0, "approach_speed": 1.0}  # fmt: skip
    bt = NodeProcess(BT, BT, domain, tmp_path, params, params_file=launch_param_files(BT))
    procs.append(bt)
    peer = Peer(domain, lambda: "\n".join(p.describe() for p in procs))
    yield peer, bt
    peer.close()
    for proc in procs:
        proc.stop()
        print(proc.describe())  # shown when the test failed


def _still(samples: list[tuple[float, ...]], n: int = 20) -> bool:
    """The last `n` measured joint vectors agree within 1e-6 rad (the arm stands still)."""
    return len(samples) >= n and _moved(samples[-n:], samples[-1]) < 1e-6


def _moved(samples: list[tuple[float, ...]], rest: tuple[float, ...]) -> float:
    return max((max(abs(a - b) for a, b in zip(q, rest, strict=True)) for q in samples), default=0.0)


def test_after_a_can_is_lost_in_transit_the_next_run_does_not_move_before_the_operator_confirms(stack):
    peer, bt = stack
    assert bt.wait_for_text("idle, holding no lease", timeout=STEP_TIMEOUT), bt.describe()
    first = peer.result(peer.send("can_0"))  # the stand-in lets can_0 go during the lift
    # The lift was cancelled: the generator brakes the arm to a stop on its line (~0.5 s), then holds.
    peer.wait(lambda: _still(peer.joints), "the arm standing still after the stop", STEP_TIMEOUT)
    standing, seen = peer.joints[-1], len(peer.joints)

    mark = len(bt.lines)
    second = peer.send("can_1")
    asked = lambda: any(WAITING in line for line in bt.lines[mark:])  # noqa: E731
    peer.wait(lambda: asked() or peer.moving(), "the run asking, or moving", RUN_TIMEOUT)
    assert asked() and not peer.moving(), (peer.steps, bt.describe())
    # Waiting: the arm stands where the lost can left it, and stays there.
    waited = len(peer.joints)
    peer.wait(lambda: len(peer.joints) >= waited + STILL_SAMPLES, f"{STILL_SAMPLES} joint states")
    assert _moved(peer.joints[seen:], standing) < 1e-3, _moved(peer.joints[seen:], standing)
    assert not peer.moving() and CLEAR_ASKED in peer.steps, peer.steps

    # The first run: can_0 recorded lost (not "aborted" and carried), the abort line says what to do.
    assert list(first.outcomes) == ["lost"], first
    stopped = next(line for line in bt.lines if "can_0: aborted, run stopped" in line)
    assert "part-present dropped while carrying" in stopped
    assert "lost in transit, during 'lift can_0')" in stopped  # where it dropped: the step it was in
    assert "the next run does not move before the operator confirms the cell is clear" in stopped
    assert "no restart needed" in stopped and "restart the behaviour server" not in bt.text()
    path = progress.default_path(names.absolute(BT))
    recorded = json.loads(Path(path).read_text())
    assert recorded["cans"].get("can_0") == "lost" and recorded["carrying"] is None, recorded

    # The operator confirms (again each second until the server says so), and the run goes on.
    for _ in range(int(STEP_TIMEOUT)):
        peer.confirm_pub.publish(peer.Bool(data=True))
        if bt.wait_for_text("confirmed the cell is clear of can_0", since=mark, timeout=1.0):
            break
    else:
        raise AssertionError(f"the confirmation was not taken\n{bt.describe()}")
    peer.wait(lambda: "above can_1" in peer.steps, "the run moving on to can_1 (feedback)")
    peer.wait(lambda: _moved(peer.joints[seen:], standing) > 0.05, "the arm moving on to can_1")
    peer.answer(second.cancel_goal_async(), "the cancel's answer")
    result = peer.result(second)
    assert list(result.cans)[:2] == ["can_0", "can_1"] and result.outcomes[0] == "removed", result
    recorded = json.loads(Path(path).read_text())
    assert recorded["cans"].get("can_0") == "removed", recorded
    assert "Traceback" not in bt.text(), bt.describe()
