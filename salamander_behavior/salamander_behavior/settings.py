"""The behaviour server's parameters as one frozen snapshot (pure; the ParamSpecs are in behavior_params).

The tree's leaves read the snapshot through a callable when they start (a motion its speed, a wait its
duration, ManualAdjust its timeout) and `ManualPlaceOff` reads `manual_place` when a can reaches
place_above, so a `ros2 param set` takes effect at the next such point and never half-way through one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from salamander_behavior.manual_adjust.core import AdjustLimits
from salamander_control.kinematics import ArmParams


@dataclass(frozen=True)
class BehaviorSettings:
    """Every parameter of /salamander/behavior_server_node (descriptions in behavior_params)."""

    manual_place: bool = False
    manual_timeout_s: float = 120.0
    transit_speed: float = 0.5
    approach_speed: float = 0.3
    release_speed: float = 0.5
    nudge_speed: float = 0.5
    attach_timeout_s: float = 2.0
    grip_confirm_s: float = 0.5
    release_timeout_s: float = 2.0
    settle_s: float = 0.5
    vacuum_timeout_s: float = 2.0
    motion_timeout_s: float = 30.0
    ready_timeout_s: float = 60.0
    alpha_max: float = 1.40
    beta_max: float = 0.87
    # Read-only (start-up) parameters.
    cell_config: str = ""
    client_id: str = "behavior_server"
    lease_timeout_s: float = 1.0
    tick_rate_hz: float = 20.0
    snapshot_rate_hz: float = 2.0

    def __post_init__(self) -> None:
        """Refuse combinations no single ParamSpec range can express."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{f.name} must be a finite number, got {value}")
        for name in ("transit_speed", "approach_speed", "release_speed", "nudge_speed"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in (0, 1], got {getattr(self, name)}")
        if self.manual_timeout_s > AdjustLimits.timeout:
            raise ValueError(
                f"manual_timeout_s must not exceed the spec's {AdjustLimits.timeout:.0f} s, "
                f"got {self.manual_timeout_s}"
            )
        if not self.client_id:
            raise ValueError("client_id must not be empty (it is the lease identity)")
        self.arm_params()  # alpha_max/beta_max must make a valid arm model (ValueError says why)

    def arm_params(self) -> ArmParams:
        """The arm model the limit guard judges with: default geometry, these coupled limits."""
        return ArmParams(alpha_max=self.alpha_max, beta_max=self.beta_max)

    @property
    def adjust_limits(self) -> AdjustLimits:
        """ManualAdjust's bounds: the spec's, with the configured timeout."""
        return AdjustLimits(timeout=self.manual_timeout_s)

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> BehaviorSettings:
        """The snapshot from parameter values (extra names ignored); raises ValueError to refuse them."""
        names = {f.name for f in fields(cls)}
        kwargs = {}
        for key, value in values.items():
            if key not in names:
                continue
            default = getattr(cls, key)
            kwargs[key] = float(value) if isinstance(default, float) else value
        return cls(**kwargs)
