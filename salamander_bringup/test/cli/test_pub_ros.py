"""salamanderctl's publishing commands (cli/pub.py) against real subscribers, in a DDS domain of their own.

The subscribers use the behaviour server's QoS (jog best effort, confirm reliable and volatile), so a
message counts only if the server would have received it. Pure checks of the message filling too.
"""

from __future__ import annotations

import subprocess

import pytest
from geometry_msgs.msg import Twist
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool

from salamander_bringup.cli.pub import LAST_REPEATS, PubError, fill_message, message_class, parse_values
from salamander_bringup.launch_plan import find_executable
from salamander_control import names
from salamander_testing.ros_helpers import ros_env, spin_until

JOG = names.absolute(names.OPERATOR_JOG)
CONFIRM = names.absolute(names.OPERATOR_CONFIRM)
VOLATILE = DurabilityPolicy.VOLATILE
JOG_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT, durability=VOLATILE)
CONFIRM_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=VOLATILE)


# --- pure: types and values ----------------------------------------------------------------------------


def test_values_fill_nested_fields_and_keep_the_rest_at_their_defaults() -> None:
    values = parse_values("{linear: {x: 0.02, z: 1}}")
    twist = fill_message(message_class("geometry_msgs/msg/Twist")(), values)
    assert (twist.linear.x, twist.linear.y, twist.linear.z, twist.angular.z) == (0.02, 0.0, 1.0, 0.0)
    assert fill_message(message_class("std_msgs/Bool")(), parse_values("{data: true}")).data is True


@pytest.mark.parametrize(
    ("type_name", "values", "error"),
    [
        ("geometry_msgs/msg/Nope", "{}", "message type is invalid"),
        ("not a type", "{}", "message type is invalid"),
        ("geometry_msgs/msg/Twist", "{linear: {q: 1}}", "no field 'linear.q'"),
        ("geometry_msgs/msg/Twist", "{linear: {x: fast}}", "invalid value for linear.x"),
        ("geometry_msgs/msg/Twist", "[1, 2]", "must be a mapping"),
        ("std_msgs/msg/Bool", "{data: [}", "YAML"),
    ],
)
def test_bad_types_and_values_are_refused_with_a_reason(type_name, values, error) -> None:
    with pytest.raises(PubError, match=error):
        fill_message(message_class(type_name)(), parse_values(values))


# --- over ROS ------------------------------------------------------------------------------------------


@pytest.fixture
def ctl(ros_context, ros_executor):
    """Run salamanderctl with the given arguments while the test's executor keeps spinning."""
    exe = find_executable("salamander_bringup", "salamanderctl")
    env = ros_env(ros_context.get_domain_id())
    started: list[subprocess.Popen] = []

    def run(*args: str, timeout: float = 30.0):
        proc = subprocess.Popen(
            [exe, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        started.append(proc)
        finished = spin_until(ros_executor, lambda: proc.poll() is not None, timeout=timeout)
        assert finished, f"salamanderctl {' '.join(args)} did not finish in {timeout} s"
        out, err = proc.communicate(timeout=5)
        return proc.returncode, out, err

    yield run
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def listener(make_node):
    node = make_node("operator_listener")
    got: dict[str, list] = {"jog": [], "confirm": []}
    node.create_subscription(Twist, JOG, got["jog"].append, JOG_QOS)
    node.create_subscription(Bool, CONFIRM, got["confirm"].append, CONFIRM_QOS)
    return got


@pytest.mark.ros
def test_jog_publishes_twenty_hz_twists_for_the_given_time_then_a_zero_one(listener, ctl, ros_executor):
    rc, out, err = ctl("jog", "--x", "0.02", "--for", "1")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "publisher: beginning loop"
    published = [line for line in lines if line.startswith("publishing #")]
    assert len(published) == 20 + LAST_REPEATS  # 20 at 20 Hz over 1 s, then the zero twists
    first = "publishing #1: geometry_msgs.msg.Twist(linear=geometry_msgs.msg.Vector3(x=0.02,"
    assert published[0].startswith(first)
    assert all("x=0.0, y=0.0, z=0.0" in line for line in published[20:])
    # Best effort, like the server's subscription: nearly all arrive. A whole-suite run once received every
    # twist but the single closing zero of the time (sent just before the process exited): the server
    # would have gone on at 20 mm/s until its staleness bound. The zeros are now sent a period apart.
    assert spin_until(ros_executor, lambda: any(t.linear.x == 0.0 for t in listener["jog"]), timeout=5.0)
    received = listener["jog"]
    assert len(received) >= 15
    moving = [t.linear.x for t in received if t.linear.x != 0.0]
    assert moving == [0.02] * len(moving) and received[len(moving)].linear.x == 0.0  # zeros only at the end
    assert all(t.linear.x == 0.0 for t in received[len(moving):])


@pytest.mark.ros
def test_confirm_and_abort_each_deliver_one_bool(listener, ctl, ros_executor) -> None:
    rc, out, err = ctl("confirm")
    assert rc == 0, err
    assert out.splitlines()[:2] == [
        "publisher: beginning loop", "publishing #1: std_msgs.msg.Bool(data=True)"
    ]
    assert spin_until(ros_executor, lambda: len(listener["confirm"]) == 1, timeout=5.0)
    rc, out, err = ctl("abort")
    assert rc == 0, err
    assert spin_until(ros_executor, lambda: len(listener["confirm"]) == 2, timeout=5.0)
    assert [b.data for b in listener["confirm"]] == [True, False]


@pytest.mark.ros
def test_topic_pub_speaks_ros2_topic_pub(listener, ctl, ros_executor) -> None:
    rc, out, err = ctl(
        "topic", "pub", "-r", "20", "-t", "3", JOG, "geometry_msgs/msg/Twist", "{linear: {y: -0.01}}"
    )
    assert rc == 0, err
    assert [line.split(":")[0] for line in out.splitlines() if line] == [
        "publisher", "publishing #1", "publishing #2", "publishing #3"
    ]
    # The jog topic is best effort (like the server's subscription): the 3 twists were published (the
    # lines above) once the publisher saw the subscription, but the subscription may see the new
    # publisher later, and best effort resends nothing: on a loaded machine whole-suite runs received 2,
    # and once only 1, of the 3. What arrives is the twist asked for.
    spin_until(ros_executor, lambda: len(listener["jog"]) == 3, timeout=5.0)
    assert 1 <= len(listener["jog"]) <= 3, listener["jog"]
    assert all(t.linear.y == -0.01 for t in listener["jog"])
    rc, out, err = ctl("topic", "pub", "--once", CONFIRM, "std_msgs/msg/Bool", "{data: true}")
    assert rc == 0, err
    assert spin_until(ros_executor, lambda: [b.data for b in listener["confirm"]] == [True], timeout=5.0)


@pytest.mark.ros
def test_bad_values_publish_nothing_and_no_subscriber_is_an_error(listener, ctl, ros_executor) -> None:
    rc, out, err = ctl("topic", "pub", "-1", JOG, "geometry_msgs/msg/Twist", "{linear: {x: fast}}")
    assert rc == 1 and "invalid value for linear.x" in err and out == ""
    rc, out, err = ctl("--timeout", "1", "topic", "pub", "-1", "/nobody/listens", "std_msgs/msg/Bool")
    assert rc == 1 and "no subscriber on /nobody/listens within 1 s" in err
    ros_executor.spin_once(timeout_sec=0.2)
    assert listener["jog"] == [] and listener["confirm"] == []
