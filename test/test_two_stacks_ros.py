"""Two simulated arms on one ROS graph: the default stack and the one of ``cell:=cell2``, in ONE domain.

Each stack is sim_hardware + trajectory_generator, started as the launch file places them
(`NodeProcess(..., cell=...)`: the launch file's namespace and remaps, its parameter files). The test
shows that the stacks share nothing: a joint goal moves only its own arm, an alpha_max set through one
generator's parameter service leaves the other's value, and a lease held in one leaves the other free.
Every wait is a predicate with a deadline.
"""

from __future__ import annotations

import pytest

from salamander_control import names
from salamander_testing.config_files import launch_param_files
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from salamander_control.kinematics import JOINT_NAMES  # noqa: E402
from salamander_control.ros.qos import LATCHED  # noqa: E402
from salamander_msgs.msg import LeaseState  # noqa: E402
from salamander_msgs.srv import ArmLease  # noqa: E402

CELLS = ("", "cell2")  # the default stack (the pinned names) and a second one under /cell2
TIMEOUT = 25.0
BASE = JOINT_NAMES.index("base_yaw")


class StackView:
    """The peer's view of one stack: its measured joints, lease state, goal topic, lease and parameters."""

    def __init__(self, peer: RosPeer, cell: str) -> None:
        def at(name: str) -> str:
            return names.absolute(name, cell)

        self.cell = cell
        self.positions: list[tuple[float, ...]] = []
        self.lease_state: LeaseState | None = None
        self.lease_states = 0
        self.commands = 0
        node = peer.node
        node.create_subscription(JointState, at(names.JOINT_STATES), self._on_state, 100)
        node.create_subscription(LeaseState, at(names.LEASE_STATE), self._on_lease_state, LATCHED)
        self._commands = node.create_subscription(JointState, at(names.JOINT_COMMAND), self._on_command, 10)
        self.goals = node.create_publisher(JointState, at(names.JOINT_TARGET), 10)
        self.lease = node.create_client(ArmLease, at(names.LEASE_SERVICE))
        self.params = AsyncParameterClient(node, at(names.TRAJECTORY_GENERATOR))
        self.joint_states_topic = at(names.JOINT_STATES)

    def _on_state(self, msg: JointState) -> None:
        by_name = dict(zip(msg.name, msg.position, strict=True))
        self.positions.append(tuple(by_name[n] for n in JOINT_NAMES))

    def _on_lease_state(self, msg: LeaseState) -> None:
        self.lease_state = msg
        self.lease_states += 1

    def _on_command(self, _msg: JointState) -> None:
        self.commands += 1

    def still(self) -> bool:
        """The last 25 joint states (0.1 s at 250 Hz) agree to 1e-7 rad: the arm is at rest."""
        tail = self.positions[-25:]
        return len(tail) == 25 and all(max(col) - min(col) < 1e-7 for col in zip(*tail, strict=True))

    def send(self, joints: dict[str, float], sender: str = "") -> None:
        msg = JointState(name=list(joints), position=[float(v) for v in joints.values()])
        msg.header.frame_id = sender
        self.goals.publish(msg)


class TwoStacks(RosPeer):
    """The test's node in the shared domain, with one `StackView` per cell."""

    def __init__(self, domain_id: int, procs: list[NodeProcess]) -> None:
        super().__init__(domain_id, "two_stacks_test", names.absolute(names.TRAJECTORY_GENERATOR),
                         self._logs, TIMEOUT)  # fmt: skip
        self.procs = procs
        self.stacks = {cell: StackView(self, cell) for cell in CELLS}

    def _logs(self) -> str:
        return "\n\n".join(proc.describe() for proc in self.procs)

    def get_alpha_max(self, view: StackView) -> float:
        self.wait(view.params.services_are_ready, f"the parameter services of {view.cell or 'the default'}")
        reply = self.answer(view.params.get_parameters(["alpha_max"]), "the get_parameters answer")
        return reply.values[0].double_value

    def call_lease(
        self, view: StackView, operation: int, client_id: str, token: str = ""
    ) -> ArmLease.Response:
        self.wait(view.lease.service_is_ready, f"the lease service of {view.cell or 'the default'}")
        request = ArmLease.Request(operation=operation, client_id=client_id, timeout=30.0, token=token)
        return self.answer(view.lease.call_async(request), "the lease answer")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    domain, logs = next_domain_id(), tmp_path_factory.mktemp("two_stacks")
    procs = [
        NodeProcess(exe, exe, domain, logs, params_file=launch_param_files(exe), cell=cell)
        for cell in CELLS
        for exe in (names.SIM_HARDWARE, names.TRAJECTORY_GENERATOR)
    ]
    peer = TwoStacks(domain, procs)
    try:
        for view in peer.stacks.values():  # the generator commands: it started from its own arm's state
            peer.wait(lambda v=view: v.commands > 0 and v.goals.get_subscription_count() > 0,
                      f"the first command of {view.cell or 'the default stack'}")  # fmt: skip
            peer.wait(lambda v=view: v.lease_state is not None, "the latched lease state")
            peer.node.destroy_subscription(view._commands)  # 500 Hz: not needed any further
        yield peer
    finally:
        peer.close()
        for proc in procs:
            proc.stop()


