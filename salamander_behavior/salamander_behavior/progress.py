"""The run's progress that outlives the behaviour server: which cans are done, which one was carried (pure).

The behaviour server keeps, per cell, what became of each can and which can may be on the pad, in a
small JSON file (parameter ``progress_file``; default ``$ROS_HOME/salamander/<node>/progress.json``,
``~/.ros`` without ROS_HOME, `default_path`). A server restarted mid-run (the runner respawns it) reads
it and resumes with the cans not yet placed; the tree's pad check (behaviors/pad.py) offers to place
the can recorded as carried. The file::

    {"version": 1, "cans": {"can_0": "placed", "can_1": "aborted"}, "carrying": "can_1",
     "operator_params": {"manual_place": true},
     "box": {"centre": [0.38, -0.18], "evidence": [{"can": "can_0", "planned": [0.3069, -0.18],
             "offset": [0.0012, -0.0004], "source": "manual", "compartment": 0}]}}

Per-can states: ``placed`` (let go over its compartment: part-present dropped after the vacuum went
off over it; kept even when the rise after it failed), ``missed``, ``skipped`` (never touched),
``aborted`` (the run stopped with it touched), ``removed`` (taken off the pad by hand, or gone from
the pad when the server started: not where the cell config says, so an empty goal does not pick it
again; a goal naming it does), ``lost`` (part-present dropped while it was carried: it fell off the pad
outside the box and may lie anywhere in the cell; unacknowledged: every run first waits for the
operator to confirm the cell is clear (behaviors/lost.py), which makes it ``removed``; until then the
batch is not over, so the reset after a finished batch never forgets it). ``carrying`` is the can the
vacuum was switched on for and that has not been let go yet (None: nothing recorded as carried).

``operator_params`` holds the operator's live sets of the parameters a restart keeps
(`salamander_behavior.params.OPERATOR_PARAMS`: name -> value, as set last); the node applies them over
its launch values at start. They stay until the operator sets them again or resets the progress
(`run_pick_place/reset_progress`); the reset after a finished batch (`next_batch`) keeps them. A file
without the key (older) has none.

``box`` is the estimate of where the box stands (box_estimate.py: its planned centre and the evidence,
from which the estimate is recomputed on load). It belongs to the box, not to the run: the reset after a
finished batch and `run_pick_place/reset_progress` keep it; only the operator's "new box"
(`/salamander/box/new_box`) clears it. A file without the key has none; a bad one is dropped with a
warning (the rest of the file stays usable).

Invariants: the file is replaced atomically (written to a temporary file in the same folder, then
`os.replace`), so a kill at any moment leaves the old or the new content, never a mix. A missing file
is a fresh start; an unreadable, corrupt or unknown one is a fresh start with a warning (the caller
logs it), never a crash. Can ids the cell config does not know are dropped with a warning.

Where it is used: `progress_keeper.py`, the behaviour server's keeper (reads at start, writes on every
change, `run_pick_place/reset_progress` clears it); docs/interfaces.md, "Behaviour server";
docs/design/behavior_server.md.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from salamander_behavior.behaviors.base import STAGE_LET_GO, STAGE_LOST, STAGE_REMOVED
from salamander_behavior.box_estimate import BoxEstimate
from salamander_behavior.report import Outcome, RunReport

VERSION = 1
PLACED, MISSED, SKIPPED, ABORTED = Outcome.PLACED, Outcome.MISSED, Outcome.SKIPPED, Outcome.ABORTED
REMOVED, LOST = Outcome.REMOVED, Outcome.LOST
STATES = frozenset({PLACED, MISSED, SKIPPED, ABORTED, REMOVED, LOST})
DONE = frozenset({PLACED, MISSED, REMOVED, LOST})
"""States after which a can is not at its place in the cell config: an empty goal does not pick it."""
FINAL = frozenset({PLACED, MISSED})
"""States after which a can is never picked again, not even by a goal naming it (it is in the box)."""


PARAM_TYPES = (bool, int, float, str)
"""What an operator parameter's value may be in the file (JSON scalars; the node checks the rest)."""


