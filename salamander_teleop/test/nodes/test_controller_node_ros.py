"""The real controller_node and gamepad_node processes, driven over real topics in a domain of their own.

A probe node plays joy_node (Joy at 20 Hz autorepeat, stamped) and the arm (the measured joints at rest on
/arm/joint_states_monitor, which the trajectory generator republishes from /joint_states), and
watches /arm/joint_target, /salamander/operator/jog, /salamander/operator/confirm and the mode topic.
The controller is started with its launch files (config/arm.yaml, config/teleop.yaml), so the shipped
files are what is tested. The last test runs the chain controller_node -> trajectory_generator ->
sim_hardware: the anonymous jog moves the simulated arm only while nobody holds the arm lease.
"""

from __future__ import annotations

import math
import random

import pytest

from salamander_testing import REPO as REPO_ROOT
from salamander_testing.config_files import launch_param_files

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import Twist  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState, Joy  # noqa: E402
from std_msgs.msg import Bool, String  # noqa: E402

from salamander_control import names  # noqa: E402
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE, ArmParams, within_limits  # noqa: E402
from salamander_control.ros.qos import LATCHED  # noqa: E402
from salamander_msgs.srv import ArmLease  # noqa: E402
from salamander_testing.node_process import NodeProcess  # noqa: E402
from salamander_testing.ros_helpers import spin_until  # noqa: E402

REPO = REPO_ROOT
CONFIG = launch_param_files("controller_node")  # config/arm.yaml, then config/teleop.yaml
LY, DPAD_Y = 1, 7
CIRCLE, TRIANGLE, SQUARE, R1 = 1, 2, 3, 5
SHARE, OPTIONS = 8, 9
L1 = 4
TIMEOUT = 25.0


@pytest.fixture
def controller(ros_context, tmp_path):
    with NodeProcess("controller_node", names.CONTROLLER_NODE, ros_context.get_domain_id(), tmp_path,
                     params_file=CONFIG, ros_args=("--log-level", "info")) as proc:
        yield proc


class Probe:
    """joy_node + arm stand-in and observer, all in one test node."""

    def __init__(self, node, executor) -> None:
        self.node, self.executor = node, executor
        at = names.absolute  # the default launch's names (the probe lives at /)
        self.joy_pub = node.create_publisher(Joy, at(names.JOY), 10)
        self.js_pub = node.create_publisher(JointState, at(names.JOINT_STATES_MONITOR), 10)
        self.targets: list[JointState] = []
        self.jogs: list[Twist] = []
        self.confirms: list[bool] = []
        self.modes: list[str] = []
        node.create_subscription(JointState, at(names.JOINT_TARGET), self.targets.append, 100)
        node.create_subscription(Twist, at(names.OPERATOR_JOG), self.jogs.append, 100)
        confirm = at(names.OPERATOR_CONFIRM)
        node.create_subscription(Bool, confirm, lambda m: self.confirms.append(m.data), 100)
        node.create_subscription(String, at(names.TELEOP_MODE), lambda m: self.modes.append(m.data), LATCHED)
        self.axes, self.pressed = {}, ()
        self.streaming = True
        self.arm = True  # play the arm: /joint_states at rest (off when a simulated arm runs)
        self.joint_names, self.joint_positions = list(JOINT_NAMES), list(REST_POSTURE)
        node.create_timer(0.05, self._autorepeat)  # joy_node's default autorepeat_rate: 20 Hz
        node.create_timer(0.02, self._joint_states)

    def now(self):
        return self.node.get_clock().now()

    def joy(self, axes=None, pressed=(), age: float = 0.0, n_axes: int = 8) -> Joy:
        a = [0.0] * n_axes
        for i, v in (axes or {}).items():
            a[i] = v
        msg = Joy(axes=a, buttons=[1 if i in pressed else 0 for i in range(13)])
        msg.header.stamp = (self.now() - rclpy.duration.Duration(seconds=age)).to_msg()
        msg.header.frame_id = "joy"
        return msg

    def set(self, axes=None, pressed=()) -> None:
        """Change the simulated pad's state: published now and then at 20 Hz."""
        self.axes, self.pressed = dict(axes or {}), tuple(pressed)
        self.joy_pub.publish(self.joy(self.axes, self.pressed))

    def _autorepeat(self) -> None:
        if self.streaming:
            self.joy_pub.publish(self.joy(self.axes, self.pressed))

    def _joint_states(self) -> None:
        if self.arm:
            self.js_pub.publish(JointState(name=self.joint_names, position=self.joint_positions))

    def until(self, predicate, timeout: float = TIMEOUT) -> bool:
        return spin_until(self.executor, predicate, timeout)

    def watch(self, seconds: float) -> None:
        """Keep spinning for an observation window (to see that something does NOT happen)."""
        spin_until(self.executor, lambda: False, seconds)

    def quiet(self, received: list, window: float, timeout: float = TIMEOUT) -> bool:
        """True once `received` did not grow for `window` s (False if it never calms within `timeout`)."""
        for _ in range(int(timeout / window)):
            count = len(received)
            self.watch(window)
            if len(received) == count:
                return True
        return False

    def ready(self) -> bool:
        """The controller is up and reacts to button presses (handshake: TRIANGLE until rest comes).

        The first Joy a controller sees is a baseline, never a press, and DDS discovery may drop the
        first messages: so press until the controller demonstrably answered, then forget the answer.
        """
        if not self.until(lambda: self.modes and self.joy_pub.get_subscription_count() > 0):
            return False
        for _ in range(int(TIMEOUT / 0.2)):
            self.press(pressed=(TRIANGLE,))
            if self.targets:
                self.targets.clear()
                return True
        return False

    def press(self, button_axes=None, pressed=()) -> None:
        """Press and release (one press edge), each state held for two autorepeat periods."""
        self.set(button_axes, pressed)
        self.watch(0.1)
        self.set()
        self.watch(0.1)


