"""Every subscription of every node survives every extreme field value its type admits (issue 23.1).

The whole stack (every node launch/arm_control.launch.xml can start, the optional ones too, with
`run_on_start` off) runs under the project's runner. The test holds the arm lease, as the behaviour tree
does during a run, so that nothing but the test could move the arm; it reads from the ROS graph which
topics the stack's nodes subscribe (hidden helper nodes too: the polled /joint_states), so a new
subscription is fuzzed without a change here. On each topic it publishes every variant of
`salamander_testing.message_fuzz` (one field at a time at an extreme value: stamps with a negative or the
largest `sec` and a `nanosec` past 999999999, NaN, +-inf, the largest floats, integers at their ends,
strings empty, long and non-ASCII, sequences empty, huge and of mismatched lengths) of a base message
taken from the topic's own traffic where it has some (so a reader gets past its first checks), one
round of all topics per timer tick (no subscriber's queue overflows). Then every node must still run
(the runner saw no exit, no node printed a traceback) and answer a parameter request, the generator
must still command and the lease must still be the test's, and neither the generator's command nor the
measured joints may have moved. A stand-in browser watches the operator view meanwhile, so the streams
it subscribes only while watched are fuzzed too.

Not covered: the Cartesian node's own /joint_states reader, which exists only while a goal comes (the
topic is fuzzed for its other readers).
"""

from __future__ import annotations

import importlib
import re
import sys
import threading
import time
from typing import Any

import pytest

from salamander_bringup.launch_plan import load_plan
from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES
from salamander_testing import REPO
from salamander_testing.message_fuzz import variants
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id, ros_env

pytestmark = pytest.mark.ros

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
RUNNER = [sys.executable, "-m", "salamander_bringup.runner"]
ARGS = {"run_on_start": "false", "gamepad": "true", "sim_operator": "true", "view": "true"}
TIMEOUT = 60.0
ROUND_PERIOD = 0.02  # s between two rounds (one variant per topic): far below any subscriber's queue
BASE_WAIT = 1.0  # s to take base messages: the stack's slowest periodic topics publish at 2 Hz
CRASH_MARKS = ("Traceback", "[FATAL]", "exited unexpectedly", "exited with code")
CLIENT = "subscription_fuzz"
PEER = "subscription_fuzz_peer"


def message_class(type_name: str) -> Any:
    """The Python class of "pkg/msg/Name" or "pkg/action/Name_FeedbackMessage"."""
    pkg, kind, name = type_name.split("/")
    module = importlib.import_module(f"{pkg}.{kind}")
    if hasattr(module, name):
        return getattr(module, name)
    action, _, part = name.rpartition("_")  # an action's hidden topics: MoveCartesian_FeedbackMessage
    return getattr(getattr(module, action).Impl, part)


