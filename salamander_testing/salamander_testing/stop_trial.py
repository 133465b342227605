"""One Ctrl-C stop of the whole stack through the launch runner, at a chosen moment, and its verdict.

`stop_once` starts launch/arm_control.launch.xml with the runner (in a process group of its own, as a
shell job), waits for a moment of the stack's life, sends the terminal's Ctrl-C (SIGINT to the group)
and judges the stop: the runner exits 0, every node's exit code is 0 (the runner's "exit codes:" line),
and no node printed a traceback, a FATAL callback error or a KeyboardInterrupt. Moments (`MOMENTS`):

- ``start``: right after the runner has started every process (the nodes are still importing);
- ``discovery``: the generator has anchored on the measured joints, the rest may still be coming up;
- ``run``: the behaviour server's run has started (the arm is moving or about to).

An extra delay (s) after the moment varies where the signal lands. With ``forward_after`` every node
gets the Ctrl-C twice, as under ``ros2 launch``: there a terminal's Ctrl-C reaches the launch process and
every node (one process group), and launch then forwards a SIGINT of its own to each node. The runner
starts each node in a group of its own and forwards the Ctrl-C once, so the trial sends the second SIGINT
to each node itself, `forward_after` s after the group's. Used by the suite (test/test_stop_clean.py, a
few stops) and the long campaign (bench/stop_campaign.py).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from salamander_bringup.launch_plan import package_installed
from salamander_testing import REPO
from salamander_testing.process import ChildProcess

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
MOMENTS = {
    "start": "[runner] started /salamander/controller_node",  # the last node the launch file starts
    "discovery": "started from the measured joint state",  # the generator's anchor line
    "run": "run started:",  # the behaviour server's run
}
BAD_OUTPUT = ("Traceback", "[FATAL]", "KeyboardInterrupt", "Unable to convert call argument",
              "killing it", "stopped with exit code")  # fmt: skip
_CODES = re.compile(r"^\[runner\] exit codes: (.*)$")
_PID = re.compile(r"^\[runner\] (?:started|respawned) (\S+) \(pid (\d+)")


@dataclass
class StopOutcome:
    """What one stop did."""

    moment: str
    delay: float
    reached: bool
    """Whether the moment was seen before the signal (else the signal went at the wait's deadline)."""
    runner_code: int | None
    """None: the runner itself did not exit in time (then it was killed)."""
    node_codes: dict[str, int] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)
    stop_s: float = 0.0
    """Seconds from the signal to the runner's exit."""
    output: str = ""

    @property
    def clean(self) -> bool:
        """Runner exit 0, every node exit 0, nothing bad printed."""
        return (
            self.runner_code == 0
            and bool(self.node_codes)
            and all(code == 0 for code in self.node_codes.values())
            and not self.bad_lines
        )

    def summary(self) -> str:
        """One line for a campaign's log."""
        unclean = {n: c for n, c in self.node_codes.items() if c != 0}
        return (f"{self.moment:9s} +{self.delay:4.1f}s reached={self.reached!s:5s} runner={self.runner_code} "
                f"stop={self.stop_s:5.1f}s nonzero={unclean} bad={self.bad_lines[:2]}")  # fmt: skip


def buildable_launch_args() -> tuple[str, ...]:
    """Launch arguments that leave out a package of the launch file this build lacks (the operator view
    before salamander_view is built), so a stop trial runs the rest of the stack."""
    return () if package_installed("salamander_view") else ("view:=false",)


def stop_once(
    moment: str,
    delay: float,
    env: dict[str, str],
    log_path: Path | None = None,
    launch_args: tuple[str, ...] = (),
    moment_timeout: float = 120.0,
    stop_timeout: float = 30.0,
    forward_after: float | None = None,
    stacks_after: float | None = None,
) -> StopOutcome:
    """Start the stack, wait for `moment` (a key of `MOMENTS`) plus `delay` s, Ctrl-C it, judge the stop.

    Args:
        moment: when to stop (see the module docstring).
        delay: seconds after the moment.
        env: the environment (its ROS_DOMAIN_ID isolates the stack).
        log_path: a copy of the runner's output.
        launch_args: extra ``name:=value`` launch arguments.
        moment_timeout: how long to wait for the moment, s.
        stop_timeout: the runner's ``--stop-timeout`` (a loaded machine imports slowly).
        forward_after: when given, a second SIGINT goes to every node this many seconds after the
            group's (what ``ros2 launch`` forwards; see the module docstring).
        stacks_after: when given, every node still running this many seconds after the Ctrl-C gets its
            native stacks (`native_stacks`: gdb, every thread) written beside `log_path`, before the
            runner's stop timeout kills it.
    """
    launch_args = (*buildable_launch_args(), *launch_args)
    cmd = [sys.executable, "-m", "salamander_bringup.runner", str(LAUNCH), *launch_args,
           "--stop-timeout", f"{stop_timeout:g}"]  # fmt: skip
    runner = ChildProcess(cmd, env, log_path, process_group=True)
    try:
        reached = runner.wait_for_text(MOMENTS[moment], timeout=moment_timeout)
        if delay > 0.0:
            time.sleep(delay)  # where the signal lands is the point of the trial, not a synchronisation
        start = time.monotonic()
        runner.send_signal(signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
        if forward_after is not None:
            _forward_sigint(runner.lines, forward_after)
        code: int | None = None
        if stacks_after is not None and log_path is not None:
            try:
                code = runner.wait(timeout=max(0.0, stacks_after - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                for fqn, pid in node_pids(runner.lines).items():
                    stem = fqn.strip("/").replace("/", "_")
                    native_stacks(pid, log_path.with_name(f"{log_path.stem}.{stem}.gdb.txt"))
        if code is None:
            try:
                code = runner.wait(timeout=stop_timeout + 30.0)
            except subprocess.TimeoutExpired:
                code = None
        stop_s = time.monotonic() - start
    finally:
        runner.stop(timeout=5.0)
    lines = runner.lines
    node_codes: dict[str, int] = {}
    for line in lines:
        match = _CODES.match(line)
        if match:
            for item in match.group(1).split(", "):
                fqn, value = item.rsplit(" ", 1)
                node_codes[fqn] = int(value)
    bad = [line for line in lines if any(marker in line for marker in BAD_OUTPUT)]
    return StopOutcome(moment, delay, reached, code, node_codes, bad, stop_s, "\n".join(lines))


def node_pids(lines: list[str]) -> dict[str, int]:
    """Each node's current pid, from the runner's "started" and "respawned" lines."""
    pids = {}
    for line in lines:
        match = _PID.match(line)
        if match:
            pids[match.group(1)] = int(match.group(2))
    return pids


def native_stacks(pid: int, out: Path) -> bool:
    """Every thread's native stack of `pid` into `out` (gdb attaches, prints, detaches), if it still runs.

    Returns whether a stack was written (False: the process is gone or a zombie, or gdb is missing).
    """
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    if state == "Z":
        return False
    try:
        done = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        out.write_text(f"gdb failed: {exc}\n")
        return False
    out.write_text(done.stdout + done.stderr)
    return True


def _forward_sigint(lines: list[str], after: float) -> None:
    """SIGINT to every node's process `after` s from now, as launch forwards the terminal's Ctrl-C."""
    if after > 0.0:
        time.sleep(after)  # the gap between the two signals is what the trial varies
    for pid in node_pids(lines).values():
        try:
            os.kill(pid, signal.SIGINT)
        except ProcessLookupError:  # already stopped (the runner reaps it: its pid is not reused yet)
            pass
