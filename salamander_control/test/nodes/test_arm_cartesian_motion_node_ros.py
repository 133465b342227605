"""/arm/arm_cartesian_motion_node as a real process, with a fake arm in the test closing the loop.

The fake arm publishes /joint_states and jumps to every /arm/joint_target it receives (a perfect
tracker), which keeps these tests independent of the trajectory generator.
"""

from __future__ import annotations

import math
import re
import signal
import time

import numpy as np
import pytest
from geometry_msgs.msg import Point
from rclpy.time import Time

from salamander_control import names, params_file
from salamander_control.kinematics import JOINT_NAMES, IkStatus, forward_kinematics, solve_ik_pitched
from salamander_control.ros.conversions import INVALID_REQUEST
from salamander_testing import REPO as REPO_ROOT
from salamander_testing.config_files import node_config
from salamander_testing.line_metrics import line_deviation
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import spin_until

ROOT = REPO_ROOT
NODE = names.absolute(names.CARTESIAN_MOTION_NODE)  # /arm/arm_cartesian_motion_node
TIMEOUT = 20.0
Q_START = (0.2, 0.1, 0.6, 0.1, 0.0)
HOUSING_START = (0.06, 0.12, 0.04)  # a line from here to HOUSING_GOAL runs into the coupled limit
HOUSING_GOAL = (0.06, -0.12, 0.04)


def tcp_of(q):
    return np.array(forward_kinematics(q).tcp)


def test_config_yaml_lists_every_parameter_with_its_default():
    # arm.yaml, motion_limits.yaml and cartesian_motion.yaml, as the launch file loads them.
    from salamander_control.cartesian.params import own_param_specs, param_specs

    params = node_config("arm_cartesian_motion_node", NODE)
    specs = param_specs()
    assert params == {s.name: s.default for s in specs}
    own = params_file.node_values([ROOT / "config/cartesian_motion.yaml"], NODE, require_section=True)
    assert own == {s.name: s.default for s in own_param_specs()}  # the shared values live elsewhere
    assert (params["max_linear_velocity"], params["max_linear_acceleration"], params["max_linear_jerk"]) == (
        1.0,
        4.0,
        40.0,
    )


class FakeArm:
    """/joint_states at 50 Hz from `q`; every /arm/joint_target received becomes the new `q`."""

    def __init__(self, node, q, valid=True, follow=True):
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        self.node, self.q, self.valid = node, tuple(q), valid
        self.still = False  # True: targets are recorded, and the arm stays where it is
        self.targets = []  # received JointState messages
        self.arrivals = []  # time.monotonic() of each, on receipt
        self._pub = node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        self._msg_type = JointState
        if follow:
            self.follow()
        node.create_timer(0.02, self._publish)

    def follow(self):
        """Subscribe /arm/joint_target (a generator that comes up)."""
        self.node.create_subscription(self._msg_type, "/arm/joint_target", self._on_target, 100)

    def _publish(self):
        msg = self._msg_type()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.name = list(JOINT_NAMES)
        msg.position = [float(v) for v in self.q] if self.valid else [math.nan] * 5
        self._pub.publish(msg)

    def _on_target(self, msg):
        self.targets.append(msg)
        self.arrivals.append(time.monotonic())
        if self.still:
            return
        # A joint target may name a subset; the node always sends all five.
        by_name = dict(zip(msg.name, msg.position, strict=True))
        self.q = tuple(by_name[n] for n in JOINT_NAMES)


