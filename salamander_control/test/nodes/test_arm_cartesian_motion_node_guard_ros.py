"""Guarded MoveCartesian goals through real processes: trajectory_generator + arm_cartesian_motion_node.

The test is the hardware: a driver that publishes /joint_states at 100 Hz with the newest
/arm/joint_command positions (ideal motors) and efforts it computes: a held can's weight and, below the
rim height, a compliant pad's spring force on a rigid rim, through J^T, plus 0.03 N m of noise per joint
(or no efforts at all). The descent is compartment 1's (config/cell.yaml), from place_above.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Point
from rclpy.action import ActionClient
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from salamander_control import names
from salamander_control.cartesian.goal_common import EARLY_FAIL, GUARD_LEAD_M
from salamander_control.cartesian.linear_goal import GUARD_LEAD_S
from salamander_control.kinematics import JOINT_NAMES, forward_kinematics, solve_ik_pitched
from salamander_control.kinematics.fk import position_jacobian
from salamander_msgs.action import MoveCartesian
from salamander_testing.config_files import launch_param_files
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

TIMEOUT = 25.0
ABOVE = np.array([0.38, -0.18, 0.088])  # over compartment 1, 145 mm above its release point
RELEASE = np.array([0.38, -0.18, -0.057])  # its release point
RIM_DROP = 0.02  # m below ABOVE the can's bottom meets the rim
STIFFNESS = 1000.0  # N/m: the pad's compression
CAN = np.array([0.0, 0.0, -3.4])  # N
NOISE = 0.03  # N m per joint
GUARD = 2.0  # N
pytestmark = pytest.mark.ros


class Driver(RosPeer):
    """The hardware: /joint_states (positions from /arm/joint_command, efforts from the rim model)."""

    def __init__(self, domain: int, procs: list[NodeProcess], efforts: bool) -> None:
        self.procs = procs
        node = names.absolute(names.CARTESIAN_MOTION_NODE)
        super().__init__(domain, "guard_test", node, self.logs, TIMEOUT)
        ik = solve_ik_pitched(tuple(ABOVE), 0.0, 0.0)
        assert ik.ok
        self.q = tuple(ik.q)
        self.efforts = efforts
        self.rim_z = ABOVE[2] - RIM_DROP
        self.rng = np.random.default_rng(0)
        self.commands = 0
        self.targets: list[np.ndarray] = []  # TCP of every /arm/joint_target
        self.states: list[np.ndarray] = []  # TCP of every published state
        at = names.absolute
        self._pub = self.node.create_publisher(JointState, at(names.JOINT_STATES), qos_profile_sensor_data)
        self.node.create_subscription(JointState, at(names.JOINT_COMMAND), self._on_command, 50)
        self.node.create_subscription(JointState, at(names.JOINT_TARGET), self._on_target, 200)
        self.node.create_timer(0.01, self._publish)
        self.action = ActionClient(self.node, MoveCartesian, at(names.MOVE_CARTESIAN))

    def logs(self) -> str:
        return "\n".join(p.describe() for p in self.procs)

    @staticmethod
    def _joints(msg: JointState) -> tuple[float, ...]:
        by_name = dict(zip(msg.name, msg.position, strict=True))
        return tuple(by_name[n] for n in JOINT_NAMES)

    def _on_command(self, msg: JointState) -> None:
        self.q = self._joints(msg)
        self.commands += 1

    def _on_target(self, msg: JointState) -> None:
        self.targets.append(np.array(forward_kinematics(self._joints(msg)).tcp))

    def force(self, tcp: np.ndarray) -> np.ndarray:
        return np.array([0.0, 0.0, STIFFNESS * max(self.rim_z - tcp[2], 0.0)])

    def _publish(self) -> None:
        tcp = np.array(forward_kinematics(self.q).tcp)
        self.states.append(tcp)
        msg = JointState(name=list(JOINT_NAMES), position=[float(v) for v in self.q])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        if self.efforts:
            tau = position_jacobian(self.q).T @ (CAN + self.force(tcp)) + self.rng.normal(0.0, NOISE, 5)
            msg.effort = [float(v) for v in tau]
        self._pub.publish(msg)

    def ready(self) -> None:
        """The generator commands (it took the start from /joint_states)."""
        self.wait(lambda: self.commands > 0, "the generator's first command")
        self.wait(self.action.server_is_ready, "the MoveCartesian server")

    def send(self, goal: MoveCartesian.Goal):
        """The goal handle once the node answered (accepted or not)."""
        sent = self.action.send_goal_async(goal)
        return self.answer(sent, "the goal response")

    def run(self, goal: MoveCartesian.Goal) -> MoveCartesian.Result:
        """Send until accepted (the node may not have a joint state yet), then await the result."""
        for _ in range(50):
            handle = self.send(goal)
            if handle.accepted:
                return self.answer(handle.get_result_async(), "the goal's result").result
            self.spin_until(lambda: False, 0.1)
        raise AssertionError(f"goal never accepted\n{self.logs()}")

    def at_rest(self, still_s: float = 0.3) -> np.ndarray:
        """Wait until the published TCP has not moved for `still_s`; return it."""
        n = int(still_s / 0.01)

        def still() -> bool:
            last = self.states[-n:]
            return len(last) == n and max(np.linalg.norm(p - last[-1]) for p in last) < 1e-7

        self.wait(still, "the arm at rest")
        return self.states[-1]


def goal(tcp, speed_scale: float, guard_force: float) -> MoveCartesian.Goal:
    return MoveCartesian.Goal(
        tcp=Point(x=float(tcp[0]), y=float(tcp[1]), z=float(tcp[2])), path="linear",
        speed_scale=speed_scale, client_id="guard_test", guard_force=guard_force,
    )


@pytest.fixture
def stack(tmp_path):
    """stack(efforts=True) -> Driver with the generator and the Cartesian node running in its domain."""
    made: list[tuple[Driver, list[NodeProcess]]] = []

    def start(efforts: bool = True) -> Driver:
        domain = next_domain_id()
        procs = [
            NodeProcess("trajectory_generator", names.TRAJECTORY_GENERATOR, domain, tmp_path,
                        params_file=launch_param_files("trajectory_generator")),
            NodeProcess("arm_cartesian_motion_node", names.CARTESIAN_MOTION_NODE, domain, tmp_path,
                        params_file=launch_param_files("arm_cartesian_motion_node")),
        ]
        driver = Driver(domain, procs, efforts)
        made.append((driver, procs))
        driver.ready()
        return driver

    yield start
    for driver, procs in made:
        driver.close()
        for proc in procs:
            proc.stop()
        print("\n".join(p.describe() for p in procs))  # shown when the test failed


@pytest.mark.parametrize("speed", [0.01, 0.02])
def test_a_guarded_descent_stops_at_the_rim_with_contact_at_rest_on_its_line(stack, speed: float) -> None:
    """The rim is felt 2 mm into the pad (2 N), the arm brakes on the line and rests short of its end.

    Ideal motors (the command is the measurement): past the point where the force passed the guard the
    line runs on for the detection (2 samples) and the generator's stream delay (30 ms), then brakes
    (< 1 mm from 20 mm/s, test_linear_goal_guard.py). On a loaded machine the generator may stop following a
    starved stream and later jump to its newest sample: the command never leads the measured arm by
    more than the goal's lead bound (`goal_common.GUARD_LEAD_M` + speed x `GUARD_LEAD_S`), so no joint
    target lies further than that plus the brake past the point where the force passed the guard.
    """
    driver = stack()
    result = driver.run(goal(RELEASE, speed, GUARD))
    assert not result.success and result.status == 0 and result.contact, result.message
    assert result.message.startswith("contact: ") and "mm of the line" in result.message
    force = np.array([result.contact_force.x, result.contact_force.y, result.contact_force.z])
    tcp = np.array([result.contact_tcp.x, result.contact_tcp.y, result.contact_tcp.z])
    assert np.linalg.norm(force) > GUARD and force[2] > 0.8 * GUARD, force
    threshold_z = driver.rim_z - GUARD / STIFFNESS  # where the true force passes the guard
    lead = GUARD_LEAD_M + speed * GUARD_LEAD_S
    assert threshold_z - lead < tcp[2] < threshold_z + 0.0005, tcp
    rest = driver.at_rest()
    deepest = min(p[2] for p in driver.targets)
    past, rest_past = (threshold_z - deepest) * 1000, (threshold_z - rest[2]) * 1000
    print(f"\n{speed * 1000:.0f} mm/s: {result.message}; deepest joint target {past:.2f} mm past the 2 N "
          f"point, at rest {rest_past:.2f} mm past it")
    assert deepest > threshold_z - lead - 0.001  # no target beyond contact + lead + braking
    assert rest[2] > RELEASE[2] + 0.1 and np.linalg.norm(rest[:2] - ABOVE[:2]) < 2e-4  # on the line
    # The node's stdout is read by a thread: a line logged before the answer may be read after it.
    cartesian = driver.procs[1]
    assert cartesian.wait_for_text("MoveCartesian goal aborted: contact: ", timeout=TIMEOUT), driver.logs()


def test_a_guarded_goal_without_efforts_fails_early_and_a_nan_guard_is_rejected(stack) -> None:
    driver = stack(efforts=False)
    result = driver.run(goal(RELEASE, 0.02, GUARD))
    assert not result.success and not result.contact
    assert result.message == f"{EARLY_FAIL}: no efforts in /joint_states: a guarded move cannot run"
    assert driver.targets == []  # nothing sent
    assert not driver.send(goal(RELEASE, 0.02, math.nan)).accepted
    assert not driver.send(goal(RELEASE, 0.02, -1.0)).accepted
    assert driver.procs[1].wait_for_text("guard_force must lie in", timeout=TIMEOUT), driver.logs()


def test_an_unguarded_goal_through_the_rim_is_unchanged(stack) -> None:
    """guard_force 0: the efforts are not looked at; the goal reaches its end as it always did."""
    driver = stack()
    end = ABOVE - np.array([0.0, 0.0, RIM_DROP + 0.01])  # 10 mm into the rim
    result = driver.run(goal(end, 0.1, 0.0))
    assert result.success and not result.contact, result.message
    assert np.linalg.norm(driver.at_rest() - end) < 1e-3
