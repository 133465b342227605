"""Messages of any ROS 2 type with one field at an extreme value its type admits, for fuzzing subscriptions.

`variants(base)` walks the fields of a message (rosidl's type description, ``SLOT_TYPES``) and yields,
for each field, copies of `base` with that field, and only it, at each extreme value:

- numbers at the ends of their type: integers at their minimum and maximum, floats NaN, +-inf and
  +-the largest finite one; booleans both ways;
- strings empty, long (`LONG_STRING` characters), non-ASCII (right-to-left override, CJK, emoji) and
  JSON of no use to a reader of JSON (``{}``, ``null``, a cut-off document);
- sequences empty, huge (`HUGE_SEQUENCE` elements; of messages `HUGE_MESSAGE_SEQUENCE`), filled with
  each extreme element value *as long as the base's* (an empty one as long as its longest parallel
  array: a reader gets past its length checks to the values), and one element longer than the base's
  (mismatched with a parallel array); fixed arrays filled with each extreme;
- nested messages field by field, and a message sequence's first element field by field;
- a stamp (``builtin_interfaces/Time`` or ``Duration``) as a pair: negative `sec`, the largest `sec`,
  `nanosec` 999999999 and past it (`STAMPS`).

A value the type does not admit (the message class refuses to hold it, as a bounded string refuses a
long one, or it cannot be serialized) is skipped, and so is one the base already holds. Each variant
comes with the path of what was changed (``header.stamp=(-100, 0)``, ``position=[nan]*5``) for failure
messages. Deterministic: the same variants in the same order for the same base. Used by
test/test_subscription_fuzz_ros.py.
"""

from __future__ import annotations

import copy
import importlib
import math
import sys
from collections.abc import Iterator
from typing import Any

from rclpy.serialization import serialize_message
from rosidl_parser.definition import (
    AbstractNestedType,
    AbstractString,
    AbstractWString,
    Array,
    BasicType,
    BoundedSequence,
    BoundedString,
    BoundedWString,
    NamespacedType,
)

LONG_STRING = 100_000
"""Characters of the long string."""
HUGE_SEQUENCE = 100_000
"""Elements of a huge sequence of numbers, booleans or strings."""
HUGE_MESSAGE_SEQUENCE = 1_000
"""Elements of a huge sequence of messages."""
INT32_MIN, INT32_MAX, UINT32_MAX = -(2**31), 2**31 - 1, 2**32 - 1
STAMPS: tuple[tuple[int, int], ...] = (
    (-100, 0),
    (-1, 999_999_999),
    (INT32_MIN, 0),
    (INT32_MAX, 999_999_999),
    (INT32_MAX, UINT32_MAX),
    (0, 999_999_999),
    (0, 1_000_000_000),
    (5, UINT32_MAX),
)
"""(sec, nanosec) of the stamps and durations tried: every one the type admits, most of them no time."""
STRINGS: tuple[str, ...] = (
    "",
    "x" * LONG_STRING,
    "\u202eGr\u00fc\u00dfe \u6a5f\u68b0 \U0001f98e \u00e9\u0301",
    "{}",
    "null",
    '{"cans": [{"id": ',
)
_FLOAT_MAX = {"float": 3.4028234663852886e38, "double": sys.float_info.max, "long double": sys.float_info.max}
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "short": 16, "long": 32, "long long": 64}
_UINT_BITS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "unsigned short": 16,
              "unsigned long": 32, "unsigned long long": 64}  # fmt: skip
_STAMP_TYPES = {("builtin_interfaces", "msg", "Time"), ("builtin_interfaces", "msg", "Duration")}


def variants(base: Any) -> Iterator[tuple[str, Any]]:
    """(path, message) for every field of `base` at every extreme value its type admits (module docstring).

    `base` is left as it is; each message is a copy that differs from it in one field.
    """
    for path, msg in _variants(base):
        try:
            serialize_message(msg)
        except Exception:  # noqa: BLE001 - a value the type cannot carry over the wire: not admitted
            continue
        yield path, msg


def extremes(typename: str) -> tuple[Any, ...]:
    """The extreme values of a basic type (rosidl's name: "int32", "double", "boolean", "octet", ...)."""
    if typename == "boolean":
        return (True, False)
    if typename == "octet":
        return (b"\x00", b"\xff")
    if typename in ("char", "wchar"):
        return ("\x00", "\xff") if typename == "char" else ("\x00", "\uffff")
    if typename in _FLOAT_MAX:
        big = _FLOAT_MAX[typename]
        return (math.nan, math.inf, -math.inf, big, -big)
    if typename in _INT_BITS:
        bits = _INT_BITS[typename]
        return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if typename in _UINT_BITS:
        return (0, 2 ** _UINT_BITS[typename] - 1)
    raise ValueError(f"unknown basic type {typename!r}")


