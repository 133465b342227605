"""Feasibility of a Cartesian path: every sample of it must solve, and the joints must not jump.

A Cartesian goal is only as good as the worst point on its way. Checking the two ends misses the
housing (the coupled limit) bulging into the middle of a line, so the Cartesian motion node checks the
whole path before the arm moves and refuses the goal with the IK status of the first bad sample.

A pose here is ``(x, y, z, tool_pitch, tool_yaw)``: metres in base_link and radians. Samples are at
most `PathSampling.spacing` apart in position and `angle_spacing` apart in attitude, and there are at
least `min_samples` of them. Besides solving, consecutive solutions must be close (`max_joint_step`
per sample): an IK that is Ok everywhere can still demand a jump, e.g. the base yaw wrapping from +pi
to -pi behind the arm, or the base spinning half a turn where the line passes over the base axis.
Those jumps are reported as the joint range that forces them (yaw/wrist out of range). Where a joint
(or the coupled pair) is near a limit, each interval is checked between its samples too (`_between`):
a joint bows away from its chord between two samples, and on a path along a stop it can leave its range
there by more than the per-cycle IK may snap back (`SNAP_TOL`).

Pure numpy + the kinematics library, no rclpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from salamander_control.kinematics import (
    ALPHA_BETA_RANGE,
    ArmParams,
    IkStatus,
    branch_of,
    solve_ik_batch,
    solve_ik_pitched,
)

Pose = tuple[float, float, float, float, float]
"""(x, y, z, tool_pitch, tool_yaw) in base_link: m, m, m, rad, rad."""

SNAP_TOL = 5e-5
"""rad. How far outside a limit the per-cycle IK may find a sample of a checked path and still snap it
back onto the limit (moving the TCP by at most ~SNAP_TOL * 0.75 m, about 0.04 mm).

