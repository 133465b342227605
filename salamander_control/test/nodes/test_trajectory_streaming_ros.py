"""A linear MoveCartesian goal through the real stack: the measured TCP stays on the straight line.

sim_hardware + trajectory_generator + arm_cartesian_motion_node run as processes from their launch files
in a domain of their own. The test holds the arm lease as the behaviour tree would (acquire with the
goal's client_id; goals and heartbeats carry ACQUIRE's token), moves the arm above a box compartment,
then sends the place descent as a linear goal and records /joint_states (the simulated motors, which lag
the command by their 50 ms time constant). The compartment leaves the can 1.95 mm per side: the FK of
every measured state must stay within 1.5 mm of the line, and the physical-stop counter at 0.
"""

from __future__ import annotations

import re
import signal

import numpy as np
import pytest
from geometry_msgs.msg import Point
from rclpy.action import ActionClient
from sensor_msgs.msg import JointState
from std_msgs.msg import UInt64

from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES, forward_kinematics
from salamander_control.ros.qos import LATCHED
from salamander_msgs.action import MoveCartesian
from salamander_msgs.srv import ArmLease
from salamander_testing.config_files import launch_param_files
from salamander_testing.line_metrics import line_deviation
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

TIMEOUT = 25.0
CLIENT = "bt-streaming-test"
NEWEST = re.compile(r"timeout: no streamed goal.*back to its newest sample \[([-\d., ]+)\]")
PAUSED = re.compile(r"no \S*joint_states for [\d.]+ s: holding")
REANCHORED = re.compile(r"re-anchored at the (measured state|last command) \[([-\d., ]+)\]")
ABOVE, RELEASE = (0.38, -0.18, 0.063), (0.38, -0.18, -0.057)  # compartment 1 (config/cell.yaml)
STALL_S = 4.5
"""s the stalled sender stays stopped after the generator's stream timeout: it is stopped 30 % down a
descent at speed 0.1, ~1.2 s before its plan ends, so this outlasts the end by more than settle_timeout_s."""
pytestmark = pytest.mark.ros