def _zero(slot: Any) -> Any:
    """The plainest value of an element type (a sequence's filler)."""
    if isinstance(slot, BasicType):
        name = slot.typename
        return {"boolean": False, "octet": b"\x00", "char": "\x00", "wchar": "\x00"}.get(
            name, 0.0 if name in _FLOAT_MAX else 0
        )
    if isinstance(slot, (AbstractString, AbstractWString)):
        return ""
    return _message_class(slot)()


def _message_class(slot: NamespacedType) -> Any:
    module = importlib.import_module(".".join(slot.namespaces))
    return getattr(module, slot.name)


def _element_values(slot: Any) -> tuple[Any, ...]:
    if isinstance(slot, BasicType):
        return extremes(slot.typename)
    if isinstance(slot, (AbstractString, AbstractWString)):
        bound = slot.maximum_size if isinstance(slot, (BoundedString, BoundedWString)) else None
        return tuple(s for s in STRINGS if bound is None or len(s) <= bound)
    raise TypeError(f"no element values for {slot!r}")


def _variants(base: Any) -> Iterator[tuple[str, Any]]:
    fields = list(zip(base.get_fields_and_field_types(), base.SLOT_TYPES, strict=True))
    # Parallel arrays (a JointState's name, position, velocity, effort): an empty one is filled as long
    # as the longest of them, so that its values are read, not only its length refused.
    sequences = [f for f, s in fields if isinstance(s, AbstractNestedType) and not isinstance(s, Array)]
    parallel = max((len(getattr(base, f)) for f in sequences), default=0)
    for field, slot in fields:
        current = getattr(base, field)
        for text, value in _field_values(slot, current, parallel):
            msg = copy.deepcopy(base)
            try:
                setattr(msg, field, value)
            except (AssertionError, TypeError, ValueError, OverflowError):
                continue  # the type does not admit it
            if msg != base:  # (an extreme the base already holds is no variant)
                yield f"{field}{text}", msg


def _field_values(slot: Any, current: Any, parallel: int) -> Iterator[tuple[str, Any]]:
    """(path suffix, value) of one field's variants."""
    if isinstance(slot, NamespacedType):
        if (*slot.namespaces, slot.name) in _STAMP_TYPES:
            cls = _message_class(slot)
            for sec, nanosec in STAMPS:
                yield f"=({sec}, {nanosec})", cls(sec=sec, nanosec=nanosec)
            return
        for path, nested in _variants(current):
            yield f".{path}", nested
        return
    if isinstance(slot, AbstractNestedType):
        yield from _sequence_values(slot, list(current), parallel)
        return
    for value in _element_values(slot):
        yield f"={_short(value)}", value


def _sequence_values(
    slot: AbstractNestedType, current: list[Any], parallel: int
) -> Iterator[tuple[str, Any]]:
    element = slot.value_type
    fixed = isinstance(slot, Array)
    bound = slot.maximum_size if isinstance(slot, BoundedSequence) else None
    length = slot.size if fixed else len(current) or max(parallel, 1)

    def fits(n: int) -> bool:
        return bound is None or n <= bound

    if isinstance(element, NamespacedType):
        first = current[0] if current else _message_class(element)()
        rest = current[1:]  # a fixed array's others, a sequence's others (none when it was empty)
        for path, nested in _variants(first):
            yield f"[0].{path}", [nested, *rest]
        if not fixed:
            yield "=[]", []
            if fits(HUGE_MESSAGE_SEQUENCE):
                yield f"=[{element.name}()]*{HUGE_MESSAGE_SEQUENCE}", [first] * HUGE_MESSAGE_SEQUENCE
        return
    for value in _element_values(element):
        if fits(length):
            yield f"=[{_short(value)}]*{length}", [value] * length
    if fixed:
        return
    yield "=[]", []
    longer = [*current, current[-1] if current else _zero(element)]
    if fits(len(longer)):
        yield f"=base+1 ({len(longer)} elements)", longer
    if fits(HUGE_SEQUENCE):
        yield f"=[{_short(_zero(element))}]*{HUGE_SEQUENCE}", [_zero(element)] * HUGE_SEQUENCE


def _short(value: Any) -> str:
    """A value as a failure message shows it (a long string by its length)."""
    if isinstance(value, str) and len(value) > 40:
        return f"<{len(value)} characters>"
    return repr(value)
