"""run_node (ros/run.py) tears a node down in the right order, whichever executor spins it.

After Ctrl-C the executor lets go of the node before `destroy_node`, so every entity is finalized inside
`destroy_node` while the context still works. With the EventsExecutor still holding the node, the
entities were only marked there and finalized later, in the executor's own teardown after the context
had been shut down; once in about 20 suite runs that teardown never returned (`sim_hardware` killed
after the stop timeout, its stack in an EventHandler's `__exit__`). Seen from a second node of the same
process: right after `destroy_node` the graph has no publisher and no subscription of the node left.

A repeated stop signal while the node stops (``ros2 launch`` forwards the terminal's Ctrl-C to nodes that
got it already) is ignored: the stop ends with exit 0 and no traceback (it raised KeyboardInterrupt in
`destroy_node`, exit -2, issue 23 item 2). Only a stop still running `STOP_GRACE_S` after the first
signal is forced by the next one: exit `EXIT_FORCED`, one log line, no traceback.

A task that raises (a coroutine callback, a future's done-callback) ends the process with its traceback
and exit 1 on either executor. rclpy 9.1.2's EventsExecutor with exactly one node died of SIGSEGV
instead (ros2/rclpy#1641), leaving no trace of the exception: `run_node` adds a hidden guard node.

A stop that came before the start (a Ctrl-C held through the imports) builds nothing and initializes
nothing of ROS: no context is left for the interpreter's exit to tear down.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from salamander_control.ros.held_signals import HELD_SIGNALS
from salamander_control.ros.run import EXIT_FORCED
from salamander_testing.process import ChildProcess
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


SLOW_STOP = textwrap.dedent('''
    import sys, threading, time
    from pathlib import Path
    from rclpy.node import Node
    from salamander_control.ros import run

    mode, flag = sys.argv[1], Path(sys.argv[2])
    run.STOP_GRACE_S = float(sys.argv[3])

    class SlowStop(Node):
        def __init__(self):
            super().__init__("slow_stop_probe")
            self.create_timer(0.05, lambda: None)
            print("up", flush=True)

        def destroy_node(self):
            print("destroying", flush=True)
            if mode == "hang":
                threading.Event().wait()  # a stop that never ends
            deadline = time.monotonic() + 20.0
            while not flag.exists() and time.monotonic() < deadline:  # the test's repeats are sent
                time.sleep(0.01)
            super().destroy_node()
            print("destroyed", flush=True)

    run.run_node(SlowStop)
    print("run_node returned", flush=True)
''')


def _slow_stop(tmp_path, mode: str, grace_s: float) -> tuple[ChildProcess, object]:
    script = tmp_path / "slow_stop_probe.py"
    script.write_text(SLOW_STOP)
    flag = tmp_path / "repeats_sent"
    probe = ChildProcess([sys.executable, str(script), mode, str(flag), str(grace_s)],
                         ros_env(next_domain_id()), tmp_path / "probe.log")  # fmt: skip
    assert probe.wait_for_text("up", timeout=60.0), probe.describe()
    return probe, flag


def test_a_repeated_stop_signal_during_the_stop_is_ignored_and_the_stop_ends_clean(tmp_path):
    probe, flag = _slow_stop(tmp_path, "slow", grace_s=30.0)
    with probe:
        probe.send_signal(signal.SIGINT)  # the terminal's Ctrl-C
        assert probe.wait_for_text("destroying"), probe.describe()
        probe.send_signal(signal.SIGINT)  # launch's forwarded SIGINT, inside destroy_node
        probe.send_signal(signal.SIGTERM)  # and a SIGTERM, as a supervisor might send
        flag.touch()  # destroy_node goes on once it sees this: both signals have been delivered by then
        assert probe.wait(timeout=30.0) == 0, probe.describe()
        out = probe.text()
        assert "destroyed" in out and "run_node returned" in out, out
        assert "Traceback" not in out and "KeyboardInterrupt" not in out and "forced" not in out, out


def test_a_stop_that_does_not_finish_in_time_is_forced_by_a_repeat_with_one_line_and_no_traceback(tmp_path):
    grace_s = 1.0
    probe, _flag = _slow_stop(tmp_path, "hang", grace_s=grace_s)
    with probe:
        probe.send_signal(signal.SIGINT)
        first = time.monotonic()
        assert probe.wait_for_text("destroying"), probe.describe()
        deadline = first + 20.0
        while probe.alive() and time.monotonic() < deadline:  # repeats: ignored until the grace is over
            probe.send_signal(signal.SIGINT)
            time.sleep(0.1)  # the pace of the repeats, not a synchronisation
        assert probe.wait(timeout=5.0) == EXIT_FORCED, probe.describe()
        assert time.monotonic() - first >= grace_s, "forced before the stop had its grace"
        out = probe.text()
        forced = [line for line in out.splitlines() if "forced exit" in line]
        assert len(forced) == 1 and "stop not finished" in forced[0] and "after SIGINT" in forced[0], out
        assert "Traceback" not in out and "KeyboardInterrupt" not in out, out


RAISING_TASK = textwrap.dedent('''
    import sys
    from rclpy.node import Node
    from salamander_control.ros.run import run_node

    class RaisingTask(Node):
        def __init__(self):
            super().__init__("raising_task_probe")
            self.timer = self.create_timer(0.05, self.once)  # a coroutine callback: a task

        async def once(self):
            self.timer.cancel()
            raise RuntimeError("the probe's task raised")

    run_node(RaisingTask, None, events_executor=sys.argv[1] == "events")
''')


@pytest.mark.parametrize("executor", ["events", "single_threaded"])
def test_a_task_that_raises_ends_the_node_with_its_traceback_not_a_segfault(tmp_path, executor):
    script = tmp_path / "raising_task_probe.py"
    script.write_text(RAISING_TASK)
    done = subprocess.run([sys.executable, str(script), executor], env=ros_env(next_domain_id()),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1, f"exit {done.returncode}\n{out}"
    assert "RuntimeError: the probe's task raised" in out and "Segmentation fault" not in out, out


CRASHING_INIT = textwrap.dedent('''
    import ctypes
    from rclpy.node import Node
    from salamander_control.ros.run import run_node

    class CrashingInit(Node):
        def __init__(self):
            super().__init__("crashing_init_probe")
            ctypes.string_at(0)  # a C-level crash in the node's start-up, as the Cartesian node's rare -11

    run_node(CrashingInit)
''')


def test_a_crash_in_the_nodes_start_up_leaves_its_python_stack(tmp_path):
    script = tmp_path / "crashing_init_probe.py"
    script.write_text(CRASHING_INIT)
    done = subprocess.run([sys.executable, str(script)], env=ros_env(next_domain_id()),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == -11, f"exit {done.returncode}\n{out}"
    assert "Fatal Python error: Segmentation fault" in out and "in __init__" in out, out


STOPPED_BEFORE_START = textwrap.dedent('''
    import os, signal
    import rclpy
    from salamander_control.ros.run import run_node

    real_init = rclpy.init
    def init(*args, **kwargs):
        print("rclpy.init called", flush=True)
        return real_init(*args, **kwargs)
    rclpy.init = init

    def factory():
        raise AssertionError("the node was built")

    # SIGINT was held from the start (the test starts this process as the launch runner does), and the
    # Ctrl-C came during the imports.
    os.kill(os.getpid(), signal.SIGINT)
    run_node(factory)
    print("run_node returned", flush=True)
''')


def test_a_stop_that_came_before_the_start_builds_nothing_and_never_initializes_ros(tmp_path):
    """Nothing of the middleware to tear down: such a process once took over 20 s to exit (its context)."""
    script = tmp_path / "stopped_before_start_probe.py"
    script.write_text(STOPPED_BEFORE_START)
    # Started with SIGINT held, as the launch runner starts the project's nodes (held_signals): the child
    # inherits this thread's mask across fork and exec (no preexec_fn in a threaded pytest worker).
    before = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        probe = subprocess.Popen([sys.executable, str(script)], env=ros_env(next_domain_id()),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    stdout, stderr = probe.communicate(timeout=60)
    out = stdout + stderr
    assert probe.returncode == 0, f"exit {probe.returncode}\n{out}"
    assert "run_node returned" in out and "rclpy.init called" not in out, out
    assert "Traceback" not in out and "built" not in out, out
