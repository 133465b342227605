"""Fresh-machine stand-in for ``ros2 launch``: start a launch file's nodes as processes, stop them cleanly.

Usage::

    python -m salamander_control.bringup.runner LAUNCH_FILE [name:=value ...] [--dry-run] [--duration S]

The launch file is read by `launch_plan` (the same file ``ros2 launch`` runs on a full install) and each
node is started like ``ros2 run`` would start it, in a process group of its own so that a terminal's
Ctrl-C reaches the runner only and each node is stopped exactly once. Every output line is prefixed
with ``[node_name]`` (coloured on a terminal). Ctrl-C, SIGTERM or the end of ``--duration`` send SIGINT
to every node, wait ``--stop-timeout`` seconds, then kill what is left; a second Ctrl-C kills at once.

Exit codes: 0 all nodes stopped cleanly on request; 1 a node died on its own (the others are stopped)
or had to be killed; 2 the launch file or the arguments are unusable (nothing was started).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from salamander_control.bringup.launch_plan import (
    LaunchFileError,
    LaunchPlan,
    NodePlan,
    find_executable,
    load_plan,
    parse_overrides,
)

EXIT_CLEAN, EXIT_NODE_FAILED, EXIT_BAD_LAUNCH = 0, 1, 2
POLL_PERIOD = 0.05  # s; how often the supervisor looks at its children and its stop flag
_COLOURS = ("\033[36m", "\033[32m", "\033[33m", "\033[35m", "\033[34m", "\033[91m")
_RESET = "\033[0m"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM if the runner itself dies (e.g. SIGKILL), Linux only."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def clean_exit(returncode: int) -> bool:
    """Whether a node stopped as asked: exit 0, or ended by the SIGINT it was sent."""
    return returncode in (0, -signal.SIGINT, 128 + signal.SIGINT)


@dataclass
class _Child:
    node: NodePlan
    proc: subprocess.Popen[bytes]
    reader: threading.Thread


class Supervisor:
    """Starts the plan's nodes, relays their output, and stops them on request or on a failure."""

    def __init__(self, plan: LaunchPlan, out: IO[str], stop_timeout: float) -> None:
        self._plan = plan
        self._out = out
        self._stop_timeout = stop_timeout
        self._colour = out.isatty()
        self._lock = threading.Lock()
        self._children: list[_Child] = []
        self._stop_reason: str | None = None  # set from signal handlers: plain assignments only
        self._kill_now = False

    def request_stop(self, reason: str) -> None:
        """Ask for a clean stop (signal handler); a second request kills the nodes at once."""
        if self._stop_reason is not None:
            self._kill_now = True
        else:
            self._stop_reason = reason

    def say(self, text: str) -> None:
        """One line of the runner's own, prefixed like the nodes' lines."""
        self._emit("runner", text, "")

    def _emit(self, label: str, text: str, colour: str) -> None:
        prefix = f"{colour}[{label}]{_RESET}" if self._colour and colour else f"[{label}]"
        with self._lock:
            self._out.write(f"{prefix} {text}\n")
            self._out.flush()

    def _relay(self, label: str, colour: str, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self._emit(label, raw.decode("utf-8", "replace").rstrip("\r\n"), colour)
        stream.close()

    def start(self, commands: Sequence[list[str]]) -> None:
        """Start one process per node; output is read by one thread per node."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if self._colour:
            env.setdefault("RCUTILS_COLORIZED_OUTPUT", "1")  # rcutils turns colour off on a pipe
        for i, (node, cmd) in enumerate(zip(self._plan.nodes, commands, strict=True)):
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                process_group=0,
                preexec_fn=_die_with_parent,
            )
            colour = _COLOURS[i % len(_COLOURS)]
            reader = threading.Thread(target=self._relay, args=(node.name, colour, proc.stdout), daemon=True)
            reader.start()
            self._children.append(_Child(node, proc, reader))
            self.say(f"started {node.fqn} (pid {proc.pid})")

    def supervise(self, duration: float | None) -> int:
        """Run until a stop request, the end of `duration`, or a node's own exit; then stop all."""
        end = None if duration is None else time.monotonic() + duration
        failed = False
        while self._stop_reason is None:
            dead = [c for c in self._children if c.proc.poll() is not None]
            if dead:
                for child in dead:
                    self.say(f"{child.node.fqn} exited unexpectedly with code {child.proc.returncode}")
                self._stop_reason, failed = "a node died", True
                break
            if end is not None and time.monotonic() >= end:
                self._stop_reason = f"--duration {duration:g} s elapsed"
                break
            time.sleep(POLL_PERIOD)
        failed = failed or len(self._children) < len(self._plan.nodes)  # a node failed to start
        self.say(f"stopping ({self._stop_reason})")
        if self._stop_all() or failed:
            self.say(f"stopped, with failures (exit code {EXIT_NODE_FAILED})")
            return EXIT_NODE_FAILED
        self.say("all nodes stopped cleanly")
        return EXIT_CLEAN

    def _stop_all(self) -> bool:
        """SIGINT every live node, wait, kill stragglers; True when some node did not stop cleanly."""
        running = [c for c in self._children if c.proc.poll() is None]
        for child in running:
            child.proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + self._stop_timeout
        while any(c.proc.poll() is None for c in running):
            if self._kill_now or time.monotonic() >= deadline:
                break
            time.sleep(POLL_PERIOD)
        unclean = False
        for child in running:
            if child.proc.poll() is None:
                why = "second interrupt" if self._kill_now else f"not stopped after {self._stop_timeout:g} s"
                self.say(f"{child.node.fqn} {why}: killing it")
                child.proc.kill()
                child.proc.wait()
                unclean = True
            elif not clean_exit(child.proc.returncode):
                self.say(f"{child.node.fqn} stopped with exit code {child.proc.returncode}")
                unclean = True
        for child in self._children:
            child.reader.join(timeout=2.0)
        return unclean


def describe_plan(plan: LaunchPlan, commands: Sequence[list[str]]) -> str:
    """The dry-run text: the arguments and one shell-quoted command per node."""
    lines = [f"launch file: {plan.path}"]
    lines += [f"arg {name}:={value}" for name, value in plan.values.items()]
    lines += [f"[{node.name}] {shlex.join(cmd)}" for node, cmd in zip(plan.nodes, commands, strict=True)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="runner", description="Start the nodes of a ROS 2 launch XML file without ros2 launch."
    )
    parser.add_argument("launch_file", help="path of the launch XML file")
    parser.add_argument("launch_args", nargs="*", metavar="name:=value", help="launch arguments")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, start nothing")
    parser.add_argument("--duration", type=float, metavar="SECONDS", help="stop cleanly after this time")
    parser.add_argument(
        "--stop-timeout", type=float, default=10.0, metavar="SECONDS",
        help="how long nodes get to exit after SIGINT before they are killed (default 10)",
    )
    args = parser.parse_intermixed_args(argv)
    try:
        plan = load_plan(args.launch_file, parse_overrides(args.launch_args))
        commands = [node.command(find_executable(node.pkg, node.executable)) for node in plan.nodes]
    except LaunchFileError as exc:
        print(f"runner: error: {exc}", file=sys.stderr)
        return EXIT_BAD_LAUNCH
    if args.dry_run:
        print(describe_plan(plan, commands))
        return EXIT_CLEAN
    if not plan.nodes:
        print("runner: nothing to start", file=sys.stderr)
        return EXIT_CLEAN
    supervisor = Supervisor(plan, sys.stdout, args.stop_timeout)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda num, _frame: supervisor.request_stop(signal.Signals(num).name))
    try:
        supervisor.start(commands)
    except OSError as exc:  # e.g. a broken interpreter line; stop what already runs
        supervisor.say(f"cannot start a node: {exc}")
        supervisor.request_stop("a node failed to start")
    return supervisor.supervise(args.duration)


if __name__ == "__main__":
    sys.exit(main())
