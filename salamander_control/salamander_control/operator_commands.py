"""What an operator sends the behaviour tree during ManualAdjust, as pure values (no rclpy).

The gamepad controller (salamander_teleop's controller core) and the simulated operator
(`sim.operator.core`) both decide in these and let their ROS shell publish them on the same operator
topics (`names.OPERATOR_JOG`, `names.OPERATOR_CONFIRM`): one definition, so the two cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Jog:
    """Publish this base_link twist (m/s, linear x/y) on /salamander/operator/jog."""

    vx: float
    vy: float


@dataclass(frozen=True)
class Confirm:
    """Publish operator/confirm: True confirms the manual placement, False aborts it."""

    value: bool
