"""A process a test starts (a node of the stack, the launch runner): its output, waits on it, a clean stop.

`ChildProcess` runs a command with stdout and stderr (where ROS logs go) on one pipe; a reader thread
keeps every line in memory and copies it into a log file. A test waits for a line with `wait_for_text`
(woken by each new line, bounded by a deadline: no polling, no sleeps), reads everything with `text`,
and attaches `describe()` (command, state, tail of the output) to a failed assertion. `stop` sends
SIGINT, then SIGKILL after a timeout (leaving a ``with`` block stops it and prints `describe()`, which
pytest shows for a failed test); with ``process_group=True`` the process runs in a group of its own
(like a shell job) and signals go to the whole group, which is what a terminal's Ctrl-C does.

With ``startup_retry=True`` (a node of the project: `node_process.NodeProcess` sets it) a process that
dies of a fatal signal before `run_node` said it was up (``READY=1`` on the ``NOTIFY_SOCKET`` given to it;
`bringup.respawn.startup_crash`: a middleware crash while the node was being built) is started again
once, as the launch runner does, with a line saying so; `proc` is then the new process.

`node_process.NodeProcess` is a `ChildProcess` that starts one node of the stack as the launch file
does; the launch runner's tests use a `ChildProcess` directly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from salamander_bringup.respawn import STARTUP_RETRIES, StartupRetries
from salamander_control.ros.ready import ReadyListener


class ChildProcess:
    """One running process and everything it printed.

    Args:
        cmd: the command.
        env: its environment.
        log_path: a file that gets a copy of the output (kept after the test), or None.
        cwd: its working directory (default: the test's).
        process_group: run it in a process group of its own and signal the whole group.
        interactive: give it a standard input that `send_line` writes to (else none).
        startup_retry: start it again once if it dies of a fatal signal before it said it was up.
    """

    def __init__(
        self,
        cmd: Sequence[str],
        env: Mapping[str, str],
        log_path: Path | None = None,
        *,
        cwd: Path | None = None,
        process_group: bool = False,
        interactive: bool = False,
        startup_retry: bool = False,
    ) -> None:
        self.cmd = [str(c) for c in cmd]
        self._ready = ReadyListener("test") if startup_retry else None
        self._startup = StartupRetries()
        if self._ready is not None:
            env = {**env, **self._ready.env}
        self.log_path = log_path
        self._group = process_group
        self._lines: list[str] = []
        self._ended = False
        self._changed = threading.Condition()
        env = {**env, "RCUTILS_LOGGING_BUFFERED_STREAM": "0", "PYTHONUNBUFFERED": "1"}
        self._popen = lambda: subprocess.Popen(
            self.cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            errors="replace", process_group=0 if process_group else None,
            stdin=subprocess.PIPE if interactive else None,
        )  # fmt: skip
        self.proc = self._popen()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _started_again(self) -> str:
        """At the end of the output: why the process was started again (`proc` is the new one), or ""."""
        if self._ready is None:
            return ""
        code = self.proc.wait()
        crash = self._startup.on_exit(code, self._ready.drain())
        if not crash:
            self._ready.close()
            self._ready = None
            return ""
        self.proc = self._popen()
        return (
            f"[test kit] died of {crash} (code {code}) before it was up: starting it again as the launch "
            f"runner does (pid {self.proc.pid}, start-up retry {self._startup.used} of {STARTUP_RETRIES})"
        )

    def _read(self) -> None:
        log = open(self.log_path, "w", encoding="utf-8") if self.log_path is not None else None
        try:
            while True:
                for line in self.proc.stdout:  # type: ignore[union-attr]
                    self._keep(line.rstrip("\n"), log)
                why = self._started_again()
                if not why:
                    break
                self._keep(why, log)
        finally:
            if log is not None:
                log.close()
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def _keep(self, line: str, log: TextIO | None) -> None:
        """Keep one line: in the log file, if any, and in memory for the waiters."""
        if log is not None:
            log.write(line + "\n")
            log.flush()
        with self._changed:
            self._lines.append(line)
            self._changed.notify_all()

    @property
    def lines(self) -> list[str]:
        """Every line printed so far."""
        with self._changed:
            return list(self._lines)

    def text(self) -> str:
        """Everything printed so far."""
        return "\n".join(self.lines)

    def wait_for_text(
        self, *wanted: str, timeout: float = 30.0, since: int = 0, any_of: bool = False
    ) -> bool:
        """Wait until every string of `wanted` (or, `any_of`, one of them) stood in some line; False after
        `timeout` s or at exit.

        Args:
            wanted: the strings (each may stand in a different line).
            timeout: how long to wait, s.
            since: look only at lines from this index on (``len(proc.lines)`` taken earlier).
            any_of: one of `wanted` is enough.
        """
        deadline = time.monotonic() + timeout
        missing, seen = set(wanted), since
        with self._changed:
            while True:
                for line in self._lines[seen:]:
                    missing = {w for w in missing if w not in line}
                seen = len(self._lines)
                remaining = deadline - time.monotonic()
                found = len(missing) < len(wanted) if any_of else not missing
                if found or self._ended or remaining <= 0:
                    return found
                self._changed.wait(remaining)

    def send_line(self, text: str) -> None:
        """Write `text` and a newline to the standard input (``interactive`` only)."""
        assert self.proc.stdin is not None, "not started interactive"
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None

    def describe(self) -> str:
        """Command, state and the tail of the output: the message to attach to a failed assertion."""
        state = "running" if self.alive() else f"exited with {self.proc.returncode}"
        return f"{' '.join(self.cmd)}\n[{state}] output:\n{self.text()[-4000:]}"

    def send_signal(self, signum: int) -> None:
        """Send `signum` to the process (to its whole group with ``process_group``)."""
        if self._group:
            os.killpg(self.proc.pid, signum)
        else:
            self.proc.send_signal(signum)

    def wait(self, timeout: float = 30.0) -> int:
        """Wait for the process to exit (and its output to be read); its exit code.

        Raises:
            subprocess.TimeoutExpired: still running after `timeout` s.
        """
        proc = self.proc
        code = proc.wait(timeout=timeout)
        with self._changed:  # the exit closes the pipe: the reader ends at EOF, or starts the process again
            self._changed.wait_for(lambda: self._ended or self.proc is not proc, timeout=5.0)
        if self.proc is not proc:  # started again (``startup_retry``): the new process's exit counts
            return self.wait(timeout)
        return code

    def __enter__(self) -> ChildProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the process and print `describe()` (pytest shows it when the test failed)."""
        self.stop()
        print(self.describe())

    def stop(self, timeout: float = 10.0) -> int:
        """SIGINT, then SIGKILL after `timeout` s; the exit code."""
        if self.alive():
            self.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.send_signal(signal.SIGKILL)
                self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5.0)
        return self.proc.returncode
