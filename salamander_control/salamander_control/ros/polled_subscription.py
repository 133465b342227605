"""Subscriptions a node reads from its own timer (take on demand) instead of being woken for each message.

In rclpy every message a node's executor takes costs a wake-up (~0.6 ms of Python on the
SingleThreadedExecutor here, docs/design/cpu.md), even when the node only needs the newest message at the
moment its control timer runs. `PolledReader` keeps such subscriptions on a hidden helper node (name
``_<owner>_polled``, in the owner's context and namespace, hidden from ``ros2 node list``) that is never
added to an executor: DDS keeps the newest messages in the subscription's history (its QoS depth) and the
owner takes them with `take` when it wants them. So a 100 Hz control loop reading a 100 Hz topic wakes
100 times a second instead of 200, and reads the same newest message the callback would have stored.

Invariants:
- `take` returns every message still in the history, oldest first, each with its receive time on
  `time.monotonic()` (from the middleware's receive timestamp where it has one, else the take time), so a
  caller's staleness check sees the message's real age, not the age of the take;
- the topic is resolved (namespace, remappings) by the owner, so the helper node needs no arguments of its
  own (it ignores the process's global ones: a launch file's ``__node:=`` must not rename it);
- only the owner's executor thread calls these methods (the helper node has no callbacks at all).

Uses rclpy's subscription handle ``take_message``, the call rclpy's executors and
``rclpy.wait_for_message`` take messages with. A node that polls derives from `PolledNode`.
"""

from __future__ import annotations

import time
from typing import Any

from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription


class PolledReader:
    """A hidden helper node whose subscriptions the owner reads with `take` (see the module docstring)."""

    def __init__(self, owner: Node) -> None:
        self._owner = owner
        self._node: Node | None = None  # made by the first `subscribe`, kept until `destroy`

    def subscribe(self, msg_type: Any, topic: str, qos: QoSProfile | int) -> Subscription:
        """A subscription of `topic` (resolved and remapped as the owner would) that nothing spins."""
        if self._node is None:
            owner = self._owner
            self._node = Node(
                f"_{owner.get_name()}_polled",
                namespace=owner.get_namespace(),
                context=owner.context,
                use_global_arguments=False,
                start_parameter_services=False,
            )
        return self._node.create_subscription(
            msg_type, self._owner.resolve_topic_name(topic), _unused_callback, qos
        )

    def unsubscribe(self, subscription: Subscription) -> None:
        """Drop a subscription made by `subscribe`."""
        if self._node is not None:
            self._node.destroy_subscription(subscription)

    @staticmethod
    def take(subscription: Subscription) -> list[tuple[Any, float]]:
        """Every message in `subscription`'s history, oldest first, with its receive time (monotonic s)."""
        taken = []
        with subscription.handle:
            while (found := subscription.handle.take_message(subscription.msg_type, subscription.raw)):
                taken.append(found)
        if not taken:
            return []
        now_ns, now = time.time_ns(), time.monotonic()
        out = []
        for msg, info in taken:
            received = info.get("received_timestamp", 0) if isinstance(info, dict) else 0
            age = max(now_ns - received, 0) * 1e-9 if received else 0.0
            out.append((msg, now - age))
        return out

    def destroy(self) -> None:
        """Destroy the helper node (and its subscriptions)."""
        if self._node is not None:
            self._node.destroy_node()
            self._node = None


class PolledNode(Node):
    """A Node with a `PolledReader` (`self.polled`) whose helper node is destroyed with it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.polled = PolledReader(self)

    def destroy_node(self) -> Any:
        """Destroy the polled subscriptions' helper node with this one."""
        self.polled.destroy()
        return super().destroy_node()


def _unused_callback(_msg: Any) -> None:
    """Never called: the helper node is never spun."""
