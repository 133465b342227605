"""Per-joint limits read from the URDF (xml.etree only, no URDF library, no rclpy).

The URDF is the one place the per-joint position, velocity and effort limits are written down; the
limit-watching conditions read them from there rather than restating them, so a changed joint stop is
one edit. What the URDF cannot express (the coupled shoulder/beam limits) comes from
`salamander_control.kinematics.ArmParams` instead.

Which joints count: the ones a joint state reports and a limit binds, i.e. ``revolute`` and
``prismatic`` joints that are not ``<mimic>`` joints. Skipped: ``continuous`` joints (no position
limit), mimic joints (driven by another joint; never in /joint_states), ``fixed`` joints (they do
not move), and ``floating``/``planar`` joints (no scalar limit).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

LIMITED_TYPES = ("revolute", "prismatic")
"""Joint types whose ``<limit>`` bounds the position."""


@dataclass(frozen=True)
class JointLimit:
    """Limits of one joint (radians for revolute joints, metres for prismatic ones).

    Attributes:
        name: the joint's name, as in /joint_states.
        lower: lowest allowed position.
        upper: highest allowed position.
        velocity: largest allowed speed (absolute value), or None when the URDF gives none.
        effort: largest allowed effort (absolute value), or None when the URDF gives none.
    """

    name: str
    lower: float
    upper: float
    velocity: float | None = None
    effort: float | None = None

    def __post_init__(self) -> None:
        """Refuse non-finite bounds, an empty range and negative velocity/effort limits."""
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)):
            raise ValueError(f"joint {self.name!r}: limits must be finite, got [{self.lower}, {self.upper}]")
        if not self.lower < self.upper:
            raise ValueError(f"joint {self.name!r}: lower {self.lower} must be < upper {self.upper}")
        for attr in ("velocity", "effort"):
            value = getattr(self, attr)
            if value is not None and not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"joint {self.name!r}: {attr} limit must be a positive number, got {value}")


def default_urdf_path() -> Path:
    """``urdf/salamander.urdf`` at the root of the source tree this package sits in.

    The URDF is not installed into any package's share/ folder (yet), so an installed copy of this
    package cannot find it by itself: pass a path or the ``robot_description`` text instead.
    """
    return Path(__file__).resolve().parents[3] / "urdf" / "salamander.urdf"


def _attr(el: ET.Element, attr: str, joint: str) -> float | None:
    text = el.get(attr)
    if text is None:
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise ValueError(f"joint {joint!r}: <limit {attr}={text!r}> is not a number") from exc


def parse_urdf_limits(xml_text: str) -> tuple[JointLimit, ...]:
    """Limits of the limited, non-mimic joints of a URDF document, in document order.

    A velocity or effort of 0 counts as "not given" (many exporters write 0 for unknown values; a real
    zero limit would mean a joint that cannot move, which a URDF expresses with ``fixed``).

    Raises:
        ValueError: not a ``<robot>`` document, malformed XML, a revolute/prismatic joint without
            ``<limit lower upper>`` (URDF's default of 0 for both would pin the joint: we refuse to
            guess), a non-numeric or non-finite value, an empty range, or a duplicate joint name.
    """
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"URDF is not well-formed XML: {exc}") from exc
    if root.tag != "robot":
        raise ValueError(f"URDF root element is <{root.tag}>, not <robot>")
    out: dict[str, JointLimit] = {}
    for el in root.findall("joint"):  # direct children only: not <ros2_control>/<transmission> joints
        name = el.get("name", "")
        if name in out:
            raise ValueError(f"duplicate joint {name!r}")
        if el.get("type") not in LIMITED_TYPES or el.find("mimic") is not None:
            continue
        limit = el.find("limit")
        lower = None if limit is None else _attr(limit, "lower", name)
        upper = None if limit is None else _attr(limit, "upper", name)
        if lower is None or upper is None:
            raise ValueError(f"{el.get('type')} joint {name!r} has no <limit lower=... upper=...>")
        velocity = _attr(limit, "velocity", name)  # type: ignore[arg-type]
        effort = _attr(limit, "effort", name)  # type: ignore[arg-type]
        out[name] = JointLimit(
            name, lower, upper, velocity if velocity != 0.0 else None, effort if effort != 0.0 else None
        )
    return tuple(out.values())


def load_urdf_limits(path: str | Path | None = None) -> tuple[JointLimit, ...]:
    """`parse_urdf_limits` of a file (default: `default_urdf_path`).

    Raises:
        FileNotFoundError: no such file (the message says which path was tried).
        ValueError: see `parse_urdf_limits`; the message names the file.
    """
    path = Path(path) if path is not None else default_urdf_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"URDF not found at {path}: pass its path or robot_description") from exc
    try:
        return parse_urdf_limits(text)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def limits_by_name(limits: Iterable[JointLimit]) -> Mapping[str, JointLimit]:
    """The limits as a name -> JointLimit mapping (order kept)."""
    return {lim.name: lim for lim in limits}
