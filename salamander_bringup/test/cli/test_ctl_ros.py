"""salamanderctl (the installed console script) against a live node in a DDS domain of the test's own.

The target node declares the real arm parameters through ParamBinding (arm_param_specs), exactly like
the trajectory generator, so get/set/describe are checked against the refusals operators will meet.
"""

import math
import signal
import subprocess
import threading

import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import String, UInt64
from std_srvs.srv import Trigger

from salamander_bringup.launch_plan import find_executable
from salamander_control import names
from salamander_control.box_status import BoxStatus
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_msgs.msg import ClampReport, IkStatus, LeaseState
from salamander_testing.ros_helpers import ros_env, spin_until

pytestmark = pytest.mark.ros

TARGET = "/arm/ctl_target"
BOX = BoxStatus((1.5, -0.5), 0.2, (0.4, 0.4), 0.3, True, 2, ("can_0 (ManualAdjust)", "can_1 (search)"))


@pytest.fixture
def ctl(ros_context, ros_executor):
    """Run salamanderctl with the given arguments while the test's executor keeps spinning."""
    exe = find_executable("salamander_bringup", "salamanderctl")
    env = ros_env(ros_context.get_domain_id())
    started = []

    def run(*args, timeout=30.0, cell_env=None):
        run_env = env if cell_env is None else {**env, "SALAMANDER_CELL": cell_env}
        proc = subprocess.Popen([exe, *args], env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        started.append(proc)
        finished = spin_until(ros_executor, lambda: proc.poll() is not None, timeout=timeout)
        out, err = proc.communicate(timeout=5) if finished else ("", "")
        assert finished, f"salamanderctl {' '.join(args)} did not finish in {timeout} s"
        return proc.returncode, out, err

    yield run
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def target(make_node):
    node = make_node("ctl_target", namespace="/arm")
    return node, ParamBinding(node, arm_param_specs(), build_arm_params, arm_params_warnings)


def test_param_get_prints_the_value_like_ros2_param_get(target, ctl):
    rc, out, err = ctl("param", "get", TARGET, "alpha_max")
    assert (rc, out, err) == (0, "Double value is: 1.4\n", "")
    rc, out, _ = ctl("param", "get", "arm/ctl_target", "beta_max", "--hide-type")  # relative name too
    assert (rc, out) == (0, "0.87\n")


def test_param_set_applies_the_value_to_the_live_snapshot(target, ctl):
    node, binding = target
    rc, out, err = ctl("param", "set", TARGET, "alpha_max", "1.38")
    assert (rc, out, err) == (0, "Set parameter successful\n", "")
    assert binding.snapshot.alpha_max == 1.38
    assert node.get_parameter("alpha_max").value == 1.38


def test_param_set_accepted_with_a_warning_prints_the_warning_like_ros2_param_set(target, ctl):
    # docs/interfaces.md: narrowing past the rest posture is accepted, with a warning that says so.
    node, binding = target
    rc, out, err = ctl("param", "set", TARGET, "alpha_max", "1.30")
    assert rc == 0 and err == "", err
    assert out.startswith("Set parameter successful: alpha_max=1.3000/beta_max=0.8700 no longer admit")
    assert binding.snapshot.alpha_max == 1.30


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("9.0", "alpha_max out of range"),  # outside the declared range that describe shows
        (".nan", "value: nan"),  # YAML's NaN: a double, but not a finite one
        ("wide", "Wrong parameter type"),  # a string for a double
    ],
)
def test_param_set_refused_prints_the_reason_fails_and_keeps_the_old_value(target, ctl, value, reason):
    node, binding = target
    rc, out, err = ctl("param", "set", TARGET, "alpha_max", value)
    assert rc == 1 and out == ""
    assert err.startswith("Setting parameter failed: ") and reason in err, err
    assert binding.snapshot.alpha_max == 1.40
    assert node.get_parameter("alpha_max").value == 1.40


