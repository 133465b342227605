"""`salamanderctl topic pub | jog | confirm | abort`: publish like ``ros2 topic pub`` where it is missing.

Usage::

    salamanderctl topic pub -r 20 -t 40 /salamander/operator/jog geometry_msgs/msg/Twist "{linear: {x: 0.02}}"
    salamanderctl topic pub --once /salamander/operator/confirm std_msgs/msg/Bool "{data: true}"
    salamanderctl jog --x 0.02 --for 2      # 20 Hz Twists on /salamander/operator/jog for 2 s, then zero
    salamanderctl confirm                   # std_msgs/Bool true on /salamander/operator/confirm (once)
    salamanderctl abort                     # std_msgs/Bool false on /salamander/operator/confirm (once)

``topic pub`` takes the arguments of ``ros2 topic pub`` (``-r/--rate`` Hz, ``-1/--once``, ``-t/--times``
count, ``-w/--wait-matching-subscriptions``; VALUES is YAML, fields left out keep their defaults) plus
``--for S`` (stop after S seconds), and prints what it prints: ``publisher: beginning loop``, then
``publishing #N: <message>`` per message. Any message type whose Python module is importable works
(``pkg/msg/Type``). ``jog`` is ``topic pub`` of a Twist at 20 Hz for ``--for`` seconds (default 1) that
ends with zero twists (also on Ctrl-C), like releasing the gamepad's R1: `LAST_REPEATS` of them one period
apart, because the jog topic is best effort and the last samples a process sends just before it exits can
be lost (a lost final zero leaves the server at the last speed until its 0.3 s staleness);
``confirm``/``abort`` are
one Bool each. All three wait (up to ``--timeout``) for the behaviour server's subscription first, so a
confirm is never published into the void, and fail with exit code 1 when nobody listens. With ``--cell``
an absolute topic is looked up under /CELL, like node names for ``param``.

Bad input (unknown type, a field the type lacks, a value of the wrong type, a rate <= 0) is refused
with one line on stderr before anything is published. Pure helpers (`message_class`, `fill_message`)
are separate from the publishing loop.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import yaml
from rclpy.duration import Duration
from rclpy.exceptions import NameValidationException
from rclpy.node import Node
from rclpy.qos import QoSProfile

from salamander_control import names

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130
JOG_RATE_HZ = 20.0  # like `ros2 topic pub -r 20`; the behaviour server counts a twist stale after 0.3 s
LAST_REPEATS = 3  # a jog's closing zero twist is sent this many times, one period apart (see above)
ACK_TIMEOUT_S = 2.0  # how long a reliable message may take to be acknowledged before the CLI exits

Spin = Callable[[Node, Callable[[], bool], float], bool]


class PubError(ValueError):
    """Bad input for a publication (printed as one line, exit code 1)."""


def message_class(type_name: str) -> type:
    """The message class of ``pkg/msg/Type`` (or ``pkg/Type``).

    Raises:
        PubError: not of that form, or no such importable message.
    """
    parts = type_name.split("/")
    if len(parts) == 2:
        parts = [parts[0], "msg", parts[1]]
    if len(parts) != 3 or parts[1] != "msg" or not all(parts):
        raise PubError(f"the passed message type is invalid: {type_name!r} (expected e.g. std_msgs/msg/Bool)")
    try:
        cls = getattr(importlib.import_module(f"{parts[0]}.msg"), parts[2])
    except (ImportError, AttributeError) as exc:
        raise PubError(f"the passed message type is invalid: {type_name!r} (not found)") from exc
    if not hasattr(cls, "get_fields_and_field_types"):
        raise PubError(f"the passed message type is invalid: {type_name!r} (not a message)")
    return cls


def fill_message(msg: Any, values: Any, path: str = "") -> Any:
    """Set the fields of `msg` from a mapping (nested for nested messages); returns `msg`.

    Raises:
        PubError: `values` is not a mapping, names a field the message lacks, or holds a value the
            field refuses (wrong type, out of range).
    """
    if values is None:
        return msg
    if not isinstance(values, dict):
        raise PubError(f"the values of {path or type(msg).__name__} must be a mapping, got {values!r}")
    fields = msg.get_fields_and_field_types()
    for key, value in values.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in fields:
            raise PubError(f"{type(msg).__name__} has no field {where!r} (fields: {', '.join(fields)})")
        current = getattr(msg, key)
        if hasattr(current, "get_fields_and_field_types"):
            fill_message(current, value, where)
            continue
        value = _scalar(fields[key], value, where)
        try:
            setattr(msg, key, value)
        except (AssertionError, TypeError, ValueError) as exc:
            raise PubError(f"invalid value for {where}: {value!r} ({exc})") from exc
    return msg


_FLOATS = {"float", "double"}
_INTS = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "byte", "char", "octet"}


def _scalar(field_type: str, value: Any, where: str) -> Any:
    """`value` checked against a scalar field's type (the wheels' messages do not check on assignment)."""
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if field_type in _FLOATS:
        if not (is_int or isinstance(value, float)):
            raise PubError(f"invalid value for {where}: {value!r} (a {field_type} needs a number)")
        return float(value)  # YAML's 1 for a double field, as ros2 topic pub accepts
    if field_type in _INTS and not is_int:
        raise PubError(f"invalid value for {where}: {value!r} (a {field_type} needs an integer)")
    if field_type == "boolean" and not isinstance(value, bool):
        raise PubError(f"invalid value for {where}: {value!r} (a boolean needs true or false)")
    if field_type.startswith("string") and not isinstance(value, str):
        raise PubError(f"invalid value for {where}: {value!r} (a string needs text)")
    return value


def parse_values(text: str) -> Any:
    """VALUES as YAML (``"{linear: {x: 0.02}}"``); '' is an empty mapping."""
    try:
        return yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise PubError(f"the passed value needs to be a dictionary in YAML format: {exc}") from exc


def add_pub_parsers(sub: Any) -> None:
    """The `topic pub`, `jog`, `confirm` and `abort` commands on the CLI's subparsers."""
    topic = sub.add_parser("topic", help="publish a message (like ros2 topic pub)")
    verbs = topic.add_subparsers(dest="verb", required=True)
    pub = verbs.add_parser("pub", help="publish VALUES as TYPE on TOPIC, once or at a rate")
    pub.add_argument("topic_name", help="e.g. /salamander/operator/jog")
    pub.add_argument("message_type", help="e.g. geometry_msgs/msg/Twist")
    pub.add_argument("values", nargs="?", default="{}", help='YAML, e.g. "{linear: {x: 0.02}}"')
    pub.add_argument("-r", "--rate", type=float, default=1.0, help="publishing rate in Hz (default 1)")
    count = pub.add_mutually_exclusive_group()
    count.add_argument("-1", "--once", action="store_true", help="publish one message and exit")
    count.add_argument("-t", "--times", type=int, default=0, help="publish this many messages and exit")
    pub.add_argument("--for", dest="duration", type=float, default=None, metavar="S",
                     help="stop after S seconds (not in ros2 topic pub)")
    pub.add_argument("-w", "--wait-matching-subscriptions", dest="wait", type=int, default=None,
                     help="wait for this many subscriptions first (default 1 with --once/--times, else 0)")
    jog = sub.add_parser("jog", help="operator jog twists (ManualAdjust) for a while, then a zero twist")
    for axis in ("x", "y", "z"):
        jog.add_argument(f"--{axis}", type=float, default=0.0, help=f"linear {axis}, m/s in base_link")
    jog.add_argument(
        "--for", dest="duration", type=float, default=1.0, metavar="S", help="seconds (default 1)"
    )
    jog.add_argument("-r", "--rate", type=float, default=JOG_RATE_HZ, help="Hz (default 20)")
    sub.add_parser(
        "confirm",
        help="confirm what the run waits for: the manual placement, the can on the pad, the cell clear "
        "after a lost can (Bool true on the operator's confirm topic)",
    )
    sub.add_parser("abort", help="abort that wait (Bool false on the operator's confirm topic)")