class Fuzzer(RosPeer):
    """The test's node: the fuzz publishers, the lease it holds, the genuine command and measurement.

    Every wait ends at once, failing with the lines that say so, when a node of the stack crashed.
    """

    def __init__(self, domain: int, runner: ChildProcess) -> None:
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        from salamander_msgs.srv import ArmLease

        super().__init__(domain, PEER, names.absolute(names.TRAJECTORY_GENERATOR), runner.describe, TIMEOUT)
        self.runner = runner
        self.ArmLease = ArmLease
        at = names.absolute
        self.commands: list[tuple[float, tuple[float, ...]]] = []  # (monotonic time, positions)
        self.measured: list[tuple[float, tuple[float, ...]]] = []
        self.genuine: dict[str, set[bytes]] = {}  # topic -> gids of the stack's own publishers
        self.node.create_subscription(JointState, at(names.JOINT_COMMAND), self._on_command, 50)
        sensor = qos_profile_sensor_data
        self.node.create_subscription(JointState, at(names.JOINT_STATES), self._on_measured, sensor)
        self.lease_client = self.node.create_client(ArmLease, at(names.LEASE_SERVICE))
        self.token = ""
        self.publishers: dict[str, Any] = {}
        self.bases: dict[str, Any] = {}
        self.sent = 0

    def wait(self, predicate: Any, what: str = "a condition", timeout: float | None = None) -> None:
        """RosPeer.wait, ended by a crash of a node of the stack (the test fails with its lines)."""
        super().wait(lambda: bool(predicate()) or bool(crashes(self.runner)), what, timeout)
        crashed = crashes(self.runner)
        assert not crashed, "a node of the stack crashed:\n" + "\n".join(crashed) + "\n" + self.describe()

    def _positions(self, topic: str, msg: Any, info: Any) -> tuple[float, ...] | None:
        gid = (info.get("publisher_gid") or {}).get("data", b"")
        if bytes(gid) not in self.genuine.get(topic, set()):
            return None  # the fuzzer's own message, or a publisher not yet known
        by_name = dict(zip(msg.name, msg.position, strict=False))
        return tuple(by_name[n] for n in JOINT_NAMES)

    def _on_command(self, msg: Any, info: Any) -> None:
        q = self._positions(names.absolute(names.JOINT_COMMAND), msg, info)
        if q is not None:
            self.commands.append((time.monotonic(), q))

    def _on_measured(self, msg: Any, info: Any) -> None:
        q = self._positions(names.absolute(names.JOINT_STATES), msg, info)
        if q is not None:
            self.measured.append((time.monotonic(), q))

    def learn_genuine(self, topic: str, node: str) -> bool:
        """Take the gids of `node`'s publishers of `topic`; whether it has one."""
        infos = self.node.get_publishers_info_by_topic(topic)
        gids = {bytes(i.endpoint_gid) for i in infos if i.node_name == node}
        self.genuine[topic] = gids
        return bool(gids)

    def lease(self, operation: int) -> Any:
        request = self.ArmLease.Request(operation=operation, client_id=CLIENT, timeout=5.0, token=self.token)
        self.wait(self.lease_client.service_is_ready, "the lease service")
        return self.answer(self.lease_client.call_async(request), "the lease answer")

    def subscriptions(self) -> dict[str, str]:
        """Every topic a node of the stack subscribes (hidden nodes too; not this test's), with its type."""
        topics: dict[str, str] = {}
        for name, namespace in self.node.get_node_names_and_namespaces():
            if name == PEER:
                continue
            for topic, types in self.node.get_subscriber_names_and_types_by_node(name, namespace):
                topics.setdefault(topic, types[0])
        return topics

    def _qos(self, topic: str, of_publishers: bool) -> Any:
        """A QoS that matches every reader (a fuzz publisher) or every writer (a base subscription)."""
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        infos = self.node.get_publishers_info_by_topic(topic) if of_publishers else [
            i for i in self.node.get_subscriptions_info_by_topic(topic) if i.node_name != PEER
        ]
        latched = [i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos]
        if of_publishers:  # a reader that hears every writer: history only when every writer keeps one
            reliable = all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
            durable = bool(latched) and all(latched)
        else:  # a writer every reader hears: reliable, and keeping history when any reader asks for it
            reliable, durable = True, any(latched)
        return QoSProfile(
            depth=10,
            reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if durable else DurabilityPolicy.VOLATILE,
        )

    def take_bases(self) -> None:
        """A message of each topic's own traffic (every topic with a publisher), within BASE_WAIT s."""
        subs = []
        for topic, types in self.node.get_topic_names_and_types():
            if topic in self.bases or topic == "/rosout" or not self.node.get_publishers_info_by_topic(topic):
                continue
            try:
                cls = message_class(types[0])
            except (ImportError, AttributeError):
                continue  # e.g. a service's event topic: nobody subscribes it, no base needed

            def keep(msg: Any, topic: str = topic) -> None:
                self.bases[topic] = msg

            qos = self._qos(topic, of_publishers=True)
            subs.append((topic, self.node.create_subscription(cls, topic, keep, qos)))
        self.spin_until(lambda: all(t in self.bases for t, _ in subs), BASE_WAIT)
        for _, sub in subs:
            self.node.destroy_subscription(sub)

    def fuzz(self, topics: dict[str, str]) -> dict[str, int]:
        """Publish every variant on every topic, one round of topics per ROUND_PERIOD; variants per topic."""
        by_type = {type(m): m for m in self.bases.values()}
        plan: dict[str, list[Any]] = {}
        for topic, type_name in topics.items():
            cls = message_class(type_name)
            base = self.bases.get(topic) or by_type.get(cls) or cls()
            plan[topic] = [msg for _path, msg in variants(base)]
            qos = self._qos(topic, of_publishers=False)
            self.publishers[topic] = self.node.create_publisher(cls, topic, qos)
        self.wait(
            lambda: all(p.get_subscription_count() > 0 for p in self.publishers.values()),
            "every fuzz publisher matched",
        )
        rounds = max(len(v) for v in plan.values())
        done = [0]

        def tick() -> None:
            i = done[0]
            for topic, msgs in plan.items():
                if i < len(msgs):
                    self.publishers[topic].publish(msgs[i])
                    self.sent += 1
            done[0] += 1

        timer = self.node.create_timer(ROUND_PERIOD, tick)
        self.wait(lambda: done[0] >= rounds, f"{rounds} fuzz rounds", TIMEOUT)
        self.node.destroy_timer(timer)
        return {topic: len(msgs) for topic, msgs in plan.items()}

    def resend_until(self, refused: str, runner: ChildProcess) -> None:
        """Publish a goal stamped sec -100 on /arm/joint_target every 0.5 s until `refused` is logged."""
        from builtin_interfaces.msg import Time
        from sensor_msgs.msg import JointState

        goal = JointState(name=list(JOINT_NAMES), position=list(self.commands[-1][1]))
        goal.header.stamp = Time(sec=-100, nanosec=0)
        publisher = self.node.create_publisher(JointState, names.absolute(names.JOINT_TARGET), 10)
        shown = [False]

        def send() -> None:
            publisher.publish(goal)
            shown[0] = refused in runner.text()

        timer = self.node.create_timer(0.5, send)
        try:
            self.wait(lambda: shown[0], "the generator's refusal of a negative stamp", 10.0)
        finally:
            self.node.destroy_timer(timer)
            self.node.destroy_publisher(publisher)

    def drop_publishers(self) -> None:
        for publisher in self.publishers.values():
            self.node.destroy_publisher(publisher)
        self.publishers.clear()


