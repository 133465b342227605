"""`/salamander/ik_ghost_node` as a real process: joint states in, status / ghost joints / markers out.

One ghost process serves the module (own DDS domain). A test node publishes the joint states the ghost
reads (`/arm/joint_states_monitor`, which the trajectory generator fills in the stack) with unique,
increasing stamps and matches every output to its input by stamp, so a test never confuses an answer to
an earlier message with the answer it waits for.
"""

from __future__ import annotations

import itertools
import math
import time

import pytest
from builtin_interfaces.msg import Time
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from salamander_control import names
from salamander_control.ghost.core import GREEN, RED
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE, ArmParams, forward_kinematics
from salamander_msgs.msg import IkStatus as IkStatusMsg
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

TIMEOUT = 30.0
NAMES = list(JOINT_NAMES)
FEASIBLE = (0.4, 0.3, 0.7, -0.2, 1.1)
BEYOND_ALPHA = (0.0, -0.8, 0.65, 0.0, 0.0)  # q2 - q1 = 1.45 > alpha_max 1.40


def key(stamp: Time) -> tuple[int, int]:
    return (stamp.sec, stamp.nanosec)


def rgba(marker: Marker) -> tuple[float, ...]:
    return (marker.color.r, marker.color.g, marker.color.b, marker.color.a)