class Cell(RosPeer):
    """The test's side: lease holder, MoveCartesian client, /joint_states and stop-counter recorders."""

    def __init__(self, domain: int, procs: list[NodeProcess]) -> None:
        self.procs = procs
        generator = names.absolute(names.TRAJECTORY_GENERATOR)
        super().__init__(domain, "streaming_test", generator, self.describe_procs, TIMEOUT)
        self.states: list[tuple[float, ...]] = []
        self.stop_hits: int | None = None
        at = names.absolute  # the default launch's names (the test node lives at /)
        self.node.create_subscription(JointState, at(names.JOINT_STATES), self._on_state, 200)
        self.node.create_subscription(UInt64, at(names.SIM_STOP_HITS), self._on_hits, LATCHED)
        self.commands = 0
        command = at(names.JOINT_COMMAND)
        self._cmd_sub = self.node.create_subscription(JointState, command, self._on_command, 10)
        self.lease = self.node.create_client(ArmLease, at(names.LEASE_SERVICE))
        self.action = ActionClient(self.node, MoveCartesian, at(names.MOVE_CARTESIAN))

    def _on_state(self, msg: JointState) -> None:
        by_name = dict(zip(msg.name, msg.position, strict=True))
        self.states.append(tuple(by_name[n] for n in JOINT_NAMES))

    def _on_command(self, msg: JointState) -> None:
        self.commands += 1

    def wait_ready(self) -> None:
        """The generator commands (it started from /joint_states: goals count from now on)."""
        self.wait(lambda: self.commands > 0 and self.stop_hits is not None, "the first command, stop_hits")
        self.node.destroy_subscription(self._cmd_sub)  # 500 Hz: not needed any further

    def _on_hits(self, msg: UInt64) -> None:
        self.stop_hits = msg.data

    def describe_procs(self) -> str:
        return "\n".join(p.describe() for p in self.procs)

    def hold_lease(self) -> None:
        self.wait(self.lease.service_is_ready, "the lease service")
        # 3 s, not the tree's 1 s: these tests stall a node on purpose, and a whole-suite run once starved
        # the machine for ~1 s in that window (no /joint_states for 0.5 s): the test's own lease expired
        # and the generator refused the resumed descent, which is not what the tests are about.
        request = ArmLease.Request(operation=ArmLease.Request.ACQUIRE, client_id=CLIENT, timeout=3.0)
        future = self.lease.call_async(request)
        self.wait(future.done, "the lease answer")
        assert future.result().success, future.result().message
        self.token = future.result().token  # goals and heartbeats carry it
        beat = ArmLease.Request(operation=ArmLease.Request.HEARTBEAT, client_id=CLIENT, token=self.token)
        self.node.create_timer(0.2, lambda: self.lease.call_async(beat))

    def move(self, tcp: tuple[float, float, float], path: str) -> MoveCartesian.Result:
        goal = MoveCartesian.Goal(
            tcp=Point(x=tcp[0], y=tcp[1], z=tcp[2]), tool_pitch=0.0, tool_yaw=0.0, path=path,
            speed_scale=1.0, client_id=CLIENT, lease_token=self.token,
        )
        self.wait(lambda: self.action.server_is_ready(), "the MoveCartesian server")
        for _ in range(100):  # refused until the node has a /joint_states (it starts with the others)
            sent = self.action.send_goal_async(goal)
            self.wait(sent.done, "the goal response")
            if sent.result().accepted:
                break
            self.spin_until(lambda: False, 0.1)
        assert sent.result().accepted, self.describe_procs()
        result = sent.result().get_result_async()
        self.wait(result.done, f"the {path} goal to {tcp} to end")
        return result.result().result

    def move_above_and_settle(self) -> None:
        """A joint goal above compartment 1, then wait until the measured arm has settled there.

        The goal ends as the generator's command comes to rest, the measured arm up to 3 mm behind (the
        motors' lag); these tests judge the descent's line from a settled start.
        """
        above = self.move(ABOVE, "joint")
        assert above.success, above.message
        self.wait(lambda: np.linalg.norm(forward_kinematics(self.states[-1]).tcp - np.array(ABOVE)) < 1e-4,
                  "the measured arm settled above compartment 1")  # fmt: skip

    def progress(self, start: np.ndarray, axis: np.ndarray) -> float:
        """How far (m) the newest measured TCP has come from `start` along the unit `axis`."""
        return float((np.array(forward_kinematics(self.states[-1]).tcp) - start) @ axis)

    def wait_down(self, start: np.ndarray, axis: np.ndarray, share: float) -> None:
        """Wait until the measured TCP is `share` of the way from `start` down the descent to RELEASE."""
        length = float(np.linalg.norm(np.array(RELEASE) - start))
        what = f"the arm {share:.0%} down the descent"
        self.wait(lambda: self.progress(start, axis) > share * length, what)

    def start_descent(self, speed_scale: float = 0.5):
        """Hold the lease, move above compartment 1, send the linear place descent (accepted).

        A test that stops the sender mid-way descends slowly (0.1): the node sends a line's last 0.2 s
        before its deceleration and the deceleration whole (`cartesian.plan.TAIL_LEAD_S`), from 10 % of
        this descent at 0.5 but 68 % at 0.1; a sender stopped after that changes nothing.

        Returns (the TCP it starts from, the unit axis along the descent, the goal handle, the number of
        /joint_states recorded before the descent was sent).
        """
        self.hold_lease()
        self.move_above_and_settle()
        start, end = np.array(forward_kinematics(self.states[-1]).tcp), np.array(RELEASE)
        first = len(self.states)
        goal = MoveCartesian.Goal(
            tcp=Point(x=RELEASE[0], y=RELEASE[1], z=RELEASE[2]), tool_pitch=0.0, tool_yaw=0.0,
            path="linear", speed_scale=speed_scale, client_id=CLIENT, lease_token=self.token,
        )
        sent = self.action.send_goal_async(goal)
        self.wait(sent.done, "the descent goal's response")
        assert sent.result().accepted
        return start, (end - start) / np.linalg.norm(end - start), sent.result(), first


