"""The IK ghost's TF anchor: the identity transform base_link -> ghost/base_link, as values and as a message.

The message needs tf2_msgs (a full ROS 2 install); where it is missing (the PyPI ROS wheels) the plain-value
transform and the message builder (with a stand-in message type) are still checked.
"""

import math

import pytest

from salamander_control.ghost.anchor import (
    GHOST_FRAME_PREFIX,
    anchor_tf_message,
    ghost_anchor,
    ghost_frame,
    tf_message_type,
)
from salamander_control.urdf import URDF_PATH, load_urdf


def test_the_anchor_is_the_identity_from_the_urdf_root_to_the_ghost_root():
    root = load_urdf(URDF_PATH).root
    anchor = ghost_anchor()
    assert (anchor.parent, anchor.child) == (root, "ghost/" + root) == ("base_link", "ghost/base_link")
    assert anchor.translation == (0.0, 0.0, 0.0)
    assert anchor.rotation == (0.0, 0.0, 0.0, 1.0)  # x, y, z, w
    assert math.isclose(sum(c * c for c in anchor.rotation), 1.0)
    assert GHOST_FRAME_PREFIX.endswith("/") and ghost_frame("suction_link") == "ghost/suction_link"


class _StandInTFMessage:
    def __init__(self, transforms):
        self.transforms = transforms


@pytest.mark.parametrize("real", [True, False], ids=["tf2_msgs", "stand-in"])
def test_the_anchor_message_holds_one_transform_stamped(real):
    from builtin_interfaces.msg import Time

    tf_message = tf_message_type() if real else _StandInTFMessage
    if tf_message is None:
        pytest.skip("tf2_msgs is not installed (PyPI ROS wheels): the node skips the anchor here")
    msg = anchor_tf_message(ghost_anchor(), Time(sec=12, nanosec=5), tf_message)
    assert isinstance(msg, tf_message) and len(msg.transforms) == 1
    (tf,) = msg.transforms
    assert (tf.header.frame_id, tf.child_frame_id) == ("base_link", "ghost/base_link")
    assert (tf.header.stamp.sec, tf.header.stamp.nanosec) == (12, 5)
    t, r = tf.transform.translation, tf.transform.rotation
    assert (t.x, t.y, t.z, r.x, r.y, r.z, r.w) == (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def test_tf_message_type_is_none_exactly_where_tf2_msgs_is_missing():
    try:
        import tf2_msgs.msg  # noqa: F401
    except ImportError:
        assert tf_message_type() is None
    else:
        assert tf_message_type().__name__ == "TFMessage"