The check solves samples at most 2 mm apart; between two feasible samples a path that runs along a
limit can leave it by a few 1e-6 rad (measured 5e-6 on a line starting on the coupled limit), and
Ruckig's samples are exact only to ~1e-8 m. Without the snap such a goal would pass its check and then
stop half way. Farther out than this, the check between samples (`_between`) refuses the path."""

NEAR_LIMIT = 0.01
"""rad: an interval with a joint, or alpha or beta, this close to its limit at either end is also checked
between its samples (`_between`). A joint bows from its chord over a 2 mm interval by about
q'' * (2 mm)^2 / 8: 1.2e-4 rad on a line 57 mm from the base axis with the shoulder on its stop
(docs/design/cartesian_plan.md, "Between the samples"), 5e-3 rad at 10 mm, where `max_joint_step`
already refuses the pass."""

BETWEEN = 16
"""Sub-intervals of an interval checked between its samples: the bow left between them is 1/256 of it."""


@dataclass(frozen=True)
class PathSampling:
    """How densely a path is checked and how far joints may move between two samples.

    Attributes:
        spacing: largest TCP distance between consecutive samples, m.
        angle_spacing: largest tool pitch/yaw change between consecutive samples, rad.
        min_samples: fewest samples of any path (short lines still get a real check).
        max_joint_step: largest change of any joint between consecutive samples, rad. At 2 mm spacing
            0.2 rad flags only passes within about a centimetre of the base axis, where the base would
            have to spin faster than any motor can.
    """

    spacing: float = 0.002
    angle_spacing: float = 0.01
    min_samples: int = 50
    max_joint_step: float = 0.2

    def __post_init__(self) -> None:
        """Refuse spacings and steps that are not positive finite numbers, and fewer than 2 samples."""
        for name in ("spacing", "angle_spacing", "max_joint_step"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"PathSampling.{name} must be a positive finite number, got {value!r}")
        if (
            isinstance(self.min_samples, bool)
            or not isinstance(self.min_samples, int)
            or self.min_samples < 2
        ):
            raise ValueError(f"PathSampling.min_samples must be an integer >= 2, got {self.min_samples!r}")

    def steps_for(self, delta: np.ndarray) -> int:
        """How many sample intervals a pose change `delta` (5,) spans; at least 1."""
        dist = math.sqrt(float(delta[0] ** 2 + delta[1] ** 2 + delta[2] ** 2))
        ang = max(abs(float(delta[3])), abs(float(delta[4])))
        return max(1, math.ceil(dist / self.spacing - 1e-9), math.ceil(ang / self.angle_spacing - 1e-9))


class PathCheck(NamedTuple):
    """Outcome of a path check.

    Attributes:
        status: Ok, or the IK status of the first infeasible point.
        joints: (N, 5) solutions of every sample when Ok, else None.
        index: index of the first infeasible sample, or, when the first infeasible point lies between
            two samples (`_between`), of the second of them; -1 when Ok.
        distance: TCP path length from the start to that point (the whole length when Ok), m.
        length: TCP path length of the whole path, m.
        pose: the first infeasible point, None when Ok.
        message: one sentence for the action result and the logs.
    """

    status: IkStatus
    joints: np.ndarray | None
    index: int
    distance: float
    length: float
    pose: Pose | None
    message: str

    @property
    def ok(self) -> bool:
        """Whether every sample solved without a jump."""
        return self.status is IkStatus.OK


def as_pose(value: Any) -> Pose:
    """Five finite floats, or ValueError naming what is wrong."""
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"pose must be (x, y, z, tool_pitch, tool_yaw), got {value!r}") from exc
    if len(out) != 5 or not all(math.isfinite(v) for v in out):
        raise ValueError(f"pose must be five finite numbers (x, y, z, tool_pitch, tool_yaw), got {value!r}")
    return out  # type: ignore[return-value]


@lru_cache(maxsize=32)
def relaxed(params: ArmParams, tol: float) -> ArmParams:
    """`params` with every joint and coupled limit widened by `tol` rad (alpha/beta capped at their range).

    For estimates that must not stop at a limit touched by rounding (joint rates along a path that runs
    on a limit) and for snapping a per-cycle solution back onto a limit it missed by a hair.
    """
    hi = ALPHA_BETA_RANGE[1]
    return params.with_changes(
        yaw_min=params.yaw_min - tol,
        yaw_max=params.yaw_max + tol,
        q1_min=params.q1_min - tol,
        q1_max=params.q1_max + tol,
        q2_min=params.q2_min - tol,
        q2_max=params.q2_max + tol,
        wrist_pitch_min=params.wrist_pitch_min - tol,
        wrist_pitch_max=params.wrist_pitch_max + tol,
        wrist_yaw_min=params.wrist_yaw_min - tol,
        wrist_yaw_max=params.wrist_yaw_max + tol,
        alpha_max=min(params.alpha_max + tol, hi),
        beta_max=min(params.beta_max + tol, hi),
    )


def on_branch(joints: Any) -> str:
    """The elbow branch ("up" or "down") every IK along a Cartesian path from `joints` is solved on.

    A straight path cannot change branch: the branches meet only at the stretched or folded posture
    (|q1 - q2| = pi/2), and near it, where the two solutions lie a few hundredths of a radian apart, the
    nearest of both branches would flip between them from one cycle to the next (7.1 times the planned
    joint speed, seen in `test_motion.py`'s folded corner), while a check that solved on either branch
    would pass a path that the arm's own branch leaves (docs/design/cartesian_plan.md, "Between the
    samples"). So the check, the joint-rate fit and the per-cycle IK all solve on this one.
    """
    return branch_of(float(joints[1]), float(joints[2])).value


def line_poses(start: Any, goal: Any, sampling: PathSampling) -> np.ndarray:
    """Samples of the straight 5-D segment from `start` to `goal`, both ends included, (N, 5).

    The tool yaw goes the short way round: the goal's yaw is taken modulo a turn nearest the start's.
    """
    a = np.asarray(as_pose(start))
    b = np.asarray(as_pose(goal))
    b[4] = a[4] + math.remainder(b[4] - a[4], 2.0 * math.pi)
    intervals = max(sampling.min_samples - 1, sampling.steps_for(b - a))
    s = np.linspace(0.0, 1.0, intervals + 1)[:, None]
    out = a + s * (b - a)
    out[-1] = b  # exactly the goal, not a rounding of it
    return out


def check_line(start: Any, goal: Any, params: ArmParams, seed: Any, sampling: PathSampling) -> PathCheck:
    """Check the straight line from `start` to `goal`; `seed` is the arm's joints at `start`."""
    return check_poses(line_poses(start, goal, sampling), params, seed, sampling, "along the line")


def check_poses(
    poses: np.ndarray, params: ArmParams, seed: Any, sampling: PathSampling, where: str = "along the path"
) -> PathCheck:
    """Check consecutive poses (N, 5): each must solve and none may jump from its predecessor.

    Every sample is solved on the seed's elbow branch, as the per-cycle IK solves it (`on_branch`): a
    straight path cannot change branch without a jump. One batch IK, seeded with `seed`, solves every
    sample; a sequential scalar IK (each sample seeded with the previous answer, exactly as the per-cycle
    IK runs) takes over only from a sample where the batch answer jumps, since a single global seed can
    pick another yaw representation than the chained one would.

    Args:
        poses: (N, 5) samples in path order.
        params: the arm model snapshot to check against.
        seed: five joints the path starts from (the current joints).
        sampling: spacing (for the step bound) and `max_joint_step`.
        where: how the message names the path, e.g. "along the line".
    """
    poses = np.asarray(poses, dtype=float)
    seed_q = np.asarray([float(v) for v in seed])
    lengths = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(poses[:, :3], axis=0), axis=1))))
    branch = on_branch(seed_q)
    ik = solve_ik_batch(poses[:, :3], poses[:, 3], poses[:, 4], params, seeds=seed_q, branch=branch)
    q = ik.q.copy()
    bad = np.flatnonzero(ik.status != IkStatus.OK)
    first_bad = int(bad[0]) if bad.size else len(poses)
    status = IkStatus(int(ik.status[first_bad])) if bad.size else IkStatus.OK
    jump = _first_jump(seed_q, q[:first_bad], poses, sampling)
    if jump is not None:
        # Re-solve sequentially from the jump on; it reports the true first failure (or none).
        first_bad, status = _chain(poses, q, jump, seed_q, params, sampling, branch)
    distance = float(lengths[min(first_bad, len(poses) - 1)])
    pose_at = poses[min(first_bad, len(poses) - 1)]
    inside = _between(poses[: first_bad + 1], q[: first_bad + 1], params, branch)
    if inside is not None:  # the path leaves a range between two samples before any sample fails
        first_bad, fraction, status, pose_at = inside
        distance = float(lengths[first_bad - 1] + fraction * (lengths[first_bad] - lengths[first_bad - 1]))
    if status is IkStatus.OK:
        return PathCheck(IkStatus.OK, q, -1, float(lengths[-1]), float(lengths[-1]), None, "path feasible")
    pose = tuple(float(v) for v in pose_at)
    return PathCheck(
        status,
        None,
        first_bad,
        distance,
        float(lengths[-1]),
        pose,  # type: ignore[arg-type]
        failure_message(status, where, first_bad, distance, float(lengths[-1]), pose, poses),
    )


