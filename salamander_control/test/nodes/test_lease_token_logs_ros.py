"""The arm lease over real processes: no log line holds a lease token (issue 23.6; docs/security.md), and
a goal sent while the lease was free ends once the lease is held (the last test).

`/arm/sim_hardware`, `/arm/trajectory_generator` and `/arm/arm_cartesian_motion_node` run as the launch
file starts them. The test drives every path that refuses a token, with three kinds of them: an expired
lease's token, a wrong one (the holder's with one character changed) and an unknown one (never
granted). Goals on /arm/joint_target carry them in header.frame_id while another client holds the lease
(and, while the lease is free, in goals refused as stale, from the future or malformed); lease requests
(HEARTBEAT, RELEASE, re-ACQUIRE in the holder's name) and MoveCartesian goals and retargets carry them
in their token fields. Each refusal is waited for in the log (the generator throttles its goal
warnings, so a goal is sent again until its line is there). Then no token, nor any 12 characters of
one, stands in any process's output (stdout and stderr, where ROS logs go) or in /rosout; the refusal
lines name the tokens by their fingerprint (`trajectory.lease.fingerprint`).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from geometry_msgs.msg import Point
from rcl_interfaces.msg import Log
from rclpy.qos import qos_profile_rosout_default
from sensor_msgs.msg import JointState

from salamander_control import names
from salamander_control.ros.qos import LATCHED
from salamander_control.trajectory.lease import fingerprint, new_token
from salamander_msgs.action import MoveCartesian
from salamander_msgs.msg import LeaseState
from salamander_msgs.srv import ArmLease, RetargetCartesian
from salamander_testing.config_files import launch_param_files
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

pytestmark = pytest.mark.ros

TIMEOUT = 30.0
RESEND_S = 0.25  # a goal refused under the generator's log throttle is sent again this often
WINDOW = 12  # characters of a token that must not stand anywhere in a log
HOLDER, EXPIRED = "token_log_holder", "token_log_expired"


def leaks(token: str, text: str) -> list[str]:
    """The slices of `token` (WINDOW characters or all of it) that stand in `text`."""
    slices = {token[i:i + WINDOW] for i in range(max(len(token) - WINDOW, 0) + 1)}
    return sorted(s for s in slices if s in text)


class Peer(RosPeer):
    """Goals, lease requests, MoveCartesian goals and retargets of the test; /rosout and the lease state."""

    def __init__(self, domain: int, procs: list[NodeProcess]) -> None:
        from rclpy.action import ActionClient

        super().__init__(domain, "token_log_test", names.absolute(names.TRAJECTORY_GENERATOR), self._logs,
                         TIMEOUT)  # fmt: skip
        self.procs = procs
        at = names.absolute
        self.rosout: list[str] = []
        self.holder: str | None = None
        self.commands = 0
        rosout = qos_profile_rosout_default  # as the nodes publish it: their history too
        self.node.create_subscription(Log, "/rosout", lambda m: self.rosout.append(m.msg), rosout)
        self.node.create_subscription(LeaseState, at(names.LEASE_STATE), self._on_lease, LATCHED)
        self.node.create_subscription(JointState, at(names.JOINT_COMMAND), self._on_command, 10)
        self.goals = self.node.create_publisher(JointState, at(names.JOINT_TARGET), 10)
        self.lease_client = self.node.create_client(ArmLease, at(names.LEASE_SERVICE))
        self.retarget_client = self.node.create_client(RetargetCartesian, at(names.RETARGET_CARTESIAN))
        self.action = ActionClient(self.node, MoveCartesian, at(names.MOVE_CARTESIAN))

    def _logs(self) -> str:
        return "\n".join(p.describe() for p in self.procs)

    def _on_lease(self, msg: LeaseState) -> None:
        self.holder = msg.holder

    def _on_command(self, _msg: JointState) -> None:
        self.commands += 1

    def lease(self, operation: int, client: str, token: str, timeout: float = 5.0) -> Any:
        self.wait(self.lease_client.service_is_ready, "the lease service")
        request = ArmLease.Request(operation=operation, client_id=client, timeout=timeout, token=token)
        return self.answer(self.lease_client.call_async(request), "a lease answer")

    def goal_msg(self, frame_id: str, stamp_s: float = 0.0, joint: str = "wrist_yaw") -> JointState:
        msg = JointState(name=[joint], position=[0.0])
        msg.header.frame_id = frame_id
        msg.header.stamp.sec = int(stamp_s)
        return msg

    def refused(self, proc: NodeProcess, msg: JointState, line: str) -> str:
        """Send the goal `msg` until the generator logs a new line holding `line`; that line."""
        mark = len(proc.lines)

        def logged() -> str | None:
            return next((text for text in proc.lines[mark:] if line in text), None)

        deadline = time.monotonic() + TIMEOUT
        while (found := logged()) is None:
            assert time.monotonic() < deadline, f"no {line!r} logged within {TIMEOUT} s\n{self.describe()}"
            self.goals.publish(msg)
            self.spin_until(lambda: logged() is not None, RESEND_S)
        return found

    def move_cartesian(self, client: str, token: str) -> bool:
        """A MoveCartesian goal in `client`'s name with `token`; whether it was accepted."""
        self.wait(self.action.server_is_ready, "the MoveCartesian server")
        tcp = Point(x=0.3, y=0.0, z=0.2)
        goal = MoveCartesian.Goal(tcp=tcp, path="joint", client_id=client, lease_token=token)
        return self.answer(self.action.send_goal_async(goal), "the goal's answer").accepted

    def retarget(self, token: str) -> Any:
        self.wait(self.retarget_client.service_is_ready, "the retarget service")
        request = RetargetCartesian.Request(tcp=Point(x=0.3, y=0.0, z=0.2), lease_token=token)
        return self.answer(self.retarget_client.call_async(request), "the retarget answer")


