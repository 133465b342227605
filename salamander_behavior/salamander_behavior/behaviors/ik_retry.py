"""IK retry variants: which other goals a move may try when the IK refuses its target (pure).

The robot's operating notes fix an IK failure on a pick or place target by trying the other elbow
branch and a few tool pitches near the planned one before giving up on the can. `MoveTo` does that
with the list `variants` returns, one MoveCartesian goal per variant, only after an *early* IK fail
(nothing was sent, the arm did not move: `MotionOutcome.ik_early_fail`), and stops at the first
variant that is not refused early (it moved the arm: success, or a failure that is final).

What each move may vary is its `IkRetry` policy (set by the tree, docs/tree.md):

- ``PICK`` (above a can, the descent onto it, the lift): the other elbow branch at the planned pitch,
  then every ``ik_retry_pitch_offsets`` pitch (each on "up", then "down"). The pad lands on, or
  leaves, a free-standing can top; a tilt within `params.MAX_PAD_TILT` still seals.
- ``BRANCH`` (carry to place_above, place_release, rise): the elbow branch only, never the pitch: the
  can goes into a compartment with 1.95 mm per side, and a tilt of even 0.05 rad swings its bottom
  5.7 mm sideways (115 mm can). The path stays the planned one (place_release keeps its straight line).
- ``NONE``: no variants (ManualAdjust's nudges, tests).

Elbow branches are pinned ("up" / "down") so that the log says which one solved. The Cartesian node
decides what a branch means for the path (cartesian/goal.py): a joint goal solves its end pose on
it; a straight line cannot change branch, so a linear variant on the branch the arm is not on is
refused early with that reason, and the next variant is tried. With the default coupled limits only
the elbow-up branch exists (docs/arm_model.md), so branch variants matter once alpha_max or beta_max is
widened beyond pi/2.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum

from salamander_behavior.ports import ELBOW_BRANCHES, CartesianTarget, MotionRequest


class IkRetry(Enum):
    """What a move may vary when the IK refuses its target."""

    NONE = "none"
    BRANCH = "branch"
    PICK = "branch and tool pitch"


def variants(
    request: MotionRequest, policy: IkRetry, pitch_offsets: tuple[float, ...]
) -> list[MotionRequest]:
    """The goals to try, in order, after `request` failed early with an IK status.

    Args:
        request: the planned goal (its branch "" or pinned, its tool pitch the planned one).
        policy: what may vary.
        pitch_offsets: tool pitch offsets (rad) for `IkRetry.PICK`, in the order to try them.
    """
    if policy is IkRetry.NONE:
        return []
    t = request.target
    out = [replace(request, branch=b) for b in ELBOW_BRANCHES if b != request.branch]
    if policy is IkRetry.PICK:
        for offset in pitch_offsets:
            pitched = CartesianTarget(t.x, t.y, t.z, t.tool_pitch + offset, t.tool_yaw)
            out.extend(replace(request, target=pitched, branch=b) for b in ELBOW_BRANCHES)
    return out


def describe(request: MotionRequest) -> str:
    """E.g. ``branch=down, tool_pitch=+0.10`` (the tool pitch sent, rad)."""
    return f"branch={request.branch or 'nearest'}, tool_pitch={request.target.tool_pitch:+.2f}"