class Harness:
    """The node under test (subprocess) and the test's side: fake arm, action/service/param clients."""

    def __init__(self, make_node, executor, domain_id, proc, q_start, valid=True, follow=True):
        from rclpy.action import ActionClient
        from rclpy.parameter_client import AsyncParameterClient

        from salamander_msgs.action import MoveCartesian
        from salamander_msgs.srv import RetargetCartesian

        self.executor = executor
        self.proc = proc
        self.node = make_node(f"cartesian_test_{domain_id}")
        self.arm = FakeArm(self.node, q_start, valid, follow)
        self.action = ActionClient(self.node, MoveCartesian, "/arm/move_cartesian")
        self.retarget_client = self.node.create_client(RetargetCartesian, "/arm/retarget_cartesian")
        self.params = AsyncParameterClient(self.node, NODE)
        self.feedback = []
        self.MoveCartesian, self.RetargetCartesian = MoveCartesian, RetargetCartesian

    def wait(self, predicate, timeout=TIMEOUT):
        return spin_until(self.executor, predicate, timeout)

    def stderr(self):
        return self.proc.text()

    def goal(
        self, tcp, path="linear", speed_scale=1.0, tool_pitch=0.0, tool_yaw=0.0, client_id="bt", branch="",
        lease_token="",
    ):
        return self.MoveCartesian.Goal(
            tcp=Point(x=float(tcp[0]), y=float(tcp[1]), z=float(tcp[2])),
            tool_pitch=float(tool_pitch),
            tool_yaw=float(tool_yaw),
            path=path,
            speed_scale=float(speed_scale),
            client_id=client_id,
            branch=branch,
            lease_token=lease_token,
        )

    def send(self, goal):
        """Send a goal; returns its handle (check .accepted)."""
        assert self.action.wait_for_server(timeout_sec=TIMEOUT), "action server did not appear"
        future = self.action.send_goal_async(
            goal, feedback_callback=lambda fb: self.feedback.append(fb.feedback)
        )
        assert self.wait(future.done), "no goal response"
        return future.result()

    def send_accepted(self, goal):
        """Send until accepted (right after start the node may not have a joint state yet)."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            handle = self.send(goal)
            if handle.accepted:
                return handle
            self.wait(lambda: False, 0.1)  # let joint states flow before trying again
        raise AssertionError(f"goal never accepted; node log:\n{self.stderr()}")

    def result(self, handle):
        future = handle.get_result_async()
        assert self.wait(future.done), "no result"
        return future.result()

    def retarget(self, tcp, tool_pitch=0.0, tool_yaw=0.0, lease_token=""):
        assert self.retarget_client.wait_for_service(timeout_sec=TIMEOUT)
        req = self.RetargetCartesian.Request(
            tcp=Point(x=float(tcp[0]), y=float(tcp[1]), z=float(tcp[2])),
            tool_pitch=tool_pitch,
            tool_yaw=tool_yaw,
            lease_token=lease_token,
        )
        future = self.retarget_client.call_async(req)
        assert self.wait(future.done)
        return future.result()

    def set_param(self, name, value):
        from rclpy.parameter import Parameter

        assert self.params.wait_for_services(timeout_sec=TIMEOUT)
        future = self.params.set_parameters([Parameter(name, value=value)])
        assert self.wait(future.done)
        return future.result().results[0]


@pytest.fixture
def start_node(ros_context, ros_executor, make_node, tmp_path):
    """start_node(q_start, valid=True, **params) -> Harness; the node is stopped (SIGINT) afterwards."""
    procs = []

    def start(q_start=Q_START, valid=True, follow=True, **params):
        domain_id = ros_context.get_domain_id()
        node = names.CARTESIAN_MOTION_NODE
        proc = NodeProcess("arm_cartesian_motion_node", node, domain_id, tmp_path, params)
        procs.append(proc)
        return Harness(make_node, ros_executor, domain_id, proc, q_start, valid, follow)

    yield start
    for proc in procs:
        code = proc.stop()
        print(f"--- exit code {code}: {proc.describe()}")  # pytest shows it when the test failed


pytestmark = pytest.mark.ros


def test_linear_goal_succeeds_with_feedback_along_a_straight_line(start_node):
    h = start_node()
    target = (0.35, -0.1, 0.0)
    handle = h.send_accepted(h.goal(target, tool_yaw=0.5, client_id="behavior_tree", lease_token="tok-1"))
    res = h.result(handle)
    assert res.result.success, res.result.message
    assert res.result.status == IkStatus.OK
    final = np.array([res.result.final_tcp.x, res.result.final_tcp.y, res.result.final_tcp.z])
    assert np.linalg.norm(final - target) < 0.001
    # Joint targets every cycle, with the lease token as sender, and their TCP on the straight line.
    assert len(h.arm.targets) > 20
    assert {m.header.frame_id for m in h.arm.targets} == {"tok-1"}
    assert "tok-1" not in h.stderr()  # the token is never logged
    assert all(list(m.name) == list(JOINT_NAMES) for m in h.arm.targets)
    tcps = np.array([tcp_of(m.position) for m in h.arm.targets])
    assert line_deviation(tcps, tcp_of(Q_START), np.array(target)) < 1e-4
    # Feedback: several messages, progress rising towards 1, distance shrinking.
    assert len(h.feedback) >= 3
    progress = [fb.progress for fb in h.feedback]
    assert progress == sorted(progress) and progress[-1] > 0.5
    assert h.feedback[-1].distance_remaining < h.feedback[0].distance_remaining


def test_a_goal_with_a_handoff_distance_gets_a_feedback_the_cycle_the_arm_gets_there(start_node):
    """At 1 Hz the periodic feedback of this ~1.1 s line comes at its start (0.21 m to go) and near its end;
    the one at handoff_distance (0.15 m, crossed ~0.35 s in) comes at once."""
    h = start_node(feedback_rate_hz=1.0)
    target, near = (0.35, -0.1, 0.0), 0.15
    goal = h.goal(target, speed_scale=0.2)
    goal.handoff_distance = near
    res = h.result(h.send_accepted(goal))
    assert res.result.success, res.result.message
    remaining = [fb.distance_remaining for fb in h.feedback]
    # The first at or inside it, within what the arm covers in one joint state period (20 ms at <= 0.2 m/s).
    told = [d for d in remaining if d <= near]
    assert told and told[0] > near - 0.01, remaining
    assert len(remaining) <= 4, remaining  # the 1 Hz messages and the one at `near`
    # Bad input: a NaN or negative distance rejects the goal.
    for bad in (math.nan, -0.01):
        goal.handoff_distance = bad
        assert not h.send(goal).accepted
    # The rejection's log line comes after the goal response.
    assert h.wait(lambda: "handoff_distance must lie in" in h.stderr()), h.stderr()


def test_a_goal_with_a_band_crosses_it_at_its_speed_without_stopping(start_node):
    """The stretch 80 to 40 mm before the target at speed_scale 0.05 (50 mm/s of the node's 1 m/s): the
    joint targets' TCP moves that fast there and no slower than 80 % of it, fast before and after."""
    h = start_node()
    target = np.array((0.35, -0.1, 0.0))
    goal = h.goal(tuple(target))
    goal.band_speed_scale, goal.band_start, goal.band_end = 0.05, 0.08, 0.04
    res = h.result(h.send_accepted(goal))
    assert res.result.success, res.result.message
    assert h.wait(lambda: "at speed_scale 0.05 from 80 to 40 mm before it" in h.stderr()), h.stderr()
    stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in h.arm.targets])
    tcps = np.array([tcp_of(m.position) for m in h.arm.targets])
    speed = np.linalg.norm(np.diff(tcps, axis=0), axis=1) / np.diff(stamps)
    to_go = np.linalg.norm(tcps[1:] - target, axis=1)
    inside = (to_go < 0.078) & (to_go > 0.042)
    assert inside.sum() > 30  # ~0.7 s of 100 Hz targets
    assert 0.04 < speed[inside].min() and speed[inside].max() < 0.0505, speed[inside]
    assert speed[to_go > 0.09].max() > 0.1  # fast before the band
    # A band the node cannot use is refused with the reason.
    goal.band_start, goal.band_end = 0.04, 0.08
    assert not h.send(goal).accepted
    assert h.wait(lambda: "must lie beyond band_end" in h.stderr()), h.stderr()


