"""`/arm/arm_kinematics_node`: the kinematics library as ROS services (SolveIk, ComputeFk).

A thin shell: parameters (the arm model, `alpha_max`/`beta_max` live) through `ParamBinding`, two
services whose answers are the pure functions of `ros/kinematics_services.py`. Each request reads the
parameter snapshot once, so a parameter change applies from the next request on and never half-way
through one.
"""

from __future__ import annotations

from typing import Any

from rclpy.node import Node

from salamander_control import names
from salamander_control.kinematics import params
from salamander_control.ros.conversions import INVALID_REQUEST
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.kinematics_services import compute_fk_response, solve_ik_response
from salamander_control.ros.log import LOG_THROTTLE_S
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import SERVICE_QOS
from salamander_control.ros.run import run_node
from salamander_msgs.srv import ComputeFk, SolveIk


class ArmKinematicsNode(Node):
    """Serves `names.SOLVE_IK` and `names.COMPUTE_FK` with the current arm parameters."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.KINEMATICS_NODE, **node_kwargs)
        self._params = ParamBinding(
            self, params.param_specs(), params.build_config, warn=params.config_warnings
        )
        self._limits = follow_coupled_limits(self)  # alpha_max/beta_max: one pair for the whole arm
        ik = self.create_service(SolveIk, names.SOLVE_IK, self._on_solve_ik, qos_profile=SERVICE_QOS)
        fk = self.create_service(ComputeFk, names.COMPUTE_FK, self._on_compute_fk, qos_profile=SERVICE_QOS)
        self.get_logger().info(f"serving {ik.service_name} and {fk.service_name}")

    def _on_solve_ik(self, request: SolveIk.Request, response: SolveIk.Response) -> SolveIk.Response:
        answer = solve_ik_response(request, self._params.snapshot)
        if answer.status == INVALID_REQUEST:
            self.get_logger().warning(
                f"SolveIk refused: {answer.reason}", throttle_duration_sec=LOG_THROTTLE_S
            )
        return answer

    def _on_compute_fk(self, request: ComputeFk.Request, response: ComputeFk.Response) -> ComputeFk.Response:
        answer = compute_fk_response(request, self._params.snapshot)
        if not answer.success:
            self.get_logger().warning(
                f"ComputeFk refused: {answer.message}", throttle_duration_sec=LOG_THROTTLE_S
            )
        return answer


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`arm_kinematics_node`)."""
    run_node(ArmKinematicsNode, args, events_executor=True)


if __name__ == "__main__":
    main()
