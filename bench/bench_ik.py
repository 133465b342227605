#!/usr/bin/env python3
"""Benchmark of the Salamander closed-form IK against a numerical baseline measured in the same run.

Run from the repository root::

    PYTHONPATH=salamander_control python bench/bench_ik.py          # full run (~1 min)
    PYTHONPATH=salamander_control python bench/bench_ik.py --quick  # smoke run (a few seconds)

What it measures (see bench/README.md):

* poses: joint vectors sampled uniformly inside every limit (per-joint box and both coupled half-planes,
  rejection sampling, seeded), mapped to (tcp, tool_pitch, tool_yaw) with `forward_kinematics_batch`;
* scalar IK: microseconds per `solve_ik_pitched` call (no seed; seed = true joints; both elbow branches
  with alpha_max = beta_max = 2.7), median of several `timeit` repeats, Python loop overhead included;
* batch IK: solves per second of `solve_ik_batch` on the poses and on the poses tiled to 1,000,000, best of
  several runs;
* baseline: `scipy.optimize.least_squares` on the five joints from the rest posture, on a subset.

Every answer of ours is checked (status Ok, exact limits, FK of the answer within 1e-9 m / 1e-9 rad of the
pose). A correctness failure exits with status 1; a missed performance target is only reported (exit 0).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy
from scipy.optimize import least_squares

if importlib.util.find_spec("salamander_control") is None:  # convenience when PYTHONPATH is not set
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "salamander_control"))

from salamander_control.kinematics import (
    REST_POSTURE,
    ArmParams,
    forward_kinematics,
    forward_kinematics_batch,
    polygon_vertices,
    solve_ik_batch,
    solve_ik_pitched,
    within_limits,
)

TITLE = "Salamander IK benchmark results"
"""First line of the results table (the smoke test looks for it)."""
HEADER = ("metric", "ours", "baseline", "ratio", "target", "verdict")
"""Column names of the results table."""
SCALAR_TARGET_US = 5.0
"""Issue target: at most 5 us per scalar solve."""
BATCH_TARGET_PER_S = 5e6
"""Issue target: at least 5 million batch solves per second."""
POS_TOL = 1e-9
"""Our IK: FK of the answer must match the TCP within this, m (and tool pitch/yaw within this, rad)."""
BASELINE_POS_TOL = 1e-6
"""Baseline success: FK of its answer within this of the TCP, m (and tool pitch/yaw within this, rad)."""


@dataclass(frozen=True)
class Config:
    """Sizes of one run."""

    n_poses: int
    n_baseline: int
    n_big: int
    scalar_repeats: int
    batch_repeats: int
    seed: int


FULL = Config(
    n_poses=10_000, n_baseline=1_000, n_big=1_000_000, scalar_repeats=11, batch_repeats=7, seed=20240601
)
QUICK = Config(n_poses=300, n_baseline=20, n_big=20_000, scalar_repeats=3, batch_repeats=3, seed=20240601)


@dataclass(frozen=True)
class Poses:
    """Sampled joints (N, 5) and their FK: TCPs (N, 3), tool pitches (N,), tool yaws (N,)."""

    q: np.ndarray
    tcp: np.ndarray
    pitch: np.ndarray
    yaw: np.ndarray


@dataclass(frozen=True)
class ScalarResult:
    """Timing and check of one scalar-IK variant."""

    label: str
    us_per_solve: float
    best_us: float
    cpu_us: float
    """Median CPU time (time.process_time) per solve: less sensitive to other processes than wall time."""
    n_ok: int
    n: int
    max_pos_err: float
    max_ang_err: float
    n_true_q: int
    """Answers equal (within 1e-9 rad) to the joints the pose came from (interesting with a seed)."""


@dataclass(frozen=True)
class BaselineResult:
    """Timing and outcome of the numerical baseline."""

    us_per_solve: float
    median_us: float
    n_ok: int
    n_not_converged: int
    n_limit_violation: int
    n: int
    mean_nfev: float


def sample_poses(n: int, params: ArmParams, seed: int) -> Poses:
    """`n` joint vectors uniform inside all limits (rejection sampling), and their FK."""
    rng = np.random.default_rng(seed)
    lower = np.array(params.joint_lower)
    upper = np.array(params.joint_upper)
    # The (q1, q2) polygon's bounding box is never larger than the per-joint box; sampling inside it
    # keeps the distribution uniform over the polygon while rejecting less.
    verts = np.array(polygon_vertices(params))
    lower[1:3] = np.maximum(lower[1:3], verts.min(axis=0))
    upper[1:3] = np.minimum(upper[1:3], verts.max(axis=0))
    chunks: list[np.ndarray] = []
    have = 0
    while have < n:
        q = rng.uniform(lower, upper, size=(max(2 * (n - have), 64), 5))
        keep = (q[:, 2] - q[:, 1] <= params.alpha_max) & (q[:, 1] - q[:, 2] <= params.beta_max)
        chunks.append(q[keep])
        have += int(keep.sum())
    q = np.concatenate(chunks)[:n]
    assert all(within_limits(row, params) for row in q[: min(n, 1000)])
    fk = forward_kinematics_batch(q, params)
    return Poses(q, fk.tcp, fk.tool_pitch, fk.tool_yaw)


def _wrap(a: float) -> float:
    return math.remainder(a, 2.0 * math.pi)


def pose_error(
    q: Sequence[float], tcp: Sequence[float], pitch: float, yaw: float, params: ArmParams
) -> tuple[float, float]:
    """(position error in m, largest of tool pitch/yaw errors in rad) of joints `q` against a pose."""
    pose = forward_kinematics(q, params)
    pos = math.dist(pose.tcp, tcp)
    ang = max(abs(pose.tool_pitch - pitch), abs(_wrap(pose.tool_yaw - yaw)))
    return pos, ang


def bench_scalar(label: str, poses: Poses, params: ArmParams, use_seed: bool, repeats: int) -> ScalarResult:
    """Time `solve_ik_pitched` over all poses (median of `repeats`), then check every answer."""
    tcps = [tuple(row) for row in poses.tcp.tolist()]
    pitches = poses.pitch.tolist()
    yaws = poses.yaw.tolist()
    seeds = [tuple(row) for row in poses.q.tolist()] if use_seed else [None] * len(tcps)
    jobs = list(zip(tcps, pitches, yaws, seeds, strict=True))
    solve = solve_ik_pitched

    if use_seed:

        def run() -> None:
            for tcp, tp, ty, s in jobs:
                solve(tcp, tp, ty, params, s)
    else:

        def run() -> None:
            for tcp, tp, ty, _ in jobs:
                solve(tcp, tp, ty, params)

    run()  # warm-up
    times = timeit.repeat(run, number=1, repeat=repeats)
    us = statistics.median(times) / len(jobs) * 1e6
    best_us = min(times) / len(jobs) * 1e6
    cpu_times = timeit.repeat(run, number=1, repeat=repeats, timer=time.process_time)
    cpu_us = statistics.median(cpu_times) / len(jobs) * 1e6

    n_ok = n_true = 0
    max_pos = max_ang = 0.0
    for i, (tcp, tp, ty, s) in enumerate(jobs):
        res = solve(tcp, tp, ty, params, s)
        if not res.ok or res.q is None or not within_limits(res.q, params):
            continue
        pos, ang = pose_error(res.q, tcp, tp, ty, params)
        max_pos, max_ang = max(max_pos, pos), max(max_ang, ang)
        if pos <= POS_TOL and ang <= POS_TOL:
            n_ok += 1
        if max(abs(_wrap(a - b)) for a, b in zip(res.q, poses.q[i], strict=True)) <= 1e-9:
            n_true += 1
    return ScalarResult(label, us, best_us, cpu_us, n_ok, len(jobs), max_pos, max_ang, n_true)


def bench_batch(
    tcp: np.ndarray, pitch: np.ndarray, yaw: np.ndarray, params: ArmParams, repeats: int
) -> float:
    """Best-of-`repeats` solves per second of one `solve_ik_batch` call on all rows."""
    solve_ik_batch(tcp[:1000], pitch[:1000], yaw[:1000], params)  # warm-up
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        solve_ik_batch(tcp, pitch, yaw, params)
        best = min(best, time.perf_counter() - t0)
    return tcp.shape[0] / best


def check_batch(poses: Poses, params: ArmParams) -> tuple[int, float, float, float]:
    """Check the batch answers on the poses.

    Returns:
        (rows Ok, within limits and on the pose; max position error, m; max angle error, rad;
        max |q_batch - q_scalar| over a sample of rows, rad, inf if the two disagree on Ok).
    """
    res = solve_ik_batch(poses.tcp, poses.pitch, poses.yaw, params)
    ok = res.status == 0
    q = np.where(ok[:, None], res.q, 0.0)
    fk = forward_kinematics_batch(q, params)
    pos = np.linalg.norm(fk.tcp - poses.tcp, axis=1)
    ang = np.maximum(
        np.abs(fk.tool_pitch - poses.pitch),
        np.abs(np.remainder(fk.tool_yaw - poses.yaw + np.pi, 2 * np.pi) - np.pi),
    )
    lim = np.array([within_limits(row, params) for row in q])
    good = ok & lim & (pos <= POS_TOL) & (ang <= POS_TOL)
    step = max(1, len(q) // 1000)  # agreement with the scalar API on a sample of rows
    diff = 0.0
    for i in range(0, len(q), step):
        sr = solve_ik_pitched(
            tuple(poses.tcp[i].tolist()), float(poses.pitch[i]), float(poses.yaw[i]), params
        )
        if sr.ok and ok[i]:
            diff = max(diff, float(np.max(np.abs(np.array(sr.q) - res.q[i]))))
        elif sr.ok != bool(ok[i]):
            diff = math.inf
    return int(good.sum()), float(pos[ok].max(initial=0.0)), float(ang[ok].max(initial=0.0)), diff


def _baseline_problem(params: ArmParams) -> tuple[Callable[..., np.ndarray], Callable[..., np.ndarray]]:
    """Residual and analytic Jacobian of the spec's FK for `least_squares` (5 residuals, 5 joints)."""
    l1, l2, d, h, pm = (
        params.upper_arm_length,
        params.beam_length,
        params.tool_drop,
        params.base_height,
        params.pad_mount_yaw,
    )

    def residual(q: np.ndarray, target: np.ndarray) -> np.ndarray:
        q0, q1, q2, q3, q4 = q
        r = l1 * math.sin(q1) + l2 * math.cos(q2)
        ty = q0 + pm + q4
        sp = math.sin(q3)
        return np.array(
            [
                r * math.cos(q0) - d * math.cos(ty) * sp - target[0],
                r * math.sin(q0) - d * math.sin(ty) * sp - target[1],
                h + l1 * math.cos(q1) - l2 * math.sin(q2) - d * math.cos(q3) - target[2],
                q3 - target[3],
                math.remainder(ty - target[4], 2.0 * math.pi),
            ]
        )

    def jacobian(q: np.ndarray, target: np.ndarray) -> np.ndarray:
        q0, q1, q2, q3, q4 = q
        r = l1 * math.sin(q1) + l2 * math.cos(q2)
        ty = q0 + pm + q4
        c0, s0, cy, sy = math.cos(q0), math.sin(q0), math.cos(ty), math.sin(ty)
        st, ct = math.sin(q3), math.cos(q3)
        a1, b2 = l1 * math.cos(q1), -l2 * math.sin(q2)
        return np.array(
            [
                [-r * s0 + d * sy * st, a1 * c0, b2 * c0, -d * cy * ct, d * sy * st],
                [r * c0 - d * cy * st, a1 * s0, b2 * s0, -d * sy * ct, -d * cy * st],
                [0.0, -l1 * math.sin(q1), -l2 * math.cos(q2), d * st, 0.0],
                [0.0, 0.0, 0.0, 1.0, 0.0],
                [1.0, 0.0, 0.0, 0.0, 1.0],
            ]
        )

    return residual, jacobian


