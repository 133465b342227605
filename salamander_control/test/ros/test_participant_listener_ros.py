"""A stop whose DDS participant goes while a discovery callback runs ends at once (ros/participant_listener).

The rare stop hang of issue 23: a node's last `destroy_node` deletes the process's DDS participant, and
rmw_fastrtps first detaches the participant's listener with Fast DDS's infinite timeout; with a discovery
callback running at that moment, Fast DDS 3.2.2 spins holding the listener mutex the callback needs to
end, and the stop never ends (eProsima/Fast-DDS#6513). The interleaving is forced with gdb, attached in
non-stop mode to a probe node that runs `run_node`: the probe's main thread is held at the entry of
``DomainParticipant::set_listener`` (the first call of the teardown), the test then creates a publisher
so that one of the probe's receive threads enters the middleware's writer-discovery callback, and that
thread is held inside it. The main thread goes on (it finds a callback running and waits), then the
callback thread goes on. Without `detach_participant_listener` the probe never exits (killed after
15 s); with it the probe exits 0 within seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import rclpy
from std_msgs.msg import UInt64

from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import ros_env, spin_until

pytestmark = [
    pytest.mark.ros,
    pytest.mark.skipif(shutil.which("gdb") is None, reason="needs gdb to force the interleaving"),
    pytest.mark.skipif(rclpy.get_rmw_implementation_identifier() != "rmw_fastrtps_cpp",
                       reason="the Fast DDS teardown"),  # fmt: skip
]

PROBE = textwrap.dedent('''
    import sys
    from rclpy.node import Node
    from std_msgs.msg import UInt64
    from salamander_control.ros.run import run_node

    class Probe(Node):
        def __init__(self):
            super().__init__("participant_probe")
            self.heard = False
            self.create_subscription(UInt64, "participant_probe_in", self.on_msg, 10)

        def on_msg(self, _msg):
            if not self.heard:
                self.heard = True
                print("probe heard the test", flush=True)

    run_node(Probe, None, events_executor=sys.argv[1] == "events")
    print("run_node returned", flush=True)
''')
CALLBACK = "ParticipantListener::on_data_writer_discovery"  # rmw_fastrtps, inside Fast DDS's callback guard
SET_LISTENER = (  # DomainParticipant::set_listener(listener, mask, timeout): every overload ends here
    "_ZN8eprosima7fastdds3dds17DomainParticipant12set_listenerEPNS1_25DomainParticipantListener"
    "ERKNS1_10StatusMaskENSt6chrono8durationIlSt5ratioILl1ELl1EEEE"
)
_HIT = re.compile(r'Thread (\d+) ".*" hit Breakpoint (\d+)')


class _Gdb:
    """gdb attached in non-stop mode (a stopped thread leaves the others running), driven line by line."""

    def __init__(self, pid: int) -> None:
        self.proc = ChildProcess(["gdb", "-q", "-nx"], dict(os.environ), interactive=True)
        self._seen = 0
        commands = (
            "set pagination off", "set confirm off", "set non-stop on", "handle SIGINT nostop noprint pass",
            f"attach {pid} &", f"break {CALLBACK} if $_thread != 1", f"break {SET_LISTENER} if $_thread == 1",
        )  # fmt: skip
        for command in commands:
            self.proc.send_line(command)
        self.sync("attached")  # in the background: no thread stopped

    def sync(self, tag: str) -> None:
        """Wait until gdb has handled every command sent so far."""
        self.proc.send_line(f"echo @{tag}@\\n")
        assert self.proc.wait_for_text(f"@{tag}@", timeout=60), self.proc.describe()

    def wait_hit(self, breakpoint: int, timeout: float = 30.0) -> int:
        """The thread that hits `breakpoint` next (held there); hits of the other breakpoint go on."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.proc.lines
            for line in lines[self._seen:]:
                self._seen += 1
                hit = _HIT.search(line)
                if hit and int(hit.group(2)) == breakpoint:
                    return int(hit.group(1))
                if hit:  # an earlier discovery of the test's own entities: not the one held
                    self.resume(int(hit.group(1)))
            self.proc.wait_for_text("hit Breakpoint", since=len(lines), timeout=0.2)
        raise AssertionError(f"breakpoint {breakpoint} not hit in {timeout} s\n{self.proc.describe()}")

    def resume(self, thread: int) -> None:
        """Let `thread` go on."""
        self.proc.send_line(f"thread {thread}")
        self.proc.send_line("continue &")

    def detach(self) -> None:
        """Delete the breakpoints, let every thread go on, leave the process."""
        for command in ("delete", "continue -a &", "detach", "quit"):
            self.proc.send_line(command)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.stop()


@pytest.mark.parametrize("executor", ["events", "single_threaded"])
def test_a_stop_while_a_discovery_callback_runs_ends_at_once(tmp_path, ros_context, ros_executor,
                                                             make_node, executor):  # fmt: skip
    script = tmp_path / "participant_probe.py"
    script.write_text(PROBE)
    test_node = make_node("participant_test")
    nudge = test_node.create_publisher(UInt64, "participant_probe_in", 10)
    probe = ChildProcess([sys.executable, str(script), executor], ros_env(ros_context.get_domain_id()),
                         tmp_path / "probe.log")  # fmt: skip
    with probe:
        def heard() -> bool:
            nudge.publish(UInt64())
            return probe.wait_for_text("probe heard the test", timeout=0.1)

        # Discovery both ways is over before gdb comes in: the probe heard the test's publisher.
        assert spin_until(ros_executor, heard, timeout=60), probe.describe()
        gdb = _Gdb(probe.proc.pid)
        try:
            probe.send_signal(signal.SIGINT)
            teardown = gdb.wait_hit(2)  # the main thread, at the first set_listener of the teardown
            test_node.create_publisher(UInt64, "participant_probe_new", 10)  # a discovery in the probe
            gdb.wait_hit(1)  # its receive thread, inside the discovery callback: held
            gdb.resume(teardown)  # set_listener finds a callback running and waits for it
            gdb.sync("teardown resumed")
            time.sleep(0.5)  # the held callback is the point: the teardown waits while it runs
        finally:
            gdb.detach()  # the callback goes on
        try:
            code = probe.wait(timeout=15)
        except subprocess.TimeoutExpired:
            code = None
    assert code == 0, f"the stop did not end (exit {code}):\n{probe.describe()}"
    assert "run_node returned" in probe.text(), probe.describe()
