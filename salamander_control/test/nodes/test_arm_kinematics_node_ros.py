"""`/arm/arm_kinematics_node` as a real process: its services and its live parameters over DDS.

One node process serves the module (own DDS domain); a test node in the same domain calls SolveIk,
ComputeFk and the parameter services, exactly as an operator's tool or another node would.
"""

from __future__ import annotations

import math

import pytest
from geometry_msgs.msg import Point

from salamander_control import names, params_file
from salamander_control.ghost import params as ghost_params
from salamander_control.kinematics import REST_POSTURE, ArmParams, forward_kinematics
from salamander_control.kinematics import params as kinematics_params
from salamander_control.ros.conversions import INVALID_REQUEST, tuple_to_point
from salamander_msgs.msg import IkStatus as IkStatusMsg
from salamander_msgs.srv import ComputeFk, SolveIk
from salamander_testing.config_files import ARM_YAML, CONFIG, launch_param_files, node_config
from salamander_testing.node_process import NodeProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id

TIMEOUT = 30.0
FEASIBLE = (0.4, 0.3, 0.7, -0.2, 1.1)
NAMES = ["base_yaw", "shoulder_pitch", "beam_pitch", "wrist_pitch", "wrist_yaw"]


class Peer(RosPeer):
    """A test node in one domain with clients for the kinematics node's services and parameters."""

    def __init__(self, domain_id: int, proc: NodeProcess) -> None:
        target = names.absolute(names.KINEMATICS_NODE)
        super().__init__(domain_id, "kinematics_test_peer", target, proc.describe, TIMEOUT)
        self.proc = proc
        self.ik = self.node.create_client(SolveIk, names.absolute(names.SOLVE_IK))
        self.fk = self.node.create_client(ComputeFk, names.absolute(names.COMPUTE_FK))

    def call(self, client, request):
        self.wait(client.service_is_ready, f"the {client.srv_name} service")
        return self.answer(client.call_async(request), f"the {client.srv_name} answer")

    def solve(self, q=None, seed=(), branch="", **fields) -> SolveIk.Response:
        if q is not None:
            pose = forward_kinematics(q, ArmParams())
            fields = dict(tcp=tuple_to_point(pose.tcp), tool_pitch=pose.tool_pitch, tool_yaw=pose.tool_yaw)
        return self.call(self.ik, SolveIk.Request(seed=list(seed), branch=branch, **fields))



def start_peer(tmp_path, params_file=None) -> tuple[NodeProcess, Peer]:
    domain = next_domain_id()
    proc = NodeProcess(
        "arm_kinematics_node", names.KINEMATICS_NODE, domain, tmp_path, params_file=params_file
    )
    return proc, Peer(domain, proc)


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    proc, peer = start_peer(tmp_path_factory.mktemp("kinematics_node"))
    with proc:  # stopped and its output printed afterwards
        yield peer
        peer.close()


@pytest.mark.ros
def test_fk_then_ik_round_trip(peer):
    fk = peer.call(peer.fk, ComputeFk.Request(name=list(reversed(NAMES)), position=list(reversed(FEASIBLE))))
    assert fk.success, fk.message
    expected = forward_kinematics(FEASIBLE, ArmParams())
    assert (fk.tcp.x, fk.tcp.y, fk.tcp.z) == pytest.approx(expected.tcp, abs=1e-12)
    assert (fk.tool_pitch, fk.tool_yaw) == pytest.approx((expected.tool_pitch, expected.tool_yaw), abs=1e-12)

    ik = peer.solve(tcp=fk.tcp, tool_pitch=fk.tool_pitch, tool_yaw=fk.tool_yaw, seed=FEASIBLE)
    assert (ik.status, ik.reason, list(ik.name)) == (IkStatusMsg.OK, "ok", NAMES)
    assert list(ik.position) == pytest.approx(FEASIBLE, abs=1e-9)

    rest = peer.call(peer.fk, ComputeFk.Request(name=NAMES, position=list(REST_POSTURE)))
    assert (rest.tcp.x, rest.tcp.y, rest.tcp.z) == pytest.approx((0.0787, 0.0, 0.0374), abs=1e-3)  # the spec


