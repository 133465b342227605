"""Read the simulated cell's state message (std_msgs/String, JSON; format in sim/cell/report.py).

Pure, so that what counts as a malformed state (and is then refused, keeping the last good one) is
unit-tested without ROS. The tree needs which can the pad holds, and each can's outcome result (e.g.
"in_box_clear", "on_rim") to report honestly whether a released can ended in the box.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from salamander_control.latest_sample import PutResult, stamp_order


@dataclass(frozen=True)
class CanView:
    """One can as the cell reports it."""

    id: str
    position: tuple[float, float, float]
    attached: bool
    outcome: str | None  # the placement text, None while held or never placed
    result: str | None = None  # the placement result ("in_box_clear", "on_rim", ...), None with no outcome


@dataclass(frozen=True)
class CellView:
    """The parts of a cell state the behaviour server uses."""

    t: float
    vacuum: bool
    held: str | None
    cans: tuple[CanView, ...]


def parse_cell_state(text: str) -> CellView:
    """Parse one state message.

    Raises:
        ValueError: not JSON, a field missing or of the wrong type, a non-finite number, or a `held`
            can that is not among the cans.
    """
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("the state must be a JSON object")
    try:
        t, vacuum, held, cans = data["t"], data["vacuum"], data["held"], data["cans"]
    except KeyError as exc:
        raise ValueError(f"field {exc.args[0]!r} missing") from exc
    if not _number(t) or not isinstance(vacuum, bool) or not (held is None or isinstance(held, str)):
        raise ValueError(f"bad t/vacuum/held: {t!r}, {vacuum!r}, {held!r}")
    if not isinstance(cans, list):
        raise ValueError("cans must be a list")
    views = tuple(_can(c) for c in cans)
    if held is not None and held not in {c.id for c in views}:
        raise ValueError(f"held can {held!r} is not among the cans")
    return CellView(float(t), vacuum, held, views)


def is_newer(old: CellView | None, new: CellView) -> bool:
    """Whether `new` should replace `old`: not older, or so much older that the simulator restarted.

    The stack's one ordering rule (`salamander_control.latest_sample.stamp_order`) on the states' `t`.
    """
    if old is None:
        return True
    return stamp_order(round(old.t * 1e9), round(new.t * 1e9)) is not PutResult.OUT_OF_ORDER


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _can(entry: Any) -> CanView:
    if not isinstance(entry, dict):
        raise ValueError("a can entry must be an object")
    cid, pos, attached = entry.get("id"), entry.get("position"), entry.get("attached")
    if not isinstance(cid, str) or not isinstance(attached, bool):
        raise ValueError(f"bad can entry {entry!r}")
    if not (isinstance(pos, list) and len(pos) == 3 and all(_number(v) for v in pos)):
        raise ValueError(f"can {cid}: position must be three finite numbers, got {pos!r}")
    outcome = entry.get("outcome")
    text = outcome.get("text") if isinstance(outcome, dict) else None
    result = outcome.get("result") if isinstance(outcome, dict) else None
    if result is not None and not isinstance(result, str):
        raise ValueError(f"can {cid}: outcome result must be a string, got {result!r}")
    return CanView(cid, (float(pos[0]), float(pos[1]), float(pos[2])), attached, text, result)
