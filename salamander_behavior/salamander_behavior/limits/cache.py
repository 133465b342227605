"""The latest joint state, shared by every limit condition of a tree: one subscription, one cache.

`shared_joint_state_cache(node)` is the one `JointStateCache` of a node (the limit conditions and the
arm motion client read it; it subscribes on first use). The subscription callback only validates and
stores (`put_message`, a few comparisons under a lock); the behaviours read the newest sample when they
tick. Receive times come from a monotonic clock
(injectable, so tests can age a sample without sleeping): a joint state's age is how long ago *this
process* heard of it, which is what matters for "is the arm still where we think it is", whatever clock
(sim time, a robot's own) stamped it.

Reading drains first: the shared cache's `latest` takes whatever the subscription holds that its callback
has not had yet, each with the middleware's receive time. After a stall of this process, rclpy's executor
runs a due timer (the tree's tick) before the subscription callbacks that waited meanwhile, and the tick
judged the joint state by the last one it had stored: "stale: 0.75 s old" and a stopped run, with fresh
joint states waiting (seen in a loaded test suite).

What is refused, keeping the previous sample (which then ages and goes stale: the conditions fail
rather than judge on bad data): malformed messages (see `JointSample.from_arrays`; a stamp that is no
time on a ROS clock, `salamander_control.stamp`, counts as malformed) and messages
stamped older than the newest one, unless older by more than `clock_reset` seconds, which is a
restarted publisher or simulation and starts a new ordering (`salamander_control.latest_sample`).
Unstamped (zero) messages are not ordered.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from salamander_behavior.limits.sample import JointSample
from salamander_control import names
from salamander_control.joint_state import JointStateError
from salamander_control.latest_sample import CLOCK_RESET_NS, PutResult, StampOrder
from salamander_control.ros.log import LOG_THROTTLE_S
from salamander_control.stamp import StampError, stamp_ns


@dataclass(frozen=True)
class CachedState:
    """A stored joint state.

    Attributes:
        sample: the validated joint state.
        received: when it was stored, on the cache's clock (s).
        stamp: its header stamp in seconds, or None when unstamped.
    """

    sample: JointSample
    received: float
    stamp: float | None


class JointStateCache:
    """Thread-safe holder of the newest valid joint state.

    Args:
        clock: monotonic time source in seconds (time.monotonic by default).
        clock_reset: seconds by which a stamp must be older than the newest to count as a clock
            reset rather than a late message (`salamander_control.latest_sample.CLOCK_RESET_NS`).
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, clock_reset: float = CLOCK_RESET_NS * 1e-9
    ) -> None:
        self._clock = clock
        self.drain: Callable[[], None] | None = None
        """Stores what the subscription holds before each `latest` (`shared_joint_state_cache`)."""
        self._lock = threading.Lock()
        self._state: CachedState | None = None
        self._order = StampOrder(round(clock_reset * 1e9))
        self.accepted = 0
        """Messages stored."""
        self.refused = 0
        """Messages refused (malformed or out of order)."""
        self.last_refusal = ""
        """Why the last refused message was refused."""
        self.newest_malformed = False
        """Whether the newest message heard was malformed (empty, NaN, lengths that disagree): set by such
        a refusal, cleared by the next stored message (`behaviors.btcpp` fails on it, as
        BehaviorTree.CPP's conditions do on an invalid message)."""

    def now(self) -> float:
        """The cache's clock."""
        return self._clock()

    def put(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float] = (),
        efforts: Sequence[float] = (),
        stamp: float | None = None,
        received: float | None = None,
    ) -> str | None:
        """Validate and store one joint state, received at `received` on the cache's clock (None: now).

        Returns:
            None when stored; otherwise why it was refused (the caller logs it, throttled).
        """
        try:
            sample = JointSample.from_arrays(names, positions, velocities, efforts)
        except JointStateError as exc:
            with self._lock:
                self.newest_malformed = True
            return self._refuse(str(exc))
        stamp = stamp or None  # 0 = unstamped
        with self._lock:
            newest = self._order.newest_ns
            if stamp is not None and self._order.offer(round(stamp * 1e9)) is PutResult.OUT_OF_ORDER:
                reason = f"out of order: stamp {stamp:.3f} s is older than the newest {newest * 1e-9:.3f} s"
            else:
                reason = None
                self._state = CachedState(sample, self._clock() if received is None else received, stamp)
                self.newest_malformed = False
                self.accepted += 1
        return None if reason is None else self._refuse(reason)

    def put_message(self, msg: Any, received: float | None = None) -> str | None:
        """`put` a ``sensor_msgs/msg/JointState`` (duck-typed: no ROS import here)."""
        try:
            stamp = stamp_ns(msg.header.stamp) * 1e-9
        except StampError as exc:  # no time on a ROS clock: malformed, refused like a NaN
            with self._lock:
                self.newest_malformed = True
            return self._refuse(str(exc))
        return self.put(msg.name, msg.position, msg.velocity, msg.effort, stamp, received)

    def _refuse(self, reason: str) -> str:
        with self._lock:
            self.refused += 1
            self.last_refusal = reason
        return reason

    def latest(self) -> CachedState | None:
        """The newest stored state (after `drain`), or None before the first one."""
        if self.drain is not None:
            self.drain()
        with self._lock:
            return self._state

    def age(self, state: CachedState | None = None) -> float | None:
        """Seconds since `state` (default: the newest) was stored; None before the first one."""
        state = state if state is not None else self.latest()
        return None if state is None else self._clock() - state.received

    def clear(self) -> None:
        """Forget everything stored (e.g. when the publisher is known to have gone)."""
        with self._lock:
            self._state = None
            self.newest_malformed = False
            self._order.clear()


_REGISTRY: weakref.WeakKeyDictionary[Any, dict[str, JointStateCache]] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def shared_joint_state_cache(node: Any, topic: str = names.JOINT_STATES) -> JointStateCache:
    """The one JointStateCache of `node` (an rclpy Node) for `topic`, subscribing it on first use.

    Sensor-data QoS (best effort), which also matches reliable publishers. A refused message (bad data,
    out of order) leaves the cache as it was and logs a throttled warning. `latest` first takes what the
    subscription holds (the module docstring says why).
    """
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    from salamander_control.ros.polled_subscription import PolledReader

    with _REGISTRY_LOCK:
        per_node = _REGISTRY.setdefault(node, {})
        if topic in per_node:
            return per_node[topic]
        cache = JointStateCache()
        logger = node.get_logger()
        shown = node.resolve_topic_name(topic)  # absolute and remapped, for the log

        def on_joint_state(msg: JointState, received: float | None = None) -> None:
            reason = cache.put_message(msg, received)
            if reason is not None:
                logger.warning(
                    f"{shown}: joint state refused: {reason}", throttle_duration_sec=LOG_THROTTLE_S
                )

        sub = node.create_subscription(JointState, topic, on_joint_state, qos_profile_sensor_data)

        def drain() -> None:
            for msg, received in PolledReader.take(sub):  # at the middleware's receive time (monotonic)
                on_joint_state(msg, received)

        cache.drain = drain
        per_node[topic] = cache
        return cache
