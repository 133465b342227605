"""A whole pick-and-place stack as processes, for end-to-end tests: the arm, a cell, the behaviour server.

`CellStack` starts sim_hardware, trajectory_generator and arm_cartesian_motion_node, the simulated cell
with a test's cell section (written to a params file the behaviour server reads too, so the tree plans
in the same cell) and the behaviour server (no run on start), each in one private ROS_DOMAIN_ID. Its test
node follows the cell's ground truth (`/salamander/cell/state`) and holds the RunPickPlace client.
Tests add their own processes to `procs` (e.g. the simulated operator) before anything is waited for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from salamander_control import names
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

EXACT_CELL: dict[str, Any] = {
    "state_rate_hz": 10.0,
    "box_error_sigma_xy": 0.0,
    "box_error_sigma_yaw": 0.0,
    "can_spot_sigma_xy": 0.0,
    "grip_sigma_xy": 0.0,
}
"""No random error and a 10 Hz cell state: a test adds the one error it is about (e.g. `box_error`)."""


class CellStack(RosPeer):
    """The processes, and the test's node: the cell's ground truth and the RunPickPlace client.

    Args:
        log_dir: where the processes' logs and the cell file go.
        name: the test node's name.
        cell: the cell section (over config/cell.yaml's), e.g. ``{**EXACT_CELL, "engine": "physics"}``.
        step_timeout: s, for each wait of the test node.
        run_timeout: s, for a whole run (`run`).
    """

    def __init__(
        self, log_dir: Path, name: str, cell: dict[str, Any], step_timeout: float, run_timeout: float
    ) -> None:
        from rclpy.action import ActionClient
        from std_msgs.msg import String

        from salamander_msgs.action import RunPickPlace

        domain = next_domain_id()
        self.run_timeout = run_timeout
        self.cell_file = log_dir / "cell.yaml"
        self.cell_file.write_text(
            yaml.safe_dump({names.absolute(names.CELL_SIM): {"ros__parameters": dict(cell)}})
        )
        self.procs = [
            NodeProcess(exe, exe, domain, log_dir)
            for exe in (names.SIM_HARDWARE, names.TRAJECTORY_GENERATOR, names.CARTESIAN_MOTION_NODE)
        ]
        self.cell = NodeProcess("cell_sim", names.CELL_SIM, domain, log_dir, params_file=self.cell_file)
        self.bt = NodeProcess("behavior_server_node", names.BEHAVIOR_SERVER, domain, log_dir, {
            "cell_config": str(self.cell_file),
            "snapshot_rate_hz": 10.0,
            "run_on_start": False,
            "manual_place": False,
        })  # fmt: skip
        self.procs += [self.cell, self.bt]
        at = names.absolute
        super().__init__(domain, name, at(names.BEHAVIOR_SERVER), self.describe, step_timeout)
        self.state: dict[str, Any] | None = None
        self.node.create_subscription(String, at(names.CELL_STATE), self._on_state, 10)
        self.action = ActionClient(self.node, RunPickPlace, at(names.RUN_PICK_PLACE))
        self.Goal = RunPickPlace.Goal

    def _on_state(self, msg: Any) -> None:
        self.state = json.loads(msg.data)

    def describe(self) -> str:
        """Every process's command line and log."""
        return "\n".join(p.describe() for p in self.procs)

    def wait_for_arm(self) -> None:
        """Until the generator runs from a measured state and the Cartesian node is ready."""
        generator, cartesian = self.procs[1], self.procs[2]
        started = generator.wait_for_text("started from the measured joint state", timeout=self.timeout)
        assert started and cartesian.wait_for_text("ready:", timeout=self.timeout), self.describe()

    def send(self, cans: list[str]) -> Any:
        """Send a RunPickPlace goal of `cans` (waited for its acceptance); the result's future."""
        self.wait(self.action.server_is_ready, "the RunPickPlace action server")
        goal = self.action.send_goal_async(self.Goal(cans=cans))
        handle = self.answer(goal, f"the answer to the goal {cans}")
        assert handle.accepted, self.describe()
        return handle.get_result_async()

    def result(self, future: Any, what: str) -> Any:
        """The run's result, waited for up to the run timeout."""
        self.wait(future.done, f"the end of the run of {what}", self.run_timeout)
        return future.result().result

    def landed(self, can: str, run: str = "") -> dict[str, Any]:
        """`can` as the cell reports it once it came to rest off the pad (its placement outcome).

        `run` (the run's summary) goes into the failure message: a run that stopped holding the can
        (e.g. a stale part-present signal on a loaded machine) never lets it come to rest.
        """

        def at_rest() -> bool:
            entry = self.can(can)
            return entry is not None and entry["outcome"] is not None and entry["on"] != "moving"

        self.wait(at_rest, f"{can} at rest off the pad (cell state) after the run '{run}'")
        entry = self.can(can)
        assert entry is not None
        return entry

    def can(self, can: str) -> dict[str, Any] | None:
        """The cell state's entry of `can` (None before the first state)."""
        if self.state is None:
            return None
        return next((c for c in self.state["cans"] if c["id"] == can), None)

    def close(self) -> None:
        """Stop the test node, then every process (the last started first)."""
        self.action.destroy()  # before the context goes: a collected action client can hang the exit
        super().close()
        for proc in reversed(self.procs):
            proc.stop()
