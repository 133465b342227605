"""Vectorised FK and IK over arrays of poses, with the same answers as the scalar API.

For workspace maps, path checks and benchmarks. Each function mirrors its scalar twin step by step
(see ik.py for the why).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from salamander_control.kinematics.feasible import project_to_feasible
from salamander_control.kinematics.ik import LIMIT_TOL, REACH_TOL
from salamander_control.kinematics.model import ArmParams
from salamander_control.kinematics.status import IkStatus

_TWO_PI = 2.0 * np.pi
_DEFAULT = ArmParams()
_HALF_PI = 0.5 * np.pi
BRANCH_UP, BRANCH_DOWN, BRANCH_NONE = 0, 1, -1
CHUNK = 65536
"""Rows per chunk: large enough to amortise Python overhead, small enough for the cache."""


class BatchFk(NamedTuple):
    """TCP positions (N, 3), tool pitches (N,) and tool yaws (N,) wrapped into [-pi, pi]."""

    tcp: np.ndarray
    tool_pitch: np.ndarray
    tool_yaw: np.ndarray


class BatchIk(NamedTuple):
    """Joints (N, 5) with NaN rows where not Ok, statuses (N,) uint8, branches (N,) int8 (0 up, 1 down)."""

    q: np.ndarray
    status: np.ndarray
    branch: np.ndarray


def _array(value: Any, shape_tail: tuple[int, ...], n: int | None, name: str) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {type(value).__name__}") from exc
    if shape_tail and a.shape == shape_tail and n is not None:
        a = np.broadcast_to(a, (n, *shape_tail))
    elif not shape_tail and a.ndim == 0 and n is not None:
        a = np.full(n, float(a))
    if a.ndim != 1 + len(shape_tail) or a.shape[1:] != shape_tail or (n is not None and a.shape[0] != n):
        want = f"({n if n is not None else 'N'}{''.join(', ' + str(t) for t in shape_tail)})"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise ValueError(f"{name} must be finite; row {row} is {a[row]}")
    return a


def forward_kinematics_batch(q: Any, params: ArmParams = _DEFAULT) -> BatchFk:
    """FK of an (N, 5) array of joint vectors.

    Raises:
        ValueError: not (N, 5), or NaN/inf anywhere.
    """
    q = _array(q, (5,), None, "q")
    p = params
    q0, q1, q2, q3, q4 = q.T
    r = p.upper_arm_length * np.sin(q1) + p.beam_length * np.cos(q2)
    z_w = p.base_height + p.upper_arm_length * np.cos(q1) - p.beam_length * np.sin(q2)
    tool_yaw = q0 + p.pad_mount_yaw + q4
    s_p = np.sin(q3)
    tcp = np.empty((q.shape[0], 3))
    tcp[:, 0] = r * np.cos(q0) - p.tool_drop * np.cos(tool_yaw) * s_p
    tcp[:, 1] = r * np.sin(q0) - p.tool_drop * np.sin(tool_yaw) * s_p
    tcp[:, 2] = z_w - p.tool_drop * np.cos(q3)
    return BatchFk(tcp, q3.copy(), _remainder(tool_yaw))


def _remainder(a: np.ndarray) -> np.ndarray:
    """IEEE remainder by 2*pi, like math.remainder (np.remainder is a floor modulo)."""
    return a - _TWO_PI * np.round(a / _TWO_PI)


def _pick_angle(a: np.ndarray, lo: float, hi: float, ref: np.ndarray) -> np.ndarray:
    """Vector `ik._pick_angle`: NaN where no representation fits."""
    cands = np.stack((a, a - _TWO_PI, a + _TWO_PI))
    valid = (cands >= lo - LIMIT_TOL) & (cands <= hi + LIMIT_TOL)
    snapped = np.clip(cands, lo, hi)
    dist = np.where(valid, np.abs(snapped - ref), np.inf)
    idx = np.argmin(dist, axis=0)
    out = np.take_along_axis(snapped, idx[None, :], axis=0)[0]
    out[~valid.any(axis=0)] = np.nan
    return out


def _pick_fast(a: np.ndarray, lo: float, hi: float, ref: np.ndarray) -> np.ndarray:
    """`_pick_angle` with the scalar's fast path; the full search only on rows outside it."""
    d = a - ref
    slow = ~((a >= lo) & (a <= hi) & (d >= -np.pi) & (d <= np.pi))
    if not slow.any():
        return a
    out = a.copy()
    idx = np.flatnonzero(slow)
    out[idx] = _pick_angle(a[idx], lo, hi, ref[idx])
    return out