@pytest.fixture
def probe(make_node, ros_executor):
    return Probe(make_node("teleop_probe"), ros_executor)


def test_sticks_jog_joints_inside_the_limits_and_triangle_sends_rest(controller, probe) -> None:
    assert probe.ready(), controller.text()
    assert probe.modes[-1] == "manual"
    probe.set({LY: 1.0})  # left stick up: shoulder forward
    assert probe.until(lambda: len(probe.targets) >= 20), controller.text()
    for msg in probe.targets:
        assert list(msg.name) == list(JOINT_NAMES) and msg.header.frame_id == ""
        assert within_limits(msg.position, ArmParams())
    assert probe.targets[-1].position[1] > REST_POSTURE[1] + 0.01
    assert probe.targets[-1].position[1] <= REST_POSTURE[1] + 0.15 + 1e-9  # max_lead: the arm stays at rest
    probe.set()
    assert probe.quiet(probe.targets, 0.3)  # stick centred: the targets stop
    count = len(probe.targets)
    probe.press(pressed=(TRIANGLE,))
    assert probe.until(lambda: len(probe.targets) > count)
    assert list(probe.targets[-1].position) == pytest.approx(REST_POSTURE, abs=1e-12)


def test_joint_states_naming_a_joint_twice_are_refused_and_jog_nothing(controller, probe) -> None:
    assert probe.ready(), controller.text()
    # A second shoulder_pitch entry: refused as a whole, never "the last one wins".
    probe.joint_names, probe.joint_positions = [*JOINT_NAMES, "shoulder_pitch"], [*REST_POSTURE, 0.5]
    assert probe.until(lambda: "'shoulder_pitch' named twice" in controller.text()), controller.text()
    probe.set({LY: 1.0})  # hold a jog until the last good measurement is too old to jog from
    assert probe.until(lambda: "joint jog needs the measured joints" in controller.text()), controller.text()
    # The targets stop and stay stopped: the refused joint states never count as a measurement. (A target
    # sent just before the stop may still arrive after the log line; a jog that went on would never calm.)
    assert probe.quiet(probe.targets, 0.5), controller.text()


def test_auto_mode_place_jog_zero_on_release_and_one_confirm_per_press(controller, probe) -> None:
    assert probe.ready(), controller.text()
    probe.press({DPAD_Y: -1.0})
    assert probe.until(lambda: probe.modes[-1] == "auto"), controller.text()
    probe.set({LY: 1.0}, (R1,))
    assert probe.until(lambda: len(probe.jogs) >= 10)
    assert all(j.linear.x == pytest.approx(0.05) and j.linear.y == 0.0 for j in probe.jogs)
    probe.set({LY: 1.0})  # R1 released, stick still up
    assert probe.until(lambda: probe.jogs[-1].linear.x == 0.0)
    released_at = len(probe.jogs)
    probe.watch(0.4)
    assert len(probe.jogs) == released_at  # exactly one zero twist, nothing after it
    probe.set(pressed=(SQUARE,))  # held for many autorepeat Joys
    assert probe.until(lambda: probe.confirms)
    probe.watch(0.5)
    assert probe.confirms == [True]
    probe.set()
    probe.press(pressed=(CIRCLE,))
    assert probe.until(lambda: len(probe.confirms) == 2)
    assert probe.confirms == [True, False]
    probe.press({DPAD_Y: 1.0})
    assert probe.until(lambda: probe.modes[-1] == "manual")


