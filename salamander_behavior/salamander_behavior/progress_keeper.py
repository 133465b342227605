"""The behaviour server's run progress, in memory and in its file, and the decisions that read it (no node).

`ProgressKeeper` holds the `progress.RunProgress` of the cell's cans and writes it (`progress.save`,
atomic) whenever it changes. What the server decides from it lives here: which cans a goal runs and why
one is refused (`refusal`, `runs.select_cans`), the order of a run's cans (`run_order`: cans lost in
transit first, then the can recorded as carried, then the picks), the reset by hand (`reset`), the new
box (`new_box`), and the operator's kept live sets of `params.OPERATOR_PARAMS` (`apply_kept`,
`keep_sets`, `reset_text`).

The file is written by one writer thread, in the order stored. A write ends with an fsync, and a disk
busy with other writers holds an fsync for hundreds of milliseconds (seen: 0.38 s beside a `dd`, which
stalled the server's executor, its ticks, its lease heartbeats and its joint state cache long enough to
stop a run on "joint state stale"). So what a run's tree changes (`observe`, every tick a can's stage
moves) is handed to the writer and the tick goes on; everything the operator or a run's start and end
changes (a reset, a new box, a kept set, the next batch) waits for its write, so what is answered or
logged as kept is on disk.

Invariants: the progress in memory is the truth; writes land in the order stored; the file holds the
last progress stored once the writer has caught up (within a millisecond on an idle disk: a process
killed before that restarts from the change before, which the pad check and the lost-can check cover as
they cover a kill just before the change); a failed write is reported through `on_error` (from the
writer thread) and the next change writes again, and an operator's change whose write failed is
answered as failed (`ProgressNotWritten`), never as kept. The box estimate outlives both resets (only
`new_box` forgets it), and one made for another layout (another centre, or cans whose compartments
lie elsewhere) is dropped at start with a warning, never applied. Semantics of the file: progress.py;
the server's lifecycle: docs/design/behavior_server.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import salamander_behavior.progress as run_progress
from salamander_behavior import params, runs
from salamander_behavior.box_estimate import BoxEstimate, EstimateNoise
from salamander_behavior.report import RunReport


class ProgressNotWritten(RuntimeError):
    """An operator's change (a reset, a new box) holds in memory but could not be written to the file."""


SetParam = Callable[[str, Any], str | None]
"""Sets one parameter on the node; None when it was set, else the reason it was refused."""


@dataclass(frozen=True)
class RunOrder:
    """A run's cans: `cans` in the order the run works on them; `picks` are the ones it picks."""

    cans: tuple[str, ...]
    picks: tuple[str, ...]
    held: str | None
    lost: tuple[str, ...]

    def notes(self) -> list[str]:
        """The warnings of the run's start: the carried can (not picked), the lost ones (asked about)."""
        lines = []
        if self.held is not None:
            lines.append(
                f"{self.held} is recorded as carried when the last run stopped: not picked; the pad check "
                "offers to place it (operator confirm) if it is on the pad"
            )
        if self.lost:
            lines.append(
                f"{', '.join(self.lost)} recorded as lost in transit, not yet confirmed cleared: the run "
                "asks the operator to confirm the cell is clear before it moves"
            )
        return lines


