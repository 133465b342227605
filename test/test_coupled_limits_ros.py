"""One pair of coupled limits for the whole arm, over real processes (docs/design/coupled_limits.md).

The arm's nodes that carry `alpha_max`/`beta_max` run as the launch file places them (namespace, remaps,
parameter files): sim_hardware, the trajectory generator (the owner; shoulder and beam slowed so that
a narrowing lands while the arm is under way), the kinematics, Cartesian, ghost, cell and teleop nodes.
The test sets the limits through one node's parameter service and watches every node: its
`/parameter_events` (the propagation latency) and `get_parameters`, the Cartesian early fail, the
ghost's status and the generator's ClampReport. The behaviour server and the controller also start
late and must adopt the values in force, not their files'. Every wait is a predicate with a deadline.
"""

from __future__ import annotations

import math
import time

import pytest

from salamander_control import names
from salamander_control.kinematics import forward_kinematics
from salamander_testing.config_files import launch_node, launch_param_files
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import Point  # noqa: E402
from rcl_interfaces.msg import ParameterEvent  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.parameter import Parameter, parameter_value_to_python  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from salamander_control.kinematics import JOINT_NAMES  # noqa: E402
from salamander_control.ros.qos import LATCHED  # noqa: E402
from salamander_msgs.action import MoveCartesian  # noqa: E402
from salamander_msgs.msg import ClampReport, CoupledLimits, IkStatus  # noqa: E402

TIMEOUT = 30.0
EVENT_GRACE_S = 2.0
"""s a set waits for a node's parameter event before it asks the node (`Stack.set_and_propagate`)."""
GENERATOR = names.absolute(names.TRAJECTORY_GENERATOR)
CARTESIAN = names.absolute(names.CARTESIAN_MOTION_NODE)
KINEMATICS = names.absolute(names.KINEMATICS_NODE)
GHOST = names.absolute(names.IK_GHOST_NODE)
CONTROLLER = names.absolute(names.CONTROLLER_NODE)
BEHAVIOR = names.absolute(names.BEHAVIOR_SERVER)
STARTED = (  # (executable = node name) of the fixture, in start order
    names.SIM_HARDWARE, names.TRAJECTORY_GENERATOR, names.KINEMATICS_NODE, names.CARTESIAN_MOTION_NODE,
    names.IK_GHOST_NODE, names.CELL_SIM, names.CONTROLLER_NODE,
)  # fmt: skip
CARRIERS = [names.absolute(n) for n in STARTED if n != names.SIM_HARDWARE]  # every node with the pair
SLOW = {  # shoulder and beam slowed in the generator: a narrowing lands within ~1 s of braking distance
    f"{kind}.{joint}": value
    for joint in ("shoulder_pitch", "beam_pitch")
    for kind, value in (("max_velocity", 0.4), ("max_acceleration", 0.1), ("max_jerk", 1.0))
}
POSE_P = (0.0, -0.85, 0.40, 0.0, 0.0)  # q2 - q1 = 1.25: inside 1.40, outside a narrowed 1.10
CLIENT = "coupled_limits_test"


def alpha(q) -> float:
    return q[2] - q[1]


