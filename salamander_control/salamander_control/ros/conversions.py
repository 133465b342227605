"""Conversions between ROS messages and the kinematics library's plain types.

The library speaks tuples in motor order and `IkStatus`; the ROS interfaces speak `JointState` by name,
`geometry_msgs/Point` and the `salamander_msgs/IkStatus` constants. Reading a `JointState` by name (what
counts as malformed, and why) is `salamander_control.joint_state`, the same for every node. No rclpy:
only message classes, so all of it is testable without a ROS graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from sensor_msgs.msg import JointState

from salamander_control.joint_state import JointStateError, JointVector, joint_vector, names_an_arm_joint
from salamander_control.kinematics import JOINT_NAMES, IkStatus
from salamander_control.ros.log import LOG_THROTTLE_S, KindLogger
from salamander_control.stamp import StampError, skew_problem, stamp_ns
from salamander_msgs.msg import IkStatus as IkStatusMsg

INVALID_REQUEST = 255
"""Status a service answers for a request it could not even try (NaN, bad seed length, unknown branch).

Deliberately not an `IkStatus` value: such an answer says nothing about whether the pose is solvable.
The reason string then starts with ``INVALID_REQUEST_REASON + ": "`` and says what was wrong.
"""
INVALID_REQUEST_REASON = "invalid_request"

BASE_FRAME = "base_link"
"""Frame of every Cartesian quantity the nodes publish (docs/arm_model.md)."""


def read_joint_vector(
    msg: JointState, topic: str, log: Callable[..., Any], velocities: bool = False
) -> JointVector | None:
    """The five arm joints of a joint state, motor order; None when the message is refused.

    With `velocities` the velocities come too, and must be valid. Read by `joint_state.joint_vector`
    (extra joints ignored). A refusal is logged with `log` (a logger method, e.g. ``logger.warning``) as
    ``ignoring <topic>: <why>``, throttled to one line per `LOG_THROTTLE_S`. A message that names none of
    the arm's joints is another device's (`names_an_arm_joint`): None, without a line.
    """
    if not names_an_arm_joint(msg.name):
        return None
    try:
        return joint_vector(msg.name, msg.position, msg.velocity if velocities else ())
    except JointStateError as exc:
        log(f"ignoring {topic}: {exc}", throttle_duration_sec=LOG_THROTTLE_S)
        return None


def measured_joints(
    msg: JointState, topic: str, log: Callable[..., Any], velocities: bool = False
) -> tuple[float, ...] | None:
    """The positions of `read_joint_vector`: a measured joint state's five arm joints, or None."""
    read = read_joint_vector(msg, topic, log, velocities)
    return None if read is None else read.positions


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


def read_stamp(stamp: Time, topic: str, logger: Any) -> int | None:
    """A received message's header stamp as integer nanoseconds; None when it is no time (refused, logged).

    The one way a subscription callback reads a stamp (`salamander_control.stamp`: a negative `sec` or a
    `nanosec` past 999999999 is refused, never raised): the callback drops a message whose stamp is
    refused. The refusal is logged with ``logger.warning`` (a logger, not a method: one call site must
    keep one severity) as ``ignoring <topic>: <why>``, throttled to one line per `LOG_THROTTLE_S`.
    """
    try:
        return stamp_ns(stamp)
    except StampError as exc:
        logger.warning(f"ignoring {topic}: {exc}", throttle_duration_sec=LOG_THROTTLE_S)
        return None


def read_measurement_stamp(
    stamp: Time, topic: str, logger: Any, warnings: KindLogger, now: int, stale_s: float
) -> int | None:
    """`read_stamp` of a measurement; also None when stamped too long before `now` or ahead of it.

    `now` is the node's clock (ns); too long is `stale_s`, ahead as `stamp.skew_problem` says. Each kind
    ("stale", "ahead") is logged through `warnings`. 0 (unstamped) passes: such a measurement is judged
    by its arrival only.
    """
    read = read_stamp(stamp, topic, logger)
    if read and (skew := skew_problem(read, now, stale_s)):
        warnings.warning("stale" if read < now else "ahead", f"ignoring {topic}: {skew}")
        return None
    return read


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