def test_a_starved_node_first_sends_the_samples_it_missed_each_at_its_own_time(start_node):
    """The process stopped (SIGSTOP) for 0.25 s mid-line, as a starved machine would: when it runs again
    its late timer call sends the cycles it missed, each on the plan's 10 ms grid and stamped with its
    time. Before, it sent one sample 0.25 s after the last (and, after any late call, samples 15-25 ms
    apart): the generator's curve through them kinked past the jerk limit and the line was handed to
    Ruckig in joint space."""
    h = start_node()
    target = (0.35, -0.1, 0.0)
    handle = h.send_accepted(h.goal(target, speed_scale=0.3))
    assert h.wait(lambda: len(h.arm.targets) > 20)
    h.proc.send_signal(signal.SIGSTOP)
    try:
        spin_until(h.executor, lambda: False, timeout=0.25)  # the starvation itself, not a wait for an event
    finally:
        h.proc.send_signal(signal.SIGCONT)
    res = h.result(handle)
    assert res.result.success, res.result.message
    stamps = [Time.from_msg(m.header.stamp).nanoseconds * 1e-9 for m in h.arm.targets]
    gaps = np.diff(stamps)
    arrival_gaps = np.diff(h.arm.arrivals)
    assert arrival_gaps.max() > 0.2  # the stall reached the wire
    # The plan's grid throughout: one period apart (to the stamps' float rounding), however late each call.
    assert np.allclose(gaps, 0.01, atol=1e-6), (gaps.min(), gaps.max())
    tcps = np.array([tcp_of(m.position) for m in h.arm.targets])
    assert line_deviation(tcps, tcp_of(Q_START), np.array(target)) < 1e-4


def test_goal_into_the_coupled_limit_fails_early_and_publishes_no_joint_target(start_node):
    q_start = solve_ik_pitched(HOUSING_START, 0.0, 0.0).q
    h = start_node(q_start)
    res = h.result(h.send_accepted(h.goal(HOUSING_GOAL)))
    assert not res.result.success
    assert res.result.status == IkStatus.COUPLED_LIMIT
    assert "coupled_limit at" in res.result.message and "mm of 240.0 mm" in res.result.message
    # Nothing may follow either: a late target would still move the arm.
    assert not h.wait(lambda: h.arm.targets, timeout=0.5)
    assert h.arm.q == q_start


def test_retarget_of_an_active_goal_ends_at_the_new_target(start_node):
    h = start_node()
    handle = h.send_accepted(h.goal((0.35, -0.15, 0.0), speed_scale=0.3))
    assert h.wait(lambda: len(h.arm.targets) > 10)  # moving
    new_target = (0.28, 0.12, 0.06)
    reply = h.retarget(new_target)
    assert reply.success and reply.status == IkStatus.OK, reply.message
    res = h.result(handle)
    assert res.result.success, res.result.message
    final = np.array([res.result.final_tcp.x, res.result.final_tcp.y, res.result.final_tcp.z])
    assert np.linalg.norm(final - new_target) < 0.001
    q = np.array([m.position for m in h.arm.targets])
    assert np.max(np.abs(np.diff(q, axis=0))) < 0.1  # the swap did not jerk the joints


def test_infeasible_retarget_is_refused_and_the_goal_ends_at_its_old_target(start_node):
    h = start_node()
    reply = h.retarget((0.3, 0.0, 0.05))
    assert not reply.success and reply.status == INVALID_REQUEST and "no active" in reply.message
    target = (0.3, 0.12, 0.04)
    handle = h.send_accepted(h.goal(target, speed_scale=0.3))
    assert h.wait(lambda: len(h.arm.targets) > 5)
    reply = h.retarget((0.06, 0.0, 0.04))  # inside the housing
    assert not reply.success and reply.status == IkStatus.COUPLED_LIMIT
    assert "coupled_limit" in reply.message
    # Finite but absurd: the path to it would be sampled for minutes (or not fit in memory) in the
    # node's only executor; it is refused at once like a NaN, and the goal runs on.
    for tcp, pitch in (((0.3, 0.12, 0.04), 1e12), ((1e9, 0.0, 0.0), 0.0), ((0.3, 0.12, 0.04), math.nan)):
        reply = h.retarget(tcp, tool_pitch=pitch)
        assert not reply.success and reply.status == INVALID_REQUEST, reply.message
        assert "retarget pose" in reply.message
    res = h.result(handle)
    assert res.result.success, res.result.message
    final = np.array([res.result.final_tcp.x, res.result.final_tcp.y, res.result.final_tcp.z])
    assert np.linalg.norm(final - target) < 0.001
    # A retarget without a goal is routine (one that crossed its goal's end): INFO; a refused path: WARN.
    no_goal = re.compile(r"\[INFO\].*retarget: .*no active MoveCartesian goal.*\(refused\)")
    assert h.wait(lambda: no_goal.search(h.stderr())), h.stderr()
    assert re.search(r"\[WARN\].*retarget: .*coupled_limit", h.stderr()), h.stderr()


def test_a_joint_state_stamped_ahead_or_stale_is_refused_and_the_goal_goes_on(start_node):
    """One stamped 0.9 s ahead of the node's clock used to become the newest, and every real one stamped
    before it was dropped as out of order for 0.9 s (the measurement, and a guarded goal's efforts,
    frozen); one stamped 2 s before the clock is stale. Both are refused, each with its reason."""
    from rclpy.duration import Duration

    h = start_node()
    target = (0.3, 0.12, 0.04)
    handle = h.send_accepted(h.goal(target, speed_scale=0.3))
    assert h.wait(lambda: len(h.arm.targets) > 5)
    ahead = re.compile(r"\[WARN\].*ignoring /joint_states: stamped 0\.\d\d\d s after this node's clock")
    stale = re.compile(r"\[WARN\].*ignoring /joint_states: stamped 2\.\d\d\d s before this node's clock")

    def refused_both() -> bool:  # sent again until both are refused: a starved poll may skip one
        for offset in (0.9, -2.0):
            msg = h.arm._msg_type(name=list(JOINT_NAMES), position=[float(v) for v in h.arm.q])
            msg.header.stamp = (h.arm.node.get_clock().now() + Duration(seconds=offset)).to_msg()
            h.arm._pub.publish(msg)
        err = h.stderr()
        return bool(ahead.search(err) and stale.search(err))

    assert h.wait(refused_both), h.stderr()
    res = h.result(handle)
    assert res.result.success, res.result.message
    assert "stamp older than the last one" not in h.stderr()  # no real one was held back