class Stack(RosPeer):
    """The test's node: parameter clients and parameter events of every carrier, the arm's topics."""

    def __init__(self, domain: int, procs: dict[str, NodeProcess]) -> None:
        super().__init__(domain, "coupled_limits_test", GENERATOR, self._logs, TIMEOUT)
        self.procs = procs
        node = self.node
        self.clients = {fqn: AsyncParameterClient(node, fqn) for fqn in (*CARRIERS, BEHAVIOR)}
        self.events: list[tuple[float, str, str, float]] = []  # (monotonic, node, name, value)
        self.hop_latency = math.nan  # s, of the last set_and_propagate (see there)
        node.create_subscription(ParameterEvent, "/parameter_events", self._on_event, 100)
        self.limits: list[CoupledLimits] = []
        node.create_subscription(CoupledLimits, names.absolute(names.COUPLED_LIMITS), self.limits.append,
                                 LATCHED)  # fmt: skip
        self.q: tuple[float, ...] | None = None
        self.states: list[tuple[float, ...]] = []
        node.create_subscription(JointState, names.absolute(names.JOINT_STATES), self._on_state,
                                 qos_profile_sensor_data)  # fmt: skip
        self.ghost: list[IkStatus] = []
        node.create_subscription(IkStatus, names.absolute(names.GHOST_STATUS), self.ghost.append, 10)
        self.clamps: list[ClampReport] = []
        node.create_subscription(ClampReport, names.absolute(names.CLAMP_REPORT), self.clamps.append, 100)
        self.targets: list[JointState] = []
        node.create_subscription(JointState, names.absolute(names.JOINT_TARGET), self.targets.append, 100)
        self.goals = node.create_publisher(JointState, names.absolute(names.JOINT_TARGET), 10)
        self.move = ActionClient(node, MoveCartesian, names.absolute(names.MOVE_CARTESIAN))

    def _logs(self) -> str:
        return "\n\n".join(proc.describe() for proc in self.procs.values())

    def _on_event(self, msg: ParameterEvent) -> None:
        now = time.monotonic()
        for param in msg.changed_parameters:
            if param.name in ("alpha_max", "beta_max"):
                self.events.append((now, msg.node, param.name, parameter_value_to_python(param.value)))

    def _on_state(self, msg: JointState) -> None:
        by_name = dict(zip(msg.name, msg.position, strict=True))
        self.q = tuple(by_name[n] for n in JOINT_NAMES)
        self.states.append(self.q)

    # Parameters ----------------------------------------------------------------------------------------

    def set_on(self, fqn: str, **values: float):
        client = self.clients[fqn]
        self.wait(client.services_are_ready, f"the parameter services of {fqn}")
        params = [Parameter(k, value=v) for k, v in values.items()]
        # resent: a node started moments ago (a late starter) can drop its first answers
        return self.answer_resent(lambda: client.set_parameters(params), f"the set answer of {fqn}").results

    def get_on(self, fqn: str, name: str):
        client = self.clients[fqn]
        self.wait(client.services_are_ready, f"the parameter services of {fqn}")
        reply = self.answer_resent(lambda: client.get_parameters([name]), f"the get answer of {fqn}")
        return parameter_value_to_python(reply.values[0])

    def everywhere(self, nodes=CARRIERS) -> dict[str, tuple[float, float]]:
        return {fqn: (self.get_on(fqn, "alpha_max"), self.get_on(fqn, "beta_max")) for fqn in nodes}

    def set_and_propagate(self, fqn: str, nodes=CARRIERS, **values: float) -> float:
        """Set `values` on `fqn`; wait until every node of `nodes` published them; the latency, s."""
        # A node whose value already equals the set one publishes no event (nothing changes there).
        already = {n for n in nodes if n != fqn and all(self.get_on(n, k) == v for k, v in values.items())}
        # The set node itself is confirmed by its set answer, not by its event: a node started moments
        # ago may publish its event before this test's /parameter_events reader has matched its writer
        # (that topic is volatile), and an event missed that way would read as a propagation failure.
        waiting = set(nodes) - already - {fqn}
        since = len(self.events)
        t0 = time.monotonic()
        results = self.set_on(fqn, **values)
        assert all(r.successful for r in results), [r.reason for r in results]

        def arrived() -> dict[str, float]:
            seen: dict[str, float] = {}
            for t, node, name, value in self.events[since:]:
                if name in values and value == values[name]:
                    seen[node] = max(seen.get(node, 0.0), t)
            return seen

        asked: dict[str, float] = {}

        def propagated() -> bool:
            missing = waiting - set(arrived()) - set(asked)
            if missing and time.monotonic() - t0 > EVENT_GRACE_S:
                # A node started moments ago may publish its event before this reader has matched its
                # /parameter_events writer (seen: a late-started controller, 1.4 s after its start): ask it.
                for n in missing:
                    if all(self.get_on(n, k) == v for k, v in values.items()):
                        asked[n] = time.monotonic()  # it held the values by then: an upper bound
            return waiting <= set(arrived()) | set(asked)

        if not self.spin_until(propagated, None):
            missing = sorted(waiting - set(arrived()) - set(asked))
            raise AssertionError(f"timed out waiting for {values} on {missing}\n{self.describe()}")
        seen = {**asked, **arrived()}
        last = max(seen[n] for n in waiting)
        # From the set node's own event to the last one: the propagation itself, without the test's
        # parameter round trip (both events reach this test over the same path).
        self.hop_latency = last - seen[fqn] if fqn in seen else math.nan
        return last - t0

    # The arm ---------------------------------------------------------------------------------------------

    def send_joints(self, q) -> None:
        msg = JointState(name=list(JOINT_NAMES), position=[float(v) for v in q])
        self.goals.publish(msg)  # anonymous: the lease is free in this test

    def wait_at(self, q, tol: float = 2e-3) -> None:
        def there() -> bool:
            return self.q is not None and max(abs(a - b) for a, b in zip(self.q, q, strict=True)) < tol

        self.wait(there, f"the arm at {q}")

    def wait_still(self) -> None:
        def still() -> bool:
            tail = self.states[-25:]
            return len(tail) == 25 and all(max(c) - min(c) < 1e-7 for c in zip(*tail, strict=True))

        self.wait(still, "the arm at rest")

    def move_cartesian(self, q_pose) -> MoveCartesian.Result:
        pose = forward_kinematics(q_pose)
        goal = MoveCartesian.Goal(
            tcp=Point(x=pose.tcp[0], y=pose.tcp[1], z=pose.tcp[2]), tool_pitch=pose.tool_pitch,
            tool_yaw=pose.tool_yaw, path="linear", speed_scale=0.5, client_id=CLIENT,
        )
        self.wait(self.move.server_is_ready, "the MoveCartesian server")
        handle = self.answer(self.move.send_goal_async(goal), "the goal response")
        assert handle.accepted, self._logs()
        return self.answer(handle.get_result_async(), "the MoveCartesian result").result


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    domain, logs = next_domain_id(), tmp_path_factory.mktemp("coupled_limits")
    procs = {}
    peer = None
    try:
        for exe in STARTED:
            params = SLOW if exe == names.TRAJECTORY_GENERATOR else None
            files = launch_param_files(exe)
            procs[exe] = NodeProcess(exe, exe, domain, logs, params=params, params_file=files)
        peer = Stack(domain, procs)
        peer.wait(lambda: peer.limits and peer.q is not None, "the latched coupled limits and /joint_states")
        # The generator drops goals until its own first /joint_states (seen 3 s after the test's own).
        generator = procs[names.TRAJECTORY_GENERATOR]
        assert generator.wait_for_text("started from the measured joint state", timeout=TIMEOUT), (
            generator.describe()
        )
        assert peer.everywhere() == dict.fromkeys(CARRIERS, (1.40, 0.87))
        yield peer
    finally:
        if peer is not None:
            peer.close()
        for proc in procs.values():
            proc.stop()


