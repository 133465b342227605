"""One run as the behaviour server holds it: its tree, report and goal, how it ended, its result (no node).

`ActiveRun` is created when a run starts and kept (as the last run) once it is done: `tick` ticks its
tree (or stops it on cancel) and says how the run ended, `conclude` decides the result when the tree
stopped (one outcome per can, `runs.outcomes`), `feedback` says when the action's feedback changed,
`snapshot_text` is what /salamander/behavior/tree carries (its layout is read by
salamander_view/snapshot.py and salamander_sim/operator/perception.py: keep it stable).

Invariants: a run ends once (`end` is set by `conclude`, `done` by the node once the lease was given
back); `finished` completes with the `RunResult` after that. The node and its lifecycle:
docs/design/behavior_server.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import py_trees
from py_trees.common import Status
from rclpy.task import Future

from salamander_behavior import runs
from salamander_behavior.behaviors.base import BOX_ESTIMATE_KEY, HandOff
from salamander_behavior.box_estimate import BoxEstimate
from salamander_behavior.report import Outcome, RunReport


def snapshot_text(root: py_trees.behaviour.Behaviour, report: RunReport, state: str | None = None) -> str:
    """What /salamander/behavior/tree carries: run status, per-can results, the tree with statuses.

    `state` replaces the root's status in the head (e.g. "CANCELLED"); default: the root's status.
    """
    head = [f"run: {state or root.status.value} ({report.summary()})", *report.lines(), ""]
    return "\n".join(head) + py_trees.display.unicode_tree(root, show_status=True)


TICK_STALL_S = 0.3
"""s; a tick this long after the last one finds what the leaves cached as old as the gap (this process
stalled, not the inputs' sources): `stalled` says so and the node skips ticks for `TICK_SETTLE_S`. Below
the inputs' staleness bounds (0.5 s) by more than their periods (the measured joints 40 ms, part-present
100 ms)."""
TICK_SETTLE_S = 0.15
"""s the tree waits after such a stall for fresh inputs: what was published to this process while it
stood is mostly lost (the middleware reuses the buffers), so it waits for the next samples, each input's
period and some margin (the measured joints 40 ms, part-present 100 ms)."""

RELEASE_WAIT_MIN_S = 1.0
"""s; the run waits for the generator's answer to its RELEASE at least this long (2 lease timeouts)."""

IDLE_SNAPSHOT = "run: IDLE (no run yet: start one with the RunPickPlace action)"
"""The snapshot before the first run."""


class RunEnd(Enum):
    """How a run ended; the value is the word of its log line ("run complete: ...")."""

    COMPLETE = "complete"  # the root SUCCEEDED
    STOPPED = "stopped"  # the root FAILED (a can aborted, or not ready in time)
    CANCELLED = "cancelled"  # the goal was cancelled (or the server stopped)


@dataclass(frozen=True)
class RunResult:
    """The RunPickPlace result's fields: success, the summary and one outcome per can."""

    success: bool = False
    message: str = ""
    cans: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Feedback:
    """The RunPickPlace feedback's fields: the running can and leaf, cans done of the run's."""

    can: str
    step: str
    cans_done: int
    cans_total: int