def test_param_describe_shows_description_and_range(target, ctl):
    rc, out, _ = ctl("param", "describe", TARGET, "alpha_max")
    assert rc == 0
    lines = out.splitlines()
    assert lines[:2] == ["Parameter name: alpha_max", "  Type: double"]
    assert lines[2].startswith("  Description: coupled upper limit: q2 - q1 <= alpha_max")
    assert lines[3:] == ["  Constraints:", "    Min value: 0.0", "    Max value: 2.7"]


def test_param_list_and_unknown_parameter_and_unknown_node(target, ctl):
    rc, out, _ = ctl("param", "list", TARGET)
    assert rc == 0 and {"  alpha_max", "  beta_max", "  q1_min"} <= set(out.splitlines())
    rc, out, err = ctl("param", "get", TARGET, "no_such_parameter")
    assert (rc, out, err) == (1, "", "Parameter not set\n")
    rc, out, err = ctl("--timeout", "1", "param", "get", "/arm/no_such_node", "alpha_max")
    assert (rc, out, err) == (1, "", "Node not found\n")


def publish_status_sources(node, cell=""):
    """What the stack (of the launch's cell:=`cell`) publishes for `status`, from one test node."""
    def at(name):
        return names.absolute(name, cell)

    joints = node.create_publisher(JointState, at(names.JOINT_STATES), 10)
    ghost = node.create_publisher(IkStatus, at(names.GHOST_STATUS), 10)
    clamps = node.create_publisher(ClampReport, at(names.CLAMP_REPORT), 10)
    node.create_publisher(LeaseState, at(names.LEASE_STATE), LATCHED).publish(
        LeaseState(holder="behavior_tree", seconds_to_expiry=0.8, timeout=1.0)
    )
    node.create_publisher(UInt64, at(names.SIM_STOP_HITS), LATCHED).publish(UInt64(data=3))
    node.create_publisher(String, at(names.BOX_ESTIMATE), LATCHED).publish(String(data=BOX.to_json()))
    # Not in motor order: the CLI must place values by name.
    degrees = {
        "wrist_yaw": -20.0, "base_yaw": 0.0, "beam_pitch": 33.8, "shoulder_pitch": -45.0, "wrist_pitch": 10.0,
    }  # fmt: skip
    state = JointState(name=list(degrees), position=[math.radians(d) for d in degrees.values()])

    def publish():
        joints.publish(state)
        ghost.publish(IkStatus(status=IkStatus.COUPLED_LIMIT, reason="coupled_limit"))
        clamps.publish(ClampReport(active_bounds=["alpha_max"], clamp_count=7))

    node.create_timer(0.1, publish)


def test_status_shows_what_the_stack_publishes(make_node, ctl):
    publish_status_sources(make_node("status_source"))
    rc, out, err = ctl("--timeout", "20", "status")
    assert rc == 0, err
    lines = out.splitlines()
    header, values = lines[1].split(), lines[2].split()
    assert header[:2] == ["joints", "[deg]"]
    assert dict(zip(header[2:], values, strict=True)) == {
        "base_yaw": "+0.00", "shoulder_pitch": "-45.00", "beam_pitch": "+33.80",
        "wrist_pitch": "+10.00", "wrist_yaw": "-20.00",
    }  # fmt: skip
    assert lines[3].startswith("lease          held by 'behavior_tree' (expires in 0.80 s")
    assert lines[4].startswith("ik ghost       coupled_limit")
    assert lines[5].startswith("clamps         7 so far (last: alpha_max")
    assert lines[6] == "sim stop hits  3"
    assert lines[7] == "box estimate   " + BOX.text()
    assert "—" not in "\n".join(lines[:8])


def test_cell_option_and_environment_address_the_stack_of_that_cell(target, make_node, ctl):
    node, binding = target  # /arm/ctl_target: the default stack's
    cell_node = make_node("ctl_target", namespace="/cell2/arm")
    cell_binding = ParamBinding(cell_node, arm_param_specs(), build_arm_params, arm_params_warnings)
    rc, out, err = ctl("--cell", "cell2", "param", "set", TARGET, "alpha_max", "1.39")
    assert (rc, out, err) == (0, "Set parameter successful\n", "")
    assert cell_binding.snapshot.alpha_max == 1.39 and binding.snapshot.alpha_max == 1.40
    assert ctl("param", "get", TARGET, "alpha_max", "--hide-type", cell_env="cell2")[:2] == (0, "1.39\n")
    assert ctl("param", "get", TARGET, "alpha_max", "--hide-type", cell_env="")[:2] == (0, "1.4\n")
    rc, out, err = ctl("--cell", "2cell", "status")
    assert rc == 2 and "invalid cell '2cell'" in err


