"""Process entry point shared by the nodes: init, spin, clean stop on Ctrl-C or SIGTERM."""

from __future__ import annotations

import faulthandler
import signal
from collections.abc import Callable

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from salamander_control.ros.held_signals import HELD_SIGNALS, STACK_DUMP_SIGNAL


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
    # cancelled, a lease released). A second signal raises at once, for a shutdown that hangs.
    # The handlers go in before rclpy.init, and only then is SIGINT unblocked: the launch runner starts
    # the project's nodes with SIGINT blocked (`held_signals`), so a Ctrl-C that comes while Python is
    # still importing (seconds on a loaded machine) waits here instead of raising KeyboardInterrupt
    # inside the import machinery (a traceback, or a module lock left held and a hang at exit).
    # The launch runner sends STACK_DUMP_SIGNAL to a node that did not stop in time, before it kills it:
    # every thread's stack then goes to the log, which says where the stop hung.
    faulthandler.register(STACK_DUMP_SIGNAL, all_threads=True)
    stop = _StopOnSignal()
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)  # a held Ctrl-C arrives now: the flag
    node = None
    executor: Executor | None = None
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        if stop.signum is None:  # stopped before it started: nothing to build
            node = factory()
            if events_executor:
                from rclpy.experimental import EventsExecutor

                executor = EventsExecutor()
            else:
                executor = SingleThreadedExecutor()
            executor.add_node(node)
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
        rclpy.try_shutdown()


class _StopOnSignal:
    """A SIGINT/SIGTERM handler: the first signal asks the spin loop to stop, a second one raises."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def __call__(self, signum: int, _frame: object) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum
