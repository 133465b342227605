"""`/salamander/sim_operator`: a simulated person who does the ManualAdjust placement (simulation only).

A thin shell around `salamander_sim.operator.core.SimOperator` (parameters:
`sim.operator.params`). Started by the launch file with ``sim_operator:=true``; it has work only while
the behaviour server's ``manual_place`` is true. Run by hand::

    python -m salamander_sim.nodes.sim_operator --ros-args -p cell_config:=config/cell.yaml -p seed:=3

- subscribes `names.BEHAVIOR_TREE` (the tree snapshot, latched: the wait as the operator view shows it)
  and `names.CELL_STATE` (the simulated cell's ground truth: the held can and the true box; a person
  at the cell sees them, the tree never does); the callbacks hand them to the core, parsed;
- publishes only what the gamepad controller publishes, with the same types and QoS: `names.OPERATOR_JOG`
  (geometry_msgs/Twist, linear x/y in m/s, base_link) at `jog_rate_hz` while a stroke runs and for 0.3 s
  of zeros after it, and `names.OPERATOR_CONFIRM` (std_msgs/Bool: true confirms, false aborts);
- reads the cell config (`cell_config`) once at start for the compartments' places in the box;
- logs each look, stroke and press, and one line per wait.

Single-threaded executor (`run_node`): callbacks and the timer never overlap; no locks.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from geometry_msgs.msg import Twist
from rclpy.node import Node
from std_msgs.msg import Bool, String

from salamander_control import names
from salamander_control.cell.layout import default_cell_config
from salamander_control.ros.log import KindLogger
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node
from salamander_sim.cell.config import load_cell_config
from salamander_sim.operator import params
from salamander_sim.operator.core import Confirm, Jog, Say, SimOperator
from salamander_sim.operator.params import OperatorSettings
from salamander_sim.operator.perception import placement_error, read_cell_state, read_wait


class SimOperatorNode(Node):
    """Feeds the tree snapshot and the cell's ground truth to the operator core; publishes its actions."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.SIM_OPERATOR, **node_kwargs)
        self._params: ParamBinding[OperatorSettings] = ParamBinding(
            self, params.param_specs(), params.build_config, on_change=self._on_params
        )
        settings = self._params.snapshot
        try:
            path = Path(settings.cell_config) if settings.cell_config else default_cell_config()
            self._layout = load_cell_config(path).layout
        except (OSError, ValueError) as exc:
            self.get_logger().fatal(f"cannot load the cell config: {exc}")
            raise SystemExit(1) from exc
        self._core = SimOperator(settings)
        self._warnings = KindLogger(self.get_logger())
        self._jog_pub = self.create_publisher(Twist, names.OPERATOR_JOG, 10)
        self._confirm_pub = self.create_publisher(Bool, names.OPERATOR_CONFIRM, 10)
        self.create_subscription(String, names.BEHAVIOR_TREE, self._on_tree, LATCHED)
        self._state_topic = self.create_subscription(String, names.CELL_STATE, self._on_state, 10).topic_name
        self._timer = self.create_timer(1.0 / settings.jog_rate_hz, self._on_timer)
        self.get_logger().info(
            f"simulated operator up (seed {settings.seed}, cell {path}): watches the ManualAdjust wait, "
            f"jogs on {self.resolve_topic_name(names.OPERATOR_JOG)}, confirms on "
            f"{self.resolve_topic_name(names.OPERATOR_CONFIRM)}; look sigma "
            f"{settings.look_sigma_xy * 1000:.2f} mm, reaction {settings.reaction_time_min_s:.2f}-"
            f"{settings.reaction_time_max_s:.2f} s, confirms within "
            f"{settings.confirm_tolerance_xy * 1000:.2f} mm"
        )

    @staticmethod
    def _now() -> float:
        return time.monotonic()

    def _on_params(self, old: OperatorSettings, new: OperatorSettings) -> None:
        self._core.configure(new)
        if new.jog_rate_hz != old.jog_rate_hz:
            self._timer.cancel()
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(1.0 / new.jog_rate_hz, self._on_timer)

    def _on_tree(self, msg: String) -> None:
        self._act(self._core.see_wait(read_wait(msg.data), self._now()))

    def _on_state(self, msg: String) -> None:
        try:
            view = read_cell_state(msg.data)
        except ValueError as exc:
            self._warnings.warning("cell_state", f"skipped a {self._state_topic}: {exc}")
            return
        self._core.see_scene(placement_error(view, self._layout), self._now())

    def _on_timer(self) -> None:
        self._act(self._core.tick(self._now()))

    def _act(self, actions: list[Jog | Confirm | Say]) -> None:
        for action in actions:
            if isinstance(action, Jog):
                twist = Twist()
                twist.linear.x, twist.linear.y = action.vx, action.vy
                self._jog_pub.publish(twist)
            elif isinstance(action, Confirm):
                self._confirm_pub.publish(Bool(data=action.value))
            else:
                self.get_logger().info(action.text)


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`sim_operator`)."""
    run_node(SimOperatorNode, args)


if __name__ == "__main__":
    main()