class ActiveRun:
    """One run's tree, report and goal; `finished` completes with its `RunResult`."""

    def __init__(self, cans: tuple[str, ...], root: py_trees.behaviour.Behaviour, report: RunReport,
                 goal_handle: Any | None, handoff: HandOff | None = None) -> None:
        self.cans = cans
        self.handoff = handoff  # the leaves' hand-off slot: the run's end stops a goal left in it
        self.root = root
        self.tree = py_trees.trees.BehaviourTree(root)
        self.report = report
        self.goal_handle = goal_handle  # None for the run_on_start run
        self.finished: Future = Future()
        self.cancel_requested = False
        self.end: RunEnd | None = None  # set when the tree stopped; the run is over once `done`
        self.done = False
        self.release: Future | None = None
        self.release_deadline = 0.0
        self.result = RunResult()
        self._last_feedback: Feedback | None = None
        self._ticked_at: float | None = None  # monotonic time of the last `stalled` call (a tick)
        self._settled_at: float | None = None  # after a stall: ticks are skipped until then

    @property
    def state(self) -> str | None:
        """The snapshot head's word once the run was cancelled (the root's status says INVALID)."""
        return "CANCELLED" if self.end is RunEnd.CANCELLED else None

    def snapshot(self) -> str:
        """This run's snapshot text."""
        return snapshot_text(self.root, self.report, self.state)

    def stages(self) -> dict[str, str | None]:
        """Each of the run's cans' stage on the blackboard (`runs.stage_of`)."""
        return {can: runs.stage_of(can) for can in self.cans}

    def cancel(self, goal_handle: Any) -> bool:
        """Cancel `goal_handle`'s goal: whether it is this run's and still going (the next tick stops it)."""
        if self.done or self.goal_handle is not goal_handle:
            return False
        self.cancel_requested = True
        return True

    def stalled(self, now: float) -> tuple[bool, float | None]:
        """Called at every tick: (skip this tick, the stall to log: its length, once, or None).

        A tick more than `TICK_STALL_S` after the last one means the server's own process stalled
        (starved of CPU, stopped, swapped out): its callbacks did not run either, so every input the
        leaves cached is at least that old, at no fault of its source. A tick then would stop the run on
        inputs that are stale only here ("joint state stale"); the ticks of the next `TICK_SETTLE_S` are
        skipped while fresh inputs come in, and the first tick after that runs the tree, however late it
        comes: on a process starved for good every other tick still runs it.
        """
        last, self._ticked_at = self._ticked_at, now
        if self._settled_at is not None:
            if now < self._settled_at:
                return True, None
            self._settled_at = None
            return False, None
        if last is not None and now - last > TICK_STALL_S:
            self._settled_at = now + TICK_SETTLE_S
            return True, now - last
        return False, None

    def tick(self) -> RunEnd | None:
        """Tick the tree once, or stop it when a cancel was requested; how the run ended (None: running).

        A cancel stops the tree (terminate(): the running goal is cancelled, the vacuum left as it is).
        However the run ends, a goal still in the hand-off slot is cancelled.
        """
        if self.cancel_requested:
            end: RunEnd | None = RunEnd.CANCELLED
            self.root.stop(Status.INVALID)
        else:
            self.tree.tick()
            status = self.root.status
            end = {Status.SUCCESS: RunEnd.COMPLETE, Status.FAILURE: RunEnd.STOPPED}.get(status)
        if end is not None and self.handoff is not None:
            self.handoff.cancel()  # a goal handed on with no leaf left to take it over stops here
        return end

    def await_release(self, release: Future | None, now: float, lease_timeout_s: float) -> None:
        """The lease RELEASE was sent (`release`: its answer): wait for it, two lease timeouts at most."""
        self.release = release
        self.release_deadline = now + max(RELEASE_WAIT_MIN_S, 2.0 * lease_timeout_s)

    def released(self, now: float) -> bool:
        """Whether the wait for the lease RELEASE's answer is over (answered, none sent, or too late)."""
        return self.release is None or self.release.done() or now > self.release_deadline

    def box(self) -> BoxEstimate | None:
        """The box estimate on the blackboard (None: none there)."""
        box = py_trees.blackboard.Blackboard.storage.get(BOX_ESTIMATE_KEY)
        return box if isinstance(box, BoxEstimate) else None

    def feedback(self) -> Feedback | None:
        """The feedback now when it differs from the last one returned, else None."""
        now = runs.progress(self.root, self.cans)
        done = sum(1 for can in self.cans if self.report.result_of(can) is not None)
        feedback = Feedback(now.can, now.step, done, len(self.cans))
        if feedback == self._last_feedback:
            return None
        self._last_feedback = feedback
        return feedback

    def conclude(self, end: RunEnd) -> list[str]:
        """The tree stopped: set `end` and `result`; the cans it leaves in doubt (`runs.left_on_pad`)."""
        self.end = end
        stages = self.stages()
        outcomes = runs.outcomes(self.cans, self.report, stages)
        summary = self.report.summary()
        if end is RunEnd.CANCELLED:
            summary += f"; cancelled, outcomes {dict(zip(self.cans, outcomes, strict=True))}"
        self.result = RunResult(
            success=end is RunEnd.COMPLETE and all(o == Outcome.PLACED for o in outcomes),
            message=summary,
            cans=list(self.cans),
            outcomes=outcomes,
        )
        return runs.left_on_pad(self.cans, self.report, stages)
