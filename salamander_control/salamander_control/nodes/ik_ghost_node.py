"""`/salamander/ik_ghost_node`: shows whether the autonomous IK could reach the arm's current pose.

A thin shell around `salamander_control.ghost.core`. It reads the measured joints at the monitors' rate
(`names.JOINT_STATES_MONITOR`, /joint_states republished by the trajectory generator at 25 Hz: a display
needs no more, and every message costs this process a wake-up; docs/design/cpu.md). The callback only
files the message in a one-slot mailbox (newest stamp wins, late ones are dropped); a timer at
`max_rate_hz` takes the newest one, so however fast joint states come, the ghost works at most that often
and always on the latest. It spins on the EventsExecutor (`run_node`), which wakes for less CPU.
Per processed joint state it publishes, stamped with that joint state's stamp:

- `names.GHOST_STATUS` (salamander_msgs/IkStatus): status, reason, TCP, tool pitch and yaw;
- `names.GHOST_JOINT_STATE` (JointState): the IK's joints, **only when the IK solved the pose**; after a
  failure nothing is claimed, and a consumer pairs the two topics by stamp (a ghost joint state older
  than the latest status belongs to an earlier, solvable pose);
- `names.GHOST_MARKERS` (MarkerArray, base_link): the ghost arm, green on the IK's joints, or red on
  the measured joints with the reason as a label.

Once at start it publishes on `names.TF_STATIC` (latched) the identity transform base_link ->
ghost/base_link, which hangs the ghost's robot model (robot_state_publisher with frame prefix ghost/,
``rviz:=true``) on the arm's base (`salamander_control.ghost.anchor`); where tf2_msgs is missing (the
PyPI ROS wheels) it logs one debug line and skips it.

A joint state it cannot use (lengths differ, a joint missing or repeated, NaN/inf, older than the
newest seen) is skipped with a throttled warning per kind of problem; the ghost keeps its last output.
The arm model is a parameter set shared with the generator (`alpha_max`/`beta_max` live), so the ghost
turns red exactly where the generator's limits would refuse the pose, except that a measured joint past
a limit by at most `noise_tolerance` (encoder noise at a stop, default ~1 deg) counts as at the limit
(`ghost.core.settle_into_limits`; no limit used for motion changes).
"""

from __future__ import annotations

from typing import Any

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from salamander_control import names
from salamander_control.ghost import params
from salamander_control.ghost.anchor import anchor_tf_message, ghost_anchor, tf_message_type
from salamander_control.ghost.core import evaluate_ghost
from salamander_control.ghost.msgs import joint_state_msg, marker_array, status_msg
from salamander_control.joint_state import JointStateError, joint_vector, names_an_arm_joint
from salamander_control.kinematics import IkStatus
from salamander_control.latest_sample import LatestSample, PutResult
from salamander_control.ros.conversions import read_stamp
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.log import LOG_THROTTLE_S, KindLogger
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node
from salamander_msgs.msg import IkStatus as IkStatusMsg


class IkGhostNode(Node):
    """Publishes the IK ghost of the latest `/joint_states` at most `max_rate_hz` times a second."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        super().__init__(names.IK_GHOST_NODE, **node_kwargs)
        self._params: ParamBinding[params.GhostConfig] = ParamBinding(
            self, params.param_specs(), params.build_config, warn=params.config_warnings,
            on_change=self._on_params_changed,
        )
        self._limits = follow_coupled_limits(self)  # alpha_max/beta_max: one pair for the whole arm
        self._latest: LatestSample[JointState] = LatestSample()
        self._skips = KindLogger(self.get_logger())  # one throttle per kind of skipped joint state
        self._last_status: IkStatus | None = None
        self._status_pub = self.create_publisher(IkStatusMsg, names.GHOST_STATUS, 10)
        self._joints_pub = self.create_publisher(JointState, names.GHOST_JOINT_STATE, 10)
        self._markers_pub = self.create_publisher(MarkerArray, names.GHOST_MARKERS, 10)
        # Best effort matches reliable and best-effort publishers; only the newest counts.
        self._js_topic = self.create_subscription(
            JointState, names.JOINT_STATES_MONITOR, self._on_joint_state, qos_profile_sensor_data
        ).topic_name  # resolved and remapped, for the logs
        self._timer = self.create_timer(1.0 / self._params.snapshot.max_rate_hz, self._on_timer)
        self._publish_anchor()

    def _publish_anchor(self) -> None:
        """The ghost's TF anchor on tf_static, latched (see salamander_control.ghost.anchor)."""
        tf_message = tf_message_type()
        if tf_message is None:
            self.get_logger().debug("tf2_msgs not installed: no ghost/base_link anchor on tf_static")
            return
        self._anchor_pub = self.create_publisher(tf_message, names.TF_STATIC, LATCHED)
        stamp = self.get_clock().now().to_msg()
        self._anchor_pub.publish(anchor_tf_message(ghost_anchor(), stamp, tf_message))

    def _on_params_changed(self, old: params.GhostConfig, new: params.GhostConfig) -> None:
        if new.max_rate_hz != old.max_rate_hz:
            self._timer.timer_period_ns = round(1e9 / new.max_rate_hz)

    def _on_joint_state(self, msg: JointState) -> None:
        if not names_an_arm_joint(msg.name):
            return  # another device's joint states (a gripper's broadcaster)
        stamp = read_stamp(msg.header.stamp, self._js_topic, self.get_logger())
        if stamp is None:
            return
        result = self._latest.put(stamp, msg)
        if result is PutResult.OUT_OF_ORDER:
            self._skip("out_of_order", "stamped before the newest joint state already received")
        elif result is PutResult.CLOCK_RESET:
            self.get_logger().info(
                "joint state stamps jumped back by over a second: taken as a clock reset",
                throttle_duration_sec=LOG_THROTTLE_S,
            )

    def _skip(self, kind: str, why: str) -> None:
        self._skips.warning(kind, f"skipped joint state ({kind}): {why}")

    def _on_timer(self) -> None:
        msg = self._latest.take()
        if msg is None:
            return
        config = self._params.snapshot
        try:
            measured = joint_vector(msg.name, msg.position).positions
            ghost = evaluate_ghost(measured, config.arm, config.noise_tolerance)
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
    run_node(IkGhostNode, args, events_executor=True)


if __name__ == "__main__":
    main()
