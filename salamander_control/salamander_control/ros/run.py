"""Process entry point shared by the nodes: init, spin, clean stop on Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions


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
    # Ctrl-C and SIGTERM (the runner's stop, systemd) both raise KeyboardInterrupt in the spin loop, so
    # the node is destroyed while its context still works (a goal can be cancelled, a lease released)
    # and no callback runs against a context that rclpy's own SIGINT handler already shut down.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    node = None
    try:
        node = factory()
        if events_executor:
            from rclpy.experimental import EventsExecutor

            executor = EventsExecutor()
        else:
            executor = SingleThreadedExecutor()
        executor.add_node(node)
        # Short slices, not spin(): without rclpy's signal handler a blocking wait would not wake up for
        # Ctrl-C, and in rclpy 9.1.2 EventsExecutor.spin() dispatches nothing at all.
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