def test_alpha_max_set_at_run_time_decides_the_next_early_fail(start_node):
    q_start = (0.0, 0.0, 0.5, 0.0, 0.0)
    rest_tcp = tcp_of((0.0, math.radians(-45.0), math.radians(33.8), 0.0, 0.0))  # needs q2 - q1 = 1.375
    h = start_node(q_start)
    bad = h.set_param("alpha_max", 5.0)
    assert not bad.successful and "alpha_max" in bad.reason
    assert not h.set_param("max_linear_velocity", -1.0).successful
    narrowed = h.set_param("alpha_max", 1.30)
    assert narrowed.successful  # narrowing is normal; it is accepted with the spec's warning:
    assert "no longer admit the rest posture" in narrowed.reason
    assert h.wait(lambda: "no longer admit the rest posture" in h.stderr())
    h.arm.targets.clear()
    res = h.result(h.send_accepted(h.goal(rest_tcp)))
    assert not res.result.success and res.result.status == IkStatus.COUPLED_LIMIT, res.result.message
    assert not h.arm.targets
    assert h.set_param("alpha_max", 1.40).successful
    assert h.set_param("control_rate_hz", 250.0).successful  # the control timer is rebuilt live
    res = h.result(h.send_accepted(h.goal(rest_tcp)))
    assert res.result.success, res.result.message
    stamps = [Time.from_msg(m.header.stamp).nanoseconds * 1e-9 for m in h.arm.targets]
    assert np.median(np.diff(stamps)) < 0.007  # targets now come at ~250 Hz, not 100 Hz


def test_the_goal_branch_is_honoured_by_a_joint_goal_and_refused_with_the_reason_by_a_linear_one(start_node):
    from salamander_control.kinematics import ArmParams
    from salamander_control.kinematics.ik import branch_of

    wide = ArmParams(alpha_max=2.0)  # the elbow-down branch exists once alpha_max > pi/2
    q_down = (0.0, -1.228, 0.401, 0.0, 0.0)  # q2 - q1 = 1.629: elbow down
    pose = forward_kinematics(q_down, wide).tcp
    q_up = solve_ik_pitched(pose, 0.0, 0.0, wide, branch="up").q  # the same TCP, elbow up
    h = start_node(q_up, alpha_max=2.0)

    res = h.result(h.send_accepted(h.goal(pose, path="joint", branch="down")))
    assert res.result.success, res.result.message
    q = h.arm.q
    assert branch_of(q[1], q[2]).value == "down" and np.allclose(q, q_down, atol=1e-6)

    h.arm.targets.clear()
    near = forward_kinematics((0.0, -1.2, 0.45, 0.0, 0.0), wide).tcp  # a short line, still elbow down
    res = h.result(h.send_accepted(h.goal(near, branch="up")))
    assert not res.result.success and res.result.status == IkStatus.OK
    early = "early fail, no joint target sent for this goal: "
    assert res.result.message.startswith(f"{early}branch 'up' refused")
    assert "the arm is on the 'down' branch" in res.result.message
    assert not h.wait(lambda: h.arm.targets, timeout=0.5)  # nothing sent, the arm did not move
    assert h.wait(lambda: "branch 'up' refused for a linear path" in h.stderr())  # and the node says why

    bad = h.send(h.goal(near, branch="sideways"))
    assert not bad.accepted
    assert h.wait(lambda: "branch must be '', 'up' or 'down', got 'sideways'" in h.stderr())


