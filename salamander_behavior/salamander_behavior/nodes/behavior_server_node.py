"""`/salamander/behavior_server_node`: the py_trees pick-and-place tree (tree.py) on a ROS timer.

    python -m salamander_behavior.nodes.behavior_server_node --ros-args -p cell_config:=config/cell.yaml
    behavior_server_node --ros-args --params-file config/arm.yaml --params-file config/behavior.yaml

A thin shell: it declares the parameters (`salamander_behavior.params`, one frozen snapshot), builds the
tree from the cell config (one guarded selector per can), gives the leaves their ports
(`ros.arm_motion_client.ArmMotionCore`: lease, MoveCartesian, RetargetCartesian; `ros.cell_client.CellIO`:
vacuum and cell state) through ``tree.setup(node=...,
ports=...)``, and then only ticks it (`tick_rate_hz`) and publishes a readable snapshot of it
(`snapshot_rate_hz`, std_msgs/String on /salamander/behavior/tree, latched): the run's summary, one
line per finished can, and ``py_trees.display.unicode_tree`` with every behaviour's status and
feedback. The run starts as soon as the stack is ready, works through the cans once and stops ticking
when the root ends (SUCCESS: every can placed, missed or skipped; FAILURE: a can aborted, the arm holding it).

Shutdown: Ctrl-C and SIGTERM alike end the spin loop with the context still working
(`salamander_control.ros.run.run_node`), and `destroy_node` stops the tree (the running goal is
cancelled) and releases the lease. Should the process die without that, the lease expires within
`lease_timeout_s` and the trajectory generator stops the arm.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import py_trees
from py_trees.common import Status
from rclpy.node import Node
from std_msgs.msg import String

from salamander_behavior import params
from salamander_behavior.behaviors.base import Ports
from salamander_behavior.behaviors.guard import GuardSettings, guard_conditions, guarded
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import default_cell_config, load_jobs
from salamander_behavior.report import RunReport
from salamander_behavior.ros.arm_motion_client import ArmMotionCore
from salamander_behavior.ros.cell_client import CellIO
from salamander_behavior.tree import build_tree
from salamander_control import names
from salamander_control.kinematics import ArmParams
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node


def snapshot_text(root: py_trees.behaviour.Behaviour, report: RunReport) -> str:
    """What /salamander/behavior/tree carries: run status, per-can results, the tree with statuses."""
    head = [f"run: {root.status.value} ({report.summary()})", *report.lines(), ""]
    return "\n".join(head) + py_trees.display.unicode_tree(root, show_status=True)


class BehaviorServerNode(Node):
    """Builds, ticks and publishes the pick-and-place tree (see the module docstring)."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.BEHAVIOR_SERVER, **node_kwargs)
        self._destroyed = False
        self._started = False  # tree and ports built (destroy_node has something to stop)
        self._binding: ParamBinding[BehaviorSettings] = ParamBinding(
            self, params.param_specs(), params.build_config
        )
        settings = self._binding.snapshot
        try:
            path = Path(settings.cell_config) if settings.cell_config else default_cell_config()
            jobs = load_jobs(path)
        except (OSError, ValueError) as exc:
            self.get_logger().fatal(f"cannot load the cell config: {exc}")
            raise SystemExit(1) from exc
        self.report = RunReport()
        self._core = ArmMotionCore(self, settings.client_id, settings.lease_timeout_s)
        self._cell = CellIO(self)
        ports = Ports(
            motion=self._core,
            cell=self._cell,
            clock=time.monotonic,
            settings=lambda: self._binding.snapshot,
            log=self.get_logger(),
            report=self.report,
        )
        self.root = build_tree(jobs, self._guard)
        self._tree = py_trees.trees.BehaviourTree(self.root)
        self._tree.setup(node=self, ports=ports)
        self._tree_pub = self.create_publisher(String, names.BEHAVIOR_TREE, LATCHED)
        self._finished = False
        self._started = True
        self.create_timer(1.0 / settings.tick_rate_hz, self._on_tick)
        self.create_timer(1.0 / settings.snapshot_rate_hz, self._publish_snapshot)
        cans = ", ".join(job.can for job in jobs)
        self.get_logger().info(
            f"pick and place of {cans} from {path} as lease client {settings.client_id!r}; "
            f"manual_place={settings.manual_place}; waiting for the arm and the cell"
        )

    def _arm(self) -> ArmParams:
        """The arm model the guard judges with: the current parameters' (config/arm.yaml at start-up)."""
        return self._binding.snapshot.arm

    def _guard(self, child: py_trees.behaviour.Behaviour, can: str) -> py_trees.behaviour.Behaviour:
        """The limit guard of a can's cycle (conditions subscribe /joint_states in setup)."""
        conditions = guard_conditions(GuardSettings(), arm=self._arm, prefix=f"{can}.")
        return guarded(child, conditions, name=f"Guarded[{can}]")

    def _on_tick(self) -> None:
        if self._finished or self._destroyed:
            return
        self._tree.tick()
        status = self.root.status
        if status in (Status.SUCCESS, Status.FAILURE):
            self._finished = True
            # One call site per severity: rclpy refuses to log from one line at two severities.
            if status is Status.SUCCESS:
                self.get_logger().info(f"run complete: {self.report.summary()}")
            else:
                self.get_logger().error(f"run stopped: {self.report.summary()}")
            self._publish_snapshot()

    def _publish_snapshot(self) -> None:
        if self._destroyed:  # SIGTERM destroys the node from the signal handler; the executor may
            return  # still run a timer that was ready at that moment
        self._tree_pub.publish(String(data=snapshot_text(self.root, self.report)))

    def destroy_node(self) -> Any:
        """Stop the tree (cancel the running goal) and release the lease while the context still works."""
        if not self._destroyed:
            self._destroyed = True
            try:
                if self._started and self.context.ok():
                    self.root.stop(Status.INVALID)  # terminate(): the running goal is cancelled
                    self._core.shutdown()
            except Exception as exc:  # noqa: BLE001 (shutting down: best effort, never a traceback)
                self.get_logger().warning(f"shutdown: could not stop cleanly: {exc}")
        return super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`behavior_server_node`)."""
    run_node(BehaviorServerNode, args)


if __name__ == "__main__":
    main()