@pytest.fixture
def fresh(stack):
    """The stack at the file's limits before and after a test; no node died."""
    yield stack
    if stack.everywhere() != dict.fromkeys(CARRIERS, (1.40, 0.87)):
        stack.set_and_propagate(KINEMATICS, alpha_max=1.40, beta_max=0.87)
    # The owner's marker of the reset is heard too before the next test reads the newest revision (the
    # nodes' parameter events can arrive before it: the next test then counted it as its own).
    stack.wait(lambda: bool(stack.limits) and (stack.limits[-1].alpha_max, stack.limits[-1].beta_max)
               == (1.40, 0.87), "the owner's marker of the file's limits")  # fmt: skip
    assert all(p.alive() for p in stack.procs.values()), stack.describe()


def test_alpha_max_set_on_the_cartesian_node_holds_on_every_node(fresh, record_property):
    s = fresh
    p_tcp = forward_kinematics(POSE_P).tcp
    s.send_joints(POSE_P)
    s.wait_at(POSE_P)
    s.wait_still()
    since = len(s.ghost)
    s.wait(lambda: any(g.reason == "ok" for g in s.ghost[since:]), "the ghost green at P under 1.40")
    revision = s.limits[-1].revision

    latency = s.set_and_propagate(CARTESIAN, alpha_max=1.10)
    record_property("propagation_latency_s", latency)
    record_property("propagation_from_the_set_node_s", s.hop_latency)
    print(f"\nalpha_max set on {CARTESIAN}: on all {len(CARRIERS)} nodes {latency * 1e3:.1f} ms after the "
          f"set call, {s.hop_latency * 1e3:.1f} ms after the Cartesian node took it")  # fmt: skip
    assert latency < 1.0  # the slowest user's cycle is the behaviour tree's (0.1 s); 1 s under test load
    # (a) every node answers the new value; the owner published it once, as one new revision
    assert s.everywhere() == dict.fromkeys(CARRIERS, (1.10, 0.87))
    s.wait(lambda: s.limits[-1].revision == revision + 1, "the owner's new revision")
    assert (s.limits[-1].alpha_max, s.limits[-1].source) == (1.10, GENERATOR)
    # (c) the ghost is red at P, for the coupled limit
    s.wait(lambda: any(g.reason == "coupled_limit" and math.dist((g.tcp.x, g.tcp.y, g.tcp.z), p_tcp) < 2e-3
                       for g in s.ghost[since:]), "the ghost red (coupled_limit) at P")  # fmt: skip
    # (b) a MoveCartesian goal to P fails early there, before any joint target
    before = len([t for t in s.targets if t.header.frame_id == CLIENT])
    result = s.move_cartesian(POSE_P)
    assert not result.success and result.status == IkStatus.COUPLED_LIMIT, result.message
    assert len([t for t in s.targets if t.header.frame_id == CLIENT]) == before
    # and the generator brought the arm back onto the narrowed bound
    s.wait(lambda: abs(alpha(s.q) - 1.10) < 1e-3, "the arm back on q2 - q1 = 1.10")


