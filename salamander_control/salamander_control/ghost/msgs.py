"""The IK ghost's messages: status, ghost joint state and the rviz markers, built from a `Ghost`.

Pure message construction (no rclpy), so the node stays a shell that only publishes. Markers are in
base_link, namespace `MARKER_NS`, with fixed ids so each update replaces the previous drawing:
`LINKS_ID` a LINE_STRIP base -> shoulder -> elbow -> wrist -> TCP, `JOINTS_ID` a SPHERE_LIST on the
joint points, `LABEL_ID` a TEXT_VIEW_FACING with the reason (deleted again while the ghost is green).
"""

from __future__ import annotations

from builtin_interfaces.msg import Duration, Time
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from salamander_control.ghost.core import Ghost
from salamander_control.ros.conversions import (
    BASE_FRAME,
    ik_status_msg,
    tuple_to_point,
    vector_to_joint_state,
)
from salamander_msgs.msg import IkStatus as IkStatusMsg

MARKER_NS = "ik_ghost"
LINKS_ID, JOINTS_ID, LABEL_ID = 0, 1, 2
LINK_WIDTH = 0.02
"""Line width of the links, m."""
JOINT_DIAMETER = 0.04
"""Diameter of the joint spheres, m."""
LABEL_HEIGHT = 0.05
"""Height of the label's capital letters, m."""


def status_msg(ghost: Ghost, stamp: Time) -> IkStatusMsg:
    """The ghost's IkStatus, stamped with the joint state it was computed from."""
    return ik_status_msg(ghost.status, ghost.tcp, ghost.tool_pitch, ghost.tool_yaw, stamp)


def joint_state_msg(ghost: Ghost, stamp: Time) -> JointState | None:
    """The IK's joints as a JointState, or None when the IK failed (nothing to claim)."""
    if ghost.joints is None:
        return None
    return vector_to_joint_state(ghost.joints, stamp)


def _duration(seconds: float) -> Duration:
    ns = round(max(0.0, seconds) * 1e9)
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _marker(marker_id: int, kind: int, stamp: Time, lifetime_s: float) -> Marker:
    marker = Marker(ns=MARKER_NS, id=marker_id, type=kind, action=Marker.ADD)
    marker.header.frame_id = BASE_FRAME
    marker.header.stamp = stamp
    marker.pose.orientation.w = 1.0
    marker.lifetime = _duration(lifetime_s)
    return marker


def marker_array(ghost: Ghost, stamp: Time, lifetime_s: float) -> MarkerArray:
    """The ghost drawing: links and joints in the ghost's colour, plus the reason label when red.

    Args:
        ghost: what to draw.
        stamp: the source joint state's stamp.
        lifetime_s: how long rviz keeps a drawing that is not refreshed (0 = forever); a ghost that
            stops updating (no joint states) then fades instead of pretending to be current.
    """
    r, g, b, a = ghost.color
    color = ColorRGBA(r=r, g=g, b=b, a=a)
    links = _marker(LINKS_ID, Marker.LINE_STRIP, stamp, lifetime_s)
    links.scale.x = LINK_WIDTH
    links.color = color
    links.points = [tuple_to_point(p) for p in ghost.points.chain()]
    joints = _marker(JOINTS_ID, Marker.SPHERE_LIST, stamp, lifetime_s)
    joints.scale.x = joints.scale.y = joints.scale.z = JOINT_DIAMETER
    joints.color = color
    joints.points = [tuple_to_point(p) for p in ghost.points.chain()[1:]]
    label = _marker(LABEL_ID, Marker.TEXT_VIEW_FACING, stamp, lifetime_s)
    if ghost.label is None:
        label.action = Marker.DELETE
    else:
        label.text = ghost.label
        label.scale.z = LABEL_HEIGHT
        label.color = color
        label.pose.position = tuple_to_point(ghost.label_position)
    return MarkerArray(markers=[links, joints, label])