@pytest.fixture
def stack(tmp_path):
    domain = next_domain_id()
    nodes = (names.SIM_HARDWARE, names.TRAJECTORY_GENERATOR, names.CARTESIAN_MOTION_NODE)
    procs = [NodeProcess(n, n, domain, tmp_path, params_file=launch_param_files(n)) for n in nodes]
    peer = Peer(domain, procs)
    try:
        peer.wait(lambda: peer.commands > 0 and peer.holder == "", "the generator commanding, the lease free")
        yield peer, procs[1], procs[2]
    finally:
        peer.close()
        for proc in procs:
            proc.stop()
        print(peer.describe())  # shown when the test failed


def test_refused_tokens_are_logged_by_fingerprint_only_on_every_path(stack) -> None:
    peer, generator, cartesian = stack
    request = ArmLease.Request
    acquire, heartbeat, release = request.ACQUIRE, request.HEARTBEAT, request.RELEASE
    # An expired lease's token: granted, then left to expire (no heartbeat).
    expired = peer.lease(acquire, EXPIRED, "", timeout=0.2)
    assert expired.success, expired.message
    peer.wait(lambda: peer.holder == "", "the short lease to expire")
    unknown = new_token()
    # While the lease is free: the expired token locked out; an unknown one in a goal from the future,
    # one older than the last accepted goal, and a malformed one.
    named = [(peer.refused(generator, peer.goal_msg(expired.token), "expired lease's token"), expired.token)]
    now = peer.node.get_clock().now().nanoseconds * 1e-9
    named.append((peer.refused(generator, peer.goal_msg(unknown, now + 100.0), "in the future"), unknown))
    peer.goals.publish(peer.goal_msg("", now))  # accepted (anonymous, the lease free): the order's mark
    older = peer.goal_msg(unknown, now - 50.0)
    named.append((peer.refused(generator, older, "older than the last accepted goal"), unknown))
    named.append((peer.refused(generator, peer.goal_msg(unknown, joint="elbow"), "unknown joint"), unknown))
    # While another client holds the lease: each kind of token in a goal, a lease request and a
    # MoveCartesian goal in the holder's name, and a retarget.
    held = peer.lease(acquire, HOLDER, "")
    assert held.success, held.message
    beat = request(operation=heartbeat, client_id=HOLDER, token=held.token)
    peer.node.create_timer(1.0, lambda: peer.lease_client.call_async(beat))  # the lease stays held
    peer.wait(lambda: peer.holder == HOLDER, "the lease held")
    # The Cartesian node follows the lease on its own latched subscription: until it has seen the holder
    # it takes the lease for free and accepts any goal (the generator would then refuse its targets).
    sees = "the Cartesian node seeing the lease held"
    peer.wait(lambda: not peer.move_cartesian("token_log_other", ""), sees)
    wrong = held.token[:-1] + ("A" if held.token[-1] != "A" else "B")
    tokens = {"expired": expired.token, "wrong": wrong, "unknown": unknown}
    for token in tokens.values():
        line = peer.refused(generator, peer.goal_msg(token), f"refused: lease held by '{HOLDER}'")
        named.append((line, token))
        for op in (heartbeat, release, acquire):
            assert not peer.lease(op, HOLDER, token).success
        assert not peer.move_cartesian(HOLDER, token)
        assert not peer.retarget(token).success
    rejected = "its lease token is not the holder's"
    assert cartesian.wait_for_text(rejected, timeout=TIMEOUT), cartesian.describe()
    assert generator.wait_for_text("lease HEARTBEAT from client id", timeout=TIMEOUT), generator.describe()
    # The /rosout copies of the lines above have arrived (each node's newest refusal is there).
    for newest in (named[-1][0], rejected):
        peer.wait(lambda newest=newest: any(newest.split("]: ")[-1] in m for m in peer.rosout), "/rosout")

    for kind, token in {**tokens, "held": held.token}.items():
        for source, text in (("generator", generator.text()), ("cartesian", cartesian.text()),
                             ("/rosout", "\n".join(peer.rosout))):  # fmt: skip
            found = leaks(token, text)
            assert not found, f"the {kind} token stands in the {source} log: {found}"
    for line, token in named:
        assert fingerprint(token) in line, line  # each refusal names its token by the fingerprint
    assert peer.holder == HOLDER and all(p.alive() for p in peer.procs), peer.describe()


