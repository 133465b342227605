"""Fault injection through the launch runner: kill one node of a running stack, wait for its respawn.

A fault test starts the stack with the runner (`bringup.runner`, as a `process.ChildProcess`), then
`kill_node(runner, "/salamander/cell_sim")` kills that node's current process (SIGKILL by default, the
crash the issue's campaign used) and waits until the runner has logged the exit, the respawn line
("... exited with code -9; respawning in 2 s (respawn 1)") and the restart ("respawned ... (pid P,
respawn 1)"). The pid comes from the runner's own "started"/"respawned" lines and is checked to be a
child of the runner, so a test never signals a process it did not start. A node without ``respawn`` is
killed the same way with ``expect_respawn=False`` (the runner then stops the stack).
`kill_nodes(runner, [...])` kills several respawning nodes at the same moment and waits for every
restart.
"""

from __future__ import annotations

import os
import re
import signal

import psutil

from salamander_testing.process import ChildProcess


def node_pid(runner: ChildProcess, fqn: str) -> int | None:
    """The pid of `fqn`'s current process as the runner last reported it; None before it started."""
    pattern = re.compile(rf"^\[runner\] (?:started|respawned) {re.escape(fqn)} \(pid (\d+)")
    pid = None
    for line in runner.lines:
        match = pattern.match(line)
        if match:
            pid = int(match.group(1))
    return pid


def kill_node(
    runner: ChildProcess,
    fqn: str,
    signum: int = signal.SIGKILL,
    *,
    expect_respawn: bool = True,
    exit_code: int | None = None,
    timeout: float = 60.0,
) -> int | None:
    """Send `signum` to the process of node `fqn` (e.g. "/salamander/cell_sim") of the running `runner`.

    Args:
        runner: the launch runner, started by the test.
        fqn: the node's fully qualified name, as the runner prints it.
        signum: the signal (SIGKILL: a crash the node cannot handle).
        expect_respawn: wait for the respawn and the restart (True), or only for the runner's line
            that the node exited unexpectedly (False).
        exit_code: the exit code the runner will report (default ``-signum``: killed by the signal).
        timeout: how long to wait for the runner's lines, s.

    Returns:
        The pid of the restarted process (None with ``expect_respawn=False``).

    Raises:
        AssertionError: the node is not running under the runner, or the runner's lines did not come
            in time (the message holds the runner's output).
    """
    pid = _running_pid(runner, fqn)
    since = len(runner.lines)
    os.kill(pid, signum)
    code = -signum if exit_code is None else exit_code
    exited = f"[runner] {fqn} exited with code {code}; respawning in"
    if not expect_respawn:
        gone = f"[runner] {fqn} exited unexpectedly with code {code}"
        assert runner.wait_for_text(gone, timeout=timeout, since=since), runner.describe()
        return None
    assert runner.wait_for_text(exited, f"[runner] respawned {fqn} (pid", timeout=timeout, since=since), (
        runner.describe()
    )
    new_pid = node_pid(runner, fqn)
    assert new_pid is not None and new_pid != pid, runner.describe()
    return new_pid


def kill_nodes(
    runner: ChildProcess, fqns: list[str], signum: int = signal.SIGKILL, timeout: float = 60.0
) -> None:
    """Send `signum` to the processes of every node of `fqns` at once; wait until the runner restarted each.

    Raises:
        AssertionError: a node is not running under the runner, or a respawn did not come in time.
    """
    pids = {fqn: _running_pid(runner, fqn) for fqn in fqns}
    since = len(runner.lines)
    for pid in pids.values():
        os.kill(pid, signum)
    lines = [f"[runner] respawned {fqn} (pid" for fqn in fqns]
    assert runner.wait_for_text(*lines, timeout=timeout, since=since), runner.describe()
    for fqn, pid in pids.items():
        assert node_pid(runner, fqn) not in (None, pid), runner.describe()


def _running_pid(runner: ChildProcess, fqn: str) -> int:
    """The pid of `fqn`'s current process, checked to be alive and a child of `runner`."""
    pid = node_pid(runner, fqn)
    assert pid is not None, f"{fqn} was never started by the runner:\n{runner.describe()}"
    try:
        assert psutil.Process(pid).ppid() == runner.proc.pid, f"pid {pid} is not the runner's child"
    except psutil.NoSuchProcess:
        raise AssertionError(f"{fqn} (pid {pid}) is not running:\n{runner.describe()}") from None
    return pid