def test_the_generator_clamps_at_the_value_set_on_the_cartesian_node(fresh):
    s = fresh
    start = (0.0, -0.3, 0.0, 0.0, 0.0)
    s.send_joints(start)
    s.wait_at(start)
    s.wait_still()
    s.send_joints((0.0, -1.3, 0.1, 0.0, 0.0))  # towards q2 - q1 = 1.40
    s.wait(lambda: alpha(s.q) > 0.8, "the arm under way towards the bound")
    clamps_before = len(s.clamps)
    s.set_and_propagate(CARTESIAN, alpha_max=1.10)
    s.wait(lambda: any("alpha_max" in c.active_bounds for c in s.clamps[clamps_before:]),
           "a ClampReport on alpha_max")  # fmt: skip
    on_alpha = [c for c in s.clamps[clamps_before:] if "alpha_max" in c.active_bounds]
    assert all(abs(alpha(c.clamped) - 1.10) < 1e-6 for c in on_alpha), [alpha(c.clamped) for c in on_alpha]
    s.wait_still()
    assert alpha(s.q) == pytest.approx(1.10, abs=1e-4)


@pytest.mark.parametrize(
    ("where", "value"),
    [(CARTESIAN, math.nan), (GHOST, 2.8), (CONTROLLER, -0.1), (GENERATOR, math.inf), (KINEMATICS, math.nan)],
)
def test_a_refused_value_is_refused_where_it_is_set_and_changes_nothing_anywhere(fresh, where, value):
    s = fresh
    since, revision = len(s.events), s.limits[-1].revision
    (result,) = s.set_on(where, alpha_max=value)
    assert not result.successful and result.reason
    # A later accepted set through the same node arrives everywhere after anything the refused one
    # could have caused (each node's parameter events are in order): nothing did.
    s.set_and_propagate(where, beta_max=0.86)
    assert not [e for e in s.events[since:] if e[2] == "alpha_max"]
    assert s.everywhere() == dict.fromkeys(CARRIERS, (1.40, 0.86))
    # The owner's message can trail the nodes' parameter events: wait for it, then count.
    s.wait(lambda: s.limits[-1].beta_max == 0.86, "the owner's marker of beta_max")
    assert s.limits[-1].revision == revision + 1  # the beta_max marker only