def _limit_margin(q: np.ndarray, params: ArmParams) -> np.ndarray:
    """(N,) the smallest distance of each row of joints (N, 5) to any of its limits, rad (NaN rows: NaN)."""
    per_joint = np.minimum(q - np.asarray(params.joint_lower), np.asarray(params.joint_upper) - q).min(axis=1)
    alpha = params.alpha_max - (q[:, 2] - q[:, 1])
    beta = params.beta_max - (q[:, 1] - q[:, 2])
    return np.minimum(per_joint, np.minimum(alpha, beta))


def _between(
    poses: np.ndarray, q: np.ndarray, params: ArmParams, branch: str
) -> tuple[int, float, IkStatus, np.ndarray] | None:
    """The first point between two solved samples near a limit that leaves it by more than `SNAP_TOL`.

    Only intervals with both ends solved and either end within `NEAR_LIMIT` of a limit are looked into,
    each at `BETWEEN` sub-intervals, every point seeded with its interval's first solution, on `branch`.

    Returns:
        None, or (index of the interval's second sample, fraction along the interval, the IK status
        there, the pose there).
    """
    if len(q) < 2:
        return None
    margin = _limit_margin(q, params)
    near = margin < NEAR_LIMIT  # NaN (unsolved) rows compare False
    solved = np.all(np.isfinite(q), axis=1)
    pairs = np.flatnonzero((near[:-1] | near[1:]) & solved[:-1] & solved[1:])
    if pairs.size == 0:
        return None
    a, b = poses[pairs], poses[pairs + 1].copy()
    b[:, 4] = a[:, 4] + np.remainder(b[:, 4] - a[:, 4] + math.pi, 2.0 * math.pi) - math.pi  # the short way
    f = np.linspace(0.0, 1.0, BETWEEN + 1)[1:-1]
    points = (a[:, None, :] + f[None, :, None] * (b - a)[:, None, :]).reshape(-1, 5)
    seeds = np.repeat(q[pairs], len(f), axis=0)
    loose = relaxed(params, SNAP_TOL)
    ik = solve_ik_batch(points[:, :3], points[:, 3], points[:, 4], loose, seeds=seeds, branch=branch)
    bad = np.flatnonzero(ik.status != IkStatus.OK)
    if bad.size == 0:
        return None
    k = int(bad[0])
    interval, sub = divmod(k, len(f))
    return int(pairs[interval]) + 1, float(f[sub]), IkStatus(int(ik.status[k])), points[k]


