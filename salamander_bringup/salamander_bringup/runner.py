"""Fresh-machine stand-in for ``ros2 launch``: start a launch file's nodes as processes, stop them cleanly.

Usage::

    python -m salamander_bringup.runner LAUNCH_FILE [name:=value ...] [--dry-run] [--duration S]

The launch file is read by `launch_plan` (the same file ``ros2 launch`` runs on a full install) and each
node is started like ``ros2 run`` would start it, in a process group of its own so that a terminal's
Ctrl-C reaches the runner only and each node is stopped exactly once. Every output line is prefixed
with ``[node_name]`` (coloured on a terminal). Ctrl-C, SIGTERM or the end of ``--duration`` send SIGINT
to every node, wait ``--stop-timeout`` seconds, then kill what is left; a second Ctrl-C kills at once
(one within `REPEAT_WINDOW_S` of the first is the same stop: ``timeout`` sends its signal to the runner
and then to the runner's process group, so the runner gets it twice within microseconds).
Before a node of the project's packages is killed for not stopping in time, it is asked for every
thread's Python stack (`STACK_DUMP_SIGNAL`, printed by `run_node`'s faulthandler), and py-spy (pinned in
requirements.txt; skipped with one line where it is missing) reads its Python threads' native frames
under them, so the log shows where it hung, down to the middleware call it waits in.

Nodes of a viewer package this machine lacks (robot_state_publisher, rviz2 with ``rviz:=true``) are left
out with one line per package (`launch_plan.resolve_commands`); the rest starts. Multi-line
``<param name value>`` values (the URDF) go to params files generated in a temporary folder that lives
as long as the runner.

A node with ``respawn="true"`` that exits on its own (any exit code) is started again after its
``respawn_delay``, at most ``respawn_max_retries`` times, as ``ros2 launch`` does (`respawn`): one line
"<node> exited with code N; respawning in D s (respawn K)", then "respawned <node> (pid P, respawn K)".
A stop request cancels a pending restart. Any other exit of a node stops the stack, but one: each node
gets a datagram socket of its own (``NOTIFY_SOCKET``, systemd's protocol), on which the project's
`run_node` says "READY=1" once the node is built; a node of the project that dies of a fatal signal
before that (`respawn.startup_crash`: a middleware crash while the node was being built) is started
again at once, once ("<node> died of SIGSEGV before it was up ...; starting it again").

Exit codes: 0 all nodes stopped cleanly on request (respawned exits before it included; clean: exit 0,
or for a node outside the project's packages also the SIGINT's own -2); 1 a node died on its own and was
not respawned (the others are stopped), stopped otherwise or had to be killed; 2 the launch file or the
arguments are unusable (nothing was started).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from salamander_bringup.launch_plan import (
    LaunchFileError,
    LaunchPlan,
    NodePlan,
    load_plan,
    parse_overrides,
    resolve_commands,
)
from salamander_bringup.respawn import STARTUP_RETRIES, Fail, Respawn, RespawnTracker, StartupRetries
from salamander_control.ros.held_signals import HELD_SIGINT_PACKAGES, HELD_SIGNALS, STACK_DUMP_SIGNAL
from salamander_control.ros.ready import ReadyListener

EXIT_CLEAN, EXIT_NODE_FAILED, EXIT_BAD_LAUNCH = 0, 1, 2
POLL_PERIOD = 0.05  # s; how often the supervisor looks at its children and its stop flag
REPEAT_WINDOW_S = 0.25  # s; a stop request this soon after the first is the same one, not a second Ctrl-C
STACK_DUMP_WAIT = 1.0  # s; how long a hung node is given to print its stacks before it is killed
NATIVE_STACKS_TIMEOUT_S = 10.0  # s; py-spy reads a process in well under a second
_COLOURS = ("\033[36m", "\033[32m", "\033[33m", "\033[35m", "\033[34m", "\033[91m")
_RESET = "\033[0m"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM if the runner itself dies (e.g. SIGKILL), Linux only."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _die_with_parent_and_hold_sigint() -> None:
    """`_die_with_parent`, and SIGINT blocked (inherited through exec) until run_node unblocks it."""
    _die_with_parent()
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)


def py_spy() -> str | None:
    """The py-spy to read a hung node with: the PATH's, else the one beside this interpreter (a venv's)."""
    return shutil.which("py-spy") or shutil.which("py-spy", path=os.path.dirname(sys.executable))


def clean_exit(returncode: int, pkg: str) -> bool:
    """Whether a node of package `pkg` stopped as asked.

    Exit 0, or for another package's node (rviz2, robot_state_publisher) ended by the SIGINT it was
    sent. A node of the project's packages stops through `run_node`, which never lets a SIGINT end the
    process: dead of it, it raised a KeyboardInterrupt somewhere (a traceback), not a clean stop.
    """
    if pkg in HELD_SIGINT_PACKAGES:
        return returncode == 0
    return returncode in (0, -signal.SIGINT, 128 + signal.SIGINT)


@dataclass
class _Child:
    """One node of the plan: command, respawn state, current process (None while a restart is pending)."""

    node: NodePlan
    cmd: list[str]
    colour: str
    tracker: RespawnTracker
    ready: ReadyListener
    """Where its `run_node` says "READY=1" (`NOTIFY_SOCKET`)."""
    proc: subprocess.Popen[bytes] | None = None
    readers: list[threading.Thread] = field(default_factory=list)
    startup: StartupRetries = field(default_factory=StartupRetries)


class Supervisor:
    """Starts the plan's nodes, relays their output, restarts the respawning ones, stops them all.

    Restarts follow launch's rules (`respawn.RespawnTracker`); all stop on request or when a node is
    gone for good.
    """

    def __init__(self, plan: LaunchPlan, out: IO[str], stop_timeout: float) -> None:
        self._plan = plan
        self._out = out
        self._stop_timeout = stop_timeout
        self._colour = out.isatty()
        self._lock = threading.Lock()
        self._children: list[_Child] = []
        self._env: dict[str, str] = {}
        self._stop_reason: str | None = None  # set from signal handlers: plain assignments only
        self._stop_requested_at = -math.inf  # monotonic s of the first stop request
        self._kill_now = False
        self._out_closed = False  # writing `out` failed once: nothing more goes there

    def request_stop(self, reason: str) -> None:
        """Ask for a clean stop (signal handler); a second request kills the nodes at once.

        A request within `REPEAT_WINDOW_S` of the first is the same stop (a signal sent to the runner and
        to its process group, as ``timeout`` does), not an operator's second Ctrl-C.
        """
        now = time.monotonic()
        if self._stop_reason is None:
            self._stop_reason, self._stop_requested_at = reason, now
        elif now - self._stop_requested_at >= REPEAT_WINDOW_S:
            self._kill_now = True

    def say(self, text: str) -> None:
        """One line of the runner's own, prefixed like the nodes' lines."""
        self._emit("runner", text, "")

    def _emit(self, label: str, text: str, colour: str) -> None:
        prefix = f"{colour}[{label}]{_RESET}" if self._colour and colour else f"[{label}]"
        with self._lock:
            if self._out_closed:
                return  # the relays keep draining the nodes' pipes: a node never blocks on its log
            try:
                self._out.write(f"{prefix} {text}\n")
                self._out.flush()
            except OSError as exc:  # `| head` quit, a terminal gone: stop cleanly rather than wedge
                self._out_closed = True
                with contextlib.suppress(OSError):
                    print(f"[runner] output closed ({exc}): stopping the stack", file=sys.stderr, flush=True)
                if self._stop_reason is None:  # not a second request: that would kill the nodes
                    self.request_stop("its output was closed")

    def _relay(self, label: str, colour: str, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self._emit(label, raw.decode("utf-8", "replace").rstrip("\r\n"), colour)
        stream.close()

    def start(self, commands: Sequence[list[str]]) -> None:
        """Start one process per node; output is read by one thread per process.

        Raises:
            OSError: a node's process cannot start (the nodes started before it keep running).
        """
        self._env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if self._colour:
            self._env.setdefault("RCUTILS_COLORIZED_OUTPUT", "1")  # rcutils turns colour off on a pipe
        for i, (node, cmd) in enumerate(zip(self._plan.nodes, commands, strict=True)):
            colour, tracker = _COLOURS[i % len(_COLOURS)], RespawnTracker(node.respawn)
            child = _Child(node, list(cmd), colour, tracker, ReadyListener("runner"))
            self._spawn(child)
            self._children.append(child)
            self.say(f"started {node.fqn} (pid {child.proc.pid})")  # type: ignore[union-attr]

    def _spawn(self, child: _Child) -> None:
        proc = subprocess.Popen(
            child.cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**self._env, **child.ready.env},
            process_group=0,
            preexec_fn=(_die_with_parent_and_hold_sigint if child.node.pkg in HELD_SIGINT_PACKAGES
                        else _die_with_parent),
        )
        reader = threading.Thread(target=self._relay, args=(child.node.name, child.colour, proc.stdout),
                                  daemon=True)  # fmt: skip
        reader.start()
        child.proc = proc
        child.readers.append(reader)

    def supervise(self, duration: float | None) -> int:
        """Run until a stop request, the end of `duration`, or a node gone for good; then stop all.

        A node that exits on its own is restarted when its ``respawn`` says so (after its
        ``respawn_delay``, unless a stop comes first); any other exit stops the stack (exit 1).
        """
        end = None if duration is None else time.monotonic() + duration
        failed = False
        while self._stop_reason is None:
            now = time.monotonic()
            failed = self._handle_exits(now) or self._respawn_due(now)
            if failed:
                self._stop_reason = "a node died"
                break
            if end is not None and now >= end:
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

    def _handle_exits(self, now: float) -> bool:
        """Log each process that exited on its own and schedule its restart.

        Returns True when one is gone for good (no respawn, or its retries spent).
        """
        gone = False
        for child in self._children:
            if child.proc is None or child.proc.poll() is None:
                continue
            code, child.proc = child.proc.returncode, None
            up = child.ready.drain()  # said by the process that just ended, if at all
            crash = child.startup.on_exit(code, up) if child.node.pkg in HELD_SIGINT_PACKAGES else ""
            if crash:
                try:
                    self._spawn(child)
                except OSError as exc:
                    self.say(f"cannot start {child.node.fqn} again: {exc}")
                    gone = True
                    continue
                self.say(f"{child.node.fqn} died of {crash} (code {code}) before it was up: a crash while it "
                         f"was being built, before any callback; starting it again (pid "
                         f"{child.proc.pid}, start-up retry {child.startup.used} of {STARTUP_RETRIES})")  # type: ignore[union-attr]  # fmt: skip
                continue
            project = child.node.pkg in HELD_SIGINT_PACKAGES  # says READY=1 once built (`run_node`)
            decision = child.tracker.on_exit(now, stopping=False, up=up if project else None)
            if isinstance(decision, Respawn):
                self.say(f"{child.node.fqn} exited with code {code}; respawning in {decision.delay:g} s "
                         f"(respawn {decision.attempt})")  # fmt: skip
            else:
                why = f" ({decision.reason})" if isinstance(decision, Fail) and decision.reason else ""
                self.say(f"{child.node.fqn} exited unexpectedly with code {code}{why}")
                gone = True
        return gone

    def _respawn_due(self, now: float) -> bool:
        """Start the processes whose restart is due; True when one cannot start."""
        for child in self._children:
            if self._stop_reason is not None:  # a stop came in: `_stop_all` cancels what is pending
                return False
            due = child.tracker.due(now, stopping=False)
            if due is None:
                continue
            try:
                self._spawn(child)
            except OSError as exc:
                self.say(f"cannot respawn {child.node.fqn}: {exc}")
                return True
            self.say(f"respawned {child.node.fqn} (pid {child.proc.pid}, respawn {due.attempt})")  # type: ignore[union-attr]
        return False

    def _stop_all(self) -> bool:
        """Drop pending restarts, SIGINT every live node, wait, kill stragglers.

        Returns True when some node did not stop cleanly.
        """
        for child in self._children:
            if child.tracker.cancel() is not None:
                self.say(f"{child.node.fqn}: respawn cancelled ({self._stop_reason})")
        running = [c for c in self._children if c.proc is not None and c.proc.poll() is None]
        for child in running:
            child.proc.send_signal(signal.SIGINT)  # type: ignore[union-attr]
        deadline = time.monotonic() + self._stop_timeout
        while any(c.proc.poll() is None for c in running):  # type: ignore[union-attr]
            if self._kill_now or time.monotonic() >= deadline:
                break
            time.sleep(POLL_PERIOD)
        timed_out = f"not stopped after {self._stop_timeout:g} s"
        if not self._kill_now:
            self._dump_stacks([c for c in running if c.proc.poll() is None], timed_out)  # type: ignore[union-attr]
        unclean = False
        for child in running:
            proc = child.proc
            assert proc is not None
            if proc.poll() is None:
                why = "second interrupt" if self._kill_now else timed_out
                self.say(f"{child.node.fqn} {why}: killing it")
                proc.kill()
                proc.wait()
                unclean = True
            elif not clean_exit(proc.returncode, child.node.pkg):
                self.say(f"{child.node.fqn} stopped with exit code {proc.returncode}")
                unclean = True
        if running:  # one line with every node's code: 0 is a clean stop (a test counts them)
            self.say("exit codes: " + ", ".join(f"{c.node.fqn} {c.proc.returncode}" for c in running))  # type: ignore[union-attr]
        for child in self._children:
            for reader in child.readers:
                reader.join(timeout=2.0)
            child.ready.close()
        return unclean

    def _dump_stacks(self, hung: list[_Child], why: str) -> None:
        """Ask each hung node of the project's packages for its threads' stacks; wait for them to print."""
        asked = [c for c in hung if c.node.pkg in HELD_SIGINT_PACKAGES]
        for child in asked:
            self.say(f"{child.node.fqn} {why}: its threads' stacks follow")
            child.proc.send_signal(STACK_DUMP_SIGNAL)  # type: ignore[union-attr]
        if asked:
            time.sleep(STACK_DUMP_WAIT)  # faulthandler writes at once; this lets the relay threads print it
        for child in asked:
            self._native_stacks(child)

    def _native_stacks(self, child: _Child) -> None:
        """Print the native frames of `child`'s Python threads (py-spy), under the node's own label.

        faulthandler's dump ends at the Python frame that called into C++; a hang in the middleware
        (rclpy's destroy calls into Fast DDS) is below it. py-spy attaches with ptrace, which a parent
        may do to its child, and reads the process without running anything in it.
        """
        assert child.proc is not None
        tool = py_spy()
        if tool is None:
            self.say(f"{child.node.fqn}: no py-spy on this machine: its native frames are not read")
            return
        try:
            cmd = [tool, "dump", "--native", "--pid", str(child.proc.pid)]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=NATIVE_STACKS_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self.say(f"{child.node.fqn}: py-spy could not read its native frames: {exc}")
            return
        if done.returncode != 0:
            why = (done.stderr or done.stdout).strip().splitlines() or [f"exit code {done.returncode}"]
            self.say(f"{child.node.fqn}: py-spy could not read its native frames: {why[-1]}")
            return
        self.say(f"{child.node.fqn}: native frames of its Python threads (py-spy) follow")
        for line in done.stdout.splitlines():
            self._emit(child.node.name, line, child.colour)


def describe_plan(plan: LaunchPlan, commands: Sequence[list[str]]) -> str:
    """The dry-run text: the arguments and one shell-quoted command per node."""
    lines = [f"launch file: {plan.path}"]
    lines += [f"arg {name}:={value}" for name, value in plan.values.items()]
    lines += [f"[{node.name}] {shlex.join(cmd)}" for node, cmd in zip(plan.nodes, commands, strict=True)]
    return "\n".join(lines)


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number > 0 (NaN waited for ever, 0 or less ended at once)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0.0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="runner", description="Start the nodes of a ROS 2 launch XML file without ros2 launch."
    )
    parser.add_argument("launch_file", help="path of the launch XML file")
    parser.add_argument("launch_args", nargs="*", metavar="name:=value", help="launch arguments")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, start nothing")
    parser.add_argument(
        "--duration", type=positive_seconds, metavar="SECONDS", help="stop cleanly after this time"
    )
    parser.add_argument(
        "--stop-timeout", type=positive_seconds, default=10.0, metavar="SECONDS",
        help="how long nodes get to exit after SIGINT before they are killed (default 10)",
    )
    args = parser.parse_intermixed_args(argv)
    # Generated params files (multi-line <param name value>, e.g. the URDF) live while the runner does.
    with tempfile.TemporaryDirectory(prefix="salamander_runner_") as params_dir:
        return _run(args, params_dir)


def _run(args: argparse.Namespace, params_dir: str) -> int:
    try:
        plan = load_plan(args.launch_file, parse_overrides(args.launch_args))
        resolved = resolve_commands(plan, params_dir)
    except LaunchFileError as exc:
        print(f"runner: error: {exc}", file=sys.stderr)
        return EXIT_BAD_LAUNCH
    plan, commands = resolved.plan, list(resolved.commands)
    if args.dry_run:
        print("\n".join([*resolved.skipped, describe_plan(plan, commands)]))
        return EXIT_CLEAN
    if not plan.nodes:
        print("runner: nothing to start", file=sys.stderr)
        return EXIT_CLEAN
    supervisor = Supervisor(plan, sys.stdout, args.stop_timeout)
    for line in resolved.skipped:  # a viewer package this machine lacks: the rest still starts
        supervisor.say(line)
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
