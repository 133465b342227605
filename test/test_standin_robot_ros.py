"""The stack on the hardware contract alone: use_sim:=false, and a stand-in robot that speaks only it.

The launch file runs through the project's runner with ``use_sim:=false`` (no sim_hardware, no
cell_sim) and ``run_on_start:=true``. Until something provides the contract, the behaviour server says
exactly what it waits for (the gripper's vacuum service and part-present topic), once and then at a slow
rate, and holds no arm lease. Then `salamander_testing.standin_robot` starts (joint commands
followed into /joint_states, the vacuum service, the part-present switch; no cans, no cell state) and
the tree completes a run of every can of config/cell.yaml on it.
"""

from __future__ import annotations

import sys
import time

import pytest

from salamander_control import names
from salamander_testing import REPO
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id, ros_env

pytestmark = pytest.mark.ros

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
RUN_TIMEOUT = 180.0  # three cans at the default speeds take ~30 s; a loaded 2-core machine is slower
STEP_TIMEOUT = 60.0
WAITING = (
    f"waiting for {names.absolute(names.GRIPPER_VACUUM)} service and {names.absolute(names.PART_PRESENT)}"
)


def test_without_a_robot_the_server_waits_holding_nothing_then_runs_on_the_standin(tmp_path) -> None:
    from salamander_control.ros.qos import LATCHED
    from salamander_msgs.msg import LeaseState

    domain = next_domain_id()
    env = ros_env(domain)
    args = ["use_sim:=false", "teleop:=false", "view:=false", "run_on_start:=true"]
    runner_cmd = [sys.executable, "-m", "salamander_bringup.runner", str(LAUNCH), *args]
    standin_cmd = [sys.executable, "-m", "salamander_testing.standin_robot"]
    with ChildProcess(runner_cmd, env, tmp_path / "runner.log", process_group=True) as runner:
        peer = RosPeer(domain, "standin_test_peer", names.absolute(names.BEHAVIOR_SERVER), runner.describe)
        try:
            leases: list[LeaseState] = []
            peer.node.create_subscription(
                LeaseState, names.absolute(names.LEASE_STATE), leases.append, LATCHED
            )
            # Nobody provides the contract: the server says what it waits for, and holds no lease.
            assert runner.wait_for_text(WAITING, timeout=STEP_TIMEOUT), runner.describe()
            first = time.monotonic()
            peer.wait(lambda: len(leases) >= 3, "three lease states from the generator", STEP_TIMEOUT)
            assert all(state.holder == "" for state in leases), [s.holder for s in leases]
            waited = time.monotonic() - first
            said = sum(WAITING in line for line in runner.lines)
            assert 1 <= said <= 2 + waited / 10.0, (said, waited, runner.describe())  # once, then slowly

            with ChildProcess(standin_cmd, env, tmp_path / "standin.log") as standin:
                assert runner.wait_for_text("run complete: 3 placed", timeout=RUN_TIMEOUT), (
                    f"{runner.describe()}\n{standin.describe()}"
                )
                assert standin.text().count("valve open") == 3, standin.describe()
                assert standin.text().count("part present: true") == 3, standin.describe()
                assert standin.text().count("part present: false") == 3, standin.describe()
            assert "Traceback" not in runner.text(), runner.describe()
        finally:
            peer.close()