@dataclass(frozen=True)
class RunProgress:
    """What the file holds: state by can id, the can carried (None: none), operator sets, the box estimate."""

    cans: Mapping[str, str] = field(default_factory=dict)
    carrying: str | None = None
    operator_params: Mapping[str, Any] = field(default_factory=dict)
    box: BoxEstimate | None = None

    def done(self) -> frozenset[str]:
        """Cans an empty goal leaves out (placed, missed, removed)."""
        return frozenset(can for can, state in self.cans.items() if state in DONE)

    def final(self) -> frozenset[str]:
        """Cans no goal may name (placed or missed: in the box)."""
        return frozenset(can for can, state in self.cans.items() if state in FINAL)

    def lost(self) -> frozenset[str]:
        """Cans lost in transit that the operator has not yet confirmed cleared from the cell."""
        return frozenset(can for can, state in self.cans.items() if state == LOST)

    def batch_done(self, known: Sequence[str]) -> bool:
        """Whether every can of `known` is done, none carried and none lost unacknowledged (next batch)."""
        return self.done() >= set(known) and self.carrying is None and not self.lost()

    def with_state(self, can: str, state: str) -> RunProgress:
        """A copy with `can` in `state` (a can in the box keeps that state: the box is what counts)."""
        if state not in STATES:
            raise ValueError(f"unknown can state {state!r}")
        if self.cans.get(can) in FINAL and state not in FINAL:
            return self
        return replace(self, cans={**self.cans, can: state})

    def with_carrying(self, can: str | None) -> RunProgress:
        """A copy with `can` recorded as carried (None: nothing carried)."""
        return replace(self, cans=dict(self.cans), carrying=can)

    def with_box(self, box: BoxEstimate | None) -> RunProgress:
        """A copy with the box estimate `box` (None: none, a new box)."""
        return replace(self, box=box)

    def with_operator_param(self, name: str, value: Any) -> RunProgress:
        """A copy that keeps the operator's live set `name` := `value`."""
        if not isinstance(value, PARAM_TYPES):
            raise ValueError(f"{name}: a kept parameter must be a bool, number or string, got {value!r}")
        return replace(self, operator_params={**self.operator_params, name: value})

    def next_batch(self) -> RunProgress:
        """Every can to do again, none carried; the operator's sets and the box stay (the automatic reset)."""
        return RunProgress(operator_params=dict(self.operator_params), box=self.box)

    def to_json(self) -> str:
        """The file's text."""
        data: dict[str, Any] = {"version": VERSION, "cans": dict(self.cans), "carrying": self.carrying,
                                "operator_params": dict(self.operator_params)}  # fmt: skip
        if self.box is not None:
            data["box"] = self.box.to_dict()
        return json.dumps(data, indent=1)

    def describe(self) -> str:
        """One line for the log, e.g. ``can_0 placed, can_1 aborted; carrying can_1``."""
        cans = ", ".join(f"{can} {state}" for can, state in self.cans.items()) or "no can done yet"
        kept = ", ".join(f"{name}={value}" for name, value in self.operator_params.items())
        return f"{cans}; carrying {self.carrying or 'nothing'}" + (f"; operator set {kept}" if kept else "")


PROGRESS_DIR_ENV = "SALAMANDER_PROGRESS_DIR"
"""Where the progress files go instead of ``$ROS_HOME/salamander``: scripts/run.sh sets a fresh folder per
start in simulation, where every start is a new world (the cans back on their spots)."""


def default_path(node_fqn: str, env: Mapping[str, str] | None = None) -> Path:
    """``$ROS_HOME/salamander/<node fqn, '/' -> '_'>/progress.json`` (``~/.ros`` without ROS_HOME).

    Under ``$SALAMANDER_PROGRESS_DIR`` instead of ``$ROS_HOME/salamander`` when that is set
    (`PROGRESS_DIR_ENV`).
    """
    env = os.environ if env is None else env
    home = Path(env["ROS_HOME"]) if env.get("ROS_HOME") else Path.home() / ".ros"
    root = Path(env[PROGRESS_DIR_ENV]) if env.get(PROGRESS_DIR_ENV) else home / "salamander"
    folder = node_fqn.strip("/").replace("/", "_") or "behavior_server_node"
    return root / folder / "progress.json"


