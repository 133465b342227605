"""Throttled logging shared by the nodes: one throttle period, and warnings throttled per kind.

A node that refuses bad input (a malformed joint state, a goal from the wrong sender, ...) logs the
refusal, at most once per `LOG_THROTTLE_S` per kind, so that a flood of bad messages cannot flood the
log. rclpy throttles per call site of one logger; `KindLogger` gives each kind its own child logger, so
that a flood of one problem cannot hide another that goes through the same call site. No rclpy import:
any logger with ``get_child`` and ``warning(text, throttle_duration_sec=...)`` works.
"""

from __future__ import annotations

from typing import Any

LOG_THROTTLE_S = 2.0
"""Seconds between two log lines of one kind (rclpy's ``throttle_duration_sec``)."""


class KindLogger:
    """Warnings throttled per kind (one child logger per kind, each with its own throttle).

    Args:
        logger: the node's logger (``node.get_logger()``).
        period: seconds between two lines of one kind.
    """

    def __init__(self, logger: Any, period: float = LOG_THROTTLE_S) -> None:
        self._logger = logger
        self._period = period
        self._children: dict[str, Any] = {}

    def warning(self, kind: str, text: str) -> None:
        """Log `text` as a warning unless a line of `kind` was logged less than `period` ago."""
        child = self._children.get(kind)
        if child is None:
            child = self._children[kind] = self._logger.get_child(kind)
        child.warning(text, throttle_duration_sec=self._period)
