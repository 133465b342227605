"""Where the box really stands: its offset from the planned layout, estimated from placed cans (pure).

The box is put down by hand against its stops, so it stands a little off where the cell config says.
Every placement whose offset was found, not assumed (a ManualAdjust confirm, a search probe that passed
the rim), is evidence of that: the can went in at ``planned + offset``. `BoxEstimate` keeps that
evidence and gives the box's pose error ``s = (x, y, yaw)``: a translation (m) and a turn (rad) about the
box's planned centre, such that a planned point ``p`` of the box truly lies at

    p' = c + R(yaw) (p - c) + (x, y),      offset_at(p) = p' - p      (c: the box's planned centre)

Model (a small maximum-a-posteriori least squares, solved by Gauss-Newton from zero):

- prior: ``s ~ N(0, diag(sigma_xy^2, sigma_xy^2, sigma_yaw^2))``, the cell's box placement uncertainty;
- each piece of evidence: ``offset = offset_at(planned; s) + e``, ``e ~ N(0, noise^2 I)`` with the noise of
  its source (`NOISE_SOURCES`). The noise is how well one can tells where the box stands, not how well
  the can was placed: a can also sits a little off its spot and off the pad's axis (0.7 mm per axis in
  the simulated cell), which the next can does not share. So a ManualAdjust confirm tells the box to
  about 0.8 mm (that scatter and the operator's aim), a search probe that passed the rim to about
  1.3 mm (anywhere within the clearance, and the scatter).
- the yaw prior is what keeps that scatter from being read as a turn: two compartments 73 mm apart,
  each 0.7 mm off at random, look like a box turned by about 0.8 deg. With a loose prior (1 deg) the
  third can started further from its compartment than with no yaw at all (an offline draw over the
  simulated cell's uncertainty: docs/design/behavior_server.md, "The estimate's noise").

Invariants:

- the yaw is estimated only once evidence from two or more different compartments exists (distinct
  planned points): from one point a turn cannot be told from a shift, so until then the yaw stays 0
  and the shift alone explains the evidence. The covariance is always the full one (the yaw's prior
  included), so the uncertainty never grows with evidence: `sigma` is the box centre's, which a turn
  still moves while one compartment is seen; `sigma_at` is that of a planned point's offset;
- a `BoxEstimate` is immutable; `with_evidence` / `reset` return new ones; the solution is computed
  from the evidence (the last `MAX_EVIDENCE` pieces) and the noise settings, so a change of the noise
  parameters re-weighs everything already seen;
- `to_dict` / `from_dict` round-trip (the run's progress keeps it, progress.py); bad input raises
  ValueError.

Where it is used: `behaviors.box` (PlaceOffset applies it before the carry, BoxEvidence updates it after
a placed can), `manual_adjust.behavior` (ManualAdjust starts from it), the behaviour server (keeps, shows and
resets it: docs/interfaces.md, "Box estimate").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from salamander_control.box_status import BoxStatus

SOURCE_MANUAL = "manual"
SOURCE_SEARCH = "search"
NOISE_SOURCES = (SOURCE_MANUAL, SOURCE_SEARCH)
"""Sources whose offset is evidence (behaviors/base.py's OFFSET_MANUAL and OFFSET_SEARCH)."""
SOURCE_WORDS = {SOURCE_MANUAL: "ManualAdjust", SOURCE_SEARCH: "search"}
"""How the log line names a source."""
MAX_EVIDENCE = 64
"""Pieces of evidence kept (the oldest go first): the estimate of a box stays small in the progress file."""
SAME_POINT_M = 0.001
"""Planned points closer than this count as one compartment (for the yaw rule)."""
_ITERATIONS = 8


@dataclass(frozen=True)
class EstimateNoise:
    """Prior and measurement noise (1 sigma): m for positions, rad for the yaw."""

    sigma_xy: float = 0.003
    sigma_yaw: float = 0.006
    noise_manual: float = 0.0008
    noise_search: float = 0.0013

    def __post_init__(self) -> None:
        """Refuse non-positive or non-finite values."""
        for name in ("sigma_xy", "sigma_yaw", "noise_manual", "noise_search"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"EstimateNoise.{name} must be a positive finite number, got {value!r}")

    def of(self, source: str) -> float:
        """The measurement noise of `source`."""
        return self.noise_manual if source == SOURCE_MANUAL else self.noise_search


@dataclass(frozen=True)
class Evidence:
    """One placed can: it went in at `planned` + `offset` (m, base_link), found by `source`."""

    can: str
    planned: tuple[float, float]
    offset: tuple[float, float]
    source: str
    compartment: int | None = None

    def __post_init__(self) -> None:
        """Refuse an unknown source or non-finite numbers."""
        if self.source not in NOISE_SOURCES:
            raise ValueError(f"evidence source must be one of {NOISE_SOURCES}, got {self.source!r}")
        values = (*self.planned, *self.offset)
        if len(self.planned) != 2 or len(self.offset) != 2 or not all(math.isfinite(v) for v in values):
            raise ValueError(f"evidence of {self.can}: planned and offset must be finite (x, y) pairs")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"can": self.can, "planned": list(self.planned), "offset": list(self.offset),
                "source": self.source, "compartment": self.compartment}  # fmt: skip

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Evidence:
        """Inverse of `to_dict`.

        Raises:
            ValueError: a missing or wrong field.
        """
        try:
            compartment = data.get("compartment")
            if compartment is not None and (type(compartment) is not int):  # not a bool, float or string
                raise TypeError(f"compartment {compartment!r} is not an index")
            return Evidence(
                str(data["can"]),
                _pair(data["planned"]),
                _pair(data["offset"]),
                str(data["source"]),
                compartment,
            )
        except (KeyError, TypeError, AttributeError, OverflowError) as exc:
            raise ValueError(f"not a piece of box evidence: {data!r}") from exc