def test_two_operators_at_once_end_on_one_value(fresh):
    s = fresh
    a = s.clients[GHOST].set_parameters([Parameter("alpha_max", value=1.20)])
    b = s.clients[CONTROLLER].set_parameters([Parameter("alpha_max", value=1.30)])
    assert s.answer(a, "A's answer").results[0].successful and s.answer(b, "B's answer").results[0].successful
    # Settled when the owner's newest revision is on every node; that value is A's or B's, never a split.
    def settled() -> bool:
        return {s.get_on(n, "alpha_max") for n in CARRIERS} == {s.limits[-1].alpha_max}

    s.wait(settled, "every node on the owner's newest value")
    assert s.limits[-1].alpha_max in (1.20, 1.30)


@pytest.mark.parametrize("late", [names.CONTROLLER_NODE, names.BEHAVIOR_SERVER])
def test_a_node_started_later_adopts_the_limits_in_force_not_its_files(fresh, late, tmp_path):
    s = fresh
    s.set_and_propagate(KINEMATICS, alpha_max=1.25)
    old = s.procs.pop(late, None)
    if old is not None:
        old.stop()
    params = {key: value for key, value in launch_node(late).params}
    if late == names.BEHAVIOR_SERVER:
        params["run_on_start"] = False  # idle: this test only looks at its parameters
    proc = NodeProcess(late, late, s.context.get_domain_id(), tmp_path, params=params,
                       params_file=launch_param_files(late))  # fmt: skip
    s.procs[late] = proc
    fqn = names.absolute(late)
    assert proc.wait_for_text("coupled limits: adopted alpha_max=1.2500", timeout=TIMEOUT), proc.describe()
    assert (s.get_on(fqn, "alpha_max"), s.get_on(fqn, "beta_max")) == (1.25, 0.87)
    # and a set on the late starter reaches every node too
    s.set_and_propagate(fqn, nodes=[*CARRIERS, fqn] if fqn not in CARRIERS else CARRIERS, alpha_max=1.35)
    if late == names.BEHAVIOR_SERVER:
        s.procs.pop(late).stop()


def test_a_node_without_the_owner_keeps_its_value_and_says_so_once(tmp_path):
    domain = next_domain_id()
    with NodeProcess("arm_kinematics_node", names.KINEMATICS_NODE, domain, tmp_path,
                     params_file=launch_param_files(names.KINEMATICS_NODE)) as proc:  # fmt: skip
        peer = RosPeer(domain, "alone_test", KINEMATICS, proc.describe, TIMEOUT)
        try:
            assert peer.set_param("alpha_max", 1.30).successful
            assert peer.set_param("alpha_max", 1.20).successful
            assert peer.get_param("alpha_max") == 1.20
            assert proc.wait_for_text("applies to this node only", timeout=TIMEOUT)
        finally:
            peer.close()
        assert proc.text().count("is not reachable") == 1, proc.text()