def test_a_joint_goal_ends_when_the_generator_s_command_rests_at_its_end_the_arm_trailing(start_node):
    """/arm/joint_command at rest at the goal's joints ends the goal with the measured arm up to TRAIL_M
    (3 mm) behind, not only once it is within position_tolerance (1 mm); a command still moving there, or
    an arm left farther behind, does not."""
    from sensor_msgs.msg import JointState

    h = start_node()
    h.arm.still = True  # the measured arm stays at Q_START
    command: dict = {}

    def publish() -> None:  # as the generator does: every change, and a keep-alive at rest
        if command:
            msg = JointState(name=list(JOINT_NAMES), position=list(command["q"]), velocity=list(command["v"]))
            msg.header.stamp = h.node.get_clock().now().to_msg()
            pub.publish(msg)

    pub = h.node.create_publisher(JointState, "/arm/joint_command", 10)
    h.node.create_timer(0.02, publish)
    fk = forward_kinematics(Q_START)
    for off, arrives in ((0.002, True), (0.005, False)):
        sent = len(h.arm.targets)
        there = np.array(fk.tcp) + np.array([off, 0.0, 0.0])
        handle = h.send_accepted(h.goal(there, path="joint", tool_pitch=fk.tool_pitch, tool_yaw=fk.tool_yaw))
        assert h.wait(lambda n=sent: len(h.arm.targets) > n)
        result = handle.get_result_async()
        command.update(q=tuple(h.arm.targets[-1].position), v=(0.0, 0.0, 0.1, 0.0, 0.0))  # there, moving
        assert not h.wait(result.done, timeout=0.5)
        command.update(v=(0.0,) * 5)  # at rest there
        if arrives:
            assert h.wait(result.done), h.stderr()
            assert result.result().result.success, result.result().result.message
        else:
            assert not h.wait(result.done, timeout=0.5)
            cancel = handle.cancel_goal_async()
            assert h.wait(cancel.done) and h.wait(result.done)
            assert not result.result().result.success


def test_a_goal_waits_for_a_generator_to_follow_its_targets_and_is_refused_without_one(start_node):
    # A joint goal sends its one target once: sent before the generator's subscription was matched (a
    # stack just started), it was lost and the goal waited 30 s for an arm that never moved.
    h = start_node(follow=False)
    assert not h.send(h.goal((0.3, 0.0, 0.05), path="joint")).accepted
    refused = "nobody subscribes /arm/joint_target (no trajectory generator) after"
    assert h.wait(lambda: refused in h.stderr()), h.stderr()
    h.arm.follow()
    res = h.result(h.send_accepted(h.goal((0.3, 0.0, 0.05), path="joint")))
    assert res.result.success, res.result.message
    assert len(h.arm.targets) == 1


def test_the_node_subscribes_its_measurements_as_it_starts_before_any_goal(start_node):
    # Made by the first goal, the subscription to /joint_states was once matched more than 1 s later, with
    # a whole stack starting on two cores: the README demo's first goal was refused ("no joint state yet")
    # and sent again 1.5 s later. The node now subscribes as it starts (STARTUP_MEASURE_S).
    h = start_node()
    polled = "_arm_cartesian_motion_node_polled"

    def subscribed(topic):
        return any(i.node_name == polled for i in h.node.get_subscriptions_info_by_topic(topic))

    assert h.wait(lambda: subscribed("/joint_states") and subscribed("/arm/joint_command")), h.stderr()
    assert "MoveCartesian" not in h.stderr()  # no goal has come
    handle = h.send(h.goal((0.3, 0.0, 0.05), path="joint"))
    assert handle.accepted, h.stderr()  # at the first send
    res = h.result(handle)
    assert res.result.success, res.result.message


def test_malformed_goals_and_goals_before_a_valid_joint_state_are_rejected(start_node):
    h = start_node(valid=False)  # the fake arm publishes NaN positions
    # The node reads /joint_states only while goals come: the goal makes it look, waits for a valid one
    # (joint_state_timeout_s) and is refused, with the reasons logged.
    assert not h.send(h.goal((0.3, 0.0, 0.05))).accepted
    assert h.wait(lambda: "ignoring /joint_states" in h.stderr()), h.stderr()
    assert h.wait(lambda: "no joint state yet: none valid on /joint_states within" in h.stderr()), h.stderr()
    h.arm.valid = True
    h.send_accepted(h.goal((0.3, 0.0, 0.05), path="joint"))
    for goal in (
        h.goal((math.nan, 0.0, 0.05)),
        h.goal((0.3, 0.0, 0.05), path="curvy"),
        h.goal((0.3, 0.0, 0.05), speed_scale=1.5),
        h.goal((0.3, 0.0, 0.05), speed_scale=-0.5),
        h.goal((0.3, 0.0, 0.05), tool_yaw=math.inf),
        h.goal((0.3, 0.0, 0.05), speed_scale=5e-324),  # these three once failed inside the execution
        h.goal((1e308, 0.0, 0.05)),
        h.goal((0.3, 0.0, 0.05), tool_yaw=1e308),
    ):
        assert not h.send(goal).accepted
    refusals = ("path must be 'linear' or 'joint'", "speed_scale must lie in [0.01, 1]",
                "pose out of any sensible range")  # fmt: skip
    assert h.wait(lambda: all(r in h.stderr() for r in refusals)), h.stderr()  # the log lines come later


