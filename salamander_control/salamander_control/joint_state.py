"""Reading a `sensor_msgs/JointState` by name: the one set of rules every node and library applies.

A JointState names its joints, in any order, in parallel arrays (`name`, `position`, `velocity`,
`effort`; velocity and effort may be empty). Everything that reads one (measured `/joint_states`,
goals on `/arm/joint_target`, commands, service requests, the behaviour server's limit samples) goes
through `read_by_name`, so what counts as malformed is decided here once:

- arrays whose length differs from the names' (an empty velocity/effort array means "not given");
- no names at all;
- a name given twice (never "the last one wins");
- a name that is not one of the wanted joints, unless extra joints are allowed (a measured
  `/joint_states` may also carry a gripper's joints);
- a wanted joint missing, unless a subset is allowed (a goal may name only the joints it moves);
- a NaN/inf value of a wanted joint, or a position or velocity beyond `MAX_ABS_VALUE` (orders of
  magnitude past any joint's range or speed: garbage, and arithmetic on it could overflow).

A joint state that names none of the arm's joints is not about the arm (a gripper's own broadcaster on
`/joint_states`): `names_an_arm_joint` tells the readers to pass it by, not refuse it.

One exception: a NaN *effort* means "this joint's drive reports no effort" (ros2_control's
joint_state_broadcaster fills the effort of a joint without an effort interface with NaN), so that
joint is left out of `efforts`; an infinite effort is still refused.

Whatever is malformed is refused as a whole with a `JointStateError` whose `problem` classifies it
(a short key for per-kind throttled log lines) and whose message says what to fix. Pure: no rclpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import NamedTuple

from salamander_control.kinematics import JOINT_NAMES


class JointStateProblem(StrEnum):
    """Why a joint state was refused; the value is a short key for throttled log lines."""

    LENGTH_MISMATCH = "length_mismatch"
    EMPTY = "empty"
    UNKNOWN_JOINT = "unknown_joint"
    DUPLICATE_JOINT = "duplicate_joint"
    MISSING_JOINT = "missing_joint"
    NON_FINITE = "non_finite"
    ABSURD = "absurd"


MAX_ABS_VALUE = 1000.0
"""Largest |position| (rad) or |velocity| (rad/s) accepted: every joint's range is within +-pi and its
speed a few rad/s, so a larger value is bad input, refused like NaN."""


def names_an_arm_joint(names: Sequence[str]) -> bool:
    """Whether a joint state names at least one of the arm's five joints (else it is another device's)."""
    return any(name in _ARM for name in names)


_ARM = frozenset(JOINT_NAMES)


class JointStateError(ValueError):
    """A joint state that was refused; `problem` classifies it, the message explains it."""

    def __init__(self, problem: JointStateProblem, message: str) -> None:
        super().__init__(message)
        self.problem = problem


class ByName(NamedTuple):
    """The values of a joint state by joint name; velocities/efforts empty when the message had none.

    `efforts` lacks the joints whose effort was NaN (not reported by their drive).
    """

    positions: dict[str, float]
    velocities: dict[str, float]
    efforts: dict[str, float]


class JointVector(NamedTuple):
    """Positions and, where given, velocities in the order of the joints asked for (motor order)."""

    positions: tuple[float, ...]
    velocities: tuple[float, ...] | None


def read_by_name(
    names: Sequence[str],
    positions: Sequence[float],
    velocities: Sequence[float] = (),
    efforts: Sequence[float] = (),
    joints: Sequence[str] | None = None,
    *,
    allow_extra: bool = True,
    allow_subset: bool = False,
) -> ByName:
    """Validate the parallel arrays of a joint state and return them by name.

    Args:
        names: the joint names, as sent (any order).
        positions: one position per name.
        velocities: empty, or one velocity per name.
        efforts: empty, or one effort per name (NaN: not reported, left out of the result's `efforts`).
        joints: the joints wanted; None takes every name given (and then nothing can be missing).
        allow_extra: ignore names not in `joints` (their values are not checked) instead of refusing them.
        allow_subset: accept a state that names only some of `joints`.

    Returns:
        The wanted joints' values (in the order of `names`).

    Raises:
        JointStateError: checked in this order, so that the message names the first thing to fix:
            a length that differs from the names', no names, an unknown (unless `allow_extra`) or
            repeated name, a wanted joint missing (unless `allow_subset`), a value that is not a
            finite number.
    """
    arrays = {"positions": positions, "velocities": velocities, "efforts": efforts}
    for what, values in arrays.items():
        if (what == "positions" or len(values) > 0) and len(values) != len(names):
            problem = JointStateProblem.LENGTH_MISMATCH
            raise JointStateError(problem, f"joint state has {len(names)} names but {len(values)} {what}")
    if len(names) == 0:
        raise JointStateError(JointStateProblem.EMPTY, "joint state names no joint")
    wanted = None if joints is None else set(joints)
    where: dict[str, int] = {}
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise JointStateError(JointStateProblem.DUPLICATE_JOINT, f"joint {name!r} named twice")
        seen.add(name)
        if wanted is not None and name not in wanted:
            if allow_extra:
                continue
            known = ", ".join(joints or ())
            problem = JointStateProblem.UNKNOWN_JOINT
            raise JointStateError(problem, f"unknown joint {name!r}; joints are {known}")
        where[name] = i
    if joints is not None and not allow_subset:
        missing = [n for n in joints if n not in where]
        if missing:
            raise JointStateError(JointStateProblem.MISSING_JOINT, f"joint state lacks {', '.join(missing)}")
    return ByName(*(_values(what, values, where) for what, values in arrays.items()))


def _values(what: str, values: Sequence[float], where: Mapping[str, int]) -> dict[str, float]:
    if len(values) == 0:
        return {}
    try:
        out = {name: float(values[i]) for name, i in where.items()}
    except (TypeError, ValueError):
        problem = JointStateProblem.NON_FINITE
        raise JointStateError(problem, f"joint state {what} are not all numbers") from None
    if what == "efforts":  # NaN: not reported by this joint's drive (ros2_control's convention)
        out = {name: value for name, value in out.items() if not math.isnan(value)}
    bad = [f"{name}={value}" for name, value in out.items() if not math.isfinite(value)]
    if bad:
        raise JointStateError(JointStateProblem.NON_FINITE, f"{what} not finite for {', '.join(bad)}")
    if what != "efforts":
        huge = [f"{name}={value:g}" for name, value in out.items() if abs(value) > MAX_ABS_VALUE]
        if huge:
            problem = JointStateProblem.ABSURD
            raise JointStateError(problem, f"{what} beyond +-{MAX_ABS_VALUE:g} for {', '.join(huge)}")
    return out


def joint_vector(
    names: Sequence[str],
    positions: Sequence[float],
    velocities: Sequence[float] = (),
    joints: Sequence[str] = JOINT_NAMES,
    allow_extra: bool = True,
) -> JointVector:
    """A complete joint vector in the order of `joints` (motor order by default).

    Extra joints are ignored by default (a measured `/joint_states` may carry a gripper's); a request
    about this arm passes ``allow_extra=False``.

    Raises:
        JointStateError: see `read_by_name` (every joint of `joints` must be named).
    """
    read = read_by_name(names, positions, velocities, (), joints, allow_extra=allow_extra)
    vel = tuple(read.velocities[n] for n in joints) if read.velocities else None
    return JointVector(tuple(read.positions[n] for n in joints), vel)


def merge_goal(
    names: Sequence[str],
    positions: Sequence[float],
    current: Sequence[float],
    velocities: Sequence[float] = (),
) -> JointVector:
    """Overlay a by-name goal, which may name any subset of the five joints, onto `current`.

    Args:
        names: joint names of the goal (a subset of JOINT_NAMES, any order, no other names).
        positions: one position per name, rad.
        current: the target the unnamed joints keep, motor order.
        velocities: empty, or one velocity per name, rad/s; the unnamed joints get 0.

    Returns:
        The merged positions and, when the goal had velocities, the merged velocities (else None).

    Raises:
        JointStateError: see `read_by_name` (an unknown name is refused, a missing one is kept).
    """
    read = read_by_name(names, positions, velocities, (), JOINT_NAMES, allow_extra=False, allow_subset=True)
    merged = tuple(read.positions.get(n, float(q)) for n, q in zip(JOINT_NAMES, current, strict=True))
    vel = tuple(read.velocities.get(n, 0.0) for n in JOINT_NAMES) if read.velocities else None
    return JointVector(merged, vel)


def joints_text(q: Sequence[float]) -> str:
    """A joint vector as log lines print it: ``[0.0000, -0.7854, ...]`` (rad, 4 decimals)."""
    return "[" + ", ".join(f"{v:.4f}" for v in q) + "]"
