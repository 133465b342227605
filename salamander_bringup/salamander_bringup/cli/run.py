"""`salamanderctl run start|cancel`: start, watch and cancel a pick-and-place run, like ``ros2 action``.

Usage::

    salamanderctl run start                 # every can not yet placed
    salamanderctl run start can_2 can_0     # these cans, in this order
    salamanderctl run cancel                # cancel the running run (whoever started it)

``run start`` sends a RunPickPlace goal to the behaviour server's action (/salamander/run_pick_place,
or /CELL/salamander/run_pick_place with ``--cell``), prints every feedback and then the result, as
``ros2 action send_goal --feedback`` does; Ctrl-C while it runs cancels the goal and waits for its end
(a second Ctrl-C stops waiting; a refused or unanswered cancel is said: the run may go on). Exit code 0
when the run placed every can, 1 otherwise (rejected: the reason is in the behaviour server's log; the
action server gone for ``--timeout`` s during the run, or back without the run after a restart: its
outcome unknown). ``run
cancel`` calls the action's cancel service with a zero goal id and stamp (every goal of the server, so
also a run started by the gamepad or by ``run_on_start``) and waits until the goals ended. Pure
printing helpers (`feedback_text`, `result_text`) are separate from the ROS calls.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from action_msgs.msg import GoalStatus, GoalStatusArray
from action_msgs.srv import CancelGoal
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import qos_profile_action_status_default

from salamander_bringup.cli.spin import Interrupted, clear_stop
from salamander_control import names
from salamander_msgs.action import RunPickPlace

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130
STATUS_WORDS = {
    GoalStatus.STATUS_UNKNOWN: "UNKNOWN",
    GoalStatus.STATUS_ACCEPTED: "ACCEPTED",
    GoalStatus.STATUS_EXECUTING: "EXECUTING",
    GoalStatus.STATUS_CANCELING: "CANCELING",
    GoalStatus.STATUS_SUCCEEDED: "SUCCEEDED",
    GoalStatus.STATUS_CANCELED: "CANCELED",
    GoalStatus.STATUS_ABORTED: "ABORTED",
}
_ENDED = {GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED}

Spin = Callable[[Node, Callable[[], bool], float], bool]


def add_run_parser(sub: Any) -> None:
    """The `run` command and its verbs on the CLI's subparsers."""
    run = sub.add_parser("run", help="start, watch or cancel a pick-and-place run (like ros2 action)")
    verbs = run.add_subparsers(dest="verb", required=True)
    start = verbs.add_parser("start", help="start a run and print its feedback and result")
    start.add_argument("cans", nargs="*", help="can ids (default: every can not yet placed)")
    verbs.add_parser("cancel", help="cancel the running run")


def _yaml_list(values: list[str]) -> str:
    return "[" + ", ".join(values) + "]"


def goal_text(cans: list[str]) -> str:
    """The goal as ros2 action send_goal prints it."""
    return f"Sending goal:\n     cans: {_yaml_list(cans) if cans else '[]'}\n"


def feedback_text(feedback: Any) -> str:
    """One feedback as ros2 action send_goal --feedback prints it."""
    return (
        f"Feedback:\n    can: {feedback.can or chr(39) * 2}\nstep: {feedback.step or chr(39) * 2}\n"
        f"cans_done: {feedback.cans_done}\ncans_total: {feedback.cans_total}\n"
    )


def result_text(status: int, result: Any) -> str:
    """The result and the final status as ros2 action send_goal prints them."""
    return (
        f"Result:\n    success: {str(result.success).lower()}\nmessage: {result.message}\n"
        f"cans: {_yaml_list(list(result.cans))}\noutcomes: {_yaml_list(list(result.outcomes))}\n\n"
        f"Goal finished with status: {STATUS_WORDS.get(status, str(status))}"
    )


def _action_name(cell: str) -> str:
    return names.absolute(names.RUN_PICK_PLACE, cell)


def run_start(node: Node, args: argparse.Namespace, spin_until: Spin) -> int:
    """Send the goal, print feedback until the result; Ctrl-C cancels the goal."""
    client = ActionClient(node, RunPickPlace, _action_name(args.cell))
    print("Waiting for an action server to become available...", flush=True)
    if not spin_until(node, client.server_is_ready, args.timeout):
        print(f"no {_action_name(args.cell)} action server within {args.timeout:g} s", flush=True)
        return EXIT_FAILED
    print(goal_text(list(args.cans)), flush=True)
    sent = client.send_goal_async(
        RunPickPlace.Goal(cans=list(args.cans)),
        feedback_callback=lambda msg: print(feedback_text(msg.feedback), flush=True),
    )
    if not spin_until(node, sent.done, args.timeout) or sent.exception() is not None:
        print("no answer to the goal", flush=True)
        return EXIT_FAILED
    handle = sent.result()
    if not handle.accepted:
        print("Goal was rejected. (the behaviour server's log says why)", flush=True)
        return EXIT_FAILED
    print(f"Goal accepted with ID: {bytes(handle.goal_id.uuid).hex()}\n", flush=True)
    wait = _ResultWait(client, handle, args.timeout)
    try:
        spin_until(node, wait.settled, float("inf"))
    except Interrupted:
        failed = _cancel(node, handle, wait, args.timeout, spin_until)
        if failed is not None:
            return failed
    if not wait.future.done():
        print(
            f"lost the {_action_name(args.cell)} action server for {args.timeout:g} s during the run: its "
            "outcome is unknown (salamanderctl status; the behaviour server's log)",
            flush=True,
        )
        return EXIT_FAILED
    answer = wait.future.result()
    if answer.status == GoalStatus.STATUS_UNKNOWN:
        print(
            f"the {_action_name(args.cell)} action server came back without this run (it was restarted): its "
            "outcome is unknown (salamanderctl status; the behaviour server's log)",
            flush=True,
        )
        return EXIT_FAILED
    if answer.status == GoalStatus.STATUS_CANCELED:
        print("Goal canceled.", flush=True)
    print(result_text(answer.status, answer.result), flush=True)
    return EXIT_OK if answer.status == GoalStatus.STATUS_SUCCEEDED and answer.result.success else EXIT_FAILED


