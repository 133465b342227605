"""`salamanderctl`: the operator's ``ros2 param`` and status screen where the ros2 CLI is missing.

Usage::

    salamanderctl param get /arm/trajectory_generator alpha_max
    salamanderctl param set /arm/trajectory_generator alpha_max 1.30
    salamanderctl param list /arm/trajectory_generator
    salamanderctl param describe /arm/trajectory_generator alpha_max
    salamanderctl status [--watch]
    salamanderctl run start [CAN ...]          # a pick-and-place run; feedback and result (cli/run.py)
    salamanderctl run cancel
    salamanderctl jog --x 0.02 --for 2          # operator jog twists, then confirm / abort (cli/pub.py)
    salamanderctl confirm
    salamanderctl new-box                      # a new box is in: forget the box estimate
    salamanderctl topic pub -r 20 -t 40 /salamander/operator/jog geometry_msgs/msg/Twist "{linear: {x: 0.02}}"
    salamanderctl --cell cell2 param get /arm/trajectory_generator alpha_max   # the stack of cell:=cell2

``param`` calls the node's parameter services (waiting for the one it needs) and prints what
``ros2 param`` prints; VALUE is YAML-parsed the same way (``1.30`` is a double, ``1`` an integer).
Unlike ``ros2 param set``, a refused set exits with code 1, so scripts can tell. ``status`` listens to
the stack's status topics for up to ``--timeout`` seconds and prints one screen (`cli.format`), the
box estimate (/salamander/box/estimate) included; when nothing came at all it exits with code 1 (a
health check must not pass on a stack that is not there). Bad input (a value that is not YAML, a name
that is not a node's, ``--timeout nan``) is an error line and code 1 or 2, never a traceback.
``new-box`` calls the behaviour server's /salamander/box/new_box (std_srvs/Trigger) and prints its
answer; a refusal (a run is active) or no server exits with code 1.

``--cell CELL`` (default: the environment variable SALAMANDER_CELL, else none) addresses the stack the
launch file started with ``cell:=CELL``: node names are written as in the default launch and looked up
under /CELL (``/arm/trajectory_generator`` is ``/CELL/arm/trajectory_generator``), and ``status``
listens to that stack's topics (``/CELL/joint_states``, ...; `names.absolute` says where each one is).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
import yaml
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters
from rclpy.exceptions import NameValidationException
from rclpy.node import Node
from rclpy.parameter import get_parameter_value
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import String, UInt64
from std_srvs.srv import Trigger

from salamander_bringup.cli import pub as pub_cli
from salamander_bringup.cli import run as run_cli
from salamander_bringup.cli.format import (
    Received,
    StatusView,
    format_describe,
    format_get,
    format_set,
    render_status,
)
from salamander_bringup.cli.spin import Interrupted, request_stop, spin_until
from salamander_bringup.runner import positive_seconds
from salamander_control import names
from salamander_control.box_status import status_text
from salamander_control.ros.participant_listener import detach_participant_listener
from salamander_control.ros.qos import LATCHED
from salamander_msgs.msg import ClampReport, IkStatus, LeaseState

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130
CELL_ENV = "SALAMANDER_CELL"  # the default of --cell
# verb -> (service type, service name under the node): each verb waits for the one service it calls.
_SERVICES: dict[str, tuple[type, str]] = {
    "get": (GetParameters, "get_parameters"),
    "set": (SetParameters, "set_parameters"),
    "list": (ListParameters, "list_parameters"),
    "describe": (DescribeParameters, "describe_parameters"),
}


def _cell(text: str) -> str:
    """--cell's value as the stack's namespace prefix ('' or '/cell2'); argparse reports a bad one."""
    try:
        return names.cell_namespace(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


class CtlError(RuntimeError):
    """A failure to report on stderr (node not found, no reply, unknown parameter)."""


def _call(node: Node, target: str, verb: str, request: Any, timeout: float) -> Any:
    """Call the parameter service of `verb` on `target` and return the response, or raise CtlError."""
    srv_type, service = _SERVICES[verb]
    try:
        client = node.create_client(srv_type, f"{target}/{service}")
    except NameValidationException as exc:
        raise CtlError(f"{target!r} is not a node name ({exc})") from None
    if not spin_until(node, client.service_is_ready, timeout):
        raise CtlError("Node not found")
    future = client.call_async(request)
    if not spin_until(node, future.done, timeout):
        raise CtlError(f"no reply from {target}/{service} within {timeout:g} s")
    if future.exception() is not None:
        raise CtlError(f"{target}/{service} failed: {future.exception()}")
    return future.result()


def run_param(node: Node, args: argparse.Namespace) -> int:
    """`param get|set|list|describe` against one node; prints like ros2 param, returns the exit code."""
    target = args.cell + (args.node_name if args.node_name.startswith("/") else "/" + args.node_name)
    if args.verb == "get":
        request = GetParameters.Request(names=[args.parameter_name])
        response = _call(node, target, "get", request, args.timeout)
        if not response.values:
            raise CtlError("Parameter not set")
        print(format_get(response.values[0], args.hide_type))
        return EXIT_OK
    if args.verb == "set":
        try:
            value = get_parameter_value(args.value)
        except yaml.YAMLError as exc:  # rclpy reads the value as YAML and catches only some of its errors
            raise CtlError(f"cannot read the value {args.value!r} as YAML: {exc}") from None
        param = ParameterMsg(name=args.parameter_name, value=value)
        response = _call(node, target, "set", SetParameters.Request(parameters=[param]), args.timeout)
        text, ok = format_set(response.results[0])
        print(text, file=sys.stdout if ok else sys.stderr)
        return EXIT_OK if ok else EXIT_FAILED
    if args.verb == "list":
        response = _call(node, target, "list", ListParameters.Request(), args.timeout)
        for name in sorted(response.result.names):
            print(f"  {name}")
        return EXIT_OK
    request = DescribeParameters.Request(names=[args.parameter_name])
    response = _call(node, target, "describe", request, args.timeout)
    if not response.descriptors:
        raise CtlError("Parameter not set")
    print("\n".join(format_describe(response.descriptors[0])))
    return EXIT_OK


class StatusListener:
    """Keeps the latest message of each status topic (callbacks only store; the caller renders).

    `cell` is the stack's namespace: '' for the default stack, '/cell2' for the one of cell:=cell2.
    """

    def __init__(self, node: Node, cell: str = "") -> None:
        self._latest: dict[str, tuple[float, dict[str, Any]]] = {}
        subscribe: list[tuple[str, type, str, QoSProfile, Callable[[Any], dict[str, Any]]]] = [
            ("joints", JointState, names.JOINT_STATES, qos_profile_sensor_data,
             lambda m: {"positions": dict(zip(m.name, m.position, strict=False))}),
            ("lease", LeaseState, names.LEASE_STATE, LATCHED,
             lambda m: {"holder": m.holder, "seconds_to_expiry": m.seconds_to_expiry, "timeout": m.timeout}),
            ("ghost", IkStatus, names.GHOST_STATUS, qos_profile_sensor_data,
             lambda m: {"reason": m.reason or str(m.status), "tcp": (m.tcp.x, m.tcp.y, m.tcp.z)}),
            ("clamps", ClampReport, names.CLAMP_REPORT, qos_profile_sensor_data,
             lambda m: {"clamp_count": m.clamp_count, "active_bounds": list(m.active_bounds)}),
            ("stop_hits", UInt64, names.SIM_STOP_HITS, LATCHED, lambda m: {"data": m.data}),
            ("box", String, names.BOX_ESTIMATE, LATCHED, lambda m: {"text": status_text(m.data)}),
        ]  # fmt: skip
        self.sources = [key for key, *_ in subscribe]
        for key, msg_type, topic, qos, extract in subscribe:
            node.create_subscription(msg_type, names.absolute(topic, cell), self._store(key, extract), qos)

    def _store(self, key: str, extract: Callable[[Any], dict[str, Any]]) -> Callable[[Any], None]:
        def callback(msg: Any) -> None:
            self._latest[key] = (time.monotonic(), extract(msg))

        return callback

    def complete(self) -> bool:
        """Whether every source has sent something."""
        return all(key in self._latest for key in self.sources)

    def heard(self) -> bool:
        """Whether any source has sent something."""
        return bool(self._latest)

    def view(self, waited: float) -> StatusView:
        """The current StatusView; ages relative to now."""
        now = time.monotonic()
        got = {key: Received(now - t, fields) for key, (t, fields) in self._latest.items()}
        return StatusView(waited=waited, **got)


def run_status(node: Node, args: argparse.Namespace) -> int:
    """Print the status screen once (after every source or the timeout) or, with --watch, every period."""
    listener = StatusListener(node, args.cell)
    start = time.monotonic()
    if not args.watch:
        spin_until(node, listener.complete, args.timeout)
        print(render_status(listener.view(time.monotonic() - start)))
        if not listener.heard():  # a health check must not pass on a stack that is not there
            print(f"nothing received within {args.timeout:g} s: is the stack running, with this "
                  "ROS_DOMAIN_ID and --cell?", file=sys.stderr)  # fmt: skip
            return EXIT_FAILED
        return EXIT_OK
    clear = "\033[H\033[2J" if sys.stdout.isatty() else ""
    try:
        while True:
            spin_until(node, lambda: False, args.period)
            print(clear + render_status(listener.view(time.monotonic() - start)) + ("" if clear else "\n"),
                  flush=True)  # fmt: skip
    except Interrupted:
        return EXIT_OK  # Ctrl-C is how --watch ends


def run_new_box(node: Node, args: argparse.Namespace) -> int:
    """`new-box`: call the behaviour server's new_box service; print its answer (stderr when refused)."""
    service = names.absolute(names.NEW_BOX, args.cell)
    client = node.create_client(Trigger, service)
    if not spin_until(node, client.service_is_ready, args.timeout):
        raise CtlError(f"no {service} service within {args.timeout:g} s: is the behaviour server running?")
    future = client.call_async(Trigger.Request())
    if not spin_until(node, future.done, args.timeout):
        raise CtlError(f"no reply from {service} within {args.timeout:g} s")
    if future.exception() is not None:
        raise CtlError(f"{service} failed: {future.exception()}")
    response = future.result()
    print(response.message, file=sys.stdout if response.success else sys.stderr)
    return EXIT_OK if response.success else EXIT_FAILED


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="salamanderctl", description="ros2 param and a status screen for the arm, without ros2."
    )
    parser.add_argument("--timeout", type=positive_seconds, default=10.0,
                        help="seconds to wait for the node / for status messages (default 10)")  # fmt: skip
    parser.add_argument(
        "--cell", type=_cell, default=os.environ.get(CELL_ENV, ""), metavar="CELL",
        help="address the stack started with the launch argument cell:=CELL: node names written as in "
        "the default launch (/arm/trajectory_generator) are looked up under /CELL, and status listens "
        f"to /CELL/joint_states, ... (default: ${CELL_ENV}, else the default stack)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    param = sub.add_parser("param", help="get, set, list or describe a node's parameters")
    verbs = param.add_subparsers(dest="verb", required=True)
    get = verbs.add_parser("get", help="print a parameter's value")
    get.add_argument("--hide-type", action="store_true", help="print the value only")
    setp = verbs.add_parser("set", help="set a parameter (VALUE is YAML, like ros2 param set)")
    lst = verbs.add_parser("list", help="list a node's parameters")
    describe = verbs.add_parser("describe", help="a parameter's type, description and range")
    for verb in (get, setp, lst, describe):
        verb.add_argument("node_name", help="e.g. /arm/trajectory_generator")
    for verb in (get, setp, describe):
        verb.add_argument("parameter_name")
    setp.add_argument("value")
    status = sub.add_parser(
        "status", help="joints, lease, IK ghost, clamps, sim stop hits and the box estimate on one screen"
    )
    status.add_argument("--watch", action="store_true", help="refresh until Ctrl-C")
    status.add_argument(
        "--period", type=positive_seconds, default=1.0, help="refresh period with --watch (s)"
    )
    sub.add_parser("new-box", help="a new box is in: the behaviour server forgets its box estimate")
    run_cli.add_run_parser(sub)
    pub_cli.add_pub_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `salamanderctl` console script; returns the exit code."""
    args = build_parser().parse_args(argv)
    # Our own handlers: a signal only sets a flag that the spin loops check, so Ctrl-C never lands
    # inside rclpy's C++ calls (where it would surface as an unrelated RuntimeError).
    try:
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    except RuntimeError as exc:  # rcl's RCLError, e.g. ROS_DOMAIN_ID=abc
        print(f"cannot start ROS ({exc}): check ROS_DOMAIN_ID", file=sys.stderr)
        return EXIT_FAILED
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, request_stop)
    node = Node(f"_salamanderctl_{os.getpid()}")  # leading underscore: a hidden node, like ros2cli's
    try:
        if args.command == "run":
            return run_cli.run_run(node, args, spin_until)
        if args.command in ("topic", "jog", "confirm", "abort"):
            return pub_cli.run_pub(node, args, spin_until)
        if args.command == "new-box":
            return run_new_box(node, args)
        return run_status(node, args) if args.command == "status" else run_param(node, args)
    except CtlError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    except Interrupted:
        return EXIT_INTERRUPTED
    finally:
        detach_participant_listener(node)  # its only node: the DDS participant goes with it (Fast DDS hang)
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