def test_each_stack_has_its_own_names_and_one_arm_on_them(graph):
    default, cell2 = graph.stacks[""], graph.stacks["cell2"]
    assert (default.joint_states_topic, cell2.joint_states_topic) == ("/joint_states", "/cell2/joint_states")
    node = graph.node
    for view in (default, cell2):  # discovery is asynchronous: wait for the graph, then it must be exact
        target = names.absolute(names.JOINT_TARGET, view.cell)
        topic = view.joint_states_topic
        graph.wait(lambda t=topic: node.count_publishers(t) >= 1, "a joint_states publisher")
        graph.wait(lambda t=target: node.count_subscribers(t) >= 1, "a joint_target subscriber")
        assert node.count_publishers(topic) == 1  # its own sim_hardware only
        assert node.count_subscribers(target) == 1  # its generator only
    wanted = {"/arm/trajectory_generator", "/arm/sim_hardware", "/cell2/arm/trajectory_generator",
              "/cell2/arm/sim_hardware"}  # fmt: skip

    def fqns() -> set[str]:
        return {f"{ns.rstrip('/')}/{name}" for name, ns in node.get_node_names_and_namespaces()}

    # Node names are discovered apart from the topics' endpoints (one snapshot missed /arm/sim_hardware
    # on a loaded machine while its publisher was already counted): wait for them, with a deadline.
    graph.wait(lambda: wanted <= fqns(), f"the nodes {sorted(wanted)} in the graph")


@pytest.mark.parametrize(("mover", "other"), [("cell2", ""), ("", "cell2")])
def test_a_joint_goal_moves_only_its_own_arm(graph, mover, other):
    moving, still = graph.stacks[mover], graph.stacks[other]
    graph.wait(lambda: moving.still() and still.still(), "both arms at rest")
    start = moving.positions[-1][BASE]
    target = 0.3 if abs(start - 0.3) > 0.1 else -0.3
    seen_before = len(still.positions)
    resting = still.positions[-1]
    moving.send({"base_yaw": target})
    arrived = lambda: abs(moving.positions[-1][BASE] - target) < 1e-3  # noqa: E731
    graph.wait(arrived, f"the {mover or 'default'} arm to arrive at base_yaw {target}")
    watched = still.positions[seen_before:]
    assert len(watched) > 10, "the other arm's joint states stopped"
    assert max(abs(a - b) for q in watched for a, b in zip(q, resting, strict=True)) < 1e-6, (
        f"the {other or 'default'} arm moved"
    )


def test_alpha_max_set_on_one_generator_leaves_the_other(graph):
    default, cell2 = graph.stacks[""], graph.stacks["cell2"]
    assert graph.get_alpha_max(default) == graph.get_alpha_max(cell2) == 1.4
    reply = graph.answer(cell2.params.set_parameters([Parameter("alpha_max", value=1.39)]), "the set answer")
    try:
        assert reply.results[0].successful, reply.results[0].reason
        assert graph.get_alpha_max(cell2) == 1.39
        assert graph.get_alpha_max(default) == 1.4
    finally:
        graph.answer(cell2.params.set_parameters([Parameter("alpha_max", value=1.4)]), "the reset")


def test_a_lease_held_in_one_stack_leaves_the_other_free(graph):
    default, cell2 = graph.stacks[""], graph.stacks["cell2"]
    held = graph.call_lease(default, ArmLease.Request.ACQUIRE, "bt_default")
    try:
        assert held.success and held.holder == "bt_default", held.message
        graph.wait(lambda: default.lease_state.holder == "bt_default", "the default stack's lease state")
        seen = cell2.lease_states
        graph.wait(lambda: cell2.lease_states >= seen + 2, "two more lease states of cell2 (1 s)")
        assert cell2.lease_state.holder == ""
        other = graph.call_lease(cell2, ArmLease.Request.ACQUIRE, "bt_cell2")  # free there: granted
        assert other.success and other.holder == "bt_cell2", other.message
        assert graph.call_lease(cell2, ArmLease.Request.RELEASE, "bt_cell2", other.token).success
    finally:
        graph.call_lease(default, ArmLease.Request.RELEASE, "bt_default", held.token)