class ProgressKeeper:
    """The run's progress of the cans `known` (cell config order), kept in the file `path`."""

    def __init__(
        self,
        path: Path,
        known: Sequence[str],
        on_error: Callable[[str], None],
        layout: tuple[tuple[float, float], Mapping[str, tuple[float, float]]] | None = None,
    ) -> None:
        """Read the file; `warnings` says what was dropped from it, `on_error` gets a failed write.

        `layout`: the box's planned centre and each can's planned place point (m), which a kept box
        estimate must match (`BoxEstimate.layout_mismatch`); None: not checked.
        """
        self.path = path
        self.known = tuple(known)
        self.progress, self.warnings = run_progress.load(path, list(known))
        box = self.progress.box
        if box is not None and layout is not None and (mismatch := box.layout_mismatch(*layout)):
            self.warnings.append(
                f"the box estimate was made for another layout ({mismatch}): dropped, the plan until new "
                "evidence"
            )
            self.progress = self.progress.with_box(None)
        self._on_error = on_error
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="progress_writer")
        self._last_write: Future[str | None] | None = None  # its failure, or None: written

    def store(self, new: run_progress.RunProgress, force: bool = False, wait: bool = True) -> str | None:
        """Keep `new` and write it when it changed (`force`: all the same); `wait` False: return at once.

        Returns:
            With `wait`, why the write failed (None: written, or nothing to write); without, None.
        """
        if new == self.progress and not force:
            return None
        self.progress = new
        self._last_write = self._writer.submit(self._write, new)
        if wait:
            return self._last_write.result()
        return None

    def _write(self, new: run_progress.RunProgress) -> str | None:
        """The writer thread's job: one atomic, fsynced write (`progress.save`); a failure is reported."""
        try:
            run_progress.save(self.path, new)
        except OSError as exc:
            failure = f"cannot write {self.path} ({exc})"
            self._on_error(f"run progress: {failure}; a restart would not know it")
            return failure
        return None

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the writer caught up with every progress stored (at most `timeout` s); whether it did.

        A write that failed counts as done: `on_error` has said why.
        """
        last = self._last_write
        if last is None:
            return True
        try:
            last.result(timeout)
        except FutureTimeout:
            return False
        return True

    # Runs ---------------------------------------------------------------------------------------------

    def refusal(
        self, requested: Sequence[str], shutting_down: bool, active: bool
    ) -> tuple[tuple[str, ...], str]:
        """(cans, "") for a run that may start now, else ((), the reason)."""
        if shutting_down:
            return (), "the server is shutting down"
        if active:
            return (), "a run is active (cancel it first, or wait for its result)"
        done, final, lost = self.progress.done(), self.progress.final(), self.progress.lost()
        try:
            return runs.select_cans(requested, self.known, done, final, lost), ""
        except ValueError as exc:
            return (), str(exc)

    def held(self) -> str | None:
        """The can recorded as carried (not picked: the pad check offers to place it), None if none."""
        carrying = self.progress.carrying
        return carrying if carrying in self.known and carrying not in self.progress.final() else None

    def run_order(self, cans: Iterable[str]) -> RunOrder:
        """The run of `cans`: the carried can is not picked, and the lost cans and it lead the run."""
        held = self.held()
        lost = tuple(can for can in self.known if can in self.progress.lost())
        picks = tuple(can for can in cans if can != held)
        first = (*lost, *([held] if held is not None else []))
        return RunOrder((*first, *(can for can in picks if can not in first)), picks, held, lost)

    def observe(self, cans: Sequence[str], stages: Mapping[str, str | None], report: RunReport,
                box: BoxEstimate | None) -> bool:
        """Bring the progress up to date with the run's tree (`progress.observe`); whether the box changed."""
        new = run_progress.observe(self.progress, cans, stages, report, box)
        changed = new.box != self.progress.box
        self.store(new, wait=False)  # a tick never waits for the disk
        return changed

    def batch_done(self) -> bool:
        """Whether every can of the cell is done (the batch is over)."""
        return self.progress.batch_done(list(self.known))

    def next_batch(self) -> None:
        """Start the next batch (`RunProgress.next_batch`: the box and the operator's sets stay)."""
        self.store(self.progress.next_batch())

    # The box ------------------------------------------------------------------------------------------

    def box(self, centre: tuple[float, float], noise: EstimateNoise) -> BoxEstimate:
        """The box estimate kept (an empty one at `centre`: none yet), weighed with `noise`."""
        box = self.progress.box or BoxEstimate(centre)
        return box.with_noise(noise)

    def box_text(self, box: BoxEstimate, new_box_service: str) -> str:
        """The start line about the box estimate loaded (`box`: as `box` weighs it), or that none was."""
        kept = self.progress.box
        if kept is None or kept.empty:
            return "box estimate: none loaded (the plan until a can is placed by ManualAdjust or the search)"
        return (
            f"box estimate loaded from the run's progress: {box.describe()} from {kept.count} can(s) "
            f"(new box: {new_box_service})"
        )

    def new_box(self) -> str:
        """Forget the box estimate; the answer's message.

        Raises:
            ProgressNotWritten: forgotten in memory, but the file still holds the old box's estimate.
        """
        before = self.progress.box
        failure = self.store(self.progress.with_box(None), force=True)
        rested = f"it rested on {0 if before is None else before.count} can(s)"
        if failure is not None:
            raise ProgressNotWritten(
                f"new box: the box estimate is reset in this server ({rested}) but not in the run's "
                f"progress: {failure}; a restart would bring the old box's estimate back"
            )
        return (
            f"new box: the box estimate is reset ({rested}); the plan until a can is placed by "
            "ManualAdjust or the search"
        )

    # Resets and the operator's kept sets --------------------------------------------------------------

    def reset(self) -> tuple[dict[str, Any], str | None]:
        """Forget the progress (the box stays); the operator's kept sets it forgot, why the write failed."""
        kept = dict(self.progress.operator_params)
        return kept, self.store(run_progress.RunProgress(box=self.progress.box), force=True)

    def apply_kept(self, set_param: SetParam, warn: Callable[[str], None]) -> dict[str, Any]:
        """Set the operator's kept sets over the launch values; those applied.

        A kept value the parameter refuses (a wrong type, out of range) is dropped with a warning (to
        `warn`): the launch value stays, and the file forgets it.
        """
        applied: dict[str, Any] = {}
        for name, value in self.progress.operator_params.items():
            try:
                value = params.kept_value(name, value)
            except ValueError as exc:
                why: str | None = str(exc)
            else:
                why = set_param(name, value)
                if why is None:
                    applied[name] = value
                    continue
            warn(
                f"run progress: the operator's kept {name}={value!r} is not applied ({why}); the launch "
                "file's value stays"
            )
        if applied != dict(self.progress.operator_params):
            self.store(replace(self.progress, operator_params=applied))
        return applied

    def keep_sets(self, changed: Sequence[tuple[str, Any]], wait: bool = True) -> str | None:
        """After an operator's accepted set: keep those of `params.OPERATOR_PARAMS`; the log line if any.

        `wait` False (during a run: the set comes on the server's only executor, which ticks the tree and
        sends the lease's heartbeats): handed to the writer, a failed write reported through `on_error`.
        """
        ours = [(name, value) for name, value in changed if name in params.OPERATOR_PARAMS]
        new = self.progress
        for name, value in ours:
            new = new.with_operator_param(name, value)
        if new == self.progress:
            return None
        failure = self.store(new, wait=wait)
        sets = ", ".join(f"{name}={value}" for name, value in ours)
        if not wait:
            return f"kept with the run's progress (written in the background): {sets}"
        if failure is not None:
            return f"{sets} set, but not kept with the run's progress ({failure}): a restart forgets it"
        return f"kept with the run's progress (a restart applies it again): {sets}"


RESET_TEXT = (
    "run progress reset: an empty goal runs every can, none is recorded as carried (the box "
    "estimate stays: new_box forgets it)"
)
"""The answer of `run_pick_place/reset_progress`."""


def reset_text(forgotten: Mapping[str, Any], launch: Mapping[str, Any]) -> str:
    """The reset's answer; with kept sets forgotten, that the launch values are back (`launch`: all)."""
    if not forgotten:
        return RESET_TEXT
    return RESET_TEXT + "; the operator's kept sets are forgotten, back to the launch file's: " + (
        params.sources_text(launch, {})
    )