def _solve_chunk(  # noqa: C901 - one pass of the scalar algorithm, kept in its order
    tcp: np.ndarray, tp: np.ndarray, ty: np.ndarray, p: ArmParams, s: np.ndarray | None, branch: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = tcp.shape[0]
    l1, l2, d = p.upper_arm_length, p.beam_length, p.tool_drop
    sp = np.sin(tp)
    wx = tcp[:, 0] + d * np.cos(ty) * sp
    wy = tcp[:, 1] + d * np.sin(ty) * sp
    zr = tcp[:, 2] + d * np.cos(tp) - p.base_height
    rho = np.hypot(wx, wy)
    c = (rho * rho + zr * zr - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    reach_fail = np.abs(c) - 1.0 > REACH_TOL
    c = np.clip(c, -1.0, 1.0)
    cd = np.sqrt((1.0 - c) * (1.0 + c))

    zeros = np.zeros(n)
    ref0, ref4 = (zeros, zeros) if s is None else (s[:, 0], s[:, 4])
    if branch is not None:
        pref_up = np.full(n, branch == "up")
    elif s is not None:
        pref_up = np.cos(s[:, 1] - s[:, 2]) >= 0.0
    else:
        pref_up = np.ones(n, dtype=bool)
    yaw_direct = np.where(rho > 0.0, np.arctan2(wy, wx), ref0)
    branches = [b for b in (BRANCH_UP, BRANCH_DOWN) if branch is None or b == (branch == "down")]
    down_infeasible = max(p.alpha_max, p.beta_max) < _HALF_PI - 1e-6
    if down_infeasible and branch is None and pref_up.all():  # as the scalar: DOWN cannot pass
        branches = [BRANCH_UP]

    # Wrist pitch: branch- and representation-independent.
    q3 = np.clip(tp, p.wrist_pitch_min, p.wrist_pitch_max)
    q3_fail = (tp < p.wrist_pitch_min - LIMIT_TOL) | (tp > p.wrist_pitch_max + LIMIT_TOL)

    best_cost = np.full(n, np.inf)
    best_q = np.full((n, 5), np.nan)
    best_branch = np.full(n, BRANCH_NONE, dtype=np.int8)
    failure = np.full(n, IkStatus.OUT_OF_REACH, dtype=np.uint8)

    def consider(rows: np.ndarray | None, yaw: np.ndarray, r: np.ndarray, direct: bool) -> None:
        # rows: None = all rows, else an index array; everything below is on that subset.
        def sub(a: np.ndarray | None) -> np.ndarray | None:
            return a if rows is None or a is None else a[rows]

        zr_, c_, cd_, ty_ = sub(zr), sub(c), sub(cd), sub(ty)
        ref0_, ref4_, pref_, rf_ = sub(ref0), sub(ref4), sub(pref_up), sub(reach_fail)
        s_ = sub(s)
        q0 = _pick_fast(yaw, p.yaw_min, p.yaw_max, ref0_)
        yaw_fail = np.isnan(q0)
        q0z = np.where(yaw_fail, 0.0, q0) if yaw_fail.any() else q0
        q4 = _pick_fast(_remainder(ty_ - p.pad_mount_yaw - q0z), p.wrist_yaw_min, p.wrist_yaw_max, ref4_)
        wrist_fail = sub(q3_fail) | np.isnan(q4)
        base = _HALF_PI - np.arctan2(zr_, r)
        for b in branches:
            cdb = cd_ if b == BRANCH_UP else -cd_
            q1 = _remainder(base + np.arctan2(-l2 * cdb, l1 + l2 * c_))
            q2 = _remainder(q1 - np.arctan2(c_, cdb))
            q1_fail = (q1 < p.q1_min - LIMIT_TOL) | (q1 > p.q1_max + LIMIT_TOL)
            q2_fail = (q2 < p.q2_min - LIMIT_TOL) | (q2 > p.q2_max + LIMIT_TOL)
            q1 = np.clip(q1, p.q1_min, p.q1_max)
            q2 = np.clip(q2, p.q2_min, p.q2_max)
            over = np.maximum(q2 - q1 - p.alpha_max, q1 - q2 - p.beta_max)
            status = np.where(
                yaw_fail,
                np.uint8(IkStatus.YAW_OUT_OF_RANGE),
                np.where(
                    q1_fail,
                    np.uint8(IkStatus.Q1_OUT_OF_RANGE),
                    np.where(
                        q2_fail,
                        np.uint8(IkStatus.Q2_OUT_OF_RANGE),
                        np.where(
                            wrist_fail,
                            np.uint8(IkStatus.WRIST_OUT_OF_RANGE),
                            np.where(over > LIMIT_TOL, np.uint8(IkStatus.COUPLED_LIMIT), np.uint8(0)),
                        ),
                    ),
                ),
            )
            for i in np.flatnonzero((status == 0) & (over > 0.0)):  # rare: within tolerance, snap exactly
                proj = project_to_feasible(q1[i], q2[i], p)
                q1[i], q2[i] = proj.q1, proj.q2
            is_pref = pref_ if b == BRANCH_UP else ~pref_
            bad = status != 0
            if direct:
                m = is_pref & bad
                if rows is None:
                    np.copyto(failure, status, where=m)
                else:
                    failure[rows[m]] = status[m]
            ok = ~bad & ~rf_
            cols = (q0, q1, q2, sub(q3), q4)
            if s_ is not None:
                cost = (q0 - s_[:, 0]) ** 2 + (q1 - s_[:, 1]) ** 2 + (q2 - s_[:, 2]) ** 2
                cost += (q4 - s_[:, 4]) ** 2
            else:
                cost = np.where(is_pref, 0.0, 1.0)
            take = ok & (cost < sub(best_cost))
            if rows is None:
                np.copyto(best_cost, cost, where=take)
                for j, col in enumerate(cols):
                    np.copyto(best_q[:, j], col, where=take)
                np.copyto(best_branch, np.int8(b), where=take)
            else:
                tr = np.flatnonzero(take) if rows is None else rows[take]
                best_cost[tr] = cost[take]
                best_q[tr] = np.stack(cols, axis=1)[take]
                best_branch[tr] = b

    consider(None, yaw_direct, rho, direct=True)
    # The flipped representation (r = -rho) only on rows whose seed reaches behind the base axis or
    # that found nothing else; out-of-reach rows cannot solve either way.
    seed_behind = np.zeros(n, dtype=bool)
    if s is not None:
        seed_behind = l1 * np.sin(s[:, 1]) + l2 * np.cos(s[:, 2]) < 0.0
    flip = np.flatnonzero(seed_behind | (np.isinf(best_cost) & (rho > 0.0) & ~reach_fail))
    if flip.size:
        consider(flip, yaw_direct[flip] + np.pi, -rho[flip], direct=False)
    solved = np.isfinite(best_cost)
    failure[reach_fail] = IkStatus.OUT_OF_REACH
    status = np.where(solved, np.uint8(IkStatus.OK), failure)
    best_branch[~solved] = np.where(pref_up[~solved], BRANCH_UP, BRANCH_DOWN)
    return best_q, status.astype(np.uint8), best_branch


def solve_ik_batch(
    tcp: Any,
    tool_pitch: Any,
    tool_yaw: Any,
    params: ArmParams = _DEFAULT,
    seeds: Any = None,
    branch: str | None = None,
) -> BatchIk:
    """Vector `solve_ik_pitched`: (N, 3) TCPs with scalar or (N,) pitches and yaws.

    Rows are processed in chunks of `CHUNK` so the temporaries stay in cache.

    Args:
        tcp: (N, 3) TCP positions, m.
        tool_pitch: scalar or (N,), rad.
        tool_yaw: scalar or (N,), rad.
        params: the arm model snapshot.
        seeds: None, one (5,) seed for all rows, or (N, 5).
        branch: None, "up" or "down".

    Returns:
        `BatchIk`: joints with NaN rows where not Ok, statuses, branches.

    Raises:
        ValueError: wrong shapes, NaN/inf, or an unknown branch; the message names the argument.
    """
    tcp = _array(tcp, (3,), None, "tcp")
    n = tcp.shape[0]
    tp = _array(tool_pitch, (), n, "tool_pitch")
    ty = _array(tool_yaw, (), n, "tool_yaw")
    s = None if seeds is None else _array(seeds, (5,), n, "seeds")
    if branch not in (None, "up", "down"):
        raise ValueError(f"branch must be 'up', 'down' or None, got {branch!r}")
    step = CHUNK
    if n <= step:
        return BatchIk(*_solve_chunk(tcp, tp, ty, params, s, branch))
    q = np.empty((n, 5))
    status = np.empty(n, dtype=np.uint8)
    br = np.empty(n, dtype=np.int8)
    for a in range(0, n, step):
        e = min(a + step, n)
        seeds_chunk = None if s is None else s[a:e]
        q[a:e], status[a:e], br[a:e] = _solve_chunk(tcp[a:e], tp[a:e], ty[a:e], params, seeds_chunk, branch)
    return BatchIk(q, status, br)
