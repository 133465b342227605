#!/usr/bin/env python3
"""The baseline of bench/bench_trajectory.py: a bare 500 Hz JointState publisher, run like the real nodes.

It has the trajectory generator's shape without its work: one timer at the control rate that stamps and
publishes a five-joint JointState (names, positions, velocities, as on /arm/joint_command), and one
subscription that caches the latest target under a lock; the next tick publishes that target as its
positions. No goal gate, no Ruckig, no clamp, no parameters. It spins through
`salamander_control.ros.run.run_node` with the EventsExecutor, the very loop the trajectory generator
runs in, so "generator vs baseline" isolates what the generator's own work costs in timer jitter, CPU
and goal-to-command latency.

bench_trajectory.py starts it as a subprocess in its private DDS domain::

    python bench/baseline_publisher.py
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from rclpy.node import Node
from sensor_msgs.msg import JointState

_PKG = Path(__file__).resolve().parents[1] / "salamander_control"
if str(_PKG) not in sys.path:  # when run without scripts/env.sh's PYTHONPATH
    sys.path.insert(0, str(_PKG))

from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE  # noqa: E402
from salamander_control.ros.run import run_node  # noqa: E402

NODE_NAME = "baseline_publisher"
TARGET_TOPIC = "/bench/baseline_target"
"""JointState whose positions the next tick publishes (the baseline's /arm/joint_target)."""
COMMAND_TOPIC = "/bench/baseline_command"
"""The 500 Hz output (the baseline's /arm/joint_command)."""
RATE_HZ = 500.0
"""The trajectory generator's control rate (config/trajectory_generator.yaml control_rate_hz)."""


class BaselinePublisher(Node):
    """Timer at `RATE_HZ` publishing the latest target; the subscription only caches it."""

    def __init__(self) -> None:
        super().__init__(NODE_NAME, namespace="/bench")
        self._lock = threading.Lock()
        self._position = list(REST_POSTURE)
        self._msg = JointState(name=list(JOINT_NAMES), velocity=[0.0] * len(JOINT_NAMES))
        self._pub = self.create_publisher(JointState, COMMAND_TOPIC, 10)
        self.create_subscription(JointState, TARGET_TOPIC, self._on_target, 10)
        self.create_timer(1.0 / RATE_HZ, self._on_tick)

    def _on_target(self, msg: JointState) -> None:
        # Trusted input from the benchmark itself: no validation, so that only the transport is measured.
        with self._lock:
            self._position = list(msg.position)

    def _on_tick(self) -> None:
        with self._lock:
            position = self._position
        msg = self._msg
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.position = position
        self._pub.publish(msg)


def main(args: list[str] | None = None) -> None:
    """Run the baseline on the EventsExecutor loop of the real nodes."""
    run_node(BaselinePublisher, args, events_executor=True)


if __name__ == "__main__":
    main()
