"""The QoS profiles of the stack's own topics, so that every publisher and subscriber of one agrees.

`LATCHED`: depth 1, reliable, transient local. For state that is published on change (the lease state,
the vacuum state, the physical-stop counter, the teleop mode, the behaviour tree snapshot): a
subscriber that joins late still gets the last message at once, if it subscribes with this profile
too (a volatile subscriber matches, but gets only the messages published after it joined). Measured
joint states use rclpy's `qos_profile_sensor_data` instead.
"""

from __future__ import annotations

from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy

LATCHED = QoSProfile(
    depth=1, reliability=QoSReliabilityPolicy.RELIABLE, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL
)
"""A latched topic: the last message is kept for subscribers that join later."""