def test_options_in_auto_mode_sends_a_run_goal_and_share_cancels_it(controller, probe) -> None:
    """A stand-in behaviour server (RunPickPlace) in the probe's node: OPTIONS starts, SHARE cancels."""
    from rclpy.action import ActionServer, CancelResponse
    from rclpy.task import Future

    from salamander_msgs.action import RunPickPlace

    goals, cancels = [], []
    cancelled = Future()

    async def execute(handle):
        goals.append(list(handle.request.cans))
        await cancelled  # a run: until cancelled (yields to the executor meanwhile)
        handle.canceled()
        return RunPickPlace.Result(success=False, message="cancelled", cans=["can_0"], outcomes=["aborted"])

    def on_cancel(_handle):
        cancels.append(True)
        cancelled.set_result(None)
        return CancelResponse.ACCEPT

    ActionServer(probe.node, RunPickPlace, names.absolute(names.RUN_PICK_PLACE), execute_callback=execute,
                 cancel_callback=on_cancel)  # fmt: skip
    assert probe.ready(), controller.text()
    probe.press(pressed=(OPTIONS,))  # manual mode: refused with the reason, no goal
    assert probe.until(lambda: "starts a run in auto mode only" in controller.text()), controller.text()
    probe.press({DPAD_Y: -1.0})
    assert probe.until(lambda: probe.modes[-1] == "auto"), controller.text()
    probe.press(pressed=(OPTIONS,))
    assert probe.until(lambda: goals == [[]]), controller.text()  # every can not yet placed
    assert probe.until(lambda: "run_start: goal accepted" in controller.text()), controller.text()
    probe.press(pressed=(SHARE,))
    assert probe.until(lambda: cancels == [True]), controller.text()
    assert probe.until(lambda: "run ended: aborted: cancelled" in controller.text()), controller.text()
    assert goals == [[]]


def test_l1_calls_the_behaviour_servers_new_box_and_logs_its_answer(controller, probe) -> None:
    """A stand-in new_box service in the probe's node: L1 calls it once per press, in manual mode too."""
    from std_srvs.srv import Trigger

    calls = []

    def answer(request, response):
        calls.append(request)
        response.success, response.message = True, "new box: the box estimate is reset"
        return response

    probe.node.create_service(Trigger, names.absolute(names.NEW_BOX), answer)
    assert probe.ready(), controller.text()
    probe.press(pressed=(L1,))
    assert probe.until(lambda: len(calls) == 1), controller.text()
    assert probe.until(lambda: "new_box: new box: the box estimate is reset" in controller.text()), (
        controller.text()
    )
    probe.watch(0.3)
    assert len(calls) == 1


def test_stale_or_malformed_joys_do_nothing_and_a_dead_stream_stops_the_jog(controller, probe) -> None:
    assert probe.ready(), controller.text()
    probe.press({DPAD_Y: -1.0})
    assert probe.until(lambda: probe.modes[-1] == "auto")
    probe.streaming = False
    probe.joy_pub.publish(probe.joy({LY: 1.0}, (R1,), age=2.0))  # stale
    probe.joy_pub.publish(probe.joy({LY: 1.0}, (R1,), n_axes=4))  # too few axes for the mapping
    nan = probe.joy({LY: 1.0}, (R1,))
    nan.axes[0] = float("nan")
    probe.joy_pub.publish(nan)
    probe.watch(0.5)
    assert probe.jogs == []
    assert probe.until(lambda: "stale" in controller.text() and "axes" in controller.text(), 5.0)
    probe.streaming = True
    probe.set({LY: -1.0}, (R1,))
    assert probe.until(lambda: len(probe.jogs) >= 5)
    assert probe.jogs[-1].linear.x == pytest.approx(-0.05)
    probe.streaming = False  # the pad dies with R1 and the stick held
    assert probe.until(lambda: probe.jogs[-1].linear.x == 0.0, 5.0)
    count = len(probe.jogs)
    probe.watch(0.3)
    assert len(probe.jogs) == count
    assert probe.until(lambda: "jog stopped" in controller.text(), 5.0), controller.text()