def test_a_goal_sent_while_the_lease_was_free_ends_with_the_reason_when_it_is_taken(stack) -> None:
    """Before, the goal ran on with its targets refused: three "resuming ... (a pause over its
    stream_timeout?)" warnings and a "timeout" abort 10.8 s after the lease was taken."""
    from action_msgs.msg import GoalStatus

    peer, generator, cartesian = stack
    peer.wait(peer.action.server_is_ready, "the MoveCartesian server")

    feedback: list[Any] = []

    def goal(z: float, path: str, speed: float) -> Any:
        tcp = Point(x=0.3, y=0.0, z=z)
        request = MoveCartesian.Goal(tcp=tcp, path=path, client_id="jog", speed_scale=speed)
        sent = peer.action.send_goal_async(request, feedback_callback=lambda f: feedback.append(f.feedback))
        handle = peer.answer(sent, "the goal's answer")
        assert handle.accepted
        return handle.get_result_async()

    above = peer.answer(goal(0.2, "joint", 0.5), "the joint goal's result")
    assert above.status == GoalStatus.STATUS_SUCCEEDED, above.result.message
    feedback.clear()
    line = goal(0.1, "linear", 0.05)  # 100 mm down at 5 % speed: it runs for seconds
    peer.wait(lambda: any(f.tcp.z < 0.2 - 0.005 for f in feedback), "the line 5 mm on its way down")
    mark = len(cartesian.lines)
    taken = peer.lease(ArmLease.Request.ACQUIRE, HOLDER, "", timeout=30.0)
    assert taken.success, taken.message
    started = time.monotonic()
    assert peer.spin_until(line.done, 5.0), cartesian.describe()
    ended = line.result()
    assert ended.status == GoalStatus.STATUS_ABORTED, ended.result.message
    assert f"the arm lease was taken by '{HOLDER}' while this goal of 'jog'" in ended.result.message
    assert time.monotonic() - started < 2.0, ended.result.message
    assert not any("resuming" in text for text in cartesian.lines[mark:]), cartesian.describe()
    # It ended where the measured arm was: on its way down, well short of the line's end.
    assert 0.1 + 0.01 < ended.result.final_tcp.z < 0.2 - 0.001, ended.result.final_tcp
