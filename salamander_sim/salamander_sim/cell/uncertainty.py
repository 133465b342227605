"""Where the true cell differs from the believed one: the box's pose, each can's spot, each grip.

The configured layout (config/cell.yaml) is what the cell *believes*: the behaviour tree's targets
(`salamander_control.cell.targets`) are computed from it and never change. The simulator runs the *true*
cell, drawn once at start from `config.Uncertainty` with one seed:

- the box's true pose = configured pose + `box_error` + a draw of N(0, box_error_sigma_xy) in x and in
  y and N(0, box_error_sigma_yaw) in yaw;
- each can's true spot = its `can_xy` + a draw of N(0, can_spot_sigma_xy) in x and in y;
- each grip (`GripScatter.draw`, one draw per seal, in the order the grips happen): the can shifts
  against the pad by N(0, grip_sigma_xy) in each axis of the pad frame when the seal forms.

Every normal draw is clipped at 3 sigma (a box that stands against its stops, a can in its feeder
pocket, a pad lip that cannot slide farther than its lid's flat: no unbounded tails). The streams are
independent children of one `numpy.random.SeedSequence(seed)`: the same seed gives the same true cell,
and the same seed with the same sequence of grips the same grip offsets, whatever else changed. The
true layout is a `CellLayout`, so it is validated like the configured one (a draw that put a can on the
box would be refused with the reason). Pure: numpy only. Why the defaults are what they are:
docs/design/cell_model.md, "Uncertainty".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from salamander_sim.cell.config import CellLayout, Uncertainty

CLIP_SIGMAS = 3.0
"""Every draw is clipped at this many standard deviations."""


@dataclass(frozen=True)
class CellTruth:
    """The true cell of one run.

    Attributes:
        layout: the true layout (box pose and can spots as they really are; everything else as configured).
        box_error: true minus believed box pose, (dx, dy, dyaw) in base_link (m, m, rad).
        can_errors: true minus configured spot of each can, (dx, dy) in m, in can order.
    """

    layout: CellLayout
    box_error: tuple[float, float, float]
    can_errors: tuple[tuple[float, float], ...]


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    box_and_cans, grips = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(box_and_cans), np.random.default_rng(grips)


def _clipped(rng: np.random.Generator, sigma: float, n: int) -> list[float]:
    draws = rng.standard_normal(n)  # always drawn, so a zero sigma does not shift the later draws
    return [float(sigma * np.clip(d, -CLIP_SIGMAS, CLIP_SIGMAS)) for d in draws]


def draw_truth(believed: CellLayout, uncertainty: Uncertainty) -> CellTruth:
    """The true cell for `believed` (the configured layout) under `uncertainty`.

    Raises:
        ValueError: the drawn cell is not a valid layout (e.g. a can pushed onto the box); the message
            says which seed drew it.
    """
    rng, _ = _streams(uncertainty.seed)
    dx, dy = _clipped(rng, uncertainty.box_error_sigma_xy, 2)
    (dyaw,) = _clipped(rng, uncertainty.box_error_sigma_yaw, 1)
    fx, fy, fyaw = uncertainty.box_error
    box_error = (dx + fx, dy + fy, dyaw + fyaw)
    n = len(believed.can_xy)
    spots = _clipped(rng, uncertainty.can_spot_sigma_xy, 2 * n)
    can_errors = tuple((spots[2 * i], spots[2 * i + 1]) for i in range(n))
    yaw = math.remainder(believed.box_yaw + box_error[2], 2 * math.pi)
    try:
        layout = dataclasses.replace(
            believed,
            box_x=believed.box_x + box_error[0],
            box_y=believed.box_y + box_error[1],
            box_yaw=yaw,
            can_xy=tuple(
                (x + ex, y + ey) for (x, y), (ex, ey) in zip(believed.can_xy, can_errors, strict=True)
            ),
        )
    except ValueError as exc:
        raise ValueError(f"uncertainty_seed {uncertainty.seed} drew an impossible cell: {exc}") from exc
    return CellTruth(layout, box_error, can_errors)


class GripScatter:
    """The seeded sequence of grip shifts: `draw()` once per seal, (dx, dy) in the pad frame (m)."""

    def __init__(self, uncertainty: Uncertainty) -> None:
        _, self._rng = _streams(uncertainty.seed)
        self.sigma = uncertainty.grip_sigma_xy

    def draw(self) -> tuple[float, float]:
        """The next grip's shift of the can against the pad (m, pad frame x and y)."""
        dx, dy = _clipped(self._rng, self.sigma, 2)
        return (dx, dy)


def clamp_offset(dx: float, dy: float, limit: float) -> tuple[float, float]:
    """(dx, dy) shortened to at most `limit` (m): a pad seals within attach_tol_xy of the axis or not."""
    norm = math.hypot(dx, dy)
    if norm <= limit or norm == 0.0:
        return (dx, dy)
    return (dx * limit / norm, dy * limit / norm)
