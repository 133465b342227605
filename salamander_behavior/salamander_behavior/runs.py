"""A run of the pick-and-place as the behaviour server's action sees it: cans, progress, outcomes (pure).

A run is started through the RunPickPlace action (or once at start-up with `run_on_start`), works
through the cans it was given with a tree built for it (`tree.build_tree`) and ends with one outcome
per can. This module holds the decisions around that, without rclpy:

- `select_cans`: the cans of a goal. Empty = every can of the cell config not yet done (done = placed,
  missed, removed by hand or lost, as the run's progress records it, which outlives a restart of the
  server: progress.py); otherwise the named cans in the given order. Unknown ids, duplicates and cans in
  the box (placed or missed) are refused with the reason; nothing left to do is refused too. A can
  removed by hand may be named again (put back at its spot), and so may a can lost in transit. Cans
  lost and not yet acknowledged lead every run (the node puts them first; its first step asks the
  operator to confirm the cell is clear of them, behaviors/lost.py), so with such a can an empty goal
  makes a run even when no can is left to pick.
- `progress`: the can being worked on and the running leaf, for the action's feedback.
- `outcomes`: one word per can for the result: the run report's (placed, missed, skipped, aborted, ...),
  "aborted" for a can left on the pad by a cancel (its stage on the blackboard says the vacuum came
  on), "removed" for the can found on the pad and taken off by hand (or a lost can the operator
  confirmed cleared), "lost" for a can that fell off the pad in transit, "not_run" for a can the run
  never finished.

Where it is used: active_run.py and progress_keeper.py for `nodes/behavior_server_node.py` (the ROS
shell); the lifecycle in docs/interfaces.md and docs/design/behavior_server.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import py_trees
from py_trees.common import Status

from salamander_behavior.behaviors.base import STAGE_LOST, STAGE_REMOVED, stage_key
from salamander_behavior.report import CanResult, Outcome, RunReport

DONE_RESULTS = frozenset({CanResult.PLACED, CanResult.MISSED})
"""Results after which a can is no longer at its place in the cell config: never picked again."""


def select_cans(
    requested: Sequence[str],
    known: Sequence[str],
    done: Collection[str],
    final: Collection[str] | None = None,
    lost: Collection[str] = (),
) -> tuple[str, ...]:
    """The cans a run picks, in order (the node adds the lost and the carried can before them).

    Args:
        requested: the goal's can ids ([] = every can of `known` not in `done`).
        known: every can of the cell config, in config order.
        done: cans an empty goal leaves out (placed, missed, removed by hand, lost; the run's progress).
        final: cans no goal may name (placed or missed: in the box); default `done`.
        lost: cans lost in transit, not yet acknowledged: with one, an empty goal with no can left to
            pick is a run all the same (its confirmation alone); `()` is returned then.

    Raises:
        ValueError: an unknown or repeated id, a can already done, or nothing left to do (the reason).
    """
    if not requested:
        left = tuple(can for can in known if can not in done)
        if not left and not lost:
            every = ", ".join(known)
            raise ValueError(
                f"nothing left to do: every can ({every}) was already placed, missed or removed "
                "(run_pick_place/reset_progress starts over)"
            )
        return left
    if len(requested) > len(known):  # checked first: a goal of 100000 ids took minutes to count
        raise ValueError(f"{len(requested)} can ids for a cell of {len(known)} cans ({', '.join(known)})")
    unknown = [can for can in requested if can not in known]
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise ValueError(f"unknown can id(s) {names}; the cell has {', '.join(known)}")
    repeated = sorted(can for can, n in Counter(requested).items() if n > 1)
    if repeated:
        raise ValueError(f"can id(s) given more than once: {', '.join(map(repr, repeated))}")
    again = [can for can in requested if can in (done if final is None else final)]
    if again:
        cans = ", ".join(again)
        raise ValueError(
            f"{cans} already placed or missed (in the box, not on the table; the run's progress; "
            "run_pick_place/reset_progress starts over)"
        )
    return tuple(requested)


@dataclass(frozen=True)
class Progress:
    """What the action's feedback carries: the can being worked on ("" before and between cans) and step."""

    can: str
    step: str


def running_leaf(root: py_trees.behaviour.Behaviour) -> py_trees.behaviour.Behaviour | None:
    """The deepest RUNNING behaviour under `root` (following the running child), None when nothing runs."""
    if root.status is not Status.RUNNING:
        return None
    node = root
    while True:
        running = [c for c in node.children if c.status is Status.RUNNING]
        if not running:
            return node
        node = running[0]


def progress(root: py_trees.behaviour.Behaviour, cans: Iterable[str]) -> Progress:
    """The running can (the root's RUNNING child named after a can) and the running leaf's name."""
    wanted = set(cans)
    can = next((c.name for c in root.children if c.status is Status.RUNNING and c.name in wanted), "")
    leaf = running_leaf(root)
    return Progress(can, "" if leaf is None or leaf is root else leaf.name)


def stage_of(can: str) -> str | None:
    """The can's stage on the blackboard ("holding"/"released"), None when the vacuum never came on."""
    value = py_trees.blackboard.Blackboard.storage.get(stage_key(can))
    return None if value is None else str(value)


def outcomes(cans: Sequence[str], report: RunReport, stages: Mapping[str, str | None]) -> list[str]:
    """One outcome word per can (see the module docstring), as plain strings (`Outcome`'s values)."""
    out: list[Outcome] = []
    for can in cans:
        result = report.result_of(can)
        if stages.get(can) == STAGE_LOST:
            out.append(Outcome.LOST)  # recorded aborted (the run stopped); it is not on the pad any more
        elif result is not None:
            out.append(result.value)
        elif stages.get(can) == STAGE_REMOVED:
            out.append(Outcome.REMOVED)  # the can found on the pad was taken off by hand (or was gone)
        elif stages.get(can) is not None:
            out.append(Outcome.ABORTED)  # touched and not finished: may be on the pad
        else:
            out.append(Outcome.NOT_RUN)
    return [str(word) for word in out]


def left_on_pad(cans: Sequence[str], report: RunReport, stages: Mapping[str, str | None]) -> list[str]:
    """Cans the run leaves in doubt (aborted, or touched and not finished).

    The next run's pad check finds them if they are still on the pad (behaviors/pad.py).
    """
    return [
        can
        for can, word in zip(cans, outcomes(cans, report, stages), strict=True)
        if word == Outcome.ABORTED
    ]