class Browser:
    """A stand-in browser on the operator view's WebSocket, in viser's protocol: it says which viser it is,
    sends the camera message a page sends first (viser counts a client as connected from it), and reads
    and drops whatever the view sends. While one is connected the view subscribes the streams it draws.
    """

    def __init__(self, address: str) -> None:
        import msgspec
        import viser
        from viser._messages import ViewerCameraMessage
        from websockets.sync.client import connect

        url = address.replace("http://", "ws://", 1)
        self._socket = connect(url, subprotocols=[f"viser-v{viser.__version__}"], max_size=None)
        camera = ViewerCameraMessage(
            wxyz=(1.0, 0.0, 0.0, 0.0), position=(1.0, 1.0, 1.0), fov=1.0, near=0.01, far=100.0,
            image_height=480, image_width=640, look_at=(0.0, 0.0, 0.0), up_direction=(0.0, 0.0, 1.0),
        )
        self._socket.send(msgspec.msgpack.encode(camera.as_serializable_dict()))
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        try:
            for _ in self._socket:
                pass
        except Exception:  # noqa: BLE001 - closed by either side: nothing left to read
            pass

    def close(self) -> None:
        self._socket.close()
        self._reader.join(timeout=5.0)


def plan_nodes() -> list[str]:
    return [node.fqn for node in load_plan(LAUNCH, ARGS).nodes]


def view_address(runner: ChildProcess) -> str:
    """The operator view's address, from its start line."""
    for line in runner.lines:
        found = re.search(r"operator view: (http://\S+)", line)
        if found:
            return found.group(1)
    raise AssertionError(f"no operator view address in the log\n{runner.describe()}")


def crashes(runner: ChildProcess) -> list[str]:
    return [line for line in runner.lines if any(mark in line for mark in CRASH_MARKS)]