def parse(text: str, known: Sequence[str]) -> tuple[RunProgress, list[str]]:
    """The progress in `text` and warnings (unknown cans dropped).

    Raises:
        ValueError: not JSON, not this format or version, or a state that is not one of `STATES`.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ValueError(f"not a version-{VERSION} progress file")
    cans, carrying = data.get("cans"), data.get("carrying")
    if not isinstance(cans, dict) or not (carrying is None or isinstance(carrying, str)):
        raise ValueError("'cans' must be an object and 'carrying' a can id or null")
    operator_params = data.get("operator_params", {})
    if not isinstance(operator_params, dict) or not all(
        isinstance(v, PARAM_TYPES) for v in operator_params.values()
    ):
        raise ValueError("'operator_params' must be an object of bools, numbers and strings")
    warnings = []
    kept: dict[str, str] = {}
    for can, state in cans.items():
        if not isinstance(state, str) or state not in STATES:
            raise ValueError(f"can {can!r} has the unknown state {state!r}")
        if can in known:
            kept[can] = state
        else:
            warnings.append(f"can {can!r} is not in the cell config: dropped")
    if carrying is not None and carrying not in known:
        warnings.append(f"the carried can {carrying!r} is not in the cell config: dropped")
        carrying = None
    box = None
    if data.get("box") is not None:
        try:
            box = BoxEstimate.from_dict(data["box"])
        except ValueError as exc:
            warnings.append(f"the box estimate is unusable ({exc}): dropped, the plan until new evidence")
    return RunProgress(kept, carrying, operator_params, box), warnings


def load(path: Path, known: Sequence[str]) -> tuple[RunProgress, list[str]]:
    """The progress of `path` and warnings (never an exception).

    A missing file is a fresh start; an unreadable or bad one is a fresh start with a warning saying why.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return RunProgress(), []
    except (OSError, UnicodeDecodeError) as exc:
        return RunProgress(), [f"cannot read the progress file {path} ({exc}): starting fresh"]
    try:
        return parse(text, known)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # a hand-edited file: never a crash
        return RunProgress(), [f"the progress file {path} is unusable ({exc}): starting fresh"]


def save(path: Path, progress: RunProgress) -> None:
    """Write atomically (temporary file in the same folder, then `os.replace`).

    Raises:
        OSError: the folder cannot be made or written (the caller logs it; the run goes on).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".progress.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(progress.to_json())
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def observe(
    progress: RunProgress, cans: Sequence[str], stages: Mapping[str, str | None], report: RunReport,
    box: BoxEstimate | None = None,
) -> RunProgress:
    """The progress after what the run's tree shows now (called after every tick).

    Args:
        progress: the progress so far.
        cans: the run's cans (the held can included).
        stages: each can's blackboard stage (behaviors/base.py), None when untouched; "removed" for
            the carried can the pad check saw taken off the pad by hand (or gone from it) and for a lost
            can the operator confirmed cleared; "lost" for a can that fell off the pad in transit.
        report: the run's report (outcomes).
        box: the box estimate on the blackboard (None: the run did not change it; kept as it is).
    """
    out = progress if box is None or box == progress.box else progress.with_box(box)
    for can in cans:
        stage = stages.get(can)
        if stage == STAGE_LOST:
            out = out.with_state(can, LOST)  # not on the pad any more: nothing is carried
            if out.carrying == can:
                out = out.with_carrying(None)
            continue
        if stage == STAGE_REMOVED:
            out = out.with_state(can, REMOVED)
            if out.carrying == can:
                out = out.with_carrying(None)
            continue
        if stage == STAGE_LET_GO:
            out = out.with_state(can, PLACED)  # over its compartment, and part-present dropped
            if out.carrying == can:
                out = out.with_carrying(None)
        elif stage is not None and out.cans.get(can) not in FINAL:
            out = out.with_carrying(can)  # the vacuum came on for it: it may be on the pad
        result = report.result_of(can)
        if result is not None:
            out = out.with_state(can, result.value)
    return out
