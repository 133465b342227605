"""Input checks shared by the scalar API: bad input raises a clear ValueError naming the argument."""

from __future__ import annotations

import math
from typing import Any


def finite_vector(value: Any, length: int, name: str) -> tuple[float, ...]:
    """Return `value` as a tuple of `length` finite floats.

    Raises:
        ValueError: wrong length, not numbers, or NaN/inf; the message names `name`.
    """
    try:
        items = tuple(float(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a sequence of {length} numbers, got {value!r}") from exc
    if len(items) != length:
        raise ValueError(f"{name} must have {length} elements, got {len(items)}")
    for v in items:
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {items}")
    return items


def finite_scalar(value: Any, name: str) -> float:
    """Return `value` as a finite float.

    Raises:
        ValueError: not a number, or NaN/inf; the message names `name`.
    """
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number, got {value!r}") from exc
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v
