"""The signals a node process starts with blocked under the launch runner, shared by both sides.

The runner (`salamander_bringup.runner`, no rclpy) blocks them in the children of
`HELD_SIGINT_PACKAGES` before exec;
`ros.run.run_node` unblocks them once its stop handler is installed, so a Ctrl-C that comes while Python
is still importing waits for the handler instead of raising KeyboardInterrupt inside an import.

`STACK_DUMP_SIGNAL`: `run_node` has Python's faulthandler print every thread's stack on it; the runner
sends it to a node of those packages that did not stop in time, just before it kills it, so the log
says where the node hung.
"""

from __future__ import annotations

import signal

HELD_SIGNALS = frozenset({signal.SIGINT})
"""Blocked from the runner's fork until `run_node` has its handler (SIGTERM is not: the runner's death
signal must still end a node that is importing)."""

HELD_SIGINT_PACKAGES = frozenset(
    {"salamander_control", "salamander_sim", "salamander_behavior", "salamander_teleop", "salamander_view"}
)
"""Packages whose every node starts through `run_node` (test_node_entry_points checks it); any other
package's node (rviz2, robot_state_publisher, a test's stand-in) gets SIGINT as usual."""

STACK_DUMP_SIGNAL = signal.SIGUSR1
"""On it a `run_node` process prints every thread's Python stack to stderr and carries on (faulthandler:
a C-level handler, so it works while the main thread is stuck inside a C++ call)."""
