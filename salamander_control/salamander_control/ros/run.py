"""Process entry point shared by the nodes: init, spin, clean stop on Ctrl-C or SIGTERM.

Invariants: an exception in a callback or a task ends the process with its traceback and exit 1 on
either executor (never a segfault: see `_hidden_node`); a stop signal never raises (no
KeyboardInterrupt anywhere, in a callback or in the teardown); the node is destroyed while its context
still works, and the DDS participant's listener is detached with a bounded wait before the last node
goes (`participant_listener`: else a rare endless stop); a repeated stop signal is ignored while the
stop is younger than `STOP_GRACE_S` (``ros2 launch`` forwards the terminal's Ctrl-C to nodes that got
it already) and only after that forces the exit, with one log line and exit code `EXIT_FORCED`.
Once the node is built and on its executor, before its first callback, `ready.notify_ready` says so to
a supervisor (systemd's sd_notify protocol): the launch runner restarts a node that crashed before that.
A stop that came before the start (a Ctrl-C held through the imports) builds nothing and initializes no
ROS context.
Design notes: docs/design/respawn_and_stop.md.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import time
from collections.abc import Callable

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions

from salamander_control.ros.held_signals import HELD_SIGNALS, STACK_DUMP_SIGNAL
from salamander_control.ros.participant_listener import detach_participant_listener
from salamander_control.ros.ready import notify_ready

STOP_GRACE_S = 3.0
"""s a stop may take before a repeated SIGINT/SIGTERM forces the exit: above the slowest clean stop seen
(2.1 s, bench/stop_campaign.py), below ``ros2 launch``'s SIGTERM escalation (5 s after its SIGINT)."""
PARTICIPANT_DETACH_S = 2
"""s the stop waits for a running discovery callback before the DDS participant goes (`participant_listener`);
a callback takes milliseconds, and the wait stays below `STOP_GRACE_S`."""
EXIT_FORCED = 1
"""Exit code of a stop forced by a repeated signal (not a clean stop: the teardown was left unfinished)."""


