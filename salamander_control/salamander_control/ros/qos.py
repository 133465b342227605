"""The QoS profiles of the stack's own topics, so that every publisher and subscriber of one agrees.

`LATCHED`: depth 1, reliable, transient local. For state that is published on change (the lease state,
the vacuum state, the physical-stop counter, the teleop mode, the behaviour tree snapshot): a
subscriber that joins late still gets the last message at once, if it subscribes with this profile
too (a volatile subscriber matches, but gets only the messages published after it joined). Measured
joint states use rclpy's `qos_profile_sensor_data` instead.

`SERVICE_QOS`: keep all, for every service server (and every client with several calls out) of the
stack; why, at its definition.
"""

from __future__ import annotations

from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

LATCHED = QoSProfile(
    depth=1, reliability=QoSReliabilityPolicy.RELIABLE, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL
)
"""A latched topic: the last message is kept for subscribers that join later."""

SERVICE_QOS = QoSProfile(
    history=QoSHistoryPolicy.KEEP_ALL,
    reliability=QoSReliabilityPolicy.RELIABLE,
    durability=QoSDurabilityPolicy.VOLATILE,
)
"""Every service of the stack, server and client: reliable, volatile, keep all.

ROS's default for services is keep last 10: a server whose executor has not yet taken the 10 newest
requests loses the older ones in the middleware, and their callers wait for an answer that never comes
(500 asynchronous vacuum calls got 13 to 22 answers). Keep all: no request is dropped, each is
answered in the order it came (so the vacuum is the last call's), and a flood is held back by the
reliable writer's flow control (the caller's send blocks, then fails loudly) instead of vanishing. The
same holds on the client's side for its responses: a client that has more than 10 calls out at once
needs this profile too, or it drops the answers it has not taken yet.
"""