@pytest.fixture
def cell(tmp_path):
    domain = next_domain_id()
    procs = [  # each with the parameter files the launch file gives it
        NodeProcess("sim_hardware", names.SIM_HARDWARE, domain, tmp_path,
                    params_file=launch_param_files("sim_hardware")),
        NodeProcess("trajectory_generator", names.TRAJECTORY_GENERATOR, domain, tmp_path,
                    params_file=launch_param_files("trajectory_generator")),
        NodeProcess("arm_cartesian_motion_node", names.CARTESIAN_MOTION_NODE, domain, tmp_path,
                    params_file=launch_param_files("arm_cartesian_motion_node")),
    ]
    system = Cell(domain, procs)
    try:
        yield system
    finally:
        system.close()
        for proc in procs:
            proc.stop()
        print("\n".join(p.describe() for p in procs))  # shown when the test failed


def test_the_place_descent_keeps_the_measured_tcp_on_the_line(cell) -> None:
    cell.wait_ready()
    cell.hold_lease()
    cell.move_above_and_settle()
    start = np.array(forward_kinematics(cell.states[-1]).tcp)
    first = len(cell.states)
    release = cell.move(RELEASE, "linear")
    assert release.success, release.message
    descent = np.array([forward_kinematics(q).tcp for q in cell.states[first:]])
    deviation = line_deviation(descent, start, np.array(RELEASE))
    print(f"measured TCP deviation from the descent line: {deviation * 1e3:.3f} mm ({len(descent)} states)")
    assert deviation <= 1.5e-3
    assert np.linalg.norm(descent[-1] - np.array(RELEASE)) < 1e-3
    assert cell.stop_hits == 0
    fallbacks = [line for line in cell.procs[1].text().splitlines() if "streamed goals" in line]
    print(f"stream fallbacks to point-to-point: {fallbacks or 'none'}")  # rare under load; see report


