"""salamander_msgs built: every interface constructs, IkStatus keeps its table, messages cross DDS."""

import pytest
from geometry_msgs.msg import Point

from salamander_msgs.action import MoveCartesian
from salamander_msgs.msg import ClampReport, IkStatus, LeaseState
from salamander_msgs.srv import ArmLease, ComputeFk, RetargetCartesian, SolveIk
from salamander_testing.ros_helpers import spin_until

IK_STATUS_ORDER = [
    "OK",
    "OUT_OF_REACH",
    "YAW_OUT_OF_RANGE",
    "Q1_OUT_OF_RANGE",
    "Q2_OUT_OF_RANGE",
    "WRIST_OUT_OF_RANGE",
    "COUPLED_LIMIT",
]


def test_ik_status_constants_are_0_to_6_in_order():
    assert [getattr(IkStatus, name) for name in IK_STATUS_ORDER] == list(range(7))


def test_other_constants():
    assert (ArmLease.Request.ACQUIRE, ArmLease.Request.HEARTBEAT, ArmLease.Request.RELEASE) == (0, 1, 2)
    assert (MoveCartesian.Goal.PATH_LINEAR, MoveCartesian.Goal.PATH_JOINT) == ("linear", "joint")


JOINTS = ["j1", "j2", "j3", "j4", "j5"]


def sample_messages():
    """One instance of every message type of salamander_msgs, fields set."""
    tcp = Point(x=0.2, y=-0.1, z=0.05)
    return [
        IkStatus(
            status=IkStatus.COUPLED_LIMIT, reason="coupled_limit", tcp=tcp, tool_pitch=0.1, tool_yaw=-0.2
        ),
        LeaseState(holder="behavior", seconds_to_expiry=0.8, timeout=1.0),
        ClampReport(
            active_bounds=["alpha_max", "q2_max"],
            requested=[0.1, 0.2, 0.3, 0.4, 0.5],
            clamped=[0.1, 0.2, 0.25, 0.4, 0.5],
            amount=0.05,
            clamp_count=3,
        ),
        SolveIk.Request(tcp=tcp, tool_pitch=0.0, tool_yaw=0.3, seed=[0.0] * 5, branch="up"),
        SolveIk.Response(status=IkStatus.OK, reason="ok", name=JOINTS, position=[0.0] * 5),
        ComputeFk.Request(name=JOINTS, position=[0.1] * 5),
        ComputeFk.Response(success=True, message="", tcp=tcp, tool_pitch=0.0, tool_yaw=0.1),
        ArmLease.Request(operation=ArmLease.Request.ACQUIRE, client_id="teleop", timeout=0.5),
        ArmLease.Response(success=True, message="granted", holder="teleop"),
        RetargetCartesian.Request(tcp=tcp, tool_pitch=0.0, tool_yaw=0.0),
        RetargetCartesian.Response(success=False, status=IkStatus.OUT_OF_REACH, message="unreachable"),
        MoveCartesian.Goal(
            tcp=tcp,
            tool_pitch=0.0,
            tool_yaw=0.0,
            path=MoveCartesian.Goal.PATH_LINEAR,
            speed_scale=0.5,
            client_id="behavior",
        ),
        MoveCartesian.Result(success=True, status=IkStatus.OK, message="", final_tcp=tcp),
        MoveCartesian.Feedback(tcp=tcp, distance_remaining=0.01, progress=0.9),
    ]


def test_every_interface_constructs_with_its_fields():
    messages = sample_messages()
    assert messages[0].tcp.x == pytest.approx(0.2)
    assert list(messages[2].clamped) == pytest.approx([0.1, 0.2, 0.25, 0.4, 0.5])
    assert messages[7].client_id == "teleop"
    assert messages[11].path == "linear"


@pytest.mark.ros
@pytest.mark.parametrize("message", sample_messages(), ids=lambda m: type(m).__name__)
def test_serialization_round_trip(message):
    # Loads the generated C type support of each type (the libraries colcon built).
    from rclpy.serialization import deserialize_message, serialize_message

    assert deserialize_message(serialize_message(message), type(message)) == message


@pytest.mark.ros
def test_ik_status_crosses_a_publisher_and_subscription(make_node, ros_executor):
    node = make_node("ik_status_roundtrip")
    received = []
    node.create_subscription(IkStatus, "ik_status", received.append, 10)
    publisher = node.create_publisher(IkStatus, "ik_status", 10)
    # Publish only once discovery has matched the two, so the one message cannot be lost.
    assert spin_until(ros_executor, lambda: publisher.get_subscription_count() > 0, timeout=10.0)

    sent = IkStatus(status=IkStatus.WRIST_OUT_OF_RANGE, reason="wrist_out_of_range", tcp=Point(x=0.3))
    sent.header.frame_id = "base_link"
    publisher.publish(sent)
    assert spin_until(ros_executor, lambda: received, timeout=10.0), "no IkStatus arrived within 10 s"
    assert received[0] == sent