def test_status_of_a_cell_shows_that_cells_topics_only(make_node, ctl):
    publish_status_sources(make_node("status_source"), cell="cell2")
    rc, out, err = ctl("--timeout", "20", "--cell", "/cell2", "status")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[6] == "sim stop hits  3" and "—" not in "\n".join(lines[:7])
    rc, out, err = ctl("--timeout", "1", "status")  # the default stack: nothing publishes there
    assert rc == 1 and "nothing received within 1 s" in err, err  # a health check fails on it
    assert out.splitlines()[6] == "sim stop hits  —"


def test_status_watch_refreshes_until_ctrl_c(ros_context, ros_executor, make_node):
    publish_status_sources(make_node("status_source"))
    exe = find_executable("salamander_bringup", "salamanderctl")
    env = ros_env(ros_context.get_domain_id())
    cmd = [exe, "status", "--watch", "--period", "0.5"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        def frames_with_joints():
            return sum("+10.00" in line for line in list(lines))

        assert spin_until(ros_executor, lambda: frames_with_joints() >= 2, timeout=30.0), "".join(lines)
        proc.send_signal(signal.SIGINT)
        assert spin_until(ros_executor, lambda: proc.poll() is not None, timeout=10.0)
        reader.join(timeout=5.0)
        assert proc.returncode == 0, proc.stderr.read()
        assert proc.stderr.read() == ""  # no traceback on Ctrl-C
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("success", [True, False])
def test_new_box_calls_the_behaviour_servers_service_and_says_its_answer(make_node, ctl, success):
    calls = []

    def answer(request, response):
        calls.append(request)
        response.success = success
        response.message = "new box: the box estimate is reset" if success else "a run is active"
        return response

    server = make_node("bt_standin", namespace="/salamander")
    server.create_service(Trigger, names.absolute(names.NEW_BOX), answer)
    rc, out, err = ctl("new-box")
    assert len(calls) == 1
    if success:
        assert (rc, out, err) == (0, "new box: the box estimate is reset\n", "")
    else:
        assert (rc, out, err) == (1, "", "a run is active\n")


def test_new_box_without_a_behaviour_server_fails_saying_so(ctl):
    rc, out, err = ctl("--timeout", "1", "new-box")
    assert rc == 1 and out == "" and "is the behaviour server running?" in err


def test_bad_input_is_a_clear_error_never_a_traceback(target, ctl):
    # Each of these was a traceback: a value rclpy reads as YAML, a node or topic name rcl refuses. (The
    # timing options' refusals: test_format.py, without a process.)
    for args, words in (
        (("param", "set", TARGET, "alpha_max", "@x"), "cannot read the value '@x' as YAML"),
        (("--timeout", "1", "param", "get", "/arm/traj-gen", "alpha_max"),
         "'/arm/traj-gen' is not a node name"),
        (("--timeout", "1", "topic", "pub", "--once", "/bad topic", "std_msgs/msg/Bool", "{data: true}"),
         "'/bad topic' is not a topic name"),
    ):
        rc, out, err = ctl(*args)
        assert rc in (1, 2) and words in err and "Traceback" not in err, (args, rc, out, err)


def test_a_domain_id_that_is_not_a_number_is_a_clear_error(ros_context):
    exe = find_executable("salamander_bringup", "salamanderctl")
    env = {**ros_env(ros_context.get_domain_id()), "ROS_DOMAIN_ID": "abc"}
    done = subprocess.run([exe, "status"], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "cannot start ROS" in done.stderr and "Traceback" not in done.stderr