@pytest.mark.ros
def test_bad_requests_are_answered_with_a_failure_and_the_node_keeps_serving(peer):
    bad_ik = [
        (dict(tcp=Point(x=math.nan, y=0.0, z=0.1)), "tcp must be finite"),
        (dict(tcp=Point(x=0.3), seed=[0.0, 0.1]), "seed must have 0 or 5 values"),
        (dict(tcp=Point(x=0.3), branch="sideways"), "branch must be"),
    ]
    for fields, text in bad_ik:
        ik = peer.solve(**fields)
        assert ik.status == INVALID_REQUEST and text in ik.reason, (fields, ik)
        assert list(ik.position) == []
    bad_fk = [
        (ComputeFk.Request(name=[*NAMES, "gripper"], position=[0.0] * 6), "unknown joint 'gripper'"),
        (ComputeFk.Request(name=NAMES[:4], position=[0.0] * 4), "lacks wrist_yaw"),
        (ComputeFk.Request(name=NAMES, position=[0.0] * 4), "5 names but 4 positions"),
        (ComputeFk.Request(name=NAMES, position=[0.0, math.nan, 0.5, 0.0, 0.0]), "not finite"),
    ]
    for request, text in bad_fk:
        fk = peer.call(peer.fk, request)
        assert not fk.success and text in fk.message, (request, fk)
    assert peer.solve(q=REST_POSTURE).reason == "ok"  # still serving after all of that
    assert peer.proc.alive(), peer.proc.describe()
    assert peer.proc.wait_for_text("SolveIk refused: invalid_request", timeout=10.0)  # the refusal is logged


@pytest.mark.ros
def test_alpha_max_is_live_and_bad_values_are_refused(peer):
    assert peer.solve(q=REST_POSTURE).reason == "ok"

    assert peer.set_param("alpha_max", 1.30).successful
    # Accepted with a warning. rclpy drops the reason of a successful set, so the warning is in the log.
    warning = "no longer admit the rest posture"
    peer.wait_for_line(peer.proc, warning, timeout=5.0)
    assert peer.solve(q=REST_POSTURE).reason == "coupled_limit"  # the very next request uses it

    for bad in (math.nan, 3.0, -0.1):
        refused = peer.set_param("alpha_max", bad)
        assert not refused.successful and refused.reason, bad
        assert peer.get_param("alpha_max") == 1.30
    assert peer.solve(q=REST_POSTURE).reason == "coupled_limit"  # the old value still applies

    assert peer.set_param("alpha_max", 1.40).successful
    assert peer.solve(q=REST_POSTURE).reason == "ok"
    wide_beta = peer.set_param("beta_max", 0.5)
    assert wide_beta.successful
    assert peer.solve(q=(0.0, 1.0, 0.3, 0.0, 0.0)).reason == "coupled_limit"  # q1 - q2 = 0.7 > 0.5
    assert peer.set_param("beta_max", 0.87).successful


def test_config_lists_every_parameter_with_its_default():
    # The kinematics node loads config/arm.yaml only, the ghost arm.yaml and then ghost.yaml.
    assert [key for key, _ in params_file.sections(params_file.load(ARM_YAML))] == ["/**/*"]
    ghost_file = params_file.load(CONFIG / "ghost.yaml")
    assert [key for key, _ in params_file.sections(ghost_file)] == ["/**/ik_ghost_node"]
    assert launch_param_files("arm_kinematics_node") == [ARM_YAML]
    sections = {
        "arm_kinematics_node": kinematics_params.param_specs(),
        "ik_ghost_node": ghost_params.param_specs(),
    }
    for node, specs in sections.items():
        values = node_config(node)
        assert values == {s.name: s.default for s in specs}, node
        assert all(isinstance(v, float) for v in values.values()), "ROS reads 20 as an integer, not a double"


@pytest.mark.ros
def test_the_config_file_section_reaches_the_node(tmp_path):
    text = ARM_YAML.read_text()
    changed = text.replace("alpha_max: 1.40 ", "alpha_max: 1.30 ", 1)
    assert changed != text
    custom = tmp_path / "arm.yaml"
    custom.write_text(changed)
    proc, peer = start_peer(tmp_path, custom)
    try:
        assert peer.get_param("alpha_max") == 1.30
        assert peer.solve(q=REST_POSTURE).reason == "coupled_limit"
        assert proc.wait_for_text("no longer admit the rest posture", timeout=10.0)  # the startup warning
    finally:
        peer.close()
        proc.stop()
