"""Shared helpers for tests that talk ROS 2 through rclpy (fixtures using them are in conftest.py).

Every test gets a DDS domain of its own, so leftovers of an earlier test (or another test run on the
same machine) cannot answer in its place. Waiting is always "spin until a predicate holds, bounded by a
deadline", never a bare sleep.
"""

import itertools
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rclpy.executors import Executor

if TYPE_CHECKING:
    from salamander_testing.process import ChildProcess

# IDs are handed out from SALAMANDER_TEST_DOMAIN_BASE (set per run by scripts/test.sh, 1..69) up to
# base + DOMAIN_BLOCK - 1 <= 100: ROS recommends 0..101 on Linux, where higher IDs' ports fall into the
# ephemeral port range. Domain 0 (the default, used by the bring-up) is never handed to a test.
DOMAIN_BLOCK = 32
RESEND_S = 3.0
"""s a resendable call waits for its answer before it sends it again (`RosPeer.answer_resent`)."""
_next = itertools.count()


def domain_base() -> int:
    """Base of this run's domain IDs; without scripts/test.sh, derived from the process id."""
    env = os.environ.get("SALAMANDER_TEST_DOMAIN_BASE")
    return int(env) if env else 1 + os.getpid() % 69


def _worker_share() -> tuple[int, int]:
    """(first offset, size) of this process's share of the block: pytest-xdist workers split it evenly."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under pytest -n
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count <= 1:
        return 0, DOMAIN_BLOCK
    size = DOMAIN_BLOCK // count
    return int(worker[2:]) * size, size


def next_domain_id() -> int:
    """A ROS_DOMAIN_ID not handed out before in this process, nor in a parallel worker of the same run.

    IDs wrap inside this process's share of the block (all of it without pytest-xdist, an equal part per
    worker with it), so the tests running at one moment never share a domain.
    """
    first, size = _worker_share()
    return domain_base() + first + next(_next) % size


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


class RosPeer:
    """The test's side of a ROS graph: its own context, node and executor in one domain, and a parameter
    client for the node under test. Every failed wait says what it waited for and shows `describe()`
    (the logs of the processes under test).

    Args:
        domain_id: the test's ROS_DOMAIN_ID.
        name: this peer's node name.
        target: fully qualified name of the node whose parameters `set_param`/`get_param` reach.
        describe: returns the processes' logs for failure messages.
        timeout: default bound of every wait, s.
    """

    def __init__(
        self, domain_id: int, name: str, target: str, describe: Callable[[], str], timeout: float = 30.0
    ) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from rclpy.parameter_client import AsyncParameterClient

        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.node = Node(name, context=self.context)
        self.executor.add_node(self.node)
        self.params = AsyncParameterClient(self.node, target)
        self.describe = describe
        self.timeout = timeout

    def spin_until(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        """Spin until `predicate()`; False when the timeout passes first."""
        return spin_until(self.executor, predicate, self.timeout if timeout is None else timeout)

    def wait(
        self, predicate: Callable[[], bool], what: str = "a condition", timeout: float | None = None
    ) -> None:
        """Spin until `predicate()`, or fail the test saying what never happened."""
        assert self.spin_until(predicate, timeout), f"timed out waiting for {what}\n{self.describe()}"

    def wait_for_line(
        self, proc: "ChildProcess", *texts: str, since: int = 0, timeout: float | None = None
    ) -> str:
        """Spin until a line of `proc` from index `since` on holds one of `texts`; that line.

        Unlike `proc.wait_for_text`, the peer spins meanwhile, so what its subscriptions copied (a state
        read right after the line) is current, not from before the wait.
        """

        def found() -> str | None:
            return next((line for line in proc.lines[since:] if any(t in line for t in texts)), None)

        self.wait(lambda: found() is not None, f"a line with one of {texts}", timeout)
        return found() or ""

    def answer(self, future, what: str):
        """The result of `future` (a service or action call), waited for."""
        self.wait(future.done, what)
        return future.result()

    def answer_resent(self, call: Callable[[], object], what: str, every: float = RESEND_S):
        """The result of an idempotent service call `call()`, sent again after `every` s without an answer.

        A server started moments ago can drop its answer: its reply writer had not yet matched this
        client's reader ("failed to send response (timeout)" in its log), and a single call would then
        wait out the whole timeout. Only for calls whose repetition changes nothing (a get, a set of the
        same values); an answer to an earlier send that comes late goes to its own, forgotten future.
        """
        deadline = time.monotonic() + self.timeout
        while True:
            future = call()
            left = deadline - time.monotonic()
            if self.spin_until(future.done, min(every, max(left, 0.0))):
                return future.result()
            assert time.monotonic() < deadline, f"timed out waiting for {what}\n{self.describe()}"

    def set_params(self, values: dict[str, object], atomically: bool = False):
        """Set parameters of the target node; its SetParametersResult(s) (typed from the Python values)."""
        from rclpy.parameter import Parameter

        self.wait(self.params.services_are_ready, "the parameter services")
        params = [Parameter(k, value=v) for k, v in values.items()]
        call = self.params.set_parameters_atomically if atomically else self.params.set_parameters
        reply = self.answer(call(params), "the set_parameters answer")
        return reply.result if atomically else reply.results

    def set_param(self, name: str, value: object):
        """Set one parameter; its SetParametersResult (successful, reason)."""
        return self.set_params({name: value})[0]

    def get_param(self, name: str):
        """The target node's parameter value, as a Python value."""
        from rclpy.parameter import parameter_value_to_python

        self.wait(self.params.services_are_ready, "the parameter services")
        reply = self.answer(self.params.get_parameters([name]), "the get_parameters answer")
        return parameter_value_to_python(reply.values[0])

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        from salamander_control.ros.participant_listener import detach_participant_listener

        self.executor.remove_node(self.node)
        detach_participant_listener(self.node)  # the context's only node: Fast DDS could hang in its destroy
        self.node.destroy_node()
        self.executor.shutdown()
        self.context.try_shutdown()
