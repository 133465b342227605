"""Ctrl-C ends the whole stack quietly, wherever it lands (issue 13 item 10): the runner exits 0, every node
exits 0, and no node prints a traceback, a FATAL callback error or a KeyboardInterrupt.

Four stops at different moments of the stack's life (`stop_trial.MOMENTS`): while the nodes are still
importing (the runner holds their SIGINT until `run_node` has its handler), during discovery, and during
a run. The long campaign (22+ stops, counts printed) is bench/stop_campaign.py.

Under ``ros2 launch`` a terminal's Ctrl-C reaches every node twice: once from the terminal (launch and
its nodes share a process group) and once forwarded by launch. The second SIGINT comes while the node
is still stopping, and it must not turn the clean stop into a crash (issue 23 item 2: it raised
KeyboardInterrupt inside destroy_node, exit -2, in 3 to 8 of 9 nodes). The runner starts each node in a
group of its own and forwards the Ctrl-C once, so the trial sends the second SIGINT to each node itself.
"""

import pytest

from salamander_testing.ros_helpers import next_domain_id, ros_env
from salamander_testing.stop_trial import stop_once


@pytest.mark.ros
@pytest.mark.parametrize(
    ("moment", "delay"), [("start", 0.0), ("start", 1.5), ("discovery", 0.0), ("run", 1.0)]
)
def test_ctrl_c_stops_every_node_with_exit_0_and_no_traceback(tmp_path, moment, delay):
    outcome = stop_once(moment, delay, ros_env(next_domain_id()), tmp_path / "runner.log")
    assert outcome.reached, f"{moment} never came:\n{outcome.output[-4000:]}"
    assert outcome.clean, f"{outcome.summary()}\n{outcome.output[-6000:]}"
    assert "[runner] all nodes stopped cleanly" in outcome.output


@pytest.mark.ros
@pytest.mark.parametrize(("moment", "delay", "forward_after"), [("discovery", 0.5, 0.0), ("run", 1.0, 0.1)])
def test_a_ctrl_c_that_reaches_every_node_twice_as_under_ros2_launch_still_stops_each_with_exit_0(
        tmp_path, moment, delay, forward_after):  # fmt: skip
    outcome = stop_once(moment, delay, ros_env(next_domain_id()), tmp_path / "runner.log",
                        forward_after=forward_after)  # fmt: skip
    assert outcome.reached, f"{moment} never came:\n{outcome.output[-4000:]}"
    assert outcome.clean, f"{outcome.summary()}\n{outcome.output[-6000:]}"
    assert "[runner] all nodes stopped cleanly" in outcome.output
