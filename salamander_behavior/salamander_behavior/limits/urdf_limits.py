"""Per-joint limits read from the URDF (through the stack's one URDF parser, `salamander_control.urdf`).

The URDF is where the per-joint velocity and effort limits are written down; the limit-watching
conditions read them from there rather than restating them. The position limits of the arm's five
joints belong to the arm model (`salamander_control.kinematics.ArmParams`: config/arm.yaml, live
parameters), which the generator, the Cartesian node and the IK clamp and plan with; the URDF carries
their defaults for robot_state_publisher and rviz. `with_positions_of` puts the model's bounds into the
URDF's limits, so a guard judges against the bounds the arm is actually driven within. The coupled
shoulder/beam limits, which a URDF cannot express, come from `ArmParams` too.

Which joints count: the ones a joint state reports and a limit binds, i.e. ``revolute`` and
``prismatic`` joints that are not ``<mimic>`` joints. Skipped: ``continuous`` joints (no position
limit), mimic joints (driven by another joint; never in /joint_states), ``fixed`` joints (they do
not move), and ``floating``/``planar`` joints (no scalar limit).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from salamander_control.kinematics import JOINT_NAMES, ArmParams
from salamander_control.urdf import UrdfModel, find_urdf, parse_urdf, read_urdf

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
    """The arm's URDF (`salamander_control.urdf.find_urdf`).

    salamander_control's installed share copy (ament index), else the source tree's
    ``urdf/salamander.urdf``.

    Raises:
        salamander_control.urdf.UrdfNotFoundError: neither exists (one line naming where it looked).
    """
    return find_urdf()


def limits_of(model: UrdfModel) -> tuple[JointLimit, ...]:
    """Limits of the limited, non-mimic joints of a parsed URDF, in document order.

    A velocity or effort of 0 counts as "not given" (many exporters write 0 for unknown values; a real
    zero limit would mean a joint that cannot move, which a URDF expresses with ``fixed``).

    Raises:
        ValueError: a revolute/prismatic joint without ``<limit lower upper>`` (URDF's default of 0
            for both would pin the joint: we refuse to guess), a non-finite value or an empty range.
    """
    out = []
    for joint in model.joints.values():
        if joint.type not in LIMITED_TYPES or joint.mimic is not None:
            continue
        if joint.lower is None or joint.upper is None:
            raise ValueError(f"{joint.type} joint {joint.name!r} has no <limit lower=... upper=...>")
        velocity = joint.velocity if joint.velocity != 0.0 else None
        effort = joint.effort if joint.effort != 0.0 else None
        out.append(JointLimit(joint.name, joint.lower, joint.upper, velocity, effort))
    return tuple(out)


def parse_urdf_limits(xml_text: str) -> tuple[JointLimit, ...]:
    """`limits_of` a URDF document.

    Raises:
        ValueError: see `salamander_control.urdf.parse_urdf` (not a well-formed ``<robot>`` document,
            a duplicate joint name, a non-numeric value) and `limits_of`.
    """
    return limits_of(parse_urdf(xml_text))


def load_urdf_limits(path: str | Path | None = None) -> tuple[JointLimit, ...]:
    """`limits_of` a URDF file (default: `default_urdf_path`).

    Raises:
        FileNotFoundError: no such file (the message says which path was tried).
        ValueError: see `parse_urdf_limits`; the message names the file.
    """
    return read_urdf(default_urdf_path() if path is None else path, parse_urdf_limits)


def limits_by_name(limits: Iterable[JointLimit]) -> Mapping[str, JointLimit]:
    """The limits as a name -> JointLimit mapping (order kept)."""
    return {lim.name: lim for lim in limits}


def with_positions_of(limits: Iterable[JointLimit], arm: ArmParams) -> tuple[JointLimit, ...]:
    """`limits` with the five arm joints' position bounds taken from the arm model `arm`.

    Their velocity and effort limits, and every other joint, stay as given (the URDF's).
    """
    bounds = dict(zip(JOINT_NAMES, zip(arm.joint_lower, arm.joint_upper, strict=True), strict=True))
    return tuple(
        replace(lim, lower=bounds[lim.name][0], upper=bounds[lim.name][1]) if lim.name in bounds else lim
        for lim in limits
    )
