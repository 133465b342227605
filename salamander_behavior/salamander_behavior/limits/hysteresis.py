"""A two-threshold latch, so that a condition does not flicker on a noisy metric at its threshold.

The metric is margin-like: larger is safer. The latch turns *violated* when the metric drops below
`enter` and turns *clear* again only once it is back at or above `exit` (``enter <= exit``); in the band
between them it keeps its state. A joint state jittering by a few millirad around a margin then stops
the motion once instead of stopping and releasing it on alternate ticks.

Fail-safe on bad numbers: NaN counts as violated (it is below nothing, so it would otherwise clear).
"""

from __future__ import annotations

import math


class Hysteresis:
    """Latch on a margin-like metric.

    Args:
        enter: violated when the metric is below this.
        exit: clear again when the metric is at or above this (>= `enter`; equal means no band).
        violated: the initial state. Clear by default: a metric starting inside the band has not
            crossed `enter`, so it is not held against it.

    Raises:
        ValueError: a threshold is NaN, or ``enter > exit``.
    """

    def __init__(self, enter: float, exit: float, violated: bool = False) -> None:
        if math.isnan(enter) or math.isnan(exit):
            raise ValueError(f"hysteresis thresholds must be numbers, got enter={enter}, exit={exit}")
        if enter > exit:
            raise ValueError(f"hysteresis needs enter <= exit (margin-like metric), got {enter} > {exit}")
        self.enter = float(enter)
        self.exit = float(exit)
        self._violated = violated
        self.flips = 0
        """How often the state has changed (a flicker counter for tests and diagnostics)."""

    @property
    def violated(self) -> bool:
        """The current state."""
        return self._violated

    def update(self, metric: float) -> bool:
        """Feed one value of the metric; returns whether the condition is violated now."""
        if math.isnan(metric):
            new = True
        elif self._violated:
            new = not metric >= self.exit
        else:
            new = metric < self.enter
        if new != self._violated:
            self.flips += 1
            self._violated = new
        return new

    def reset(self, violated: bool = False) -> None:
        """Forget the history (e.g. after the limits themselves changed)."""
        self._violated = violated

    def __repr__(self) -> str:
        """E.g. ``Hysteresis(enter=0.0, exit=0.01, violated=False)``."""
        return f"Hysteresis(enter={self.enter}, exit={self.exit}, violated={self._violated})"
