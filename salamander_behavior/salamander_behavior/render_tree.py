"""Draw the pick-and-place tree for the docs: docs/tree.png (graphviz) and docs/tree.md (text).

    python -m salamander_behavior.render_tree [--out docs]

Both show the tree the behaviour server builds for the first can of config/cell.yaml, guard included
(every further can repeats the same subtree under the root). The picture needs graphviz's ``dot``
(``apt-get install graphviz``), which CI does not have: docs/tree.png is generated once and committed;
the text version needs nothing and is what salamander_behavior/test/test_render_tree.py compares with
the code.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import py_trees

from salamander_behavior.behaviors.guard import GuardSettings, guard_conditions, guarded
from salamander_behavior.limits.cache import JointStateCache
from salamander_behavior.plan import load_jobs
from salamander_behavior.tree import build_tree

REPO = Path(__file__).resolve().parents[2]

MD_HEAD = """# The pick-and-place tree

`salamander_behavior/salamander_behavior/tree.py` builds it; the behaviour server ticks it at
`tick_rate_hz` and publishes it with every behaviour's status on `/salamander/behavior/tree`. Shown for
one can; the root runs one such selector per can of `config/cell.yaml`, in order. Regenerate with
`python -m salamander_behavior.render_tree` (the picture needs graphviz `dot`).

![the tree for one can](tree.png)

- `Guarded[can_i]` re-ticks the five limit conditions before the cycle on every tick; the first tick one
  fails, the running motion is cancelled (its `terminate`) and the cycle fails.
- `Carried[can_i]` re-ticks `can_i still on the pad?` before the cycle on every tick: from the confirmed
  grip until the valve closes, the part-present switch must be fresh (`part_present_timeout_s`) and
  true, or the running motion is cancelled and the run stops holding (lost in transit, or a stale signal).
- `vacuum off` is reachable only right after `over the rim can_i?` succeeded, which it does only with
  the can at its release height, or, on a guarded pass that crossed the band without a contact, within
  `release_early_m` (25 mm) of it below the band, the descent finishing while the valve vents (memory
  sequences up to the can's selector; the selector's fallback never touches the vacuum).
- The release descent: `over the rim can_i` is one line from where the carry ended to the release
  height: fast (release_speed) to just above the rim band, slowly and guarded (guard_speed,
  guard_force_n) through the band where the can's bottom passes the rim and the divider tops, fast again
  below it, without stopping at either end. A contact lifts the can clear (vacuum on) and a search
  probes offsets (search_step_m, search_reach_m, search_probes) around the offset the descent started
  from: first a step where the rim pushed the can sideways (search_follow_push; the contact force's
  sideways part), else a square spiral; the first that passes becomes the can's offset (source
  "search"). No probe passes: the can is held above its compartment and the run stops, or
  (search_fallback manual, or manual_place true) `ManualAdjust[place_can_i after the search]`, then one
  guarded pass without a search. Without joint efforts (or guarded_pass false) the descent is one
  unguarded line at release_speed.
- The transit (`above can_i`, a joint path) ends at the can's approach, `approach_dz` (15 mm) above its
  top, where the descent onto it begins, when the joint path to there from rest and from every
  compartment's place_above and depart keeps the pad at least that high (`plan.transit_end`); else
  `pick_dz` above it. The lift still rises to `pick_dz` (the held can's bottom must clear the standing
  cans).
- The carry is a joint path (the generator's time-optimal joint move; over the shipped cell the held can
  stays as high as at the lift's end; a cell whose joint-space carry would sink more than 1 mm below its
  ends gets a straight line at `transit_speed`, `plan.joint_carry_sag`, and so does a can found on the
  pad, since the arm may then stand anywhere). It ends at place_above plus the can's offset, or 10 mm
  above the rim straight below it (`low_carry`, `plan.low_carry_end`, `motion.CarryTarget`) where the
  joint path keeps the can 10 mm above the rim and, below the can tops, sideways clear of the standing
  cans and of every compartment not known to be empty (those of the cans the run picks later are):
  over the shipped cell all three in a run in order; with `manual_place` at place_above.
- No stop between the lift and the carry, nor between the rise and the next can's joint path: `lift`
  succeeds once the measured pad is 25 mm from its end (`lift_handoff`: `blend_m` at most, and no
  earlier than with the held can's bottom 10 mm above the standing cans' tops and the rim), or 77 mm
  (10 mm above the rim) where the carry's straight joint path from there keeps clear of every other
  can's spot and of every compartment not known to be empty (`plan.lift_clear_level`: over the shipped
  cell can_1's and can_2's in a run in order), `rise` once
  it is 95 mm from its end (`rise_handoff`: `blend_m` at most, and no earlier than at the compartment's
  depart, the empty pad `approach_dz` above the placed cans' tops); each leaves its goal running, the
  joint goal after it goes out at once and the trajectory generator continues from the moving line.
  Every other move starts and ends at rest; one that does not blend waits until a handed-on goal has
  ended; a leaf stopped by a guard, a dropped can or a cancel cancels a handed-on goal with its own, and
  so does the run's end (`behaviors/base.py`, `HandOff`; docs/design/cycle.md).
- The fallback `skip or stop can_i` skips a can that was never touched (the vacuum never came on for it,
  e.g. an IK early fail on the approach) and stops the run otherwise, with the can on the pad. A failure
  that is the stack's, not the can's, stops the run even for a can never touched: a joint state that is
  missing, invalid or stale, an arm lease that was lost (the server starved past the lease timeout, or
  another client holds it), or a Cartesian motion node that was lost or refused its goal. Skipped,
  the same fault would skip every later can and end "complete".
- `offset can_i` (before the carry) sets the can's offset to the box estimate's (zero without one); the
  carry ends over it. `manual? place_can_i` is read when the can reaches place_above: `manual_place
  off?` succeeds (the offset stands) or, with `manual_place` true, fails and `ManualAdjust[place_can_i]`
  waits for the operator, starting from the box estimate's offset. With `manual_place_known_m` set it
  also succeeds while the estimate knows the can's compartment within that (1 sigma per axis).
- `box evidence from can_i` (after `can_i placed`): a can placed with a ManualAdjust or search offset
  updates the box estimate (one log line `box estimate: ...`); it always succeeds.

```
"""


def example_tree(cell: Path) -> py_trees.behaviour.Behaviour:
    """The server's tree for the first can of `cell`, with the real guard conditions."""
    cache = JointStateCache()

    def guard(child: py_trees.behaviour.Behaviour, can: str) -> py_trees.behaviour.Behaviour:
        conditions = guard_conditions(GuardSettings(), cache=cache, prefix=f"{can}.")
        return guarded(child, conditions, name=f"Guarded[{can}]")

    return build_tree(load_jobs(cell)[:1], guard)


def tree_markdown(root: py_trees.behaviour.Behaviour) -> str:
    """docs/tree.md: the explanation and the ASCII tree."""
    return MD_HEAD + py_trees.display.ascii_tree(root) + "```\n"


def main(argv: Sequence[str] | None = None) -> None:
    """Write docs/tree.md and, when graphviz is installed, docs/tree.png."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--cell", type=Path, default=REPO / "config" / "cell.yaml")
    args = parser.parse_args(argv)
    root = example_tree(args.cell)
    (args.out / "tree.md").write_text(tree_markdown(root), encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            files = py_trees.display.render_dot_tree(root, name="tree", target_directory=tmp)
        except OSError as exc:  # pydot without graphviz's `dot`
            print(f"docs/tree.png not redrawn: {exc}")
            return
        Path(files["png"]).replace(args.out / "tree.png")


if __name__ == "__main__":
    main()