def bench_baseline(poses: Poses, n: int, params: ArmParams) -> BaselineResult:
    """Numerical IK (`least_squares`, trf, bounds = per-joint limits) from the rest posture on `n` poses."""
    residual, jacobian = _baseline_problem(params)
    bounds = (np.array(params.joint_lower), np.array(params.joint_upper))
    x0 = np.array(REST_POSTURE)
    targets = np.column_stack((poses.tcp, poses.pitch, poses.yaw))[:n]
    answers: list[np.ndarray] = []
    per_solve: list[float] = []
    nfev = 0
    for target in targets:
        t0 = time.perf_counter()
        sol = least_squares(
            residual,
            x0,
            jac=jacobian,
            bounds=bounds,
            method="trf",
            args=(target,),
            xtol=1e-12,
            ftol=1e-12,
            gtol=1e-12,
        )
        per_solve.append(time.perf_counter() - t0)
        answers.append(sol.x)
        nfev += sol.nfev
    n_ok = n_conv = n_lim = 0
    for q, target in zip(answers, targets, strict=True):
        pos, ang = pose_error(q, target[:3], target[3], target[4], params)
        converged = pos < BASELINE_POS_TOL and ang < BASELINE_POS_TOL
        inside = within_limits(q, params)
        n_conv += not converged
        n_lim += converged and not inside
        n_ok += converged and inside
    return BaselineResult(
        sum(per_solve) / n * 1e6, statistics.median(per_solve) * 1e6, n_ok, n_conv, n_lim, n, nfev / n
    )