def test_a_goal_whose_joint_states_turn_invalid_aborts_saying_how_old_and_what_dds_reports(start_node):
    """The measured arm stops being valid mid-goal (NaN positions, refused): the goal ends in its settle
    timeout, its message says how old the newest valid joint state is, and the node logs what DDS reports
    of its subscription (a stream that stopped, or one that stopped reaching this node)."""
    h = start_node(settle_timeout_s=0.5)
    handle = h.send_accepted(h.goal((0.3, 0.0, 0.05)))
    assert h.wait(lambda: len(h.arm.targets) > 5)
    h.arm.valid = False
    res = h.result(handle)
    assert not res.result.success
    message = res.result.message
    assert "trajectory finished but no valid joint state (the newest valid one came" in message, message
    age = float(message.split("came ")[1].split(" s before")[0])
    assert 0.5 < age < TIMEOUT, message  # at least the settle timeout: the arm went blind during the plan
    line = "/joint_states: no fresh valid joint state at the goal's end; this node's subscription matches 1"
    assert h.wait(lambda: line in h.stderr()), h.stderr()
    assert "publisher(s), the graph shows 1" in h.stderr(), h.stderr()


def test_cancel_brakes_to_a_stop_short_of_the_goal(start_node):
    from action_msgs.msg import GoalStatus

    h = start_node()
    target = (0.35, -0.2, 0.0)
    handle = h.send_accepted(h.goal(target, speed_scale=0.3))
    assert h.wait(lambda: len(h.arm.targets) > 20)
    cancel = handle.cancel_goal_async()
    assert h.wait(cancel.done)
    res = h.result(handle)
    assert res.status == GoalStatus.STATUS_CANCELED and not res.result.success
    tcps = np.array([tcp_of(m.position) for m in h.arm.targets])
    assert line_deviation(tcps, tcp_of(Q_START), np.array(target)) < 1e-4  # braked on the line
    assert np.linalg.norm(tcps[-1] - target) > 0.02
    steps = np.linalg.norm(np.diff(tcps, axis=0), axis=1)
    assert steps[-1] < 1e-4  # the last targets stand still


def test_a_new_goal_preempts_the_running_one_without_stopping_the_arm(start_node):
    from action_msgs.msg import GoalStatus

    h = start_node()
    first = h.send_accepted(h.goal((0.35, -0.15, 0.0), speed_scale=0.3))
    assert h.wait(lambda: len(h.arm.targets) > 10)
    second_target = (0.3, 0.1, 0.08)
    second = h.send_accepted(h.goal(second_target, speed_scale=0.5))
    res = h.result(first)
    assert res.status == GoalStatus.STATUS_ABORTED and "preempted" in res.result.message
    res = h.result(second)
    assert res.result.success, res.result.message
    q = np.array([m.position for m in h.arm.targets])
    assert np.max(np.abs(np.diff(q, axis=0))) < 0.1  # continued from the moving state, no jump


TOKEN = "Zq3-token-of-the-holder-0123456789abcdef"


def fake_lease_service(node, holder, token):
    """A stand-in for the generator's /arm/lease: HEARTBEAT succeeds for `holder` with `token` only.

    Returns the list of (client_id, answered success) it fills as requests arrive.
    """
    from salamander_msgs.srv import ArmLease

    seen = []

    def answer(request, response):
        beat = request.operation == ArmLease.Request.HEARTBEAT
        ok = beat and (request.client_id, request.token) == (holder, token)
        seen.append((request.client_id, ok))
        response.success, response.holder = ok, holder
        response.message = "ok" if ok else f"{request.client_id!r} holds the lease but not with that token"
        return response

    node.create_service(ArmLease, names.absolute(names.LEASE_SERVICE), answer)
    return seen