def test_killing_the_cartesian_node_mid_descent_brakes_on_the_line_and_rests_at_its_last_target(cell) -> None:
    """Issue 13 item 2 over real processes: SIGKILL of the sender while the descent streams.

    The generator's stream timeout brakes the TCP along the streamed line (`trajectory.line_brake`) and
    brings it back to the newest streamed target: every measured state (FK) stays within 1 mm of the
    line (transport and motor lag included), the arm rests at the newest sample the generator got (its
    log line names it; it lies on the line and is no older than the last target the test recorded), and
    it does not pass the descent's end (at speed the brake passes the newest target, since the stop is
    noticed stream_timeout_s after it, but before the line's tail the plan leaves it room before the end,
    and within the tail the generator holds the rest of the line:
    salamander_control/test/trajectory/test_stream_stop_on_path.py).
    """
    targets: list[tuple[float, ...]] = []

    def on_target(msg: JointState) -> None:
        by_name = dict(zip(msg.name, msg.position, strict=True))
        targets.append(tuple(by_name[n] for n in JOINT_NAMES))

    cell.node.create_subscription(JointState, names.absolute(names.JOINT_TARGET), on_target, 200)
    cell.wait_ready()
    start, axis, _, first = cell.start_descent(speed_scale=0.1)
    streamed, end = len(targets), np.array(RELEASE)

    cell.wait_down(start, axis, 0.4)
    cartesian, generator = cell.procs[2], cell.procs[1]
    mark = len(generator.lines)

    def after_kill() -> str:
        return "\n".join(generator.lines[mark:])

    cartesian.send_signal(signal.SIGKILL)
    killed_at = cell.progress(start, axis)
    # Spinning waits: the lease's heartbeat timer runs only while the test spins.
    cell.wait(lambda: not cartesian.alive(), "the Cartesian node gone")
    cell.wait(lambda: NEWEST.search(after_kill()) is not None, "the generator's stream timeout")

    def at_rest() -> bool:
        recent = cell.states[-40:]
        return len(recent) == 40 and np.max(np.ptp(np.array(recent), axis=0)) < 1e-7

    cell.wait(at_rest, "the arm at rest after the kill")
    assert len(targets) > streamed
    descent = np.array([forward_kinematics(q).tcp for q in cell.states[first:]])
    deviation = line_deviation(descent, start, end)
    along = (descent - start) @ axis
    # The newest sample the generator had, as it logged it (the test's own recording of the targets may
    # lag or miss the last ones on a loaded machine: it only bounds it from below).
    log = after_kill()  # the generator's lines since the kill, the arm at rest

    def logged_tcp(joints: str) -> np.ndarray:
        """The TCP of joints as a log line gives them ("-0.4424, 0.6745, ...")."""
        return np.array(forward_kinematics([float(v) for v in joints.split(", ")]).tcp)

    newest = logged_tcp(NEWEST.search(log).group(1))
    newest_along = float((newest - start) @ axis)
    recorded_along = float((np.array(forward_kinematics(targets[-1]).tcp) - start) @ axis)
    one_sample = recorded_along - float((np.array(forward_kinematics(targets[-2]).tcp) - start) @ axis)
    rest_error = float(np.linalg.norm(descent[-1] - newest))
    beyond_end = max(float(np.max(along)) - float(np.linalg.norm(end - start)), 0.0)
    events = [line for line in log.splitlines() if "streamed goals" in line]
    print(
        f"killed at {killed_at * 1e3:.1f} mm; the generator's newest sample at {newest_along * 1e3:.1f} mm "
        f"(the test's last recorded target at {recorded_along * 1e3:.1f} mm); max measured "
        f"{float(np.max(along)) * 1e3:.1f} mm (past the newest sample by "
        f"{(float(np.max(along)) - newest_along) * 1e3:.1f} mm, beyond the end by {beyond_end * 1e3:.2f} "
        f"mm); "
        f"measured TCP deviation from the line {deviation * 1e3:.3f} mm; rest {rest_error * 1e3:.3f} mm from "
        f"the newest sample\n" + "\n".join(events)
    )
    assert any("its TCP line" in line for line in events), events
    assert deviation < 1e-3
    assert line_deviation(newest[None, :], start, end) < 0.5e-3  # the newest sample is on the line
    # ... and no older than what the test saw streamed, less one sample: a SIGKILL can cut a publish
    # between its readers, so the test may hold the newest sample and the generator not (seen once: the
    # test's 1.0 mm past the generator's, one 10 ms sample of the descent at 0.1 m/s).
    assert newest_along >= recorded_along - one_sample - 0.5e-3
    # At rest on the line at the newest sample (the brake returns along the line to it; 4 decimals of rad
    # in the log line are ~0.1 mm at the TCP). If /joint_states paused during the brake (a starved
    # machine: a CI run once stalled the simulated driver ~1 s there), the generator stopped commanding and
    # re-anchored when the measurement came back (`MeasurementWatch`, tested on its own): at its last
    # command, the brake going on to the newest sample, or, where the measurement disagreed with it, at
    # the measured state, the goal dropped: the arm must rest there, still on the line.
    rest_at = "the newest sample"
    anchors = REANCHORED.findall(log)
    if PAUSED.search(log) and anchors and anchors[-1][0] == "measured state":
        anchor = logged_tcp(anchors[-1][1])
        rest_at, rest_error = "the re-anchored measured state", float(np.linalg.norm(descent[-1] - anchor))
    print(f"rest {rest_error * 1e3:.3f} mm from {rest_at}")
    assert rest_error < 1e-3
    assert beyond_end < 1e-3  # before the plans' gentle deceleration: 7 mm measured here
    assert cell.stop_hits == 0


