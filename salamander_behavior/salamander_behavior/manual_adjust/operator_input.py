"""The operator's jog twists and confirmations, stamped on arrival and queued for ManualAdjust.

One `OperatorInbox` per node (`shared_operator_inbox`), so a tree with a ManualAdjust per can still has
one subscription per topic. The callbacks only stamp and append under a lock; the active ManualAdjust
drains the queue on its tick and feeds the integrator in arrival order.

QoS: both subscriptions are VOLATILE (a transient-local reader would not match the volatile publishers
of a gamepad teleop or ``ros2 topic pub``). The jog is best effort (it matches reliable and best-effort
publishers; a lost twist only shortens a nudge, the next one follows within 50 ms); the confirmation
is reliable, since a lost "true" or "false" would leave the operator waiting.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any

from salamander_behavior.ports import Clock
from salamander_control import names

MAX_QUEUED = 1000
"""Events kept between two drains (50 s of a 20 Hz jog); older ones are dropped first."""


@dataclass(frozen=True)
class JogEvent:
    """A twist's linear velocity (m/s, base_link) and when it arrived (z is used only with `allow_z`)."""

    received: float
    vx: float
    vy: float
    vz: float = 0.0


@dataclass(frozen=True)
class ConfirmEvent:
    """A confirmation (True) or abort (False) and when it arrived."""

    received: float
    confirmed: bool


OperatorEvent = JogEvent | ConfirmEvent


class OperatorInbox:
    """Thread-safe queue of operator events, stamped with `clock` when they arrive."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._events: deque[OperatorEvent] = deque(maxlen=MAX_QUEUED)

    def on_jog(self, msg: Any) -> None:
        """Twist callback: stamp and queue linear x/y/z (validity is the integrator's business)."""
        event = JogEvent(self.clock(), float(msg.linear.x), float(msg.linear.y), float(msg.linear.z))
        with self._lock:
            self._events.append(event)

    def on_confirm(self, msg: Any) -> None:
        """Bool callback: stamp and queue."""
        event = ConfirmEvent(self.clock(), bool(msg.data))
        with self._lock:
            self._events.append(event)

    def drain(self) -> list[OperatorEvent]:
        """Everything queued, oldest first; the queue is then empty."""
        with self._lock:
            events = list(self._events)
            self._events.clear()
        return events


_REGISTRY: weakref.WeakKeyDictionary[Any, OperatorInbox] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def setup_inbox(kwargs: dict[str, Any], clock: Clock | None) -> OperatorInbox:
    """The inbox a leaf's ``setup(**kwargs)`` gives it: kwargs' own (tests), else the node's shared one.

    Raises:
        KeyError: neither an ``inbox`` nor a ``node`` with the ports' clock: the leaf could never hear
            the operator, and would wait out its whole timeout instead of failing at setup.
    """
    if kwargs.get("inbox") is not None:
        return kwargs["inbox"]
    if kwargs.get("node") is None or clock is None:
        raise KeyError("setup needs a node and ports, or an inbox: no operator input could reach this leaf")
    return shared_operator_inbox(kwargs["node"], clock)


def shared_operator_inbox(node: Any, clock: Clock) -> OperatorInbox:
    """The node's one inbox, subscribing /salamander/operator/jog and /confirm on first use."""
    from geometry_msgs.msg import Twist
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Bool

    with _REGISTRY_LOCK:
        inbox = _REGISTRY.get(node)
        if inbox is not None:
            return inbox
        inbox = OperatorInbox(clock)
        jog_qos = QoSProfile(
            depth=10, reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE
        )
        confirm_qos = QoSProfile(
            depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
        )
        node.create_subscription(Twist, names.OPERATOR_JOG, inbox.on_jog, jog_qos)
        node.create_subscription(Bool, names.OPERATOR_CONFIRM, inbox.on_confirm, confirm_qos)
        _REGISTRY[node] = inbox
        return inbox
