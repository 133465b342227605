"""The IK ghost's TF anchor: the static transform that puts the ghost's robot model on the arm's base.

With ``rviz:=true`` the launch file starts a second robot_state_publisher on the ghost's joint state with
the frame prefix `GHOST_FRAME_PREFIX`, so the ghost's links are ``ghost/base_link``, ``ghost/turret_link``,
... That tree has no parent: rviz (fixed frame base_link) cannot place it until something connects
``ghost/base_link`` to ``base_link``. The ghost stands where the arm stands, so the connection is the
identity, published once by the IK ghost node on ``tf_static`` (latched, i.e. transient local, as tf2's
static broadcaster does) for every later subscriber.

`ghost_anchor` is the transform as plain values (testable anywhere); `anchor_tf_message` builds the
tf2_msgs/TFMessage from it and needs tf2_msgs, which a full ROS 2 install has and the PyPI ROS wheels of a
bare machine do not: `tf_message_type` returns None there and the node skips the anchor (nothing could
draw the ghost model there anyway: no robot_state_publisher, no rviz). See docs/interfaces.md "rviz view".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salamander_control.ros.conversions import BASE_FRAME

GHOST_FRAME_PREFIX = "ghost/"
"""frame_prefix of the ghost's robot_state_publisher (launch file); rviz's TF Prefix is it without '/'."""


@dataclass(frozen=True)
class StaticTransform:
    """A transform parent -> child as plain values: translation (m) and rotation quaternion (x, y, z, w)."""

    parent: str
    child: str
    translation: tuple[float, float, float]
    rotation: tuple[float, float, float, float]


def ghost_frame(link: str) -> str:
    """The ghost's frame of the arm's URDF link `link` (``base_link`` -> ``ghost/base_link``)."""
    return GHOST_FRAME_PREFIX + link


def ghost_anchor(arm_root: str = BASE_FRAME) -> StaticTransform:
    """The identity transform from the arm's root link to the ghost's (the ghost stands on the arm's base)."""
    return StaticTransform(arm_root, ghost_frame(arm_root), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))


def tf_message_type() -> type | None:
    """tf2_msgs/TFMessage, or None where tf2_msgs is not installed (the PyPI ROS wheels)."""
    try:
        from tf2_msgs.msg import TFMessage
    except ImportError:
        return None
    return TFMessage


def anchor_tf_message(transform: StaticTransform, stamp: Any, tf_message: type) -> Any:
    """`transform` as a `tf_message` (tf2_msgs/TFMessage) holding one TransformStamped at `stamp`."""
    from geometry_msgs.msg import TransformStamped

    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = transform.parent
    msg.child_frame_id = transform.child
    t, r = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = transform.translation
    r.x, r.y, r.z, r.w = transform.rotation
    return tf_message(transforms=[msg])