def count_solved(poses: Poses, n: int, params: ArmParams, tol: float) -> int:
    """How many of the first `n` poses our scalar IK solves by the baseline's criterion (`tol` m and rad)."""
    count = 0
    for i in range(n):
        tcp, pitch, yaw = tuple(poses.tcp[i].tolist()), float(poses.pitch[i]), float(poses.yaw[i])
        res = solve_ik_pitched(tcp, pitch, yaw, params)
        if res.ok and res.q is not None and within_limits(res.q, params):
            pos, ang = pose_error(res.q, tcp, pitch, yaw, params)
            count += pos < tol and ang < tol
    return count


def _load() -> str:
    """The 1/5/15-minute load averages (other processes skew the timings), or 'n/a'."""
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def _pct(k: int, n: int) -> str:
    return f"{100.0 * k / n:.2f}% ({k}/{n})"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def print_table(rows: list[tuple[str, str, str, str, str, str]]) -> None:
    """Print `rows` under `TITLE` and `HEADER` as a Markdown table."""
    widths = [max(len(str(r[i])) for r in [HEADER, *rows]) for i in range(len(HEADER))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    print(TITLE)
    print(line(HEADER))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 1 if any of our answers is wrong, else 0 (targets are only reported)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run with small counts (a few seconds)")
    ap.add_argument("--seed", type=int, default=None, help="RNG seed for the poses")
    ap.add_argument("--baseline-poses", type=int, default=None, help="poses for the scipy baseline")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    seed = cfg.seed if args.seed is None else args.seed
    n_base = min(cfg.n_poses, cfg.n_baseline if args.baseline_poses is None else args.baseline_poses)
    t_start = time.perf_counter()

    params = ArmParams()
    wide = ArmParams(alpha_max=2.7, beta_max=2.7)
    coretype = os.environ.get("OPENBLAS_CORETYPE", "")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"{platform.machine()} x{os.cpu_count()}, OPENBLAS_CORETYPE={coretype!r}"
    )
    print(f"load average at start: {_load()}")
    print(
        f"mode={'quick' if args.quick else 'full'} poses={cfg.n_poses} seed={seed} baseline_poses={n_base} "
        f"batch_big={cfg.n_big}"
    )
    poses = sample_poses(cfg.n_poses, params, seed)

    scalar = [
        bench_scalar("scalar IK, no seed", poses, params, False, cfg.scalar_repeats),
        bench_scalar("scalar IK, seed = true q", poses, params, True, cfg.scalar_repeats),
        bench_scalar("scalar IK, both branches (a=b=2.7), no seed", poses, wide, False, cfg.scalar_repeats),
        bench_scalar("scalar IK, both branches (a=b=2.7), seed", poses, wide, True, cfg.scalar_repeats),
    ]
    batch_small = bench_batch(poses.tcp, poses.pitch, poses.yaw, params, cfg.batch_repeats)
    reps = -(-cfg.n_big // cfg.n_poses)
    big_tcp = np.tile(poses.tcp, (reps, 1))[: cfg.n_big]
    big_pitch = np.tile(poses.pitch, reps)[: cfg.n_big]
    big_yaw = np.tile(poses.yaw, reps)[: cfg.n_big]
    batch_big = bench_batch(big_tcp, big_pitch, big_yaw, params, cfg.batch_repeats)
    del big_tcp, big_pitch, big_yaw
    batch_ok, batch_pos, batch_ang, batch_vs_scalar = check_batch(poses, params)
    base = bench_baseline(poses, n_base, params)

    rows: list[tuple[str, str, str, str, str, str]] = []
    for s in scalar:
        rows.append(
            (
                f"{s.label} [us/solve]",
                f"{s.us_per_solve:.2f}",
                f"{base.us_per_solve:.1f}",
                f"{base.us_per_solve / s.us_per_solve:.0f}x faster",
                f"<= {SCALAR_TARGET_US:g} us",
                _verdict(s.us_per_solve <= SCALAR_TARGET_US),
            )
        )
    base_rate = 1e6 / base.us_per_solve
    for label, rate in (
        (f"batch IK, {cfg.n_poses:,} poses [solves/s]", batch_small),
        (f"batch IK, {cfg.n_big:,} poses [solves/s]", batch_big),
    ):
        rows.append(
            (
                label,
                f"{rate / 1e6:.2f} M",
                f"{base_rate / 1e3:.2f} k",
                f"{rate / base_rate:.0f}x",
                f">= {BATCH_TARGET_PER_S / 1e6:g} M/s",
                _verdict(rate >= BATCH_TARGET_PER_S),
            )
        )
    ours_subset = count_solved(poses, n_base, params, BASELINE_POS_TOL)
    rows.append(
        (
            f"success, first {n_base} poses (< 1e-6 m, in limits)",
            _pct(ours_subset, n_base),
            _pct(base.n_ok, base.n),
            "-",
            "-",
            "-",
        )
    )
    for s in scalar:
        rows.append(
            (
                f"success, {s.label} (< 1e-9 m/rad)",
                _pct(s.n_ok, s.n),
                "-",
                "-",
                "100%",
                _verdict(s.n_ok == s.n),
            )
        )
    rows.append(
        (
            "success, batch IK (< 1e-9 m/rad)",
            _pct(batch_ok, cfg.n_poses),
            "-",
            "-",
            "100%",
            _verdict(batch_ok == cfg.n_poses),
        )
    )
    print()
    print_table(rows)
    print()
    for s in scalar:
        print(
            f"  {s.label}: wall median {s.us_per_solve:.2f} us, best {s.best_us:.2f} us, "
            f"CPU-time median {s.cpu_us:.2f} us; "
            f"max FK error {s.max_pos_err:.2e} m / {s.max_ang_err:.2e} rad; "
            f"returned the sampled joints in {_pct(s.n_true_q, s.n)}"
        )
    print(
        f"  batch IK: max FK error {batch_pos:.2e} m / {batch_ang:.2e} rad; max |q_batch - q_scalar| "
        f"{batch_vs_scalar:.2e} rad (sampled rows)"
    )
    print(
        f"  baseline (scipy least_squares trf, analytic Jacobian, tol 1e-12, from rest): mean "
        f"{base.us_per_solve:.1f} us, median {base.median_us:.1f} us, "
        f"{base.mean_nfev:.1f} evaluations/solve; "
        f"failures: {base.n_not_converged} not converged, {base.n_limit_violation} converged outside the "
        f"coupled limits"
    )
    print(
        "  table: scalar = wall-clock median (Python loop over prepared arguments included), batch = best "
        "run; the baseline's solves/s is 1 / its mean time per solve"
    )
    print(f"  total wall time {time.perf_counter() - t_start:.1f} s; load average at end: {_load()}")

    correct = all(s.n_ok == s.n for s in scalar) and batch_ok == cfg.n_poses and batch_vs_scalar <= 1e-9
    if not correct:
        print(
            "CORRECTNESS FAILURE: some of our IK answers were not Ok, within limits and on the pose (above)"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
