"""A message's header stamp (builtin_interfaces/Time) read as integer nanoseconds: one rule for every reader.

The message type admits any int32 `sec` and any uint32 `nanosec`, but a time on a ROS clock has
``sec >= 0`` and ``0 <= nanosec < 1e9`` (builtin_interfaces/Time). rclpy's ``Time.from_msg`` raises on a
negative `sec`, and a raise in a subscription callback ends the node; a `nanosec` past 999999999 names
an instant of another second. So a stamp outside that range is bad input, refused like a NaN: whoever
reads a message's stamp reads it with `stamp_ns` (a node's callback through
`ros.conversions.read_stamp`, which logs the refusal, throttled) before anything of the message is used,
and drops the message when it is refused. ``sec == nanosec == 0`` is the unstamped stamp (0 ns); what it
means is each reader's to say. The largest stamp (2038) is in range: far in the future, it is for the
reader's ordering rules to refuse.

Pure: no rclpy, duck-typed (anything with `sec` and `nanosec`). Interfaces: docs/interfaces.md.
"""

from __future__ import annotations

from typing import Any

NS_PER_S = 1_000_000_000


class StampError(ValueError):
    """A header stamp outside the range of a time on a ROS clock; the message says which field and why."""


def stamp_ns(stamp: Any) -> int:
    """The stamp as integer nanoseconds (exact, for ordering comparisons).

    Raises:
        StampError: `sec` is negative, or `nanosec` is not in [0, 999999999].
    """
    sec, nanosec = int(stamp.sec), int(stamp.nanosec)
    if sec < 0:
        raise StampError(f"header stamp sec {sec} is negative (a time on a ROS clock is sec >= 0)")
    if not 0 <= nanosec < NS_PER_S:
        raise StampError(f"header stamp nanosec {nanosec} is not in [0, {NS_PER_S - 1}]")
    return sec * NS_PER_S + nanosec


AHEAD_S = 0.1
"""s: how far ahead of a reader's clock a measurement may be stamped. Stamped before it arrives, a
measurement is behind the clock of the machine that reads it; only clocks that disagree put it ahead,
and synchronised machines (NTP, PTP) agree to milliseconds. One stamped further ahead would hold back
every real one stamped before it, by the newest-stamp-wins rule (`latest_sample`)."""


def skew_problem(stamp: int, now: int, stale_s: float, ahead_s: float = AHEAD_S) -> str:
    """Why a measurement stamped `stamp` (ns, nonzero) is not taken at `now` (ns, the reader's clock), or "".

    Refused: stamped more than `stale_s` before `now` (stale: a late or replayed message; taken, it would
    put the arm back where it was) or more than `ahead_s` after it. Either way, if every message is
    refused, the robot's clock and the reader's disagree.
    """
    age = (now - stamp) / NS_PER_S
    if -ahead_s <= age <= stale_s:
        return ""
    if age > 0:  # queued while this node was stopped or starved, delayed, or replayed
        return (
            f"stamped {age:.3f} s before this node's clock (more than {stale_s:.2f} s): stale (this node "
            "or the link stalled, or a replay), or the robot's and this computer's clocks disagree"
        )
    return (
        f"stamped {-age:.3f} s after this node's clock (more than {ahead_s:.2f} s): ahead, or the robot's "
        "and this computer's clocks disagree"
    )