def run_pub(node: Node, args: argparse.Namespace, spin: Spin) -> int:
    """Run one of the publishing commands; the exit code."""
    try:
        if args.command == "topic":
            cls = message_class(args.message_type)
            msg = fill_message(cls(), parse_values(args.values))
            topic = args.cell + args.topic_name if args.topic_name.startswith("/") else args.topic_name
            times = 1 if args.once else args.times
            wait = args.wait if args.wait is not None else (1 if times else 0)
            return _loop(node, spin, topic, msg, args.rate, times, args.duration, wait, args.timeout)
        if args.command == "jog":
            from geometry_msgs.msg import Twist

            twist = fill_message(Twist(), {"linear": {"x": args.x, "y": args.y, "z": args.z}})
            topic = names.absolute(names.OPERATOR_JOG, args.cell)
            return _loop(node, spin, topic, twist, args.rate, 0, args.duration, 1, args.timeout, Twist())
        from std_msgs.msg import Bool

        topic = names.absolute(names.OPERATOR_CONFIRM, args.cell)
        return _loop(node, spin, topic, Bool(data=args.command == "confirm"), 1.0, 1, None, 1, args.timeout)
    except PubError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED


def _loop(
    node: Node, spin: Spin, topic: str, msg: Any, rate: float, times: int, duration: float | None,
    wait: int, timeout: float, last: Any = None,
) -> int:
    """Publish `msg` `times` times (0: until `duration` s or Ctrl-C) at `rate`, then `last`, if given.

    `last` goes out `LAST_REPEATS` times at the same rate (a jog's zero twists).
    """
    if not (math.isfinite(rate) and rate > 0.0):
        raise PubError(f"rate must be a positive number of Hz, got {rate}")
    if times < 0 or (duration is not None and not (math.isfinite(duration) and duration > 0.0)):
        raise PubError(f"times must be >= 0 and --for a positive number of seconds, got {times}, {duration}")
    try:
        publisher = node.create_publisher(type(msg), topic, QoSProfile(depth=10))
    except NameValidationException as exc:
        raise PubError(f"{topic!r} is not a topic name ({exc})") from None
    if wait > 0 and not spin(node, lambda: publisher.get_subscription_count() >= wait, timeout):
        raise PubError(
            f"no subscriber on {topic} within {timeout:g} s (found {publisher.get_subscription_count()}, "
            f"waiting for {wait}): is the stack running, with this ROS_DOMAIN_ID?"
        )
    print("publisher: beginning loop", flush=True)
    count = 0

    def publish(message: Any) -> None:
        nonlocal count
        count += 1
        print(f"publishing #{count}: {message!r}\n", flush=True)
        publisher.publish(message)

    start = time.monotonic()
    period = 1.0 / rate
    try:
        while True:
            publish(msg)
            if times and count >= times:
                break
            due = start + count * period
            if duration is not None and due - start >= duration - 1e-9:
                break
            spin(node, lambda due=due: time.monotonic() >= due, period + 1.0)
    finally:  # also on Ctrl-C: a jog ends with its zero twists
        if last is not None:
            for k in range(LAST_REPEATS):
                if k:
                    time.sleep(period)  # the stream's rate (no spin: it raises once Ctrl-C was pressed)
                publish(last)
        publisher.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT_S))  # delivered before the node goes
    return EXIT_OK