FUZZ = 300
"""Joys of the fuzz below (issue 13, item 11: after a long Joy fuzz a clean DPAD_DOWN did nothing)."""


def fuzz_joy(rng: random.Random, now) -> Joy:
    """A Joy as a broken or hostile driver might send it: any length, NaN, inf, huge, any stamp."""
    values = [0.0, 1.0, -1.0, 0.5, 3.0e38, -3.0e38, math.nan, math.inf, -math.inf]
    n_axes = rng.choice([8, 8, 8, 0, 3, 7, 12])
    axes = [rng.choice(values) if rng.random() < 0.3 else rng.uniform(-1.5, 1.5) for _ in range(n_axes)]
    n_buttons = rng.choice([13, 13, 13, 0, 5, 9, 20])
    buttons = [rng.choice([0, 1, -1, 2**31 - 1, -(2**31)]) for _ in range(n_buttons)]
    msg = Joy(axes=axes, buttons=buttons)
    sec, nanosec = now.seconds_nanoseconds()
    msg.header.stamp.sec, msg.header.stamp.nanosec = rng.choice([
        (sec, nanosec),  # now
        (sec, min(nanosec + rng.randrange(150_000_000), 999_999_999)),  # a little ahead (clock skew)
        (sec - 1, nanosec),  # stale
        (sec + 100, nanosec),  # far ahead
        (-5, 0),  # negative: rclpy's Time refuses it with an exception
        (-(2**31), 0),
        (0, 0),  # not stamped
        (2**31 - 1, 2**32 - 1),
    ])
    return msg


def test_after_a_joy_fuzz_the_controller_still_switches_modes(controller, probe) -> None:
    assert probe.ready(), controller.text()
    probe.streaming = False
    rng = random.Random(13)
    for _ in range(FUZZ):
        probe.joy_pub.publish(fuzz_joy(rng, probe.now()))
        probe.watch(0.002)
    # A clean neutral stream first (a press needs a fresh baseline: the last accepted fuzz Joy may be
    # older than joy_timeout_s on a loaded machine), then a clean DPAD_UP and a clean DPAD_DOWN: each
    # switches (the fuzz may have left either mode).
    probe.set()
    probe.streaming = True
    probe.watch(0.2)
    probe.press({DPAD_Y: 1.0})
    assert probe.until(lambda: probe.modes[-1] == "manual"), controller.text()
    probe.press({DPAD_Y: -1.0})
    assert probe.until(lambda: probe.modes[-1] == "auto"), controller.text()
    assert controller.alive(), controller.text()
    print(f"{FUZZ} fuzzed Joys, then DPAD_UP -> manual, DPAD_DOWN -> auto")


def test_bindings_are_live_parameters_and_bad_ones_are_refused(controller, probe) -> None:
    assert probe.ready(), controller.text()
    target = names.absolute(names.CONTROLLER_NODE)
    client = probe.node.create_client(SetParameters, f"{target}/set_parameters")
    assert client.wait_for_service(timeout_sec=TIMEOUT)

    def set_param(name, value):
        request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        future = client.call_async(request)
        assert probe.until(future.done)
        return future.result().results[0]

    refused = set_param("place_jog.speed", 0.2)
    assert not refused.successful and "0.05" in refused.reason
    refused = set_param("joy_timeout_s", 10.0)  # the dead-pad watchdog cannot be switched off
    assert not refused.successful and "0.5" in refused.reason
    refused = set_param("confirm", "axis 1-")
    assert not refused.successful and "also jogs" in refused.reason
    refused = set_param("confirm", "square")
    assert not refused.successful and "not a control" in refused.reason
    assert set_param("place_jog.speed", 0.02).successful
    refused = set_param("place_jog.enable", "button 4")  # L1 says a new box is in
    assert not refused.successful and "both bound" in refused.reason
    assert set_param("place_jog.enable", "button 0").successful  # CROSS as the deadman now
    probe.press({DPAD_Y: -1.0})
    assert probe.until(lambda: probe.modes[-1] == "auto")
    probe.set({LY: 1.0}, (R1,))
    probe.watch(0.3)
    assert probe.jogs == []  # R1 no longer enables
    probe.set({LY: 1.0}, (0,))
    assert probe.until(lambda: probe.jogs)
    assert probe.jogs[-1].linear.x == pytest.approx(0.02)


