"""`/salamander/ik_ghost_node`: shows whether the autonomous IK could reach the arm's current pose.

A thin shell around `salamander_control.ghost.core`. The `/joint_states` callback only files the message in
a one-slot mailbox (newest stamp wins, late ones are dropped); a timer at `max_rate_hz` takes the newest
one, so however fast joint states come, the ghost works at most that often and always on the latest.
Per processed joint state it publishes, stamped with that joint state's stamp:

- `names.GHOST_STATUS` (salamander_msgs/IkStatus): status, reason, TCP, tool pitch and yaw;
- `names.GHOST_JOINT_STATE` (JointState): the IK's joints, **only when the IK solved the pose**; after a
  failure nothing is claimed, and a consumer pairs the two topics by stamp (a ghost joint state older
  than the latest status belongs to an earlier, solvable pose);
- `names.GHOST_MARKERS` (MarkerArray, base_link): the ghost arm, green on the IK's joints, or red on
  the measured joints with the reason as a label.

A joint state it cannot use (lengths differ, a joint missing or repeated, NaN/inf, older than the
newest seen) is skipped with a throttled warning per kind of problem; the ghost keeps its last output.
The arm model is a parameter set shared with the generator (`alpha_max`/`beta_max` live), so the ghost
turns red exactly where the generator's limits would refuse the pose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from salamander_control import names
from salamander_control.ghost.core import evaluate_ghost
from salamander_control.ghost.msgs import joint_state_msg, marker_array, status_msg
from salamander_control.kinematics import ArmParams, IkStatus
from salamander_control.kinematics.params import arm_param_specs, arm_params_warnings, build_arm_params
from salamander_control.latest_sample import LatestSample, PutResult
from salamander_control.ros.conversions import JointStateError, joint_state_to_vector, stamp_to_ns
from salamander_control.ros.params import ParamBinding, ParamSpec
from salamander_control.ros.run import run_node
from salamander_msgs.msg import IkStatus as IkStatusMsg

WARN_THROTTLE_S = 2.0
"""At most one warning per kind of skipped joint state per this many seconds."""


@dataclass(frozen=True)
class GhostConfig:
    """The ghost node's parameter snapshot: arm model, processing rate, marker lifetime."""

    arm: ArmParams
    max_rate_hz: float
    marker_lifetime_s: float


def ghost_param_specs() -> list[ParamSpec]:
    """Every parameter of the ghost node: the arm model's plus its own two."""
    return [
        *arm_param_specs(),
        ParamSpec(
            "max_rate_hz",
            20.0,
            "at most this many joint states per second are evaluated, always the newest (Hz)",
            0.5,
            200.0,
        ),
        ParamSpec(
            "marker_lifetime_s",
            1.0,
            "rviz drops a ghost drawing not refreshed for this long, so a stalled ghost fades (s; 0 = never)",
            0.0,
            60.0,
        ),
    ]


def build_ghost_config(values: dict[str, Any]) -> GhostConfig:
    """The snapshot from parameter values; raises ValueError for an inconsistent arm model."""
    return GhostConfig(
        build_arm_params(values), float(values["max_rate_hz"]), float(values["marker_lifetime_s"])
    )


class IkGhostNode(Node):
    """Publishes the IK ghost of the latest `/joint_states` at most `max_rate_hz` times a second."""

    def __init__(self) -> None:
        ns, _, name = names.IK_GHOST_NODE.rpartition("/")
        super().__init__(name, namespace=ns)
        self._params: ParamBinding[GhostConfig] = ParamBinding(
            self,
            ghost_param_specs(),
            build_ghost_config,
            warn=lambda config: arm_params_warnings(config.arm),
            on_change=self._on_params_changed,
        )
        self._latest: LatestSample[JointState] = LatestSample()
        self._skip_loggers: dict[str, RcutilsLogger] = {}
        self._last_status: IkStatus | None = None
        self._status_pub = self.create_publisher(IkStatusMsg, names.GHOST_STATUS, 10)
        self._joints_pub = self.create_publisher(JointState, names.GHOST_JOINT_STATE, 10)
        self._markers_pub = self.create_publisher(MarkerArray, names.GHOST_MARKERS, 10)
        # Best effort matches reliable and best-effort /joint_states publishers; only the newest counts.
        self.create_subscription(
            JointState, names.JOINT_STATES, self._on_joint_state, qos_profile_sensor_data
        )
        self._timer = self.create_timer(1.0 / self._params.snapshot.max_rate_hz, self._on_timer)

    def _on_params_changed(self, old: GhostConfig, new: GhostConfig) -> None:
        if new.max_rate_hz != old.max_rate_hz:
            self._timer.timer_period_ns = round(1e9 / new.max_rate_hz)

    def _on_joint_state(self, msg: JointState) -> None:
        result = self._latest.put(stamp_to_ns(msg.header.stamp), msg)
        if result is PutResult.OUT_OF_ORDER:
            self._skip("out_of_order", "stamped before the newest joint state already received")
        elif result is PutResult.CLOCK_RESET:
            self.get_logger().info(
                "joint state stamps jumped back by over a second: taken as a clock reset",
                throttle_duration_sec=WARN_THROTTLE_S,
            )

    def _skip(self, kind: str, why: str) -> None:
        # One child logger per kind: each has its own throttle, so a flood of one problem cannot hide another.
        logger = self._skip_loggers.get(kind)
        if logger is None:
            logger = self._skip_loggers[kind] = self.get_logger().get_child(kind)
        logger.warning(f"skipped joint state ({kind}): {why}", throttle_duration_sec=WARN_THROTTLE_S)

    def _on_timer(self) -> None:
        msg = self._latest.take()
        if msg is None:
            return
        config = self._params.snapshot
        try:
            ghost = evaluate_ghost(joint_state_to_vector(msg), config.arm)
        except JointStateError as exc:
            self._skip(exc.problem.value, str(exc))
            return
        except ValueError as exc:  # finite joints the library still refuses (tool yaw overflow)
            self._skip("unusable", str(exc))
            return
        stamp = msg.header.stamp
        self._status_pub.publish(status_msg(ghost, stamp))
        ghost_joints = joint_state_msg(ghost, stamp)
        if ghost_joints is not None:
            self._joints_pub.publish(ghost_joints)
        self._markers_pub.publish(marker_array(ghost, stamp, config.marker_lifetime_s))
        if ghost.status is not self._last_status:
            self.get_logger().info(f"IK ghost: {ghost.reason}: {ghost.status.message}")
            self._last_status = ghost.status


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`ik_ghost_node`)."""
    run_node(IkGhostNode, args)


if __name__ == "__main__":
    main()