class GhostPeer(RosPeer):
    """Publishes joint states to the ghost and collects its outputs, keyed by stamp."""

    def __init__(self, domain_id: int, proc: NodeProcess) -> None:
        target = names.absolute(names.IK_GHOST_NODE)
        super().__init__(domain_id, "ik_ghost_test_peer", target, proc.describe, TIMEOUT)
        self.proc = proc
        at = names.absolute  # the default launch's names (the peer lives at /)
        self.pub = self.node.create_publisher(JointState, at(names.JOINT_STATES_MONITOR), 10)
        self.statuses: dict[tuple[int, int], IkStatusMsg] = {}
        self.status_order: list[tuple[int, int]] = []
        self.ghost_joints: dict[tuple[int, int], JointState] = {}
        self.markers: dict[tuple[int, int], MarkerArray] = {}
        self.node.create_subscription(IkStatusMsg, at(names.GHOST_STATUS), self._on_status, 100)
        self.node.create_subscription(JointState, at(names.GHOST_JOINT_STATE), self._on_ghost_joints, 100)
        self.node.create_subscription(MarkerArray, at(names.GHOST_MARKERS), self._on_markers, 100)
        self._ms = itertools.count(1)
        assert self.spin_until(lambda: self.pub.get_subscription_count() > 0), "ghost never subscribed"

    def _on_status(self, msg: IkStatusMsg) -> None:
        self.statuses[key(msg.header.stamp)] = msg
        self.status_order.append(key(msg.header.stamp))

    def _on_ghost_joints(self, msg: JointState) -> None:
        self.ghost_joints[key(msg.header.stamp)] = msg

    def _on_markers(self, msg: MarkerArray) -> None:
        if msg.markers:
            self.markers[key(msg.markers[0].header.stamp)] = msg

    def stamp(self, back_ms: int = 0) -> Time:
        """A stamp 1 ms after the previous one (or `back_ms` before it: an out-of-order message)."""
        ns = 1000 * 10**9 + (next(self._ms) - back_ms) * 10**6
        return Time(sec=ns // 10**9, nanosec=ns % 10**9)

    def joint_state(self, q=None, names_=None, positions=None, stamp=None) -> JointState:
        msg = JointState(name=list(names_ or NAMES), position=[float(v) for v in (positions or q)])
        msg.header.stamp = stamp or self.stamp()
        return msg

    def publish_until(self, msg: JointState, done, timeout: float = TIMEOUT) -> bool:
        """Publish `msg` every spin (the ghost's subscription is best effort) until `done()`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pub.publish(msg)
            self.executor.spin_once(timeout_sec=0.02)
            if done():
                return True
        return False

    def status_of(self, msg: JointState) -> IkStatusMsg:
        k = key(msg.header.stamp)
        assert self.publish_until(msg, lambda: k in self.statuses), self.proc.describe()
        return self.statuses[k]


@pytest.fixture(scope="module")
def ghost(tmp_path_factory):
    domain = next_domain_id()
    logs = tmp_path_factory.mktemp("ik_ghost")
    with NodeProcess("ik_ghost_node", names.IK_GHOST_NODE, domain, logs) as proc:  # stopped, output printed
        peer = GhostPeer(domain, proc)
        yield peer
        peer.close()


@pytest.mark.ros
def test_feasible_joint_state_gives_a_green_ghost_on_the_arm(ghost):
    msg = ghost.joint_state(FEASIBLE)
    k = key(msg.header.stamp)
    status = ghost.status_of(msg)
    pose = forward_kinematics(FEASIBLE, ArmParams())
    assert (status.status, status.reason, status.header.frame_id) == (IkStatusMsg.OK, "ok", "base_link")
    assert (status.tcp.x, status.tcp.y, status.tcp.z) == pytest.approx(pose.tcp, abs=1e-12)
    assert (status.tool_pitch, status.tool_yaw) == pytest.approx((FEASIBLE[3], pose.tool_yaw), abs=1e-12)

    assert ghost.spin_until(lambda: k in ghost.ghost_joints and k in ghost.markers), ghost.proc.describe()
    joints = ghost.ghost_joints[k]
    assert list(joints.name) == NAMES
    assert list(joints.position) == pytest.approx(FEASIBLE, abs=1e-9)
    markers = {m.id: m for m in ghost.markers[k].markers}
    links = next(m for m in markers.values() if m.type == Marker.LINE_STRIP)
    assert links.header.frame_id == "base_link" and len(links.points) == 5
    assert rgba(links) == pytest.approx(GREEN)
    tip = links.points[-1]
    assert (tip.x, tip.y, tip.z) == pytest.approx(pose.tcp, abs=1e-9)
    assert all(m.action == Marker.DELETE for m in markers.values() if m.type == Marker.TEXT_VIEW_FACING)


@pytest.mark.ros
def test_joint_state_beyond_alpha_gives_a_red_ghost_and_no_ghost_joints(ghost):
    red = ghost.joint_state(BEYOND_ALPHA)
    k_red = key(red.header.stamp)
    status = ghost.status_of(red)
    assert (status.status, status.reason) == (IkStatusMsg.COUPLED_LIMIT, "coupled_limit")
    assert ghost.spin_until(lambda: k_red in ghost.markers), ghost.proc.describe()
    label = next(m for m in ghost.markers[k_red].markers if m.type == Marker.TEXT_VIEW_FACING)
    assert (label.action, label.text) == (Marker.ADD, "coupled_limit")
    assert all(rgba(m) == pytest.approx(RED) for m in ghost.markers[k_red].markers)

    # Ghost joint states come in order from one publisher: once the next green one is here, a ghost
    # joint state for the red pose would have arrived before it. None did.
    green = ghost.joint_state(FEASIBLE)
    k_green = key(green.header.stamp)
    assert ghost.publish_until(green, lambda: k_green in ghost.ghost_joints), ghost.proc.describe()
    assert k_red not in ghost.ghost_joints


@pytest.mark.ros
def test_alpha_max_is_live_in_the_ghost(ghost):
    assert ghost.status_of(ghost.joint_state(REST_POSTURE)).reason == "ok"
    assert ghost.set_param("alpha_max", 1.30).successful
    assert ghost.status_of(ghost.joint_state(REST_POSTURE)).reason == "coupled_limit"
    refused = ghost.set_param("alpha_max", math.nan)
    assert not refused.successful and refused.reason
    assert ghost.status_of(ghost.joint_state(REST_POSTURE)).reason == "coupled_limit"  # 1.30 kept
    assert ghost.set_param("alpha_max", 1.40).successful
    assert ghost.status_of(ghost.joint_state(REST_POSTURE)).reason == "ok"


@pytest.mark.ros
def test_encoder_noise_past_a_limit_keeps_the_ghost_green_within_noise_tolerance(ghost):
    """Issue 9.4: a joint state 0.9 deg below q2_min (the beam resting on its stop) is green by default."""
    noisy = (0.0, 0.3, -math.radians(0.9), 0.0, 0.0)
    assert ghost.get_param("noise_tolerance") == pytest.approx(math.radians(1.0), abs=1e-4)
    msg = ghost.joint_state(noisy)
    assert ghost.status_of(msg).reason == "ok"
    k = key(msg.header.stamp)
    assert ghost.spin_until(lambda: k in ghost.ghost_joints), ghost.proc.describe()
    assert ghost.ghost_joints[k].position[2] == pytest.approx(0.0, abs=1e-9)  # on the stop, not past it
    assert ghost.status_of(ghost.joint_state((0.0, 0.3, -math.radians(2.0), 0.0, 0.0))).reason == (
        "q2_out_of_range"  # farther than the tolerance: red
    )
    try:
        assert ghost.set_param("noise_tolerance", 0.0).successful
        assert ghost.status_of(ghost.joint_state(noisy)).reason == "q2_out_of_range"
        assert not ghost.set_param("noise_tolerance", -0.01).successful
    finally:
        assert ghost.set_param("noise_tolerance", 0.0175).successful
    assert ghost.status_of(ghost.joint_state(noisy)).reason == "ok"


@pytest.mark.ros
def test_malformed_joint_states_are_skipped_with_a_warning_and_the_ghost_keeps_running(ghost):
    nan = list(FEASIBLE)
    nan[1] = math.nan
    bad = {
        "non_finite": dict(positions=nan),
        "missing_joint": dict(names_=NAMES[:4], positions=FEASIBLE[:4]),
        "length_mismatch": dict(names_=NAMES, positions=FEASIBLE[:4]),
        "duplicate_joint": dict(names_=[*NAMES, "base_yaw"], positions=[*FEASIBLE, 0.0]),
    }
    bad_keys = []
    for kind, fields in bad.items():
        msg = ghost.joint_state(**fields)
        bad_keys.append(key(msg.header.stamp))
        line = f"skipped joint state ({kind})"
        warned = ghost.publish_until(msg, lambda line=line: line in ghost.proc.text())
        assert warned, ghost.proc.describe()
        # ... and right after it, a good joint state is still answered.
        assert ghost.status_of(ghost.joint_state(FEASIBLE)).reason == "ok"

    # A message stamped before the newest one is dropped, even when it is the only one waiting.
    newest = ghost.joint_state(REST_POSTURE)
    assert ghost.status_of(newest).reason == "ok"
    late = ghost.joint_state(BEYOND_ALPHA, stamp=ghost.stamp(back_ms=5))
    bad_keys.append(key(late.header.stamp))
    line = "skipped joint state (out_of_order)"
    assert ghost.publish_until(late, lambda: line in ghost.proc.text()), ghost.proc.describe()

    # Joints the ghost does not know (a gripper) are ignored, not a reason to skip.
    extra = ghost.joint_state(names_=["gripper", *NAMES], positions=[0.01, *FEASIBLE])
    assert ghost.status_of(extra).reason == "ok"
    assert not set(bad_keys) & set(ghost.statuses), "a skipped joint state was answered"
    assert ghost.proc.alive(), ghost.proc.describe()


def flood(ghost: GhostPeer, seconds: float, rate_hz: float = 200.0) -> tuple[int, int]:
    """Publish fresh joint states at `rate_hz` for `seconds`; return (sent, statuses answering them).

    Also checks that the ghost works on the newest message, not a backlog: once the flood stops, the
    status for the last message arrives (or has arrived), with at most one other (in progress at the
    stop) before it, and no status for an older message comes after it.
    """
    sent: set[tuple[int, int]] = set()
    last: list[JointState] = []

    def publish() -> None:
        msg = ghost.joint_state(FEASIBLE)
        ghost.pub.publish(msg)
        sent.add(key(msg.header.stamp))
        last[:] = [msg]

    timer = ghost.node.create_timer(1.0 / rate_hz, publish)
    end = time.monotonic() + seconds
    ghost.spin_until(lambda: time.monotonic() >= end, seconds + 1.0)  # the stimulus window itself
    ghost.node.destroy_timer(timer)
    before = len(ghost.status_order)
    k_last = key(last[0].header.stamp)
    # (Republished until answered, as the subscription is best effort; a repeat has the same stamp.)
    assert ghost.publish_until(last[0], lambda: k_last in ghost.statuses), ghost.proc.describe()
    # The last one may have been answered inside the window already (the ghost's rate window opened just
    # after it was sent): then nothing may follow it but itself, and nothing may come between the stop
    # and its answer.
    order = ghost.status_order
    first = order.index(k_last)
    assert set(order[first:]) == {k_last}, f"an older state was answered after the newest: {order[first:]}"
    between = order[before:first]
    assert len(set(between)) <= 1, f"a backlog was processed after the flood: {between}"
    return len(sent), len(sent & set(ghost.statuses))


@pytest.mark.ros
def test_rate_limit_holds_under_a_flood_and_follows_max_rate_hz(ghost):
    sent, answered = flood(ghost, 1.0)
    print(f"max_rate_hz 20: {sent} joint states in 1 s -> {answered} statuses")
    assert sent >= 100, "the flood itself was too slow to test the limit"
    assert 5 <= answered <= 20 * 1.5

    assert ghost.set_param("max_rate_hz", 5.0).successful
    try:
        sent, answered = flood(ghost, 2.0)
        print(f"max_rate_hz 5: {sent} joint states in 2 s -> {answered} statuses")
        assert sent >= 200
        assert 2 <= answered <= 2 * 5 * 1.5
    finally:
        assert ghost.set_param("max_rate_hz", 20.0).successful
