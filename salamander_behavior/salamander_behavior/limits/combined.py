r"""A combined joint-limit index: several joints near their limits together count for more than one.

Each joint can be inside its own margin while the arm as a whole is cornered: shoulder, beam and wrist
each a few hundredths of a radian from a stop leave a motion (or a correction of one) no direction to
go without hitting one of them, and a tracking error in any of them reaches a stop. The per-joint
checks cannot see that; this index does.

Definition. For every limited joint *i* let :math:`\delta_i` be its distance to the nearer limit
(rad, negative beyond it), and for each coupled limit its slack, :math:`\delta_\alpha =
\alpha_{max} - (q_2 - q_1)` and :math:`\delta_\beta = \beta_{max} - (q_1 - q_2)`. Each becomes a factor

.. math:: m_k = \min\bigl(1, \max(0, \delta_k / c_k)\bigr)

with a comfort distance :math:`c_k` (rad) beyond which the constraint does not matter at all, and

.. math:: J = \prod_k m_k \in [0, 1].

J = 1 when every constraint is at least its comfort distance away, J = 0 as soon as one is at (or
beyond) its limit, and k constraints each at the same fraction f of their comfort distance give
:math:`f^k`: closeness compounds. The guard checks ``J >= min_index``.

Why an index, where it comes from (Tsai; Zghal, Dubey and Euler; Chan and Dubey) and why its factors
saturate at an absolute comfort distance: docs/design/combined_limit_index.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from salamander_behavior.limits.checks import (
    BEAM,
    SHOULDER,
    CheckResult,
    coupled_slacks,
    proximities,
    require_nonnegative,
    require_positive,
)
from salamander_behavior.limits.sample import JointSample
from salamander_behavior.limits.urdf_limits import JointLimit
from salamander_control.kinematics import ArmParams


def limit_factor(distance: float, comfort: float) -> float:
    """One constraint's factor: ``clip(distance / comfort, 0, 1)`` (1 = comfortably far, 0 = at the limit)."""
    return min(1.0, max(0.0, distance / comfort))


@dataclass(frozen=True)
class CombinedIndex:
    """The index and the factor of every constraint in it.

    Attributes:
        value: the product J of all factors, in [0, 1].
        factors: factor per joint name, plus "alpha_max" / "beta_max" for the coupled limits.
    """

    value: float
    factors: Mapping[str, float]

    def tightest(self, count: int = 3) -> list[tuple[str, float]]:
        """The `count` smallest factors below 1, smallest first (what is dragging the index down)."""
        return sorted(((n, f) for n, f in self.factors.items() if f < 1.0), key=lambda item: item[1])[:count]


def combined_index(
    limits: Sequence[JointLimit],
    sample: JointSample,
    arm: ArmParams | None,
    comfort: float,
    coupled_comfort: float | None = None,
) -> CombinedIndex:
    """J over the per-joint limits and, when `arm` is given, the two coupled limits.

    Args:
        limits: per-joint limits (the URDF's).
        sample: the joint state.
        arm: source of alpha_max/beta_max; None leaves the coupled limits out.
        comfort: comfort distance of the per-joint factors, rad (> 0).
        coupled_comfort: comfort distance of the coupled factors, rad; None means `comfort`.

    Raises:
        JointStateError: the joint state lacks a limited joint (or shoulder/beam with `arm`).
        ValueError: a comfort distance that is not finite and > 0.
    """
    comfort = require_positive("comfort", comfort)
    c_coupled = comfort if coupled_comfort is None else require_positive("coupled_comfort", coupled_comfort)
    factors = {p.joint: limit_factor(p.distance, comfort) for p in proximities(limits, sample)}
    if arm is not None:
        alpha, beta = coupled_slacks(*sample.vector((SHOULDER, BEAM)), arm)
        factors["alpha_max"] = limit_factor(alpha, c_coupled)
        factors["beta_max"] = limit_factor(beta, c_coupled)
    value = 1.0
    for f in factors.values():
        value *= f
    return CombinedIndex(value, MappingProxyType(factors))


def check_combined(
    limits: Sequence[JointLimit],
    sample: JointSample,
    arm: ArmParams | None,
    min_index: float,
    comfort: float,
    coupled_comfort: float | None = None,
) -> CheckResult:
    """``combined_index(...).value >= min_index``; slack ``J - min_index`` (index units).

    Raises:
        JointStateError, ValueError: see `combined_index`; ValueError also for `min_index` outside [0, 1].
    """
    min_index = require_nonnegative("min_index", min_index)
    if min_index > 1.0:
        raise ValueError(f"min_index must lie in [0, 1] (the index does), got {min_index}")
    index = combined_index(limits, sample, arm, comfort, coupled_comfort)
    tight = ", ".join(f"{n} {f:.2f}" for n, f in index.tightest()) or "none"
    message = f"combined limit index {index.value:.3f} (min {min_index:.3f}); tightest factors: {tight}"
    worst = index.tightest(1)[0][0] if index.tightest(1) else ""
    slack = index.value - min_index
    return CheckResult(slack >= 0.0, slack, message, worst)
