"""run_node (ros/run.py) tears a node down in the right order, whichever executor spins it.

After Ctrl-C the executor lets go of the node before `destroy_node`, so every entity is finalized inside
`destroy_node` while the context still works. With the EventsExecutor still holding the node, the
entities were only marked there and finalized later, in the executor's own teardown after the context
had been shut down; once in about 20 suite runs that teardown never returned (`sim_hardware` killed
after the stop timeout, its stack in an EventHandler's `__exit__`). Seen from a second node of the same
process: right after `destroy_node` the graph has no publisher and no subscription of the node left.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from salamander_testing.ros_helpers import next_domain_id, ros_env

pytestmark = pytest.mark.ros

PROBE = textwrap.dedent('''
    import os, signal, sys
    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import UInt64
    from salamander_control.ros.run import run_node

    class Probe(Node):
        def __init__(self):
            super().__init__("teardown_probe")
            self.create_subscription(UInt64, "teardown_topic", lambda _msg: None, 10)
            self.create_publisher(UInt64, "teardown_topic", 10)
            self.watcher = rclpy.create_node("teardown_watcher", context=self.context)  # not spun
            self.create_timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))  # a Ctrl-C once spinning

        def destroy_node(self):
            super().destroy_node()
            w = self.watcher
            print(f"after destroy_node: context_ok={self.context.ok()} "
                  f"subscriptions={w.count_subscribers('teardown_topic')} "
                  f"publishers={w.count_publishers('teardown_topic')}", flush=True)

    run_node(Probe, None, events_executor=sys.argv[1] == "events")
    print("run_node returned", flush=True)
''')


@pytest.mark.parametrize("executor", ["events", "single_threaded"])
def test_after_ctrl_c_every_entity_is_gone_when_destroy_node_returns_while_the_context_works(
        tmp_path, executor):  # fmt: skip
    script = tmp_path / "teardown_probe.py"
    script.write_text(PROBE)
    done = subprocess.run([sys.executable, str(script), executor], env=ros_env(next_domain_id()),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "after destroy_node: context_ok=True subscriptions=0 publishers=0" in out, out
    assert "run_node returned" in out and "Traceback" not in out, out
