"""Shared helpers for tests that talk ROS 2 through rclpy (fixtures using them are in conftest.py).

Every test gets a DDS domain of its own, so leftovers of an earlier test (or another test run on the
same machine) cannot answer in its place. Waiting is always "spin until a predicate holds, bounded by a
deadline", never a bare sleep.
"""

import itertools
import os
import time
from collections.abc import Callable

from rclpy.executors import Executor

# IDs are handed out from SALAMANDER_TEST_DOMAIN_BASE (set per run by scripts/test.sh, 1..69) up to
# base + DOMAIN_BLOCK - 1 <= 100: ROS recommends 0..101 on Linux, where higher IDs' ports fall into the
# ephemeral port range. Domain 0 (the default, used by the bring-up) is never handed to a test.
DOMAIN_BLOCK = 32
_next = itertools.count()


def domain_base() -> int:
    """Base of this run's domain IDs; without scripts/test.sh, derived from the process id."""
    env = os.environ.get("SALAMANDER_TEST_DOMAIN_BASE")
    return int(env) if env else 1 + os.getpid() % 69


def next_domain_id() -> int:
    """A ROS_DOMAIN_ID not handed out before in this process (wraps after DOMAIN_BLOCK IDs)."""
    return domain_base() + next(_next) % DOMAIN_BLOCK


def ros_env(domain_id: int) -> dict[str, str]:
    """Environment for a node started as a subprocess, so that it joins the test's domain."""
    return {**os.environ, "ROS_DOMAIN_ID": str(domain_id)}


def spin_until(executor: Executor, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Spin `executor` until `predicate()` is true; False when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while not predicate():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        executor.spin_once(timeout_sec=min(0.05, remaining))
    return True
