"""How far a TCP path strays from a straight line: the measure the Cartesian and streaming tests share."""

from __future__ import annotations

import numpy as np


def line_deviation(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance of points (N, 3) from the line through a and b, m."""
    d = (b - a) / np.linalg.norm(b - a)
    rel = points - a
    return float(np.max(np.linalg.norm(rel - np.outer(rel @ d, d), axis=1)))
