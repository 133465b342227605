#!/usr/bin/env python3
"""The floors of bench/bench_stack_cpu.py: do-nothing rclpy processes whose CPU is the price of rclpy.

Three shapes, each one process, each spun by `salamander_control.ros.run.run_node` like the stack's
nodes (so the same executor loop and signal handling):

    python bench/floor_nodes.py timer --rate 500   # a bare timer that publishes a JointState
    python bench/floor_nodes.py pub --rate 250     # a bare JointState publisher (sim_hardware's shape)
    python bench/floor_nodes.py sub                # one subscriber to that topic, callback does nothing

`--events` spins the EventsExecutor instead of the SingleThreadedExecutor. The topic is
/bench/floor_states in the caller's ROS_DOMAIN_ID; the subscriber uses the sensor-data QoS the stack's
/joint_states subscribers use.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

_PKG = Path(__file__).resolve().parents[1] / "salamander_control"
if str(_PKG) not in sys.path:  # when run without scripts/env.sh's PYTHONPATH
    sys.path.insert(0, str(_PKG))

from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE  # noqa: E402
from salamander_control.ros.run import run_node  # noqa: E402

TOPIC = "/bench/floor_states"


class FloorPublisher(Node):
    """A timer at `rate` Hz publishing a five-joint JointState, stamped; nothing else."""

    def __init__(self, name: str, rate: float) -> None:
        super().__init__(name)
        self._msg = JointState(name=list(JOINT_NAMES), position=list(REST_POSTURE), velocity=[0.0] * 5)
        self._pub = self.create_publisher(JointState, TOPIC, 10)
        self.create_timer(1.0 / rate, self._tick)

    def _tick(self) -> None:
        self._msg.header.stamp = self.get_clock().now().to_msg()
        self._pub.publish(self._msg)


class FloorSubscriber(Node):
    """One /bench/floor_states subscription whose callback only counts."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.count = 0
        self.create_subscription(JointState, TOPIC, self._on_state, qos_profile_sensor_data)

    def _on_state(self, _msg: JointState) -> None:
        self.count += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=("timer", "pub", "sub"))
    parser.add_argument("--rate", type=float, default=250.0, help="timer rate, Hz (timer, pub)")
    parser.add_argument("--events", action="store_true", help="spin the EventsExecutor")
    args = parser.parse_args()
    if args.shape == "sub":
        name = "floor_sub_events" if args.events else "floor_sub"
        run_node(lambda: FloorSubscriber(name), [], events_executor=args.events)
    else:
        name = f"floor_{args.shape}"
        run_node(lambda: FloorPublisher(name, args.rate), [], events_executor=args.events)


if __name__ == "__main__":
    main()
