"""One parameter's name, default, description, range and the rule its values must follow.

Pure (no rclpy): the nodes declare their parameters from these (`ros.params.ParamBinding` adds the ROS
descriptor), and the simulated cell checks the values it reads from a params file with the same rule,
so a value the node would refuse is refused by the file loader too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: name, default (its type is the parameter's type), description, optional range.

    `min_value` and `max_value` are each optional: both give [min, max], one alone a half-open range.
    """

    name: str
    default: Any
    description: str
    min_value: float | None = None
    max_value: float | None = None
    read_only: bool = False

    def check(self, value: Any) -> str | None:
        """Why `value` is unacceptable for this parameter, or None when it is fine.

        A list default takes a list of finite numbers (an rclpy array counts as a list), a float default
        a finite number; a number must lie in the range when there is one (either bound may be None: a
        half-open range). Other types are left to ROS, which refuses a value of the wrong type before it
        gets here.
        """
        if isinstance(self.default, list):
            if not isinstance(value, (list, tuple)) and type(value).__name__ != "array":
                return f"{self.name} must be a list of numbers, got {value!r}"
            bad = [v for v in value if not _is_number(v) or not math.isfinite(v)]
            return f"{self.name} must hold finite numbers, got {bad[0]!r}" if bad else None
        if isinstance(self.default, float):
            if not _is_number(value):
                return f"{self.name} must be a floating-point number, got {value!r}"
            if not math.isfinite(value):
                return f"{self.name} must be a finite number, got {value}"
        if _is_number(value) and not self.in_range(value):
            return f"{self.name} must {self.range_text()}, got {value}"
        return None

    def in_range(self, value: float) -> bool:
        """Whether `value` lies in the range; a missing bound does not limit (a half-open range)."""
        return (self.min_value is None or value >= self.min_value) and (
            self.max_value is None or value <= self.max_value
        )

    def bounds_text(self, number: Callable[[float], str] = str) -> str:
        """The range as "[lo, hi]", ">= lo" or "<= hi" ("" without one), numbers written by `number`."""
        lo, hi = self.min_value, self.max_value
        if lo is not None and hi is not None:
            return f"[{number(lo)}, {number(hi)}]"
        if lo is not None:
            return f">= {number(lo)}"
        if hi is not None:
            return f"<= {number(hi)}"
        return ""

    def range_text(self) -> str:
        """The range as the refusal says it: "lie in [lo, hi]", "be >= lo", "be <= hi" ("" without one)."""
        bounds = self.bounds_text()
        if not bounds:
            return ""
        return f"lie in {bounds}" if bounds.startswith("[") else f"be {bounds}"