def test_gamepad_node_without_a_pad_keeps_running_and_says_so(ros_context, probe, tmp_path) -> None:
    received: list[Joy] = []
    probe.node.create_subscription(Joy, names.absolute(names.JOY), received.append, 10)
    probe.streaming = False
    proc = NodeProcess("gamepad_node", names.GAMEPAD_NODE, ros_context.get_domain_id(), tmp_path,
                       {"device": "/dev/input/event99", "retry_period_s": 0.2})
    try:
        assert probe.until(lambda: "retrying every 0.2 s" in proc.text(), TIMEOUT), proc.text()
        probe.watch(1.0)  # several retries
        assert proc.alive(), proc.text()
        assert proc.text().count("no gamepad") == 1  # one line per outage, not per attempt
        assert received == []
        # No autorepeat (or one slower than the controller's joy_timeout_s) made every press a baseline:
        # confirm, abort and cancel did nothing, without a word. Refused now.
        service = f"{names.absolute(names.GAMEPAD_NODE)}/set_parameters"
        client = probe.node.create_client(SetParameters, service)
        assert client.wait_for_service(timeout_sec=TIMEOUT)
        no_repeat = Parameter("autorepeat_rate_hz", value=0.0).to_parameter_msg()
        request = SetParameters.Request(parameters=[no_repeat])
        future = client.call_async(request)
        assert probe.until(future.done)
        refused = future.result().results[0]
        assert not refused.successful and "10.0" in refused.reason, refused
    finally:
        code = proc.stop()
        print(proc.describe())  # shown by pytest on failure
    assert code == 0


def test_jog_moves_the_simulated_arm_only_while_nobody_holds_the_lease(ros_context, probe, tmp_path) -> None:
    """controller_node -> trajectory_generator -> sim_hardware: the anonymous jog obeys the arm lease."""
    domain = ros_context.get_domain_id()
    procs = [
        NodeProcess("sim_hardware", names.SIM_HARDWARE, domain, tmp_path,
                    params_file=launch_param_files("sim_hardware")),
        NodeProcess("trajectory_generator", names.TRAJECTORY_GENERATOR, domain, tmp_path,
                    params_file=launch_param_files("trajectory_generator")),
        NodeProcess("controller_node", names.CONTROLLER_NODE, domain, tmp_path, params_file=CONFIG),
    ]
    probe.arm = False
    measured: list[JointState] = []
    probe.node.create_subscription(JointState, names.absolute(names.JOINT_STATES), measured.append, 10)
    lease = probe.node.create_client(ArmLease, names.absolute(names.LEASE_SERVICE))

    tokens = [""]  # the token of the test's lease (ACQUIRE's answer), sent back with RELEASE

    def call_lease(operation: int) -> ArmLease.Response:
        request = ArmLease.Request(operation=operation, client_id="bt", timeout=30.0, token=tokens[-1])
        future = lease.call_async(request)
        assert probe.until(future.done)
        tokens.append(future.result().token or tokens[-1])
        return future.result()

    def shoulder() -> float:
        return measured[-1].position[list(measured[-1].name).index("shoulder_pitch")]

    try:
        assert probe.until(lambda: len(measured) > 5) and probe.ready(), procs[2].text()
        assert lease.wait_for_service(timeout_sec=TIMEOUT)
        start = shoulder()
        assert start == pytest.approx(REST_POSTURE[1], abs=1e-3)
        assert call_lease(ArmLease.Request.ACQUIRE).success  # the behaviour tree holds the arm
        probe.targets.clear()
        probe.set({LY: 1.0})
        assert probe.until(lambda: len(probe.targets) >= 25)  # published, but anonymous: refused
        assert shoulder() == pytest.approx(start, abs=1e-3)
        probe.set()
        assert call_lease(ArmLease.Request.RELEASE).success
        probe.watch(0.1)
        probe.set({LY: 1.0})
        assert probe.until(lambda: shoulder() > start + 0.1), procs[1].text()
        probe.set()
        assert probe.until(lambda: len(measured) > 2 and measured[-1].velocity
                           and max(abs(v) for v in measured[-1].velocity) < 1e-3)
        assert start + 0.1 < shoulder() < start + 0.15 + 0.3 * 2  # moved, stayed near the jogged target
        assert within_limits([measured[-1].position[list(measured[-1].name).index(n)] for n in JOINT_NAMES],
                             ArmParams())
    finally:
        for proc in procs:
            proc.stop()
            print(proc.describe())  # shown by pytest on failure
