"""Process entry point shared by the nodes: init, spin, clean stop on Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node


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
    rclpy.init(args=args)
    # SIGTERM (the runner's stop, systemd) takes the same clean path as Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: rclpy.try_shutdown())
    node = None
    try:
        node = factory()
        if events_executor:
            from rclpy.experimental import EventsExecutor

            # rclpy 9.1.2: EventsExecutor.spin() dispatches nothing and ignores signals, and a shutdown
            # from the SIGTERM handler mid-callback leaves that callback with destroyed handles. So spin
            # in short slices, and let SIGTERM take Ctrl-C's KeyboardInterrupt path instead.
            signal.signal(signal.SIGTERM, signal.default_int_handler)
            executor = EventsExecutor()
            executor.add_node(node)
            while rclpy.ok():
                executor.spin_once(timeout_sec=0.1)
        else:
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