def test_while_the_lease_is_held_goals_from_others_are_rejected_and_never_preempt(start_node):
    from salamander_control.ros.qos import LATCHED
    from salamander_msgs.msg import LeaseState

    h = start_node()
    lease = h.node.create_publisher(LeaseState, names.absolute(names.LEASE_STATE), LATCHED)
    # The node's lease-state subscription first: then the holder is there before the first goal's check.
    assert h.wait(lambda: lease.get_subscription_count() >= 1)
    lease.publish(LeaseState(holder="bt", timeout=1.0))
    checks = fake_lease_service(h.node, holder="bt", token=TOKEN)
    running = h.send_accepted(h.goal((0.35, -0.15, 0.0), speed_scale=0.3, client_id="bt", lease_token=TOKEN))
    assert checks == [("bt", True)]  # the holder's token was checked with the generator's lease service
    for intruder in ("", "someone_else"):
        assert not h.send(h.goal((0.3, 0.1, 0.05), client_id=intruder, lease_token=TOKEN)).accepted
    intruder_refused = "rejected MoveCartesian goal from 'someone_else': the arm lease is held by 'bt'"
    assert h.wait(lambda: intruder_refused in h.stderr()), h.stderr()
    # Issue 13.5: the holder's client id without its token (none, the id itself, a near miss).
    for spoofed in ("", "bt", TOKEN[:-1]):
        assert not h.send(h.goal((0.3, 0.1, 0.05), client_id="bt", lease_token=spoofed)).accepted
    spoof_refused = "rejected MoveCartesian goal from 'bt': its lease token is not the holder's"
    assert h.wait(lambda: spoof_refused in h.stderr()), h.stderr()
    assert checks == [("bt", True), ("bt", False), ("bt", False)]  # an empty token is refused at once
    # Nor may anyone redirect the holder's running goal without its token.
    for spoofed in ("", "bt", TOKEN[:-1]):
        reply = h.retarget((0.34, -0.15, 0.0), lease_token=spoofed)
        assert not reply.success and reply.status == INVALID_REQUEST and "lease_token" in reply.message
    reply = h.retarget((0.34, -0.15, 0.0), lease_token=TOKEN)
    assert reply.success, reply.message
    result = h.result(running)  # the holder's goal ran to its end, not "preempted by a new goal"
    assert result.result.success, result.result.message
    assert {m.header.frame_id for m in h.arm.targets} == {TOKEN} and TOKEN not in h.stderr()
    lease.publish(LeaseState(holder="", timeout=1.0))  # released: anyone may move the arm again
    h.send_accepted(h.goal((0.3, 0.1, 0.05), client_id="someone_else"))


def test_a_goal_sent_while_the_lease_was_free_ends_once_the_lease_is_held(start_node):
    """Its targets carry no token, which the generator refuses once someone holds the lease. Before, such a
    goal ran on: over real processes three "resuming ... (a pause over its stream_timeout?)" warnings
    and a "timeout" abort 10.8 s later, none saying why."""
    from action_msgs.msg import GoalStatus

    from salamander_control.ros.qos import LATCHED
    from salamander_msgs.msg import LeaseState

    h = start_node()
    lease = h.node.create_publisher(LeaseState, names.absolute(names.LEASE_STATE), LATCHED)
    assert h.wait(lambda: lease.get_subscription_count() >= 1)
    lease.publish(LeaseState(holder="", timeout=1.0))
    # A slow goal without a token, accepted while the lease was free (a race the lease-token test met).
    running = h.send_accepted(h.goal((0.35, -0.15, 0.0), speed_scale=0.1, client_id="jog"))
    lease.publish(LeaseState(holder="bt", timeout=1.0))  # then someone takes the lease
    started = time.monotonic()
    res = h.result(running)
    assert time.monotonic() - started < 1.0, res.result.message
    taken = "the arm lease was taken by 'bt' while this goal of 'jog', sent without a lease token, ran"
    assert res.status == GoalStatus.STATUS_ABORTED and not res.result.success, res.result.message
    assert taken in res.result.message and "it brakes the arm along the line" in res.result.message
    assert h.wait(lambda: f"MoveCartesian goal aborted: {taken}" in h.stderr()), h.stderr()  # may follow it
    reply = h.retarget((0.34, -0.15, 0.0), lease_token=TOKEN)  # nothing left to redirect
    assert not reply.success and reply.status == INVALID_REQUEST
    assert TOKEN not in h.stderr()