def failure_message(
    status: IkStatus,
    where: str,
    index: int,
    distance: float,
    length: float,
    pose: tuple[float, ...],
    poses: np.ndarray,
) -> str:
    """E.g. ``coupled_limit at 42.0 mm of 120.0 mm (35%) along the line from (...) to (...): TCP ...``.

    The percentage counts samples, so it also locates a failure on a pure change of tool attitude.
    """
    start, end = poses[0], poses[-1]
    percent = 100.0 * index / max(len(poses) - 1, 1)
    return (
        f"{status.reason} at {distance * 1000.0:.1f} mm of {length * 1000.0:.1f} mm ({percent:.0f}%) "
        f"{where} from {_xyz(start)} to {_xyz(end)}: TCP {_xyz(pose)} "
        f"tool pitch {pose[3]:.3f} yaw {pose[4]:.3f} rad ({status.message})"
    )


def _xyz(p: Any) -> str:
    return f"({p[0]:.4f}, {p[1]:.4f}, {p[2]:.4f}) m"


def _first_jump(seed: np.ndarray, q: np.ndarray, poses: np.ndarray, sampling: PathSampling) -> int | None:
    """Index of the first row of `q` farther than the allowed step from its predecessor (seed first)."""
    if len(q) == 0:
        return None
    prev = np.vstack((seed, q[:-1]))
    step = np.max(np.abs(q - prev), axis=1)
    pose_prev = np.vstack((poses[:1], poses[: len(q) - 1]))
    # Sample intervals each row spans (1 for a regular sampling; the first row is the start itself).
    d_pos = np.linalg.norm(poses[: len(q), :3] - pose_prev[:, :3], axis=1) / sampling.spacing
    d_ang = np.max(np.abs(poses[: len(q), 3:] - pose_prev[:, 3:]), axis=1) / sampling.angle_spacing
    allowed = sampling.max_joint_step * np.maximum(1.0, np.ceil(np.maximum(d_pos, d_ang) - 1e-9))
    over = np.flatnonzero(step > allowed)
    return int(over[0]) if over.size else None


def _chain(
    poses: np.ndarray,
    q: np.ndarray,
    start: int,
    seed: np.ndarray,
    params: ArmParams,
    sampling: PathSampling,
    branch: str,
) -> tuple[int, IkStatus]:
    """Solve rows `start`.. sequentially on `branch`, each seeded with the previous; fills `q` in place.

    Returns:
        (index of the first failure, its status), or (len(poses), Ok) when every row solves smoothly.
    """
    prev = seed if start == 0 else q[start - 1]
    prev_pose = poses[0] if start == 0 else poses[start - 1]
    for i in range(start, len(poses)):
        pose = poses[i]
        res = solve_ik_pitched(pose[:3], pose[3], pose[4], params, seed=prev, branch=branch)
        if not res.ok:
            return i, res.status
        qi = np.asarray(res.q)
        status = jump_status(
            prev, qi, pose, params, sampling.max_joint_step * sampling.steps_for(pose - prev_pose)
        )
        if status is not IkStatus.OK:
            return i, status
        q[i] = qi
        prev, prev_pose = qi, pose
    return len(poses), IkStatus.OK


def jump_status(prev: Any, q: Any, pose: Any, params: ArmParams, allowed: float) -> IkStatus:
    """Ok when no joint moved more than `allowed` from `prev` to `q`, else the status that explains it.

    A base yaw jump means the yaw range (or the base axis) cuts the path: YAW_OUT_OF_RANGE. A wrist jump:
    WRIST_OUT_OF_RANGE. A shoulder/beam jump is an elbow branch switch, which happens only where the
    arm's own branch stops solving; solving on that branch gives the reason (e.g. COUPLED_LIMIT).
    """
    d = [abs(float(a) - float(b)) for a, b in zip(q, prev, strict=True)]
    if max(d) <= allowed:
        return IkStatus.OK
    if d[1] > allowed or d[2] > allowed:
        same = solve_ik_pitched(
            pose[:3], pose[3], pose[4], params, seed=prev, branch=branch_of(prev[1], prev[2])
        )
        if not same.ok:
            return same.status
    if d[0] > allowed:
        return IkStatus.YAW_OUT_OF_RANGE
    if d[3] > allowed or d[4] > allowed:
        return IkStatus.WRIST_OUT_OF_RANGE
    return IkStatus.COUPLED_LIMIT  # a branch switch whose own branch still solves: not seen in practice