def test_every_subscription_survives_extreme_field_values_and_the_arm_holds(tmp_path) -> None:
    from rclpy.parameter_client import AsyncParameterClient

    started = time.monotonic()
    domain = next_domain_id()
    args = [f"{k}:={v}" for k, v in ARGS.items()]
    runner = ChildProcess([*RUNNER, str(LAUNCH), *args], ros_env(domain), tmp_path / "runner.log")
    fuzzer = Fuzzer(domain, runner)
    browser: Browser | None = None
    try:
        nodes = plan_nodes()
        clients = {fqn: AsyncParameterClient(fuzzer.node, fqn) for fqn in nodes}

        def every_node_answers() -> None:
            """A node answers once its constructor is done: every subscription it makes at start exists."""
            for fqn, client in clients.items():
                fuzzer.wait(client.services_are_ready, f"{fqn}'s parameter services")
                reply = fuzzer.answer(client.get_parameters(["use_sim_time"]), f"{fqn}'s parameters")
                assert len(reply.values) == 1, fqn

        every_node_answers()

        def twice() -> list[str]:
            graph = [f"{ns.rstrip('/')}/{n}" for n, ns in fuzzer.node.get_node_names_and_namespaces()]
            return sorted({fqn for fqn in graph if graph.count(fqn) > 1})

        # A name listed twice is another stack in this domain (the test would be void), or the graph's
        # memory of a participant that just went away (a node of an earlier test in this domain): the
        # latter leaves the graph within DDS's liveliness lease. (Twice in the full suite, 2026-12-04, this
        # was an operator view an earlier test had made and destroyed in this worker's own process: its run
        # action client kept it in the graph until the worker ended. OperatorViewNode.destroy_node now
        # destroys the client; test_operator_view_ros.py holds it to that.)
        fuzzer.spin_until(lambda: not twice(), timeout=30.0)
        shared = twice()
        assert not shared, f"another stack shares ROS_DOMAIN_ID {domain} ({shared} twice): the test is void"
        command, measured = names.absolute(names.JOINT_COMMAND), names.absolute(names.JOINT_STATES)
        fuzzer.wait(lambda: fuzzer.learn_genuine(command, names.TRAJECTORY_GENERATOR), "the generator")
        fuzzer.wait(lambda: fuzzer.learn_genuine(measured, names.SIM_HARDWARE), "the simulated arm")
        fuzzer.wait(lambda: fuzzer.commands and fuzzer.measured, "a command and a measurement")
        granted = fuzzer.lease(fuzzer.ArmLease.Request.ACQUIRE)
        assert granted.success, granted.message
        fuzzer.token = granted.token
        beat = fuzzer.ArmLease.Request(
            operation=fuzzer.ArmLease.Request.HEARTBEAT, client_id=CLIENT, token=fuzzer.token
        )
        fuzzer.node.create_timer(0.5, lambda: fuzzer.lease_client.call_async(beat))
        ready = time.monotonic()

        unwatched = fuzzer.subscriptions()
        browser = Browser(view_address(runner))
        fuzzer.wait(lambda: len(fuzzer.subscriptions()) > len(unwatched), "the view's drawn streams")
        fuzzer.take_bases()
        topics = fuzzer.subscriptions()
        assert names.absolute(names.JOINT_TARGET) in topics, topics  # the graph is read as it should be
        counts = fuzzer.fuzz(topics)
        later = {t: ty for t, ty in fuzzer.subscriptions().items() if t not in topics}  # made meanwhile
        if later:
            fuzzer.take_bases()
            counts.update(fuzzer.fuzz(later))
        fuzzer.drop_publishers()
        fuzzed = time.monotonic()

        # Every node still runs and answers; the generator still commands, for the same lease.
        every_node_answers()
        assert not crashes(runner), "\n".join(crashes(runner)) + "\n" + runner.describe()
        after = len(fuzzer.commands)
        fuzzer.wait(lambda: len(fuzzer.commands) > after, "a command after the fuzz")
        assert fuzzer.lease(fuzzer.ArmLease.Request.HEARTBEAT).success, runner.describe()
        # Nothing moved: the generator's command and the measured joints stayed where they were.
        q0 = fuzzer.commands[0][1]
        moved = [q for _, q in fuzzer.commands if max(abs(a - b) for a, b in zip(q, q0, strict=True)) > 1e-9]
        assert not moved, f"the command moved from {q0}: {moved[:3]}"
        m0 = fuzzer.measured[0][1]
        drift = max(abs(a - b) for _, q in fuzzer.measured for a, b in zip(q, m0, strict=True))
        assert drift < 1e-6, f"the measured joints moved by {drift} rad from {m0}"
        # A goal with a negative stamp reaches the generator and is refused as bad input. Sent again until
        # the refusal shows: the fuzz's own may be the first message on the topic, which a writer can send
        # before the reader has matched it (seen once in a suite run), and the refusal's log line is
        # throttled (2 s) with the other stamps' refusals at its call site.
        refused = "ignoring /arm/joint_target: header stamp sec -100 is negative"
        fuzzer.resend_until(refused, runner)
        print(
            f"{sum(counts.values())} messages on {len(counts)} topics, {fuzzer.sent} sent: "
            + ", ".join(f"{t} {n}" for t, n in sorted(counts.items()))
        )
        print(
            f"stack up in {ready - started:.1f} s, fuzz {fuzzed - ready:.1f} s, total "
            f"{time.monotonic() - started:.1f} s; {len(fuzzer.commands)} commands, "
            f"{len(fuzzer.measured)} measurements, drift {drift:.2e} rad"
        )
    finally:
        if browser is not None:
            browser.close()
        fuzzer.close()
        runner.stop(timeout=20.0)
    assert not crashes(runner), runner.describe()
