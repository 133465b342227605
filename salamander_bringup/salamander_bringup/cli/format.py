"""What `salamanderctl` prints: ros2 param's texts and the one-screen status, as pure functions.

Kept apart from the ROS plumbing in `ctl.py` so the exact wording (operators' runbooks and scripts
match on ``Set parameter successful`` and friends) is unit-tested without a middleware.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor, ParameterType, ParameterValue, SetParametersResult

from salamander_control.kinematics import JOINT_NAMES

MISSING = "—"

# ParameterType -> (ros2 param get's label, ParameterValue field, ros2 param describe's type name).
_TYPES: dict[int, tuple[str, str, str]] = {
    ParameterType.PARAMETER_BOOL: ("Boolean value is:", "bool_value", "boolean"),
    ParameterType.PARAMETER_INTEGER: ("Integer value is:", "integer_value", "integer"),
    ParameterType.PARAMETER_DOUBLE: ("Double value is:", "double_value", "double"),
    ParameterType.PARAMETER_STRING: ("String value is:", "string_value", "string"),
    ParameterType.PARAMETER_BYTE_ARRAY: ("Byte values are:", "byte_array_value", "byte array"),
    ParameterType.PARAMETER_BOOL_ARRAY: ("Boolean values are:", "bool_array_value", "boolean array"),
    ParameterType.PARAMETER_INTEGER_ARRAY: ("Integer values are:", "integer_array_value", "integer array"),
    ParameterType.PARAMETER_DOUBLE_ARRAY: ("Double values are:", "double_array_value", "double array"),
    ParameterType.PARAMETER_STRING_ARRAY: ("String values are:", "string_array_value", "string array"),
}


def parameter_value(value: ParameterValue) -> Any:
    """The Python value held by a ParameterValue (lists for arrays); None when not set."""
    entry = _TYPES.get(value.type)
    if entry is None:
        return None
    raw = getattr(value, entry[1])
    return list(raw) if "array" in entry[1] else raw


def format_get(value: ParameterValue, hide_type: bool = False) -> str:
    """The line ``ros2 param get`` prints, e.g. ``Double value is: 1.4``."""
    if value.type not in _TYPES:
        return "Parameter not set."
    shown = parameter_value(value)
    return str(shown) if hide_type else f"{_TYPES[value.type][0]} {shown}"


def format_set(result: SetParametersResult) -> tuple[str, bool]:
    """The line ``ros2 param set`` prints and whether the set succeeded (stdout if so, else stderr)."""
    text = "Set parameter successful" if result.successful else "Setting parameter failed"
    if result.reason:
        text += ": " + result.reason
    return text, bool(result.successful)


def format_describe(descriptor: ParameterDescriptor) -> list[str]:
    """The lines ``ros2 param describe`` prints: name, type, description and the allowed range."""
    type_name = _TYPES[descriptor.type][2] if descriptor.type in _TYPES else "not set"
    lines = [f"Parameter name: {descriptor.name}", f"  Type: {type_name}"]
    if descriptor.description:
        lines.append(f"  Description: {descriptor.description}")
    lines.append("  Constraints:")
    if descriptor.read_only:
        lines.append("    Read only: true")
    ranges = list(descriptor.floating_point_range) + list(descriptor.integer_range)
    if ranges:
        lines += [f"    Min value: {ranges[0].from_value}", f"    Max value: {ranges[0].to_value}"]
        if ranges[0].step:
            lines.append(f"    Step: {ranges[0].step}")
    if descriptor.additional_constraints:
        lines.append(f"    Additional constraints: {descriptor.additional_constraints}")
    return lines


@dataclass(frozen=True)
class Received:
    """One message as the status view uses it: its fields of interest and how old it is (s)."""

    age: float
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StatusView:
    """The latest of each status source; None for a source that sent nothing yet."""

    joints: Received | None = None  # fields: positions {name: rad}
    lease: Received | None = None  # fields: holder, seconds_to_expiry, timeout
    ghost: Received | None = None  # fields: reason, tcp (x, y, z)
    clamps: Received | None = None  # fields: clamp_count, active_bounds
    stop_hits: Received | None = None  # fields: data
    box: Received | None = None  # fields: text (salamander_control.box_status)
    waited: float = 0.0


def _age(received: Received, stale_after: float) -> str:
    return f"  ({received.age:.1f} s old)" if received.age > stale_after else ""


def _deg(value: Any) -> str:
    return f"{math.degrees(value):+.2f}" if isinstance(value, float) and math.isfinite(value) else MISSING


def render_status(view: StatusView, stale_after: float = 1.0) -> str:
    """The one-screen status: five joints in degrees, lease, IK ghost, clamps, sim stop hits, box estimate.

    Args:
        view: what arrived.
        stale_after: messages older than this (s) get their age shown, so a dead publisher shows.
    """
    width = max(len(n) for n in JOINT_NAMES) + 2
    lines = ["Salamander status", "joints [deg]   " + "".join(n.rjust(width) for n in JOINT_NAMES)]
    if view.joints is None:
        lines.append("               " + "".join(MISSING.rjust(width) for _ in JOINT_NAMES))
    else:
        positions = view.joints.fields.get("positions", {})
        row = "".join(_deg(positions.get(n)).rjust(width) for n in JOINT_NAMES)
        lines.append("               " + row + _age(view.joints, stale_after))
    lines.append("lease          " + _lease(view.lease, stale_after))
    lines.append("ik ghost       " + _ghost(view.ghost, stale_after))
    lines.append("clamps         " + _clamps(view.clamps))
    hits = MISSING if view.stop_hits is None else str(view.stop_hits.fields.get("data", MISSING))
    lines.append("sim stop hits  " + hits)
    box = MISSING if view.box is None else str(view.box.fields.get("text", MISSING))
    lines.append("box estimate   " + box)
    lines.append(f"({MISSING} = nothing received in {view.waited:.1f} s)")
    return "\n".join(lines)


def _lease(lease: Received | None, stale_after: float) -> str:
    if lease is None:
        return MISSING
    holder = lease.fields.get("holder", "")
    if not holder:
        return "free"
    expiry, timeout = lease.fields.get("seconds_to_expiry", 0.0), lease.fields.get("timeout", 0.0)
    return f"held by {holder!r} (expires in {expiry:.2f} s, heartbeat timeout {timeout:.2f} s)" + _age(
        lease, stale_after
    )


def _ghost(ghost: Received | None, stale_after: float) -> str:
    if ghost is None:
        return MISSING
    x, y, z = ghost.fields.get("tcp", (math.nan,) * 3)
    return f"{ghost.fields.get('reason', '?')}  (tcp {x:+.3f} {y:+.3f} {z:+.3f} m)" + _age(ghost, stale_after)


def _clamps(clamps: Received | None) -> str:
    if clamps is None:
        return MISSING
    bounds: Sequence[str] = clamps.fields.get("active_bounds", ())
    last = f" (last: {', '.join(bounds)}, {clamps.age:.1f} s ago)" if bounds else ""
    return f"{clamps.fields.get('clamp_count', MISSING)} so far{last}"
