"""Geometry and command line of salamander_bringup.tools.workspace_plot (no rclpy)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from salamander_bringup.tools import workspace_plot as wp
from salamander_control.kinematics import (
    REST_POSTURE,
    ArmParams,
    Bound,
    forward_kinematics,
    polygon_vertices,
    project_to_feasible,
    wrist_position,
)

DEFAULTS = ArmParams()
REST_TCP = (0.0787, 0.0374)  # docs/arm_model.md, (x, z) at base yaw 0
SPEC_POINT_Q = (0.0, math.radians(80.0), math.radians(30.0), 0.0, 0.0)
SPEC_POINT_TCP = (0.5986, -0.1029)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _bounds(params: ArmParams, frame: str = "tcp") -> set[str]:
    return {seg.bound for seg in wp.boundary_segments(params, frame)}


def _residuals(q1: np.ndarray, q2: np.ndarray, p: ArmParams) -> np.ndarray:
    """(N, 6) signed residuals of the six half-planes (<= 0 inside)."""
    return np.column_stack(
        (p.q1_min - q1, q1 - p.q1_max, p.q2_min - q2, q2 - p.q2_max,
         q2 - q1 - p.alpha_max, q1 - q2 - p.beta_max)
    )


# ---------------------------------------------------------------- polygon and pieces


def test_labelled_polygon_edges_lie_on_their_bounds() -> None:
    variants = (DEFAULTS.with_changes(alpha_max=1.3), DEFAULTS.with_changes(alpha_max=2.2, beta_max=0.3))
    for params in (DEFAULTS, *variants):
        poly = wp.labelled_polygon(params)
        assert [(a, b) for a, b, _ in poly] == [v for v in polygon_vertices(params)]
        order = [b.value for b in Bound]
        for (a1, a2, bound), (b1, b2, _) in zip(poly, poly[1:] + poly[:1], strict=True):
            res = _residuals(np.array([a1, b1]), np.array([a2, b2]), params)[:, order.index(bound)]
            assert np.abs(res).max() < 1e-12, (bound, a1, a2, b1, b2)


def test_default_region_is_one_piece_bounded_by_all_six_limits() -> None:
    assert len(wp.joint_pieces(DEFAULTS)) == 1
    assert _bounds(DEFAULTS) == {b.value for b in Bound}


def test_boundary_is_a_closed_chain() -> None:
    for params in (DEFAULTS, DEFAULTS.with_changes(alpha_max=2.2)):
        for outline in wp.region_outlines(params):
            assert np.allclose(outline[0], outline[-1], atol=1e-12)  # the last edge ends at the first vertex
            steps = np.hypot(*np.diff(outline, axis=0).T)
            assert steps.max() < 0.01  # dense: no jumps between consecutive edges


@pytest.mark.parametrize(
    ("alpha_max", "beta_max", "alpha_edge", "beta_edge"),
    [
        (1.40, 0.87, True, True),
        (2.65, 0.87, True, True),  # q2_max - q1_min = 2.659 > 2.65: still binds
        (2.70, 0.87, False, True),  # above 2.659 the box corner is inside the half-plane
        (1.40, 1.34, True, True),  # q1_max - q2_min = 1.35
        (1.40, 1.35, True, False),  # exactly through the corner: zero-length edge, not drawn
        (1.40, 2.00, True, False),
        (2.70, 2.70, False, False),
    ],
)
def test_coupled_edge_appears_only_when_the_coupled_limit_binds(
    alpha_max: float, beta_max: float, alpha_edge: bool, beta_edge: bool
) -> None:
    params = DEFAULTS.with_changes(alpha_max=alpha_max, beta_max=beta_max)
    bounds = _bounds(params)
    assert (Bound.ALPHA_MAX.value in bounds) is alpha_edge
    assert (Bound.BETA_MAX.value in bounds) is beta_edge
    binds_alpha = params.q2_max - params.q1_min > params.alpha_max
    binds_beta = params.q1_max - params.q2_min > params.beta_max
    assert (alpha_edge, beta_edge) == (binds_alpha, binds_beta)


def test_alpha_past_half_pi_splits_at_the_folded_arm() -> None:
    """Past pi/2 the polygon holds both elbow branches; the seam maps onto the |L1 - L2| circle."""
    params = DEFAULTS.with_changes(alpha_max=2.2)
    assert len(wp.joint_pieces(params)) == 2
    seams = [s for s in wp.boundary_segments(params, frame="wrist") if s.bound == wp.COLLINEAR]
    assert len(seams) == 2
    for seam in seams:
        dist = np.hypot(seam.r, seam.z - params.base_height)
        assert np.allclose(dist, abs(params.upper_arm_length - params.beam_length), atol=1e-12)


# ---------------------------------------------------------------- region membership


def test_spec_rest_point_is_inside_the_default_region() -> None:
    assert wp.contains(DEFAULTS, np.array([REST_TCP])).all()
    wrist = wrist_position(REST_POSTURE)
    assert wp.contains(DEFAULTS, np.array([(wrist[0], wrist[2])]), frame="wrist").all()


def test_spec_point_80_30_lies_just_outside_the_default_limits() -> None:
    """The (80 deg, 30 deg) reference point violates q1_max (1.35 < 1.396) and beta_max (0.87 < 0.873).

    Its TCP is therefore outside the region, about 9 mm beyond the q1_max edge; the nearest feasible
    posture (the projection onto the polygon) is on the boundary.
    """
    assert forward_kinematics(SPEC_POINT_Q).tcp[0::2] == pytest.approx(SPEC_POINT_TCP, abs=1e-4)
    assert not wp.contains(DEFAULTS, np.array([SPEC_POINT_TCP])).any()
    assert wp.contains(DEFAULTS, np.array([SPEC_POINT_TCP]), margin=0.012).all()
    proj = project_to_feasible(SPEC_POINT_Q[1], SPEC_POINT_Q[2], DEFAULTS)
    assert set(proj.active) == {Bound.Q1_MAX, Bound.BETA_MAX}
    on_edge = wp.plane_points(np.array([proj.q1]), np.array([proj.q2]), DEFAULTS)
    assert wp.contains(DEFAULTS, on_edge, margin=1e-6).all()


@pytest.mark.parametrize("frame", ["tcp", "wrist"])
@pytest.mark.parametrize("alpha_max", [1.40, 1.30, 0.9])
def test_region_membership_equals_joint_feasibility(frame: str, alpha_max: float) -> None:
    """On the elbow-up branch the FK is one-to-one, so (q1, q2) is feasible iff its point is in the region."""
    params = DEFAULTS.with_changes(alpha_max=alpha_max)
    rng = np.random.default_rng(7)
    q1 = rng.uniform(-2.0, 2.0, 20000)
    q2 = rng.uniform(-0.5, 1.8, 20000)
    q1, q2 = q1[np.abs(q1 - q2) < 0.5 * math.pi - 0.05], q2[np.abs(q1 - q2) < 0.5 * math.pi - 0.05]
    worst = _residuals(q1, q2, params).max(axis=1)
    clear = np.abs(worst) > 2e-3  # skip points within 2 mrad of a bound (sampling of the outline)
    inside = wp.contains(params, wp.plane_points(q1[clear], q2[clear], params, frame), frame=frame)
    np.testing.assert_array_equal(inside, worst[clear] < 0.0)
    assert inside.sum() > 1000 and (~inside).sum() > 1000


def test_narrowing_alpha_shrinks_the_region_and_locks_out_rest() -> None:
    narrow = DEFAULTS.with_changes(alpha_max=1.30)
    assert wp.region_area(narrow) < wp.region_area(DEFAULTS)
    for outline in wp.region_outlines(narrow):
        assert wp.contains(DEFAULTS, outline, margin=1e-6).all()
    assert not wp.contains(narrow, np.array([REST_TCP])).any()
    assert not narrow.admits_rest()


def test_area_is_monotonic_in_alpha_and_beta() -> None:
    areas = [wp.region_area(DEFAULTS.with_changes(alpha_max=a)) for a in (0.8, 1.0, 1.2, 1.4, 1.5)]
    assert areas == sorted(areas) and len(set(areas)) == len(areas)
    areas = [wp.region_area(DEFAULTS.with_changes(beta_max=b)) for b in (0.3, 0.6, 0.87, 1.2)]
    assert areas == sorted(areas) and len(set(areas)) == len(areas)


def test_wrist_frame_is_the_tcp_frame_lifted_by_the_tool_drop() -> None:
    tcp = wp.boundary_segments(DEFAULTS, "tcp")
    wrist = wp.boundary_segments(DEFAULTS, "wrist")
    for a, b in zip(tcp, wrist, strict=True):
        assert a.bound == b.bound
        np.testing.assert_allclose(b.r, a.r, atol=1e-15)
        np.testing.assert_allclose(b.z, a.z + DEFAULTS.tool_drop, atol=1e-15)
    assert wp.region_area(DEFAULTS, "wrist") == pytest.approx(wp.region_area(DEFAULTS, "tcp"))


# ---------------------------------------------------------------- command line


def test_main_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "ws.png"
    assert wp.main(["--out", str(out), "--compare-alpha-max", "1.30", "--dpi", "60"]) == 0
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    assert "locks out the rest posture" in capsys.readouterr().err


def test_main_with_defaults_only_and_wrist_frame(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ws.png"
    assert wp.main(["--out", str(out), "--frame", "wrist", "--dpi", "50", "--compare-beta-max", "1.2"]) == 0
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["--alpha-max", "3.0"],
        ["--alpha-max", "-0.1"],
        ["--alpha-max", "nan"],
        ["--beta-max", "inf"],
        ["--alpha-max", "abc"],
        ["--compare-alpha-max", "2.8"],
        ["--compare-beta-max", "-1"],
        ["--dpi", "0"],
        ["--frame", "elbow"],
    ],
)
def test_bad_arguments_exit_with_status_2(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.png"
    with pytest.raises(SystemExit) as exc:
        wp.main([*argv, "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: workspace_plot" in err and "error:" in err
    assert not out.exists()


def test_bad_alpha_message_names_the_option_and_range(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        wp.main(["--alpha-max", "3.0"])
    err = capsys.readouterr().err
    assert "--alpha-max" in err and "alpha_max" in err and "2.7" in err


def test_runs_as_a_module() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run(
        [sys.executable, "-m", "salamander_bringup.tools.workspace_plot", "--help"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--compare-alpha-max" in result.stdout


def test_unwritable_output_exits_with_status_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert wp.main(["--out", str(blocker / "ws.png"), "--dpi", "40"]) == 1
    assert "cannot write" in capsys.readouterr().err
