"""The ROS shell that keeps `alpha_max`/`beta_max` one pair across the nodes of a stack.

Pure rules (who wins, the loop guard): `salamander_control.kinematics.coupled_limits`. Design and
measurements: docs/design/coupled_limits.md. A node adds one line after its `ParamBinding`:

- the trajectory generator: ``own_coupled_limits(self)``: it publishes the pair on
  `names.COUPLED_LIMITS` (salamander_msgs/msg/CoupledLimits, latched) at start-up and after every
  accepted change, whoever set it (an operator on the generator, or a forward from another node);
- every other node carrying the pair: ``follow_coupled_limits(self)``:
  - after this node accepted an operator's set of either value (its `ParamBinding` validated it, exactly
    as before), the value is forwarded to the owner with an asynchronous
    ``set_parameters_atomically`` call on `names.COUPLED_LIMITS_SET` (no callback ever blocks). If the
    owner is not on the graph, the node keeps its value and says so once (a node that has the owner's
    pair but has not discovered its service yet, just after its start, waits up to `FORWARD_WAIT_S`
    for it first). If the owner refuses it, the node returns to the owner's pair with a warning.
  - it subscribes the latched pair and adopts it by setting its own parameters (so `ros2 param get`
    shows it), inside the follower's loop guard so that an adoption is never forwarded back. A node
    that starts later adopts the latched pair instead of its file's. A pair whose `source` is not the
    owner's name as this node resolves it (a pair published by hand, another stack's owner on a shared
    topic) is ignored with a warning: this guards against mistakes, not against a publisher that names
    the owner.
  - a publication that is due and does not arrive within `HEAR_WAIT_S` (the owner is in the graph and
    its latched pair never came, or the owner accepted this node's forward and nothing came back) means
    the subscription hears nothing: the node says so with what DDS reports (matched publishers here,
    publishers in the graph) and subscribes again, once per wait; the latched pair then comes at once.
    Still nothing: an error line, and the node keeps its values. The check runs `HEAR_CHECK_S` while a
    publication is awaited, never once the pair has come and nothing is due.

Both hooks are rclpy post-set callbacks: they see only sets that every on-set callback accepted.
"""

from __future__ import annotations

import math
import time
from typing import Any

from rcl_interfaces.srv import SetParametersAtomically
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.subscription import Subscription
from rclpy.task import Future
from rclpy.timer import Timer

from salamander_control import names
from salamander_control.kinematics.coupled_limits import (
    COUPLED_NAMES,
    Limits,
    LimitsFollower,
    LimitsOwner,
)
from salamander_control.ros.log import LOG_THROTTLE_S
from salamander_control.ros.qos import LATCHED
from salamander_msgs.msg import CoupledLimits

# A node that has just started may have the owner's latched pair before its service is discovered: an
# operator's set then waits for the service this long (polled), and only then counts as "not reachable".
FORWARD_WAIT_S = 2.0
FORWARD_POLL_S = 0.05
HEAR_WAIT_S = 5.0
"""s a due publication of the owner may take before the follower subscribes again (the owner publishes in
its accepting set's callback; adoptions measured under a load average of 20-30 came within 0.21 s)."""
HEAR_CHECK_S = 1.0
"""s between the follower's checks while a publication is awaited (none once the pair has come)."""


def _local(node: Node) -> dict[str, Any]:
    return {name: node.get_parameter(name).value for name in COUPLED_NAMES}


def _changed(params: list[Parameter]) -> dict[str, Any]:
    return {p.name: p.value for p in params}


def _text(values: dict[str, float]) -> str:
    return ", ".join(f"{name}={value:.4f}" for name, value in values.items())


