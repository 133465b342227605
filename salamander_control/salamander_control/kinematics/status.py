"""IK status codes and their reason strings: the one table the library, the nodes and the messages share.

The numeric values equal the constants of ``salamander_msgs/msg/IkStatus`` (a test keeps them in step),
and the reason strings are the ones operators' tools rely on (docs/arm_model.md).
"""

from __future__ import annotations

from enum import IntEnum


class IkStatus(IntEnum):
    """Outcome of an IK solve, in the order the solver checks the conditions."""

    OK = 0
    OUT_OF_REACH = 1
    YAW_OUT_OF_RANGE = 2
    Q1_OUT_OF_RANGE = 3
    Q2_OUT_OF_RANGE = 4
    WRIST_OUT_OF_RANGE = 5
    COUPLED_LIMIT = 6

    @property
    def reason(self) -> str:
        """The reason string operators' tools rely on, e.g. ``"coupled_limit"``."""
        return REASONS[self]

    @property
    def message(self) -> str:
        """A sentence for logs and operator screens."""
        return MESSAGES[self]

    @classmethod
    def from_reason(cls, reason: str) -> IkStatus:
        """Look a status up by its reason string.

        Raises:
            ValueError: ``reason`` is not one of the reason strings.
        """
        for status, text in REASONS.items():
            if text == reason:
                return status
        raise ValueError(f"unknown IK reason {reason!r}; expected one of {sorted(REASONS.values())}")


REASONS: dict[IkStatus, str] = {
    IkStatus.OK: "ok",
    IkStatus.OUT_OF_REACH: "out_of_reach",
    IkStatus.YAW_OUT_OF_RANGE: "yaw_out_of_range",
    IkStatus.Q1_OUT_OF_RANGE: "q1_out_of_range",
    IkStatus.Q2_OUT_OF_RANGE: "q2_out_of_range",
    IkStatus.WRIST_OUT_OF_RANGE: "wrist_out_of_range",
    IkStatus.COUPLED_LIMIT: "coupled_limit",
}

MESSAGES: dict[IkStatus, str] = {
    IkStatus.OK: "solved; all limits hold",
    IkStatus.OUT_OF_REACH: "the wrist target is farther or nearer than the two links can reach",
    IkStatus.YAW_OUT_OF_RANGE: "the base yaw the target needs is outside [yaw_min, yaw_max]",
    IkStatus.Q1_OUT_OF_RANGE: "the shoulder pitch the target needs is outside its joint limits",
    IkStatus.Q2_OUT_OF_RANGE: "the beam pitch the target needs is outside its joint limits",
    IkStatus.WRIST_OUT_OF_RANGE: "the wrist pitch or wrist yaw the pose needs is outside its joint limits",
    IkStatus.COUPLED_LIMIT: "the shoulder/beam pair would hit the housing (alpha_max or beta_max)",
}
