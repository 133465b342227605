"""Conversions between ROS messages and the kinematics library's plain types.

The library speaks tuples in motor order and `IkStatus`; the ROS interfaces speak `JointState` by name,
`geometry_msgs/Point` and the `salamander_msgs/IkStatus` constants. Every node converts through here, so
the rules for reading a joint vector by name (what counts as malformed, and why) are the same
everywhere. No rclpy: only message classes, so all of it is testable without a ROS graph.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from sensor_msgs.msg import JointState

from salamander_control.kinematics import JOINT_NAMES, IkStatus
from salamander_msgs.msg import IkStatus as IkStatusMsg

INVALID_REQUEST = 255
"""Status a service answers for a request it could not even try (NaN, bad seed length, unknown branch).

Deliberately not an `IkStatus` value: such an answer says nothing about whether the pose is solvable.
The reason string then starts with ``INVALID_REQUEST_REASON + ": "`` and says what was wrong.
"""
INVALID_REQUEST_REASON = "invalid_request"

BASE_FRAME = "base_link"
"""Frame of every Cartesian quantity the nodes publish (kinematics.md)."""


class JointStateProblem(StrEnum):
    """Why a (names, positions) pair was refused; the value is a short key for throttled log lines."""

    LENGTH_MISMATCH = "length_mismatch"
    UNKNOWN_JOINT = "unknown_joint"
    DUPLICATE_JOINT = "duplicate_joint"
    MISSING_JOINT = "missing_joint"
    NON_FINITE = "non_finite"


class JointStateError(ValueError):
    """A joint vector by name that was refused; `problem` classifies it, the message explains it."""

    def __init__(self, problem: JointStateProblem, message: str) -> None:
        super().__init__(message)
        self.problem = problem


def positions_by_name(
    names: Sequence[str],
    positions: Sequence[float],
    joint_names: Sequence[str] = JOINT_NAMES,
    allow_extra: bool = False,
) -> tuple[float, ...]:
    """Read a complete joint vector given by name, in the order of `joint_names`.

    Args:
        names: the names as sent (any order).
        positions: one position per name.
        joint_names: the joints wanted, in the order of the result (motor order by default).
        allow_extra: ignore names not in `joint_names` (a measured `/joint_states` may carry other
            joints, e.g. a gripper's) instead of refusing them (a request about this arm should not).

    Raises:
        JointStateError: lengths differ, a name is unknown (unless `allow_extra`) or repeated, a wanted
            joint is missing, or a wanted position is NaN/inf. Checked in that order, so the message
            names the first problem a sender should fix.
    """
    if len(names) != len(positions):
        raise JointStateError(
            JointStateProblem.LENGTH_MISMATCH, f"{len(names)} names but {len(positions)} positions"
        )
    wanted = set(joint_names)
    where: dict[str, int] = {}
    for i, name in enumerate(names):
        if name not in wanted:
            if allow_extra:
                continue
            known = ", ".join(joint_names)
            problem = JointStateProblem.UNKNOWN_JOINT
            raise JointStateError(problem, f"unknown joint {name!r}; joints are {known}")
        if name in where:
            raise JointStateError(JointStateProblem.DUPLICATE_JOINT, f"joint {name!r} named twice")
        where[name] = i
    missing = [n for n in joint_names if n not in where]
    if missing:
        raise JointStateError(JointStateProblem.MISSING_JOINT, f"missing joint(s) {', '.join(missing)}")
    out = tuple(float(positions[where[n]]) for n in joint_names)
    bad = [f"{n}={v}" for n, v in zip(joint_names, out, strict=True) if not math.isfinite(v)]
    if bad:
        raise JointStateError(JointStateProblem.NON_FINITE, f"non-finite position(s) {', '.join(bad)}")
    return out


def joint_state_to_vector(msg: JointState, allow_extra: bool = True) -> tuple[float, ...]:
    """The five arm joints of a JointState, motor order (see `positions_by_name`; extras ignored by default).

    Raises:
        JointStateError: as `positions_by_name`.
    """
    return positions_by_name(msg.name, msg.position, JOINT_NAMES, allow_extra)


def vector_to_joint_state(
    q: Sequence[float], stamp: Time | None = None, names: Sequence[str] = JOINT_NAMES
) -> JointState:
    """A JointState with positions `q` for `names` (motor order); velocities and efforts left empty.

    Raises:
        ValueError: `q` and `names` differ in length.
    """
    if len(q) != len(names):
        raise ValueError(f"{len(q)} positions for {len(names)} joint names")
    msg = JointState(name=list(names), position=[float(v) for v in q])
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def point_to_tuple(point: Point) -> tuple[float, float, float]:
    """(x, y, z) of a Point."""
    return (float(point.x), float(point.y), float(point.z))


def tuple_to_point(xyz: Sequence[float]) -> Point:
    """A Point from three numbers.

    Raises:
        ValueError: not three elements.
    """
    if len(xyz) != 3:
        raise ValueError(f"a point needs three coordinates, got {len(xyz)}")
    return Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


def stamp_to_ns(stamp: Time) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (exact, for ordering comparisons)."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def ik_status_from_msg(value: int) -> IkStatus:
    """The library enum for a message's status constant.

    Raises:
        ValueError: `value` is not an IkStatus constant (e.g. `INVALID_REQUEST`).
    """
    return IkStatus(value)


def ik_status_msg(
    status: IkStatus,
    tcp: Sequence[float],
    tool_pitch: float,
    tool_yaw: float,
    stamp: Time | None = None,
    frame_id: str = BASE_FRAME,
) -> IkStatusMsg:
    """A `salamander_msgs/IkStatus` for `status` about the given pose; `reason` from the library table."""
    msg = IkStatusMsg(
        status=int(status),
        reason=status.reason,
        tcp=tuple_to_point(tcp),
        tool_pitch=float(tool_pitch),
        tool_yaw=float(tool_yaw),
    )
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def invalid_reason(problem: Any) -> str:
    """The reason string of an `INVALID_REQUEST` answer: ``"invalid_request: <what was wrong>"``."""
    return f"{INVALID_REQUEST_REASON}: {problem}"