class CoupledLimitsOwner:
    """The generator's side: publish the pair, latched, on start-up and on every change."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._owner = LimitsOwner(_local(node), node.get_fully_qualified_name())
        self._pub = node.create_publisher(CoupledLimits, names.COUPLED_LIMITS, LATCHED)
        node.add_post_set_parameters_callback(self._on_set)
        self._publish(self._owner.current)

    @property
    def current(self) -> Limits:
        """The pair in force and its revision."""
        return self._owner.current

    def _on_set(self, params: list[Parameter]) -> None:
        limits = self._owner.accepted(_changed(params))
        if limits is not None:
            self._publish(limits)
            self._node.get_logger().info(f"coupled limits for the whole arm: {limits.describe()}")

    def _publish(self, limits: Limits) -> None:
        msg = CoupledLimits(
            alpha_max=limits.alpha_max, beta_max=limits.beta_max, source=limits.source,
            revision=limits.revision,
        )
        msg.header.stamp = self._node.get_clock().now().to_msg()
        self._pub.publish(msg)


class CoupledLimitsFollower:
    """Any other node's side: forward an operator's set to the owner, adopt what the owner publishes."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._follower = LimitsFollower()
        self._client = node.create_client(SetParametersAtomically, names.COUPLED_LIMITS_SET)
        self._owner_name = self._client.service_name.rsplit("/", 1)[0]  # resolved and remapped
        self._pending: dict[str, float] = {}  # a set waiting for the owner's service (see _on_set)
        self._retry: Timer | None = None
        self._retry_until = 0.0
        node.add_post_set_parameters_callback(self._on_set)
        self._subscription = self._subscribe()
        self._topic = self._subscription.topic_name  # resolved and remapped
        self._due_after = ""  # what made the awaited publication due, for the log
        self._resubscribed = False  # during the current wait
        self._awaited_first = False  # the owner's first pair was awaited once (it is not awaited again)
        self._check: Timer | None = node.create_timer(HEAR_CHECK_S, self._check_hearing)

    def _subscribe(self) -> Subscription:
        return self._node.create_subscription(CoupledLimits, names.COUPLED_LIMITS, self._on_limits, LATCHED)

    @property
    def owner(self) -> Limits | None:
        """The owner's last published pair (None before the first one arrived)."""
        return self._follower.owner

    # An operator's set here -> the owner ------------------------------------------------------------

    def _on_set(self, params: list[Parameter]) -> None:
        forward = self._follower.to_forward(_changed(params))
        if not forward:
            return
        if self._client.service_is_ready():
            self._forward(forward)
        elif self._follower.owner is None:  # no owner has ever published: nobody to wait for
            self._say_alone(forward)
        else:  # the owner published, its service is not discovered yet (this node has just started)
            self._pending.update(forward)
            if self._retry is None:
                self._retry_until = time.monotonic() + FORWARD_WAIT_S
                self._retry = self._node.create_timer(FORWARD_POLL_S, self._forward_pending)

    def _forward_pending(self) -> None:
        """Timer: forward the pending set once the owner's service is discovered, or give up."""
        ready = self._client.service_is_ready()
        if not ready and time.monotonic() < self._retry_until:
            return
        if self._retry is not None:
            self._node.destroy_timer(self._retry)
            self._retry = None
        pending, self._pending = self._pending, {}
        if ready:
            self._forward(pending)
        else:
            self._say_alone(pending)

    def _forward(self, values: dict[str, float]) -> None:
        text = _text(values)
        request = SetParametersAtomically.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg() for name, value in values.items()]
        )
        future = self._client.call_async(request)
        future.add_done_callback(lambda done: self._on_forward_reply(done, values))
        self._node.get_logger().info(f"coupled limits: {text} set here, forwarded to {self._owner_name}")

    def _say_alone(self, values: dict[str, float]) -> None:
        if self._follower.say_alone():
            self._node.get_logger().warning(
                f"coupled limits: {self._owner_name} (their owner) is not reachable: {_text(values)} applies "
                "to this node only (said once until the owner is back)"
            )

    def _on_forward_reply(self, future: Future, values: dict[str, float]) -> None:
        reply = future.result()
        text = _text(values)
        if reply is None:
            return
        if reply.result.successful:  # accepted: the owner's publication brings it back to every node
            if self._follower.changes_owner(values):  # (unless it came before this reply)
                self._await(f"{self._owner_name} accepting {text}")
            return
        reason = reply.result.reason
        restore = self._follower.to_restore(_local(self._node))
        self._node.get_logger().warning(
            f"coupled limits: {self._owner_name} refused {text} ({reason}); "
            + ("returning to the owner's pair" if restore else "this node keeps it")
        )
        if restore:
            self._adopt(restore, "the owner's pair")

    # Hearing the owner: a due publication that does not come -------------------------------------------

    def _await(self, after: str) -> None:
        """A publication of the owner must come within HEAR_WAIT_S (after `after`, for the log)."""
        if self._follower.due is None:
            self._due_after, self._resubscribed = after, False
        self._follower.expect(time.monotonic(), HEAR_WAIT_S)
        if self._check is None:
            self._check = self._node.create_timer(HEAR_CHECK_S, self._check_hearing)

    def _check_hearing(self) -> None:
        """Timer, while a publication is awaited (or the first pair has not come): is it overdue?"""
        follower, now = self._follower, time.monotonic()
        first = follower.owner is None and not self._awaited_first
        if first and follower.due is None and self._node.count_publishers(self._topic):
            self._awaited_first = True
            self._await("its publisher appearing in the graph")  # its latched pair comes on matching
        if follower.due is None:
            if not first and self._check is not None:  # heard (or given up), nothing due: stop
                self._node.destroy_timer(self._check)
                self._check = None
            return
        if not follower.overdue(now):
            return
        heard = (
            f"this subscription matches {self._subscription.get_publisher_count()} publisher(s), the graph "
            f"shows {self._node.count_publishers(self._topic)}"
        )
        log = self._node.get_logger()
        if not self._resubscribed:
            log.warning(
                f"coupled limits: no pair heard on {self._topic} within {HEAR_WAIT_S:.0f} s of "
                f"{self._due_after} ({heard}): subscribing again"
            )
            self._node.destroy_subscription(self._subscription)
            self._subscription = self._subscribe()
            self._resubscribed = True
            follower.due = None
            follower.expect(now, HEAR_WAIT_S)
            return
        log.error(
            f"coupled limits: still no pair heard on {self._topic} after subscribing again ({heard}): "
            f"this node keeps {_text(_local(self._node))} (see docs/design/coupled_limits.md)"
        )
        follower.due = None  # given up until the next reason to wait

    # The owner's pair -> this node ------------------------------------------------------------------

    def _on_limits(self, msg: CoupledLimits) -> None:
        if not (math.isfinite(msg.alpha_max) and math.isfinite(msg.beta_max)):
            self._node.get_logger().warning(
                f"coupled limits: ignored a pair that is not finite on {names.COUPLED_LIMITS} "
                f"(alpha_max={msg.alpha_max}, beta_max={msg.beta_max}, from {msg.source!r})",
                throttle_duration_sec=LOG_THROTTLE_S,
            )
            return
        if msg.source != self._owner_name:  # not the owner's (a pair published by hand, another stack's)
            self._node.get_logger().warning(
                f"coupled limits: ignored a pair on {self._topic} from {msg.source!r}, not from the owner "
                f"{self._owner_name!r} (alpha_max={msg.alpha_max}, beta_max={msg.beta_max}): set "
                f"alpha_max/beta_max as parameters instead (any node carrying them)",
                throttle_duration_sec=LOG_THROTTLE_S,
            )
            return
        published = Limits(msg.alpha_max, msg.beta_max, msg.revision, msg.source)
        changes = self._follower.to_adopt(published, _local(self._node))
        if changes:
            self._adopt(changes, published.describe())

    def _adopt(self, values: dict[str, float], what: str) -> None:
        with self._follower.adopting():
            result = self._node.set_parameters_atomically(
                [Parameter(name, value=value) for name, value in values.items()]
            )
        log = self._node.get_logger()
        if result.successful:
            log.info(f"coupled limits: adopted {what}")
        else:  # this node's other arm parameters refuse the pair: it cannot follow, and says why
            log.error(  # throttled: a flood of bad pairs on the topic must not flood the log
                f"coupled limits: cannot adopt {what}: {result.reason}; this node keeps "
                + _text(_local(self._node)),
                throttle_duration_sec=LOG_THROTTLE_S,
            )


def own_coupled_limits(node: Node) -> CoupledLimitsOwner:
    """Make `node` (the trajectory generator) the owner of the stack's coupled limits."""
    return CoupledLimitsOwner(node)


def follow_coupled_limits(node: Node) -> CoupledLimitsFollower:
    """Make `node` (any other node carrying alpha_max/beta_max) follow the owner's coupled limits."""
    return CoupledLimitsFollower(node)
