"""`CellIO`: the simulated cell over ROS for the tree (a `CellPort`): vacuum service and cell state.

The state callback parses the JSON (small work) and keeps the newest good view under a lock; a
malformed message is refused with a throttled warning and the last good view stays. The vacuum call is
started and returned as a pending call the leaf polls.
"""

from __future__ import annotations

import threading

from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import String
from std_srvs.srv import SetBool

from salamander_behavior.ports import DoneCall, PendingCall
from salamander_behavior.ros.cell_state import CellView, is_newer, parse_cell_state
from salamander_control import names
from salamander_control.ros.log import LOG_THROTTLE_S


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


class CellIO:
    """Vacuum service client and cell state cache on the behaviour server's node."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._lock = threading.Lock()
        self._view: CellView | None = None
        self.refused = 0
        self._client = node.create_client(SetBool, names.CELL_VACUUM)
        self._state_topic = node.create_subscription(String, names.CELL_STATE, self._on_state, 10).topic_name

    def _on_state(self, msg: String) -> None:
        try:
            view = parse_cell_state(msg.data)
        except ValueError as exc:
            self.refused += 1
            self.node.get_logger().warning(
                f"{self._state_topic} refused: {exc}", throttle_duration_sec=LOG_THROTTLE_S
            )
            return
        with self._lock:
            if is_newer(self._view, view):
                self._view = view

    def view(self) -> CellView | None:
        """The newest good cell state."""
        with self._lock:
            return self._view

    def ready(self) -> tuple[bool, str]:
        """Vacuum service up and a state received."""
        why = []
        if not self._client.service_is_ready():
            why.append(f"no {self._client.service_name} service")
        if self.view() is None:
            why.append(f"no {self._state_topic} yet")
        return (not why, "; ".join(why))

    def set_vacuum(self, on: bool) -> PendingCall:
        """Start the call."""
        if not self._client.service_is_ready():
            return DoneCall(False, f"no {self._client.service_name} service")
        return _ServiceCall(self._client.call_async(SetBool.Request(data=on)))

    def held(self) -> str | None:
        """The can on the pad, per the newest state."""
        view = self.view()
        return view.held if view is not None else None

    def outcome(self, can: str) -> str | None:
        """The cell's placement text for `can` (e.g. "in box, clear of walls (compartment 0; ...)")."""
        view = self.view()
        if view is None:
            return None
        return next((c.outcome for c in view.cans if c.id == can), None)

    def result(self, can: str) -> str | None:
        """The cell's placement result for `can` (e.g. "in_box_clear", "on_rim"), None while unknown."""
        view = self.view()
        if view is None:
            return None
        return next((c.result for c in view.cans if c.id == can), None)
