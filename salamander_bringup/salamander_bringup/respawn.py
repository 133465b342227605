"""When the runner restarts a node that exited on its own: launch's ``respawn`` rules, as a pure tracker.

`ros2 launch` (launch's ExecuteLocal, which launch_ros's Node extends) restarts a process whose node has
``respawn="true"`` when it exits, whatever its exit code (0 included), unless the launch is shutting
down; it waits ``respawn_delay`` seconds first (none: at once) and gives up that wait when a shutdown
comes; ``respawn_max_retries`` bounds the restarts over the whole launch (negative: no bound; the count
is never reset). The runner follows the same rules with two differences of policy: a node that exits
and will not be restarted (no ``respawn``, or its retries spent) stops the whole stack (fail-stop, exit
code 1; launch leaves that to ``on_exit``), because the arm stack is not safe with a part missing; and
a node of the project that dies of a fatal signal before it said it was up (`startup_crash`) is
started again at once, `STARTUP_RETRIES` times, outside its respawn rules: it had not run yet; and a
node of the project that exits `NEVER_UP_LIMIT` times in a row before it said it was up is not
restarted again (a bad parameter, a missing file: a restart does not mend it, and without the limit the
stack ran on without it, respawning it every few seconds for ever).

Invariants: a tracker never schedules a restart while a stop is requested, and a scheduled restart that
a stop request overtakes is dropped (`cancel`); `attempt` counts restarts from 1, as launch's
``respawn_retries`` does. Time comes in as an argument (`time.monotonic()` in the runner, a fake clock
in the tests); nothing here sleeps, starts or signals a process. The runner's use: `runner.Supervisor`.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from salamander_bringup.launch_plan import RespawnSpec

STARTUP_RETRIES = 1
"""How often the runner starts a node again that crashed before it was up (`startup_crash`), per node."""
NEVER_UP_LIMIT = 3
"""Exits in a row before the node said it was up, after which it is not restarted (fail-stop)."""
FATAL_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGILL, signal.SIGFPE})
"""Signals a process dies of by its own fault (not SIGKILL, SIGTERM or SIGINT: someone sent those)."""


def startup_crash(returncode: int, up: bool) -> str:
    """The fatal signal's name when a node died of one before it was up (`up`: it said so), else "".

    Such a node ran no callback yet: it held no lease, commanded nothing and kept no state a restart
    could lose, whatever its ``respawn`` says. Seen: SIGSEGV in a middleware thread while the node's
    parameter services were being created: rare per start, twice in about ten suite runs
    (docs/design/respawn_and_stop.md).
    """
    if up or returncode >= 0 or -returncode not in FATAL_SIGNALS:
        return ""
    return signal.Signals(-returncode).name


class StartupRetries:
    """One node's start-up retries (`startup_crash`), `STARTUP_RETRIES` at most over the whole launch."""

    def __init__(self) -> None:
        self.used = 0

    def on_exit(self, returncode: int, up: bool) -> str:
        """The fatal signal's name when the ended process is to be started again (counted), else ""."""
        crash = startup_crash(returncode, up)
        if not crash or self.used >= STARTUP_RETRIES:
            return ""
        self.used += 1
        return crash


@dataclass(frozen=True)
class Respawn:
    """Restart the node at `at` (monotonic seconds); this is its `attempt`-th restart."""

    at: float
    delay: float
    attempt: int


@dataclass(frozen=True)
class Fail:
    """Do not restart: the node is gone and the stack must stop."""

    reason: str
    """Why, for the log: "" when the node has no respawn (the plain case), else e.g. the retries spent."""


class RespawnTracker:
    """One node's respawn state: how many restarts it had, and the one pending, if any."""

    def __init__(self, spec: RespawnSpec) -> None:
        self.spec = spec
        self.retries = 0
        self.never_up = 0  # exits in a row before the node said it was up
        self.pending: Respawn | None = None

    def on_exit(self, now: float, stopping: bool, up: bool | None = None) -> Respawn | Fail | None:
        """The node's process exited at `now`; what to do.

        `up`: whether it had said it was up (None: it cannot say, not a node of the project).

        Returns:
            None when a stop was requested (`stopping`): the exit is part of the stop, nothing to do;
            `Respawn` (also kept as `pending`) when launch would restart it; `Fail` otherwise.
        """
        if stopping:
            self.pending = None
            return None
        if up is not None:
            self.never_up = 0 if up else self.never_up + 1
        if not self.spec.respawn:
            return Fail("")
        if self.never_up >= NEVER_UP_LIMIT:
            return Fail(
                f"it exited {self.never_up} times in a row before it was up: a start-up error that a restart "
                "does not mend (its lines above say which)"
            )
        if 0 <= self.spec.max_retries <= self.retries:
            return Fail(f"respawn_max_retries={self.spec.max_retries} spent")
        self.retries += 1
        self.pending = Respawn(now + self.spec.delay, self.spec.delay, self.retries)
        return self.pending

    def due(self, now: float, stopping: bool) -> Respawn | None:
        """The pending restart once its time has come and no stop is requested, else None.

        A returned restart is no longer pending (the caller starts the process); a stop request drops it.
        """
        if stopping:
            self.pending = None
            return None
        if self.pending is None or now < self.pending.at:
            return None
        due, self.pending = self.pending, None
        return due

    def cancel(self) -> Respawn | None:
        """Drop the pending restart (a stop overtook it); the dropped one, or None."""
        dropped, self.pending = self.pending, None
        return dropped
