"""The CLI's one way to wait: spin a node in short slices until a condition, a deadline or a stop signal.

`request_stop` is installed as the SIGINT/SIGTERM handler (`ctl.main`); the spin loop then raises
`Interrupted` between two slices, never from inside rclpy, so every verb can cancel or clean up.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import rclpy
from rclpy.node import Node


class Interrupted(Exception):
    """Ctrl-C or SIGTERM arrived; raised from the spin loops, never from inside rclpy."""


_stop_requested = False


def request_stop(_signum: int, _frame: object) -> None:
    """A signal handler: the next spin slice raises Interrupted."""
    global _stop_requested
    _stop_requested = True


def clear_stop() -> None:
    """Forget a stop signal already acted on: the next one interrupts the next wait (a second Ctrl-C)."""
    global _stop_requested
    _stop_requested = False


def spin_until(node: Node, done: Callable[[], bool], timeout: float) -> bool:
    """Spin `node` in short slices until `done()` or `timeout` s; raises Interrupted on a stop signal."""
    deadline = time.monotonic() + timeout
    while not done():
        if _stop_requested:
            raise Interrupted
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        rclpy.spin_once(node, timeout_sec=min(0.05, remaining))
    return True
