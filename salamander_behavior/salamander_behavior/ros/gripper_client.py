"""`GripperIO`: the gripper's hardware contract over ROS for the tree (a `GripperPort`).

Two names, nothing else (docs/interfaces.md, "Hardware contract"): the vacuum valve service
`names.GRIPPER_VACUUM` (std_srvs/SetBool, true = valve open) and the part-present switch
`names.PART_PRESENT` (std_msgs/Bool, subscribed best effort so that a reliable or a best-effort
publisher both match). Whoever provides them (the simulated cell, the robot's driver, the test
stand-in robot) is invisible to the tree. The vacuum call is started and returned as a pending call the
leaf polls; the switch's messages go into a `PartPresentSignal` with their arrival time.

Reading the switch first takes what its subscription holds that the callback has not had yet, at the
middleware's receive time: after a stall of the process rclpy's executor runs a due timer (the tick)
before the subscriptions that became ready meanwhile, and the tick would judge the switch by the last
message the callback stored (the pad check stopped a run on "part-present signal 0.5 s old" right after
a respawn, on a loaded machine). The joint states are read the same way (limits/cache.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.task import Future
from std_msgs.msg import Bool
from std_srvs.srv import SetBool

from salamander_behavior.ports import Clock, DoneCall, PartReading, PendingCall
from salamander_behavior.ros.part_present import PartPresentSignal
from salamander_control import names
from salamander_control.ros.polled_subscription import PolledReader


class _ServiceCall:
    """A SetBool call in flight as a `PendingCall`."""

    def __init__(self, future: Future) -> None:
        self._future = future

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> tuple[bool, str]:
        if self._future.exception() is not None:
            return (False, f"call failed: {self._future.exception()}")
        res = self._future.result()
        return (bool(res.success), res.message)


class GripperIO:
    """Vacuum service client and part-present subscription on the behaviour server's node.

    Args:
        node: the behaviour server's node.
        clock: the tree's clock (the signal's age is measured on it).
        timeout_s: the freshness bound of the part-present signal (read on each call: a live parameter).
        on_change: called when the switch changes (the server ticks the tree at once).
    """

    def __init__(
        self,
        node: Node,
        clock: Clock,
        timeout_s: Callable[[], float],
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.node = node
        self._on_change = on_change
        self._clock = clock
        self._timeout_s = timeout_s
        self._signal = PartPresentSignal(clock)
        self._client = node.create_client(SetBool, names.GRIPPER_VACUUM)
        self._sub = node.create_subscription(
            Bool, names.PART_PRESENT, self._on_part_present, qos_profile_sensor_data
        )
        self._topic = self._sub.topic_name  # resolved and remapped, for the messages

    def _on_part_present(self, msg: Bool, age: float = 0.0) -> None:
        before = self._signal.reading().value
        self._signal.put(bool(msg.data), age)
        if self._on_change is not None and before is not None and before != bool(msg.data):
            self._on_change()  # the grip or the release the tree waits for: tick now

    def _drain(self) -> None:
        """File what the subscription holds that its callback has not had yet (module docstring)."""
        taken = PolledReader.take(self._sub)
        now = time.monotonic()  # take's receive times are on it
        for msg, received in taken:
            self._on_part_present(msg, now - received)

    def ready(self) -> tuple[bool, str]:
        """Vacuum service up and a fresh part-present signal; else exactly what is missing."""
        missing = []
        if not self._client.service_is_ready():
            missing.append(f"{self._client.service_name} service")
        self._drain()
        reading = self._signal.reading()
        now = self._clock()
        if reading.value is None:
            missing.append(self._topic)
        elif not reading.fresh(now, self._timeout_s()):
            missing.append(f"{self._topic} (last message {reading.age(now):.1f} s ago)")
        return (not missing, f"waiting for {' and '.join(missing)}" if missing else "")

    def set_vacuum(self, on: bool) -> PendingCall:
        """Start the call."""
        if not self._client.service_is_ready():
            return DoneCall(False, f"no {self._client.service_name} service")
        return _ServiceCall(self._client.call_async(SetBool.Request(data=on)))

    def part_present(self) -> PartReading:
        """The switch as last heard (after taking what waited in the subscription)."""
        self._drain()
        return self._signal.reading()

    @property
    def topic(self) -> str:
        """The resolved part-present topic (for messages)."""
        return self._topic