def run_node(
    factory: Callable[[], Node], args: list[str] | None = None, events_executor: bool = False
) -> None:
    """Create the node with `factory`, spin it until shutdown, and tear down without a traceback.

    Args:
        factory: builds the node (after rclpy.init, so it may declare parameters).
        args: command-line arguments (``--ros-args ...``); None means sys.argv.
        events_executor: use rclpy's EventsExecutor (much less CPU for high-rate timers; see the
            project notes on timer behaviour) instead of the SingleThreadedExecutor.
    """
    # Ctrl-C and SIGTERM (the runner's stop, systemd) only set a flag that the spin loop checks between
    # slices: a KeyboardInterrupt raised by the handler could land anywhere, e.g. inside rclpy's
    # take_message ("Unable to convert call argument") or in a timer callback ("[FATAL] Exception in
    # 'timers' callback"). The node is then destroyed while its context still works (a goal can be
    # cancelled, a lease released). A second signal is ignored while the stop is young: under ros2 launch
    # every node gets the terminal's Ctrl-C and then launch's forwarded SIGINT, and raising on the second
    # one crashed the teardown (KeyboardInterrupt in destroy_node, exit -2). A stop still running
    # STOP_GRACE_S after the first signal is forced by the next one (one line, no traceback).
    # The handlers go in before rclpy.init, and only then is SIGINT unblocked: the launch runner starts
    # the project's nodes with SIGINT blocked (`held_signals`), so a Ctrl-C that comes while Python is
    # still importing (seconds on a loaded machine) waits here instead of raising KeyboardInterrupt
    # inside the import machinery (a traceback, or a module lock left held and a hang at exit).
    # The launch runner sends STACK_DUMP_SIGNAL to a node that did not stop in time, before it kills it:
    # every thread's stack then goes to the log, which says where the stop hung. A fatal signal (SIGSEGV,
    # SIGABRT, ...) writes them too: the Cartesian node's rare start-up -11 left no trace without it
    # (docs/design/respawn_and_stop.md).
    faulthandler.register(STACK_DUMP_SIGNAL, all_threads=True)
    faulthandler.enable(all_threads=True)
    stop = _StopOnSignal(STOP_GRACE_S)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    held = signal.sigpending() & HELD_SIGNALS  # a Ctrl-C held through the imports (the launch runner)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)  # ... arrives now: the flag
    node = guard = None
    executor: Executor | None = None
    try:
        # Stopped before it started (a Ctrl-C held through the imports): nothing to build, and no context
        # either, so nothing of the middleware to tear down at exit (where such a stop was seen to hang).
        # `held` as well as the flag: when the handler runs after the unblock is up to the interpreter.
        if stop.signum is None and not held:
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
            node = factory()
            guard = _hidden_node(node, "events_guard" if events_executor else "last_node")
            if events_executor:
                from rclpy.experimental import EventsExecutor

                executor = EventsExecutor()
                executor.add_node(guard)
            else:
                executor = SingleThreadedExecutor()
            executor.add_node(node)
            notify_ready()
        # Short slices, not spin(): the flag is checked between them, and in rclpy 9.1.2
        # EventsExecutor.spin() dispatches nothing at all.
        while executor is not None and rclpy.ok() and stop.signum is None:
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        # The executor lets go of the node first. The EventsExecutor holds every entity "in use" while
        # the node is added, so destroy_node only marks them: they were finalized in the executor's
        # teardown after rclpy.try_shutdown, with the context already shut down, and once in about 20
        # suite runs that teardown never returned (the stack dump: an EventHandler's __exit__ under
        # run_node's return). Shut down first, every entity is finalized inside destroy_node, while the
        # context still works (salamander_control/test/ros/test_run_ros.py counts them in the graph).
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        # The last node's destroy deletes the DDS participant, where Fast DDS 3.2.2 could spin forever
        # while a discovery callback ran (another node of the stack stopping at the same time): its
        # listener goes first, with a bounded wait. The hidden node is that last node, so the node's own
        # entities went while the graph still followed discovery.
        if guard is not None:
            if detach_participant_listener(guard, PARTICIPANT_DETACH_S) == "busy":
                os.write(2, (f"[WARN] [run_node]: a discovery callback still ran {PARTICIPANT_DETACH_S} s "
                             "into the stop: the middleware teardown may hang (eProsima/Fast-DDS#6513)\n"
                             ).encode())  # fmt: skip
            guard.destroy_node()
        rclpy.try_shutdown()
        # The stop is done; a late SIGINT (launch's forward after a fast stop) has nothing left to stop.
        # Ignored, not handled: the interpreter's exit puts Python-level handlers back to the default
        # (killed by SIGINT, exit -2) before it tears down the modules and the middleware.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _hidden_node(node: Node, role: str) -> Node:
    """A hidden node with nothing to run beside `node`, destroyed last: the DDS participant goes with it.

    `run_node` detaches the participant's listener just before that last destroy (see
    `participant_listener`); `node` itself is destroyed earlier, while the graph still follows discovery.
    On the EventsExecutor (``role`` "events_guard") it is also added beside `node`: rclpy 9.1.2's
    EventsExecutor dies of SIGSEGV when a task (a coroutine callback, a future's done-callback) raises
    while exactly one node is added: to name the logger of its error message it indexes its *set* of
    nodes, which builds a string from a null pointer (ros2/rclpy#1641, fixed by ros2/rclpy#1718, not in
    9.1.2). With a second node the exception is logged and raised out of `spin_once` as on the
    SingleThreadedExecutor: the node ends with its traceback, exit 1. The hidden node has no services, no
    rosout and ignores the process's arguments (a ``__node:=`` remap would give it the node's own name);
    its leading underscore hides it from ``ros2 node list``.
    """
    return Node(
        f"_{node.get_name()}_{role}",
        namespace=node.get_namespace(),
        context=node.context,
        use_global_arguments=False,
        enable_rosout=False,
        start_parameter_services=False,
        parameter_overrides=[Parameter("start_type_description_service", value=False)],
    )


class _StopOnSignal:
    """A SIGINT/SIGTERM handler: the first signal asks the spin loop to stop.

    A repeat is ignored until the stop has run `grace_s`, then forces the exit (see the module docstring).
    """

    def __init__(self, grace_s: float) -> None:
        self.signum: int | None = None
        self._grace_s = grace_s
        self._since = 0.0

    def __call__(self, signum: int, _frame: object) -> None:
        now = time.monotonic()
        if self.signum is None:
            self.signum, self._since = signum, now
            return
        running = now - self._since
        if running < self._grace_s:
            return
        # os.write, not print or the ROS logger: this may run in the middle of a write to stderr.
        os.write(2, (f"[ERROR] [run_node]: stop not finished {running:.1f} s after "
                     f"{signal.Signals(self.signum).name}; {signal.Signals(signum).name}: forced exit "
                     f"(code {EXIT_FORCED}), the teardown left unfinished\n").encode())  # fmt: skip
        os._exit(EXIT_FORCED)
