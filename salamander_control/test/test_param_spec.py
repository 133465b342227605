"""ParamSpec's value rule (pure): types, finiteness, full and half-open ranges, and the refusal texts."""

from __future__ import annotations

import math

import pytest

from salamander_control.param_spec import ParamSpec


def test_a_full_range_refuses_values_outside_it_with_the_range_in_the_reason() -> None:
    spec = ParamSpec("gap", 0.01, "a gap (m)", 0.0, 0.05)
    assert spec.check(0.0) is None and spec.check(0.05) is None
    assert spec.check(-0.001) == "gap must lie in [0.0, 0.05], got -0.001"
    assert spec.check(0.06) == "gap must lie in [0.0, 0.05], got 0.06"


@pytest.mark.parametrize(
    ("spec", "good", "bad", "reason"),
    [
        (ParamSpec("t_s", 1.0, "min only", min_value=0.0), [0.0, 1e12], -0.5, "t_s must be >= 0.0, got -0.5"),
        (ParamSpec("v", 1.0, "max only", max_value=2.0), [-1e12, 2.0], 2.5, "v must be <= 2.0, got 2.5"),
        (ParamSpec("n", 5, "int, min only", min_value=2), [2, 10**9], 1, "n must be >= 2, got 1"),
        (ParamSpec("k", 5, "int, max only", max_value=9), [-(10**9), 9], 10, "k must be <= 9, got 10"),
    ],
)
def test_a_half_open_range_bounds_one_side_only(spec: ParamSpec, good: list, bad: float, reason: str) -> None:
    for value in good:
        assert spec.check(value) is None, value
    assert spec.check(bad) == reason


def test_without_a_range_any_finite_number_passes_and_non_finite_ones_never_do() -> None:
    spec = ParamSpec("x", 0.0, "no range")
    assert spec.check(-1e300) is None and spec.check(1e300) is None
    assert spec.check(math.nan) == "x must be a finite number, got nan"
    half = ParamSpec("y", 1.0, "half-open", min_value=0.0)
    assert half.check(math.inf) == "y must be a finite number, got inf"


def test_types_are_checked_before_the_range() -> None:
    assert ParamSpec("x", 1.0, "", 0.0, 2.0).check("1") == "x must be a floating-point number, got '1'"
    assert ParamSpec("x", 1.0, "", 0.0, 2.0).check(True) == "x must be a floating-point number, got True"
    xs = ParamSpec("xs", [0.0], "a list")
    assert xs.check([1.0, 2]) is None
    assert xs.check([1.0, math.nan]) == "xs must hold finite numbers, got nan"
    assert xs.check(3.0) == "xs must be a list of numbers, got 3.0"


def test_range_text_names_each_form() -> None:
    assert ParamSpec("a", 1.0, "", 0.0, 1.0).range_text() == "lie in [0.0, 1.0]"
    assert ParamSpec("a", 1.0, "", min_value=0.5).range_text() == "be >= 0.5"
    assert ParamSpec("a", 1.0, "", max_value=3.0).range_text() == "be <= 3.0"
    assert ParamSpec("a", 1.0, "").range_text() == ""
