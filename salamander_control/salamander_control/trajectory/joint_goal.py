"""Turn a JointState-like goal (names, positions) into a full five-joint target, or say why not.

A goal may name any subset of the joints; the others keep their current target. Anything malformed
(unknown or repeated names, mismatched lengths, NaN/inf) is refused as a whole: the arm never moves on
half-understood data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from salamander_control.kinematics import JOINT_NAMES

_INDEX = {name: i for i, name in enumerate(JOINT_NAMES)}


class GoalError(ValueError):
    """A goal that was refused; the message says why (it goes into a throttled log line)."""


class JointVector(NamedTuple):
    """Positions and, where given, velocities in motor order."""

    positions: tuple[float, ...]
    velocities: tuple[float, ...] | None


def merge_goal(
    names: Sequence[str],
    positions: Sequence[float],
    current: Sequence[float],
) -> tuple[float, ...]:
    """Overlay a by-name goal onto the current five-joint target.

    Args:
        names: joint names of the goal (a subset of JOINT_NAMES, any order).
        positions: one position per name, rad.
        current: the target the unnamed joints keep, motor order.

    Raises:
        GoalError: empty goal, unknown or repeated names, length mismatch, or a non-finite position.
    """
    if len(names) == 0:
        raise GoalError("goal names no joint")
    if len(names) != len(positions):
        raise GoalError(f"goal has {len(names)} names but {len(positions)} positions")
    out = list(current)
    seen = set()
    for name, value in zip(names, positions, strict=True):
        index = _INDEX.get(name)
        if index is None:
            raise GoalError(f"unknown joint {name!r}; joints are {', '.join(JOINT_NAMES)}")
        if name in seen:
            raise GoalError(f"joint {name!r} named twice")
        seen.add(name)
        if not math.isfinite(value):
            raise GoalError(f"goal for {name} is {value}")
        out[index] = float(value)
    return tuple(out)


def joint_vector(
    names: Sequence[str],
    positions: Sequence[float],
    velocities: Sequence[float] = (),
) -> JointVector:
    """Read a complete measured joint state (all five joints, any order; extra joints ignored).

    Raises:
        GoalError: a joint missing, lengths mismatched, or non-finite values.
    """
    if len(names) != len(positions):
        raise GoalError(f"joint state has {len(names)} names but {len(positions)} positions")
    if velocities and len(velocities) != len(names):
        raise GoalError(f"joint state has {len(names)} names but {len(velocities)} velocities")
    where = {name: i for i, name in enumerate(names)}
    missing = [n for n in JOINT_NAMES if n not in where]
    if missing:
        raise GoalError(f"joint state lacks {', '.join(missing)}")
    pos = tuple(float(positions[where[n]]) for n in JOINT_NAMES)
    vel = tuple(float(velocities[where[n]]) for n in JOINT_NAMES) if velocities else None
    if not all(math.isfinite(v) for v in pos) or (vel and not all(math.isfinite(v) for v in vel)):
        raise GoalError(f"joint state is not finite: {pos}")
    return JointVector(pos, vel)