def test_a_cartesian_node_stalled_past_the_stream_timeout_resumes_and_ends_its_descent_on_the_line(
    cell,
) -> None:
    """A sender that only stalls (SIGSTOP, as a starved process does) past the generator's stream_timeout.

    The generator brakes along the line and ignores the rest of that stream; once the node runs again,
    its goal sees the arm stand short of the target after its plan and resumes from there: the descent
    succeeds, every measured state stays on the line, the node says it resumed. (Before, the goal aborted
    after its settle timeout, and the tree aborted the can it carried: seen in a CI run under load.)

    The stall (`STALL_S`) outlasts the plan's end by more than the settle timeout (3 s): the time the node
    did not run does not count toward it. (Before, the goal aborted in the cycle the node ran again, on
    a CI run whose test process was itself slow to send SIGCONT: "timeout: trajectory finished but no
    valid joint state after 3.0 s".)
    """
    cell.wait_ready()
    start, axis, handle, first = cell.start_descent(speed_scale=0.1)
    end = np.array(RELEASE)
    result = handle.get_result_async()

    cell.wait_down(start, axis, 0.3)
    cartesian, generator = cell.procs[2], cell.procs[1]
    mark = len(generator.lines)
    cartesian.send_signal(signal.SIGSTOP)
    try:
        cell.wait(lambda: any("timeout: no streamed goal" in line for line in generator.lines[mark:]),
                  "the generator's stream timeout")  # fmt: skip
        cell.spin_until(lambda: False, STALL_S)  # the stall itself (the test's lease heartbeats go on)
    finally:
        cartesian.send_signal(signal.SIGCONT)
    cell.wait(result.done, "the descent's result")
    outcome = result.result().result
    assert outcome.success, outcome.message
    assert cartesian.wait_for_text("resuming along a new line", timeout=TIMEOUT), cartesian.describe()
    descent = np.array([forward_kinematics(q).tcp for q in cell.states[first:]])
    deviation = line_deviation(descent, start, end)
    print(f"stalled past the stream timeout: measured TCP deviation from the line {deviation * 1e3:.3f} mm; "
          f"ended {np.linalg.norm(descent[-1] - end) * 1e3:.2f} mm from the target")  # fmt: skip
    assert deviation < 1e-3
    assert cell.stop_hits == 0



def test_a_joint_goal_bent_out_of_a_line_inside_its_tail_is_taken_at_once(cell) -> None:
    """The lift and the rise hand on to a joint goal before their ends, often after the Cartesian node has
    sent their final deceleration ahead (`cartesian.plan.TAIL_LEAD_S`): the joint goal's target must be
    stamped after that tail's last sample. Stamped at its own cycle, the generator dropped it as stale
    ("older than the last accepted goal") and the arm stood until the node sent it again a second later
    (every lift and rise of a placement benchmark run, before the fix)."""
    cell.wait_ready()
    start, axis, handle, _ = cell.start_descent()
    result = handle.get_result_async()

    # At 0.5 the tail goes out 10 % down the line (`start_descent`): half way, it is pending.
    cell.wait_down(start, axis, 0.5)
    generator, cartesian = cell.procs[1], cell.procs[2]
    marks = len(generator.lines), len(cartesian.lines)
    back = cell.move(ABOVE, "joint")
    assert back.success, back.message
    cell.wait(result.done, "the descent's result")
    assert "preempted" in result.result().result.message
    dropped = [line for line in generator.lines[marks[0]:] if "stale goal dropped" in line]
    again = [line for line in cartesian.lines[marks[1]:] if "sending it again" in line]
    assert not dropped and not again, (dropped, again)