def _pair(value: Any) -> tuple[float, float]:
    x, y = value
    return (float(x), float(y))


def _rotate(yaw: float, vx: float, vy: float) -> tuple[float, float]:
    c, s = math.cos(yaw), math.sin(yaw)
    return (c * vx - s * vy, s * vx + c * vy)


@dataclass(frozen=True)
class BoxEstimate:
    """The box's pose error from its evidence (see the module docstring).

    Args:
        centre: the box's planned centre in base_link (m): the yaw turns about it.
        noise: prior and measurement noise.
        evidence: what was seen, oldest first.
    """

    centre: tuple[float, float]
    noise: EstimateNoise = field(default_factory=EstimateNoise)
    evidence: tuple[Evidence, ...] = ()
    mean: tuple[float, float, float] = field(init=False, compare=False)
    cov: tuple[tuple[float, ...], ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        """Keep the last MAX_EVIDENCE pieces and solve."""
        if not all(math.isfinite(v) for v in self.centre):
            raise ValueError(f"box centre must be finite, got {self.centre}")
        object.__setattr__(self, "centre", _pair(self.centre))
        object.__setattr__(self, "evidence", tuple(self.evidence)[-MAX_EVIDENCE:])
        with np.errstate(over="ignore", invalid="ignore"):  # a hand-edited file's far points: refused below
            mean, cov = self._solve()
        if not all(math.isfinite(v) for v in (*mean, *(v for row in cov for v in row))):
            raise ValueError(f"the box evidence gives no finite estimate (planned points {self._points()})")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)

    # The solution --------------------------------------------------------------------------------

    def _points(self) -> str:
        return ", ".join(f"({x:.4g}, {y:.4g})" for x, y in dict.fromkeys(e.planned for e in self.evidence))

    @property
    def yaw_observable(self) -> bool:
        """Whether evidence from two or more different compartments exists (the yaw is estimated)."""
        points = [e.planned for e in self.evidence]
        return any(math.dist(a, b) >= SAME_POINT_M for a in points for b in points)

    def _solve(self) -> tuple[tuple[float, float, float], tuple[tuple[float, ...], ...]]:
        n = self.noise
        prior = np.diag([n.sigma_xy**-2, n.sigma_xy**-2, n.sigma_yaw**-2])
        free = 3 if self.yaw_observable else 2
        s = np.zeros(3)
        info = prior
        for _ in range(_ITERATIONS):
            info = prior.copy()
            grad = prior @ s  # of half the cost; the prior's mean is zero
            for e in self.evidence:
                w = n.of(e.source) ** -2
                vx, vy = e.planned[0] - self.centre[0], e.planned[1] - self.centre[1]
                rx, ry = _rotate(s[2], vx, vy)
                residual = np.array([rx - vx + s[0] - e.offset[0], ry - vy + s[1] - e.offset[1]])
                jac = np.array([[1.0, 0.0, -ry], [0.0, 1.0, rx]])
                info += w * jac.T @ jac
                grad += w * jac.T @ residual
            step = np.zeros(3)
            step[:free] = -np.linalg.solve(info[:free, :free], grad[:free])
            s = s + step
            if float(np.max(np.abs(step))) < 1e-12:
                break
        cov = np.linalg.inv(info)  # all three, yaw included: a shift and a turn it cannot yet tell apart
        return (float(s[0]), float(s[1]), float(s[2])), tuple(tuple(float(v) for v in row) for row in cov)

    @property
    def empty(self) -> bool:
        """Whether no evidence was seen (the estimate is the plan: zero offset)."""
        return not self.evidence

    @property
    def count(self) -> int:
        """How many placed cans the estimate rests on."""
        return len(self.evidence)

    @property
    def offset(self) -> tuple[float, float]:
        """The box's translation (x, y), m."""
        return (self.mean[0], self.mean[1])

    @property
    def yaw(self) -> float:
        """The box's turn about its planned centre, rad (0 until `yaw_observable`)."""
        return self.mean[2]

    @property
    def sigma(self) -> tuple[float, float]:
        """1-sigma uncertainty of the translation (x, y), m."""
        return (math.sqrt(self.cov[0][0]), math.sqrt(self.cov[1][1]))

    @property
    def sigma_yaw(self) -> float:
        """1-sigma uncertainty of the yaw, rad."""
        return math.sqrt(self.cov[2][2])

    def sigma_at(self, planned: Sequence[float]) -> tuple[float, float]:
        """1-sigma uncertainty (x, y) of `offset_at(planned)`, m (linearised at the estimate)."""
        vx, vy = planned[0] - self.centre[0], planned[1] - self.centre[1]
        rx, ry = _rotate(self.yaw, vx, vy)
        jac = np.array([[1.0, 0.0, -ry], [0.0, 1.0, rx]])
        cov = jac @ np.array(self.cov) @ jac.T
        return (math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1]))

    def offset_at(self, planned: Sequence[float]) -> tuple[float, float]:
        """The offset (dx, dy) (m) from a planned point of the box to where it truly is."""
        vx, vy = planned[0] - self.centre[0], planned[1] - self.centre[1]
        rx, ry = _rotate(self.yaw, vx, vy)
        return (rx - vx + self.mean[0], ry - vy + self.mean[1])

    def layout_mismatch(self, centre: Sequence[float], places: Mapping[str, Sequence[float]]) -> str:
        """Why this estimate was made for another layout than `centre` and `places` (can -> point), or "".

        A kept estimate is applied only to the box it was made for: the same planned centre, and every
        piece of evidence from a can of the cell whose planned point is where it was (each within
        `SAME_POINT_M`). Made for another layout, its offset and turn would move every can of this one.
        """
        if math.dist(self.centre, centre) >= SAME_POINT_M:
            return f"its box centre ({self.centre[0]:.4f}, {self.centre[1]:.4f}) m is not the cell's"
        for e in self.evidence:
            planned = places.get(e.can)
            if planned is None:
                return f"{e.can} is not a can of the cell"
            if math.dist(e.planned, planned) >= SAME_POINT_M:
                x, y = e.planned
                return f"{e.can} was placed into another compartment, at ({x:.4f}, {y:.4f}) m"
        return ""

    # New estimates -------------------------------------------------------------------------------

    def with_evidence(self, evidence: Evidence) -> BoxEstimate:
        """The estimate after one more placed can."""
        return replace(self, evidence=(*self.evidence, evidence))

    def with_noise(self, noise: EstimateNoise) -> BoxEstimate:
        """The same evidence weighed with other noise settings (self when unchanged)."""
        return self if noise == self.noise else replace(self, noise=noise)

    def reset(self) -> BoxEstimate:
        """A new box: no evidence, the plan."""
        return replace(self, evidence=())

    # Words and files -----------------------------------------------------------------------------

    def describe(self) -> str:
        """E.g. ``offset (1.2, -0.4) mm, yaw 0.15 deg, sigma (0.4, 0.4) mm`` (``, yaw ... deg`` always)."""
        x, y = (v * 1000.0 for v in self.offset)
        sx, sy = (v * 1000.0 for v in self.sigma)
        yaw = math.degrees(self.yaw)
        return f"offset ({x:.1f}, {y:.1f}) mm, yaw {yaw:.2f} deg, sigma ({sx:.1f}, {sy:.1f}) mm"

    def update_line(self) -> str:
        """The one log line of an update, from the newest evidence.

        E.g. ``box estimate: offset (1.2, -0.4) mm, yaw 0.00 deg, sigma (0.5, 0.5) mm from can_0
        (ManualAdjust)``.
        """
        if not self.evidence:
            return f"box estimate: {self.describe()} (no evidence: the plan)"
        last = self.evidence[-1]
        return f"box estimate: {self.describe()} from {last.can} ({SOURCE_WORDS[last.source]})"

    def summary(self) -> BoxStatus:
        """What /salamander/box/estimate carries (salamander_control/box_status.py: mm and deg)."""
        return BoxStatus(
            offset_mm=(round(self.offset[0] * 1000.0, 2), round(self.offset[1] * 1000.0, 2)),
            yaw_deg=round(math.degrees(self.yaw), 3),
            sigma_mm=(round(self.sigma[0] * 1000.0, 2), round(self.sigma[1] * 1000.0, 2)),
            sigma_yaw_deg=round(math.degrees(self.sigma_yaw), 3),
            yaw_estimated=self.yaw_observable,
            cans=self.count,
            sources=tuple(f"{e.can} ({SOURCE_WORDS[e.source]})" for e in self.evidence),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: the centre and the evidence (the solution is recomputed on load)."""
        return {"centre": list(self.centre), "evidence": [e.to_dict() for e in self.evidence]}

    @staticmethod
    def from_dict(data: Mapping[str, Any], noise: EstimateNoise | None = None) -> BoxEstimate:
        """Inverse of `to_dict`, weighed with `noise` (default: the defaults).

        Raises:
            ValueError: not this format.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("evidence"), list):
            raise ValueError("a box estimate needs 'centre' and an 'evidence' list")
        try:
            centre = _pair(data["centre"])
        except (KeyError, TypeError, ValueError, OverflowError) as exc:  # a 400-digit integer: overflow
            raise ValueError(f"box estimate: bad centre {str(data.get('centre'))[:80]}") from exc
        evidence = tuple(Evidence.from_dict(e) for e in data["evidence"])
        return BoxEstimate(centre, noise or EstimateNoise(), evidence)
