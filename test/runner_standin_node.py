"""Stand-in node for the runner tests (test_launch_runner.py), started through a fake ament prefix.

Default: an rclpy node (via the project's run_node, like the real nodes) that prints its fully qualified
name, its `greeting` parameter and its pid once it is up, and "stopped cleanly" after a clean shutdown.
`--exit-after S --exit-code N`: the node dies on its own after S seconds with code N.
`--ignore-sigint`: no ROS; ignores SIGINT (a hung node) so the runner must kill it.
`--plain`: no ROS; up within milliseconds, exits 0 on SIGINT (for timing-sensitive runner tests).
`--hang-on-stop`: the rclpy node hangs in its destroy_node after Ctrl-C (a shutdown that never ends).
`--segv-while-built`: the process dies of SIGSEGV while its node is being built (before `run_node` says
it is up), as a middleware thread's crash would end it; with `--once MARKER` only while MARKER does not
exist (the crash creates it), so its next start comes up. `--segv-after S`: SIGSEGV S s after it is up.
"""

import argparse
import os
import signal
import sys
import threading


def main() -> int:
    own_args = sys.argv[1 : sys.argv.index("--ros-args")] if "--ros-args" in sys.argv else sys.argv[1:]
    parser = argparse.ArgumentParser()
    parser.add_argument("--exit-after", type=float)
    parser.add_argument("--exit-code", type=int, default=3)
    parser.add_argument("--ignore-sigint", action="store_true")
    parser.add_argument("--plain", action="store_true")
    parser.add_argument("--hang-on-stop", action="store_true")
    parser.add_argument("--segv-while-built", action="store_true")
    parser.add_argument("--once", metavar="MARKER")
    parser.add_argument("--segv-after", type=float)
    opts = parser.parse_args(own_args)

    if opts.plain:
        try:
            print(f"up pid={os.getpid()}", flush=True)
            while True:
                signal.pause()
        except KeyboardInterrupt:
            print("stopped cleanly", flush=True)
            return 0

    if opts.ignore_sigint:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"ignoring SIGINT pid={os.getpid()}", flush=True)
        while True:
            signal.pause()

    from rclpy.node import Node

    from salamander_control.ros.run import run_node

    class HangingNode(Node):
        def destroy_node(self) -> None:
            print("hanging in destroy_node", flush=True)
            threading.Event().wait()

    def make() -> Node:
        node = (HangingNode if opts.hang_on_stop else Node)("standin")
        if opts.segv_while_built and not (opts.once and os.path.exists(opts.once)):
            if opts.once:
                open(opts.once, "w").close()
            print(f"crashing while built pid={os.getpid()}", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        if opts.segv_after is not None:
            node.create_timer(opts.segv_after, lambda: os.kill(os.getpid(), signal.SIGSEGV))
        node.declare_parameter("greeting", "unset")
        greeting = node.get_parameter("greeting").value
        print(f"up as {node.get_fully_qualified_name()} greeting={greeting} pid={os.getpid()}", flush=True)
        if opts.exit_after is not None:

            def crash() -> None:
                print(f"crashing with code {opts.exit_code}", flush=True)
                raise SystemExit(opts.exit_code)

            node.create_timer(opts.exit_after, crash)
        return node

    run_node(make)
    print("stopped cleanly", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
