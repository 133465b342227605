"""`/salamander/sim_operator` as a real process, against a peer that plays ManualAdjust and the cell.

The node runs as the launch file places it (config/sim_operator.yaml, the shipped cell config). The
peer publishes the latched tree snapshot (a ManualAdjust wait, with the offset it integrated) and the
cell's JSON state (the held can 3 mm off its compartment's centre, moved by the twists it receives,
as ManualAdjust and the arm would move it), and listens on the operator topics with the behaviour
server's QoS. It checks what the node writes: twists within the stick's speed limit that bring the can
over the centre, one confirmation, nothing once the wait is over; a malformed state is skipped with a
line.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest

from salamander_control import names
from salamander_sim.cell import load_cell_config
from salamander_testing import REPO
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

pytestmark = pytest.mark.ros

TIMEOUT = 30.0
LAYOUT = load_cell_config(REPO / "config" / "cell.yaml").layout
WAITING = ("--> ManualAdjust[place_can_0] [*] -- waiting for the operator: "
           "offset [{x:.1f}, {y:.1f}, 0.0] mm, 1.0 of 120 s")


class World(RosPeer):
    """ManualAdjust + arm + cell, as the operator meets them (see the module docstring)."""

    def __init__(self, domain: int, node: NodeProcess) -> None:
        from geometry_msgs.msg import Twist
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import Bool, String

        from salamander_control.ros.qos import LATCHED

        super().__init__(domain, "sim_operator_test_peer", names.absolute(names.SIM_OPERATOR), node.describe,
                         TIMEOUT)  # fmt: skip
        self.String = String
        self.centre = LAYOUT.compartment_centre(0)
        self.offset = [0.0, 0.0]
        self.start = (self.centre[0] - 0.003, self.centre[1] + 0.001)  # 3 mm short in x, 1 mm over in y
        self.twist = (0.0, 0.0)
        self.twist_t = -math.inf
        self.last = time.monotonic()
        self.twists: list[tuple[float, float, float]] = []
        self.confirms: list[bool] = []
        self.tree_pub = self.node.create_publisher(String, names.absolute(names.BEHAVIOR_TREE), LATCHED)
        self.state_pub = self.node.create_publisher(String, names.absolute(names.CELL_STATE), 10)
        jog_qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT,
                             durability=DurabilityPolicy.VOLATILE)  # fmt: skip
        self.node.create_subscription(Twist, names.absolute(names.OPERATOR_JOG), self._on_jog, jog_qos)
        self.node.create_subscription(Bool, names.absolute(names.OPERATOR_CONFIRM), self._on_confirm, 10)
        self.waiting = False
        self.node.create_timer(0.1, self._publish)

    def _integrate(self, now: float) -> None:
        lo, hi = max(self.last, self.twist_t), min(now, self.twist_t + 0.3)
        if hi > lo:
            self.offset = [o + v * (hi - lo) for o, v in zip(self.offset, self.twist, strict=True)]
        self.last = now

    def _on_jog(self, msg: Any) -> None:
        now = time.monotonic()
        self._integrate(now)
        self.twist, self.twist_t = (msg.linear.x, msg.linear.y), now
        self.twists.append((now, msg.linear.x, msg.linear.y))

    def _on_confirm(self, msg: Any) -> None:
        self._integrate(time.monotonic())
        self.confirms.append(msg.data)
        self.waiting = False  # the tree takes the press: the wait line goes
        self.tree_pub.publish(self.String(data="--> ManualAdjust[place_can_0] [*] -- confirmed; finishing"))

    def can_xy(self) -> tuple[float, float]:
        return (self.start[0] + self.offset[0], self.start[1] + self.offset[1])

    def error_mm(self) -> float:
        return 1000 * math.dist(self.can_xy(), self.centre)

    def state(self) -> str:
        x, y = self.can_xy()
        can = {"id": "can_0", "position": [x, y, -0.03], "attached": True, "on": "gripper", "outcome": None}
        cans = [can]
        box = {"xy": [LAYOUT.box_x, LAYOUT.box_y], "yaw": LAYOUT.box_yaw}
        return json.dumps({"t": time.monotonic(), "vacuum": True, "held": "can_0", "box": box, "cans": cans})

    def _publish(self) -> None:
        self._integrate(time.monotonic())
        self.state_pub.publish(self.String(data=self.state()))
        if self.waiting:
            line = WAITING.format(x=1000 * self.offset[0], y=1000 * self.offset[1])
            self.tree_pub.publish(self.String(data=line))


def test_the_operator_centres_the_held_can_and_confirms_once_within_the_stick_limits(tmp_path):
    domain = next_domain_id()
    node = NodeProcess("sim_operator", names.SIM_OPERATOR, domain, tmp_path,
                       params_file=REPO / "config" / "sim_operator.yaml",
                       params={"cell_config": str(REPO / "config" / "cell.yaml"), "seed": 3})  # fmt: skip
    world = World(domain, node)
    try:
        assert node.wait_for_text("simulated operator up", timeout=TIMEOUT), node.describe()
        world.wait(lambda: world.state_pub.get_subscription_count() > 0, "the operator's state subscription")
        world.state_pub.publish(world.String(data="{not json"))  # skipped with a line, the node goes on
        assert node.wait_for_text("skipped a /salamander/cell/state: cell state is not JSON", timeout=TIMEOUT)
        world.spin_until(lambda: False, 1.0)  # the can at rest, no wait: the operator does nothing
        assert world.twists == [] and world.confirms == []
        world.waiting = True
        world.wait(lambda: world.confirms != [], "the operator's confirmation")
        assert world.confirms == [True]
        assert world.error_mm() < 1.0, (world.error_mm(), node.describe())  # within the tolerance and a bit
        speeds = [math.hypot(vx, vy) for _, vx, vy in world.twists]
        assert speeds and max(speeds) <= 0.05 + 1e-9
        # Every stroke ends with zeros. (That a deflected stick never goes 0.3 s without a twist is the
        # core's timing, checked in test/sim/operator/test_core.py: arrival times here would measure this
        # process's scheduling on a loaded machine as much as the node's.)
        assert world.twists[-1][1:] == (0.0, 0.0)
        count = len(world.twists)
        world.spin_until(lambda: False, 1.5)  # the wait is over: zeros for at most 0.3 s, then silence
        late = world.twists[count:]
        assert all(vx == 0.0 and vy == 0.0 for _, vx, vy in late) and world.confirms == [True]
        over = node.wait_for_text("is over (confirmed by the operator after", timeout=TIMEOUT)
        assert over, node.describe()
    finally:
        world.close()
        node.stop()