REFUSED_GRACE_S = 2.0
"""s a refused or unanswered cancel still waits for the result: a run that was ending as Ctrl-C came."""


class _ResultWait:
    """The run's result: asked again every `timeout` s, given up when the action server stays gone.

    A server that died and was respawned (the runner does that within 2 s) does not know the goal, and
    the dead one never answers the request it had: the graph may still list it for the middleware's
    lease (seconds), so its absence alone does not tell. So the result is asked again every `timeout`
    s while the server is there: a restarted server answers at once with STATUS_UNKNOWN, the one that
    runs the goal answers every request at the run's end (a request every 10 s of a run is nothing to
    it). `settled` is the wait's predicate: the result is in, or the server has been gone for `timeout` s.
    """

    def __init__(self, client: ActionClient, handle: Any, timeout: float) -> None:
        self._client, self._handle, self._timeout = client, handle, timeout
        self.future = handle.get_result_async()
        self._seen = self._asked = time.monotonic()

    def settled(self) -> bool:
        """Whether to stop waiting: the result came, or the server is gone for good."""
        if self.future.done():
            return True
        now = time.monotonic()
        if not self._client.server_is_ready():
            return now - self._seen > self._timeout
        self._seen = now
        if now - self._asked > self._timeout:
            self.future, self._asked = self._handle.get_result_async(), now
        return False


def _cancel(node: Node, handle: Any, wait: _ResultWait, timeout: float, spin_until: Spin) -> int | None:
    """After Ctrl-C: cancel the goal and wait for its end; None when it ended, else the exit code (said why).

    A second Ctrl-C stops the wait. A refused cancel (the server had not started the run yet, or the run
    was ending anyway) or none answered: the result is waited for `timeout` s all the same; if it does
    not come, the run may go on: said, and a failure, never "canceled".
    """
    clear_stop()
    print("Canceling goal...", flush=True)
    cancel = handle.cancel_goal_async()
    try:
        answered = spin_until(node, cancel.done, timeout) and cancel.exception() is None
        accepted = answered and bool(cancel.result().goals_canceling)
        ending = timeout if accepted else min(timeout, REFUSED_GRACE_S)  # refused: a run ending anyway?
        if spin_until(node, wait.settled, ending) and wait.future.done():
            return None  # ended: cancelled, or it finished as the cancel came (its result says which)
        if not answered:
            print("no answer to the cancel request: the run may go on (salamanderctl run cancel)", flush=True)
        elif not accepted:
            print(
                "cancel refused: the run goes on (the behaviour server's log says why; salamanderctl run "
                "cancel tries again)",
                flush=True,
            )
        else:
            print(f"the run did not end {timeout:g} s after the cancel (salamanderctl status)", flush=True)
        return EXIT_FAILED
    except Interrupted:
        print("not waiting for the cancel any more: the run may go on (salamanderctl status)", flush=True)
        return EXIT_INTERRUPTED


def run_cancel(node: Node, args: argparse.Namespace, spin_until: Spin) -> int:
    """Cancel every goal of the server and wait until they ended."""
    name = _action_name(args.cell)
    statuses: dict[bytes, int] = {}

    def on_status(msg: GoalStatusArray) -> None:
        for status in msg.status_list:
            statuses[bytes(status.goal_info.goal_id.uuid)] = status.status

    qos = qos_profile_action_status_default  # latched, as the action server publishes it
    node.create_subscription(GoalStatusArray, f"{name}/_action/status", on_status, qos)
    client = node.create_client(CancelGoal, f"{name}/_action/cancel_goal")
    if not spin_until(node, client.service_is_ready, args.timeout):
        print(f"no {name} action server within {args.timeout:g} s", flush=True)
        return EXIT_FAILED
    print("Canceling goal...", flush=True)
    future = client.call_async(CancelGoal.Request())  # zero id and stamp: every goal
    if not spin_until(node, future.done, args.timeout) or future.exception() is not None:
        print("no answer to the cancel request", flush=True)
        return EXIT_FAILED
    canceling = [bytes(g.goal_id.uuid) for g in future.result().goals_canceling]
    if not canceling:
        print("No active goal to cancel.", flush=True)
        return EXIT_FAILED
    for goal in canceling:
        print(f"Goal canceling with ID: {goal.hex()}", flush=True)
    ended = spin_until(node, lambda: all(statuses.get(g) in _ENDED for g in canceling), args.timeout)
    for goal in canceling:
        print(f"Goal finished with status: {STATUS_WORDS.get(statuses.get(goal, 0), 'UNKNOWN')}", flush=True)
    return EXIT_OK if ended else EXIT_FAILED


def run_run(node: Node, args: argparse.Namespace, spin_until: Spin) -> int:
    """`run start|cancel`."""
    return run_start(node, args, spin_until) if args.verb == "start" else run_cancel(node, args, spin_until)
