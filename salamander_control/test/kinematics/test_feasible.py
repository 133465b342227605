"""The (q1, q2) polygon projection the clamp and teleop rely on, and ArmParams validation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import (
    ALPHA_BETA_RANGE,
    ArmParams,
    Bound,
    polygon_vertices,
    project_to_feasible,
    violated_bounds,
    within_limits,
)

DEFAULT = ArmParams()
angles = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)
alpha_beta = st.floats(*ALPHA_BETA_RANGE, allow_nan=False)


@settings(max_examples=4000, deadline=None)
@given(angles, angles, alpha_beta, alpha_beta)
def test_projection_lands_inside_and_is_the_nearest_vertex_or_edge_point(q1, q2, alpha, beta) -> None:
    params = ArmParams(alpha_max=alpha, beta_max=beta)
    proj = project_to_feasible(q1, q2, params)
    assert violated_bounds(proj.q1, proj.q2, params) == ()
    assert within_limits((0.0, proj.q1, proj.q2, 0.0, 0.0), params)
    if not proj.clamped:
        assert (proj.q1, proj.q2) == (q1, q2) and proj.active == ()
        return
    assert proj.active and set(proj.active) == set(violated_bounds(q1, q2, params))
    # Optimality: no polygon vertex, and no point along any edge, is nearer than the projection.
    verts = polygon_vertices(params)
    for i, (ax, ay) in enumerate(verts):
        bx, by = verts[(i + 1) % len(verts)]
        for t in (0.0, 0.25, 0.5, 0.75):
            px, py = ax + t * (bx - ax), ay + t * (by - ay)
            assert proj.distance <= math.hypot(q1 - px, q2 - py) + 1e-12


def test_projection_reports_which_coupled_bound_acted() -> None:
    # Shoulder back, beam down: the alpha edge.
    proj = project_to_feasible(-1.0, 1.0, DEFAULT)
    assert proj.active == (Bound.ALPHA_MAX,)
    assert proj.q2 - proj.q1 == pytest.approx(DEFAULT.alpha_max, abs=1e-12)
    assert proj.q1 == pytest.approx(-0.7, abs=1e-12) and proj.distance == pytest.approx(0.3 * math.sqrt(2))
    # Shoulder forward, beam up: the beta edge.
    proj = project_to_feasible(1.2, 0.1, DEFAULT)
    assert proj.active == (Bound.BETA_MAX,)
    assert proj.q1 - proj.q2 <= DEFAULT.beta_max
    # Beyond a corner: two bounds crossed, result is the vertex.
    proj = project_to_feasible(1.0, -1.0, DEFAULT)
    assert set(proj.active) == {Bound.Q2_MIN, Bound.BETA_MAX}
    assert (proj.q1, proj.q2) == pytest.approx((0.87, 0.0), abs=1e-12)


def test_inside_point_is_returned_untouched() -> None:
    proj = project_to_feasible(-0.785, 0.59, DEFAULT)
    assert proj == (-0.785, 0.59, False, (), 0.0)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_projection_refuses_non_finite_input(bad: float) -> None:
    with pytest.raises(ValueError, match="q1"):
        project_to_feasible(bad, 0.3, DEFAULT)
    with pytest.raises(ValueError, match="q2"):
        project_to_feasible(0.3, bad, DEFAULT)


def test_polygon_of_default_limits_has_six_vertices() -> None:
    verts = polygon_vertices(DEFAULT)
    assert len(verts) == 6
    expected = {(-1.35, 0.05), (-1.35, 0.0), (0.87, 0.0), (1.35, 0.48), (1.35, 1.309), (-0.091, 1.309)}
    for v in expected:
        assert min(math.dist(v, w) for w in verts) < 1e-12


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("alpha_max", math.nan, "alpha_max"),
        ("alpha_max", 3.0, "alpha_max"),
        ("beta_max", -0.1, "beta_max"),
        ("upper_arm_length", 0.0, "upper_arm_length"),
        ("q1_min", 2.0, "q1_min"),
        ("tool_drop", math.inf, "tool_drop"),
        ("yaw_max", "pi", "yaw_max"),
    ],
)
def test_arm_params_reject_bad_values(field: str, value: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ArmParams(**{field: value})


def test_arm_params_are_frozen_and_copy_validated() -> None:
    with pytest.raises(AttributeError):
        DEFAULT.alpha_max = 1.0  # type: ignore[misc]
    assert DEFAULT.with_changes(alpha_max=1.3).alpha_max == 1.3
    with pytest.raises(ValueError):
        DEFAULT.with_changes(beta_max=math.nan)
    assert DEFAULT.admits_rest()
    assert not DEFAULT.with_changes(alpha_max=1.37).admits_rest()
    assert DEFAULT.with_changes(alpha_max=1.38).admits_rest()


@pytest.mark.parametrize(("alpha", "beta"), [(0.0, 1e-19), (0.0, 5.6e-44), (0.0, 0.0), (0.0, 5e-06)])
@pytest.mark.parametrize("q", [(0.5, 0.3), (0.3, 0.5), (1e-30, -1e-30), (2.0, 1.0), (-5.0, 5.0), (1.35, 2.0)])
def test_projection_onto_a_polygon_thinner_than_an_ulp(alpha: float, beta: float, q: tuple) -> None:
    # alpha_max = 0 with a tiny beta_max leaves (almost) only the line q1 = q2: rounding must not make the
    # nudge oscillate between the two coupled bounds (found by the clamp and teleop property tests).
    params = ArmParams(alpha_max=alpha, beta_max=beta)
    proj = project_to_feasible(*q, params)
    assert violated_bounds(proj.q1, proj.q2, params) == ()
