"""The ports' value types (ports.py): a Cartesian target refuses what it cannot be."""

from __future__ import annotations

import math

import pytest

from salamander_behavior.ports import CartesianTarget


def test_targets_refuse_nan() -> None:
    with pytest.raises(ValueError):
        CartesianTarget(0.3, math.nan, 0.0)
