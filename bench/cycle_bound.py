"""Three bounds of the pick-and-place cycle per can: as configured, the stack's plan at full speed, the floor.

Each can's cycle is the tree's sequence of motions and waits (salamander_behavior/tree.py):

1. joint path from where the last can was released (place_above; REST for the first can) to the can's
   approach (`plan.transit_end`: approach_dz above the can top, else above it), 2. linear descent to the
   contact pose, 3. the cell's attach settle (`attach_settle_s`, config/cell.yaml)
   and the tree's grip confirmation (`grip_confirm_s`), 4. linear lift back above the can,
5. the carry to place_above, a joint path (linear where the tree carries along a line:
   `plan.carry_path`), 6. the release descent, one line (behaviors/search.py, `RimPass`,
   guarded_pass true and no contact) in three legs without a stop: at release_speed to the top of the
   rim band, at guard_speed through it, at release_speed on to place_release, 7. the cell's release
   settle (`release_settle_s`; the vacuum goes off `release_early_m` before the release height, so only
   what is left of it after the descent counts) and the tree's `settle_s`, 8. linear rise to place_above.

- **As configured** plans every motion exactly as the stack does (the Cartesian node's `start_goal` for
  the lines, the generator's Ruckig for the joint paths) at the shipped speed scales (config/behavior.yaml),
  each from rest to rest except where the tree hands on (`chain_times`: the lift into the carry's joint
  path and the rise into the next can's, each joint path timed from rest where the line hands on: an
  upper bound), the waits at their configured lengths and no time between
  steps: the rest of a measured cycle is latency between steps (a result, a tick, the settle check at
  each goal's end).
- **Stack plan at full speed**: the same at speed scale 1.0, except the release descent (0.5, the
  operating notes) and the rim band (guard_speed).
- **Time-optimal floor**: the same waypoints timed by TOPP-RA (`toppra`) under the generator's joint
  velocity and acceleration limits (config/motion_limits.yaml; no jerk limit), rest to rest, with the
  transit blended: the rise, transit and descent one path, the lift, carry and approach to the band's top
  another (`blended_poses`: only the last `VERTICAL_M` vertical); the rim band at guard_speed and the
  descent below it at speed scale 0.5 stay straight lines (their TCP speed and acceleration capped as
  the Cartesian node caps them at that scale). The waits end at the part-present events: the cell's
  `attach_settle_s` and `release_settle_s` (the switch reports then), without the tree's holds after
  them. A can's floor starts where the previous can was let go (its rise is blended into this can's
  transit; the first can's starts at REST) and the last can's ends with its rise, so the three columns
  cover the same motion in all.

Lines and joint paths are planned from config/arm.yaml, motion_limits.yaml and cartesian_motion.yaml as
the Cartesian node loads them. Run: `python bench/cycle_bound.py` (after `source scripts/env.sh`);
`bench_stack_cpu.py` prints the same table next to the measured time per can.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import toppra
import yaml
from toppra.algorithm import TOPPRA
from toppra.constraint import JointAccelerationConstraint, JointVelocityConstraint
from toppra.interpolator import AbstractGeometricPath

from salamander_behavior.behaviors.motion import carry_end as tree_carry_end
from salamander_behavior.behaviors.search import release_handoff, rim_band
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import (
    CanJob,
    carry_path,
    carry_plan,
    load_jobs,
    transit_end,
    transit_starts,
)
from salamander_behavior.ports import CartesianTarget, MotionPath
from salamander_behavior.tree import lift_handoff, rise_handoff
from salamander_control.cartesian.config import MotionConfig, parse_goal
from salamander_control.cartesian.goal import start_goal
from salamander_control.cartesian.params import build_config, param_specs
from salamander_control.cartesian.plan import LinePlan
from salamander_control.kinematics import REST_POSTURE, forward_kinematics, solve_ik_pitched
from salamander_control.params_file import node_values
from salamander_control.trajectory.otg import MotionLimits, Otg

ROOT = Path(__file__).resolve().parents[1]
CELL = ROOT / "config" / "cell.yaml"
BEHAVIOR = ROOT / "config" / "behavior.yaml"
MOTION_FILES = [ROOT / "config" / f for f in ("arm.yaml", "motion_limits.yaml", "cartesian_motion.yaml")]
RELEASE_SPEED = 0.5  # the operating notes: the release descent at speed scale 0.5, whatever else changes
DT = 0.002  # the generator's cycle
VERTICAL_M = 0.03  # m; the straight vertical end of a blended path (onto the can; the can down to the band)
GRID = 200  # TOPP-RA's grid points per path
Step = tuple[str, float]  # a step of the floor: its name and seconds

toppra.setup_logging("WARNING")


@dataclass(frozen=True)
class Segment:
    """One step of a can's cycle: its name, the seconds of the plan at full speed and as configured."""

    name: str
    bound: float
    configured: float

    def capped(self) -> Segment:
        """This segment with its bound capped at the configured time.

        The joint fit of a line plan is not monotonic in its speed scale (a rise planned 2 ms slower at 1.0
        than at 0.3).
        """
        return Segment(self.name, min(self.bound, self.configured), self.configured)


def _params(path: Path, node: str) -> dict:
    data = yaml.safe_load(path.read_text())
    for key, section in data.items():
        if key.endswith(node) or key == "/**":
            return section.get("ros__parameters", {})
    raise ValueError(f"{path}: no section for {node}")


def motion_config() -> MotionConfig:
    """The Cartesian node's configuration from its parameter files (the generator's joint limits too)."""
    values = {spec.name: spec.default for spec in param_specs()}
    values.update(node_values(MOTION_FILES, "/arm/arm_cartesian_motion_node"))
    return build_config(values)


def _ik(target: CartesianTarget, seed: Sequence[float], cfg: MotionConfig) -> tuple[float, ...]:
    res = solve_ik_pitched((target.x, target.y, target.z), target.tool_pitch, target.tool_yaw, cfg.arm,
                           seed=tuple(seed))  # fmt: skip
    if not res.ok:
        raise ValueError(f"{target} cannot be solved: {res.status.message}")
    return tuple(res.q)


def _at_z(target: CartesianTarget, z: float) -> CartesianTarget:
    return replace(target, z=z)


def line_time(
    start_q: tuple[float, ...], target: CartesianTarget, scale: float, cfg: MotionConfig, before: float = 0.0,
    band: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> float:
    """Seconds of the Cartesian node's linear plan from `start_q` (at rest) to `target` at `scale` (with
    `band`: MoveCartesian's speed_scale, start, end); with `before` (m) > 0 until the TCP is that close
    to the target (where the tree hands on: `vacuum_early`, `release_early_m`)."""
    return _time_to(_line_plan(start_q, target, scale, cfg, band), target, before)


def _time_to(plan: LinePlan, target: CartesianTarget, before: float) -> float:
    """Seconds until `plan`'s TCP is `before` (m) from `target` (its end when `before` is 0)."""
    tcp = np.array([target.x, target.y, target.z])
    for t in np.arange(0.0, plan.duration, 1e-3) if before > 0.0 else ():
        if np.linalg.norm(plan.state_at(t).pose[:3] - tcp) <= before:
            return float(t)
    return float(plan.duration)


def _legs(plan: LinePlan) -> list[float]:
    """Seconds of each leg of `plan`; with a band up to three: to it, through it, out of it
    (`cartesian.plan.SlowBand`)."""
    return [float(leg.duration) for leg in plan._legs]


def _line_plan(
    start_q: tuple[float, ...], target: CartesianTarget, scale: float, cfg: MotionConfig,
    band: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> LinePlan:
    """The Cartesian node's plan of that goal (`start_goal`)."""
    tcp = (target.x, target.y, target.z)
    goal = parse_goal(tcp, target.tool_pitch, target.tool_yaw, "linear", scale, "cycle_bound",
                      band_speed_scale=band[0], band_start=band[1], band_end=band[2])  # fmt: skip
    run, early = start_goal(goal, cfg, 0.0, start_q, None)
    if early is not None:
        raise ValueError(f"linear goal to {target}: {early.message}")
    return run.motion.plan


def joint_time(start_q: tuple[float, ...], goal_q: tuple[float, ...], limits: MotionLimits) -> float:
    """Seconds of the generator's time-optimal (Ruckig) joint move from rest to rest."""
    otg = Otg(limits, DT, start_q)
    otg.set_target(goal_q)
    for k in range(1, 100_000):
        if otg.step().finished:
            return k * DT
    raise RuntimeError("the joint move did not finish")


def topp(
    points: np.ndarray, max_velocity: Sequence[float], max_acceleration: Sequence[float]
) -> AbstractGeometricPath:
    """TOPP-RA's time-optimal timing, rest to rest, of the path through `points` (one row per point).

    The path is a cubic spline through the rows, parametrised by their cumulative distance; every column
    keeps within its `max_velocity` and `max_acceleration` (checked on `GRID` points, the acceleration
    constant between them). Returns toppra's trajectory: `.duration` (s), called as `traj(t, order)`.
    """
    ss = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=1))])
    path = toppra.SplineInterpolator(ss, points)
    constraints = [JointVelocityConstraint(np.asarray(max_velocity, float)),
                   JointAccelerationConstraint(np.asarray(max_acceleration, float))]  # fmt: skip
    grid = np.linspace(0.0, ss[-1], GRID + 1)
    traj = TOPPRA(
        constraints, path, gridpoints=grid, parametrizer="ParametrizeConstAccel"
    ).compute_trajectory()
    if traj is None:
        raise ValueError("TOPP-RA found no timing of the path")
    return traj


def _pose(t: CartesianTarget) -> np.ndarray:
    return np.array([t.x, t.y, t.z, t.tool_pitch, t.tool_yaw])


def blended_poses(start: CartesianTarget, up1: CartesianTarget, up2: CartesianTarget, end: CartesianTarget,
                  n: int = 100) -> np.ndarray:  # fmt: skip
    """Poses (x, y, z, pitch, yaw rows) along one blended path from `start` to `end`.

    A Bezier curve from `start` to `VERTICAL_M` above `end` with the waypoints up above as control points
    (`up1` on the start's side, `up2` twice on the end's), then straight down to `end`. The curve leaves
    towards `up1` and arrives straight down with no curvature (`up2` twice), so the joint path has no kink
    where the line begins. It stays inside the hull of its control points: never above the higher
    waypoint, never below the lower of `start` and the vertical part's top (with the shipped targets the
    held can's bottom passes >= 56 mm above the rim until it is within 2 mm of its compartment's centre).
    """
    via = _pose(end) + [0.0, 0.0, VERTICAL_M, 0.0, 0.0]
    p = np.array([_pose(start), _pose(up1), _pose(up2), _pose(up2), via])
    t, d = np.linspace(0.0, 1.0, n)[:, None], len(p) - 1
    curve = sum(math.comb(d, i) * (1 - t) ** (d - i) * t**i * p[i] for i in range(d + 1))
    down = np.linspace(via, _pose(end), max(2, int(VERTICAL_M / 0.005) + 1))
    return np.vstack([curve, down[1:]])


def _joints(poses: np.ndarray, seed: Sequence[float], cfg: MotionConfig) -> np.ndarray:
    """The IK of every pose, each seeded by the one before; no step larger than the sampling allows."""
    rows = [tuple(seed)]
    for x, y, z, pitch, yaw in poses:
        rows.append(_ik(CartesianTarget(x, y, z, pitch, yaw), rows[-1], cfg))
    qs = np.array(rows[1:])
    if np.abs(np.diff(qs, axis=0)).max() > cfg.sampling.max_joint_step:
        raise ValueError("the path's IK jumps (an elbow branch change?)")
    return qs


def floor_line(start: CartesianTarget, end: CartesianTarget, seed: Sequence[float], cfg: MotionConfig,
               scale: float | None) -> float:  # fmt: skip
    """Floor seconds of the straight line `start` -> `end`; with `scale`, TCP speed and acceleration capped.

    The cap is the Cartesian node's limits at `scale` (`CartesianLimits.scaled`), a column of the TCP's
    distance along the line (on a straight line its rates are the TCP's).
    """
    poses = np.linspace(_pose(start), _pose(end), 41)
    qs = _joints(poses, seed, cfg)
    vmax, amax = list(cfg.joint_limits.velocity), list(cfg.joint_limits.acceleration)
    if scale is not None:
        dist = np.linalg.norm(poses[:, :3] - poses[0, :3], axis=1)
        qs = np.column_stack([qs, dist])
        capped = cfg.limits.scaled(scale)  # as the Cartesian node scales them (ramps at RAMP_FLOOR at least)
        vmax.append(capped.linear_velocity)
        amax.append(capped.linear_acceleration)
    return float(topp(qs, vmax, amax).duration)


def floor_blend(start: CartesianTarget, up1: CartesianTarget, up2: CartesianTarget, end: CartesianTarget,
                seed: Sequence[float], cfg: MotionConfig) -> float:  # fmt: skip
    """Floor seconds of the blended path (`blended_poses`) under the joint limits alone."""
    qs = _joints(blended_poses(start, up1, up2, end), seed, cfg)
    return float(topp(qs, cfg.joint_limits.velocity, cfg.joint_limits.acceleration).duration)


def chain_times(
    start_q: tuple[float, ...], legs: Sequence[tuple[CartesianTarget, float, float]], cfg: MotionConfig
) -> tuple[list[float], tuple[float, ...]]:
    """Seconds of linear goals run one after the other, and the joints where the last one ends.

    Each leg is (target, speed scale, hand-off): a leg with a hand-off > 0 m ends when its commanded TCP
    is that close to its target, and the next leg starts from its commanded state there, as the
    Cartesian node starts a preempting goal (the tree's `HandOff`, `blend_m`); the last leg with a
    hand-off ends there too (the joint path that follows it starts from rest there: an upper bound),
    without one it runs to rest.
    """
    times: list[float] = []
    run, t, q = None, 0.0, start_q
    for target, scale, ahead in legs:
        tcp = (target.x, target.y, target.z)
        goal = parse_goal(tcp, target.tool_pitch, target.tool_yaw, "linear", scale, "cycle_bound")
        run, early = start_goal(goal, cfg, t, q, run)
        if early is not None:
            raise ValueError(f"linear goal to {target}: {early.message}")
        motion = run.motion
        if motion.t0 is None:
            motion.t0 = t
        end = motion.t0 + motion.plan.duration
        if ahead > 0.0:
            goal_xyz = np.array(tcp)
            for k in range(int((end - t) / DT) + 1):
                if np.linalg.norm(goal_xyz - motion.state(t + k * DT).pose[:3]) <= ahead:
                    end = t + k * DT
                    break
        times.append(end - t)
        t = end
        q = _ik(CartesianTarget(*motion.state(t).pose), q, cfg)
        motion.joints = q  # the joints the node commands there: the next goal's IK seed
    return times, q


def cycle(
    job: CanJob, start_q: tuple[float, ...], cfg: MotionConfig, cell: dict, settings: BehaviorSettings,
    more: bool = False, down_from: CartesianTarget | None = None, low: CartesianTarget | None = None,
    lift_clear: float | None = None,
) -> tuple[list[Segment], tuple[float, ...]]:  # fmt: skip
    """The segments of one can's cycle from `start_q`, and the joints it ends at.

    With `more` (another can follows) the rise hands on as the tree does (`chain_times`), and the cycle
    ends where it hands on to the next can's joint path; otherwise at place_above, at rest. `down_from`:
    where the transit ends and the descent onto the can begins (the tree's `plan.transit_end`; default
    above the can). `low`: where the carry may end below place_above (the tree's `plan.low_carry_end`,
    taken as `CarryTarget` takes it). `lift_clear`: the level the lift clears before it hands on (the
    tree's `plan.lift_clear_level`; default the job's `lift_clear_z`).
    """
    limits = MotionLimits(*cfg.joint_limits)
    down = down_from or job.above
    down_q = _ik(down, start_q, cfg)
    above_q = _ik(job.above, down_q, cfg)
    contact_q = _ik(job.contact, down_q, cfg)
    carry_end = tree_carry_end(job, low, settings, settings.manual_place)
    place_q = _ik(carry_end, above_q, cfg)
    release_q = _ik(job.place_release, place_q, cfg)
    transit, approach = settings.transit_speed, settings.approach_speed
    release, guard = settings.release_speed, settings.guard_speed
    joint = joint_time(start_q, down_q, limits)  # the joint path runs at the generator's limits
    if carry_path(job, cfg.arm) is MotionPath.JOINT:  # the tree's carry in joint space, out of the lift
        lift_ahead = lift_handoff(job, lift_clear)(settings)
        (lift_full,), _ = chain_times(contact_q, [(job.above, 1.0, lift_ahead)], cfg)
        (lift_conf,), handed_q = chain_times(contact_q, [(job.above, approach, lift_ahead)], cfg)
        lift = Segment("lift (hands on)" if lift_ahead > 0.0 else "lift", lift_full, lift_conf)
        to = "place_above" if carry_end is job.place_above else "its low end"
        carry = Segment(f"carry to {to} (joint path)", *(joint_time(handed_q, place_q, limits),) * 2)
    else:
        lift = Segment("lift", line_time(contact_q, job.above, 1.0, cfg),
                       line_time(contact_q, job.above, approach, cfg))  # fmt: skip
        carry = Segment("carry to place_above", line_time(above_q, job.place_above, 1.0, cfg),
                        line_time(above_q, job.place_above, transit, cfg))  # fmt: skip
    band = rim_band(job, settings) if settings.guarded_pass else None
    valve = cell["release_settle_s"]
    let_go = (valve + settings.settle_s,) * 2
    if band is None:  # one descent from place_above
        full, conf = (line_time(place_q, job.place_release, s, cfg) for s in (RELEASE_SPEED, release))
        descent = [Segment("release descent (0.5 fixed)", full, conf)]
    else:  # one goal, slow through the band without stopping (the tree's `RimPass`)
        z = job.place_release.z
        slow = (guard, band.top - z, band.bottom - z)
        plans = [_line_plan(place_q, job.place_release, v, cfg, slow) for v in (RELEASE_SPEED, release)]
        full, conf = (_legs(plan) for plan in plans)
        if len(full) != 3 or len(conf) != 3:
            raise ValueError(f"{job.can}: no rim band between place_above and the release")
        descent = [
            Segment("release descent to the band (0.5 fixed)", full[0], conf[0]),
            Segment("through the rim band (guard_speed)", full[1], conf[1]),
            Segment("release descent (0.5 fixed)", full[2], conf[2]),
        ]
        early = release_handoff(settings, band.bottom - z)
        if early > 0.0:  # the vacuum goes off that far up; the valve vents while the descent finishes
            let_go = tuple(
                max(0.0, _time_to(plan, job.place_release, early) + valve - plan.duration) + settings.settle_s
                for plan in plans
            )
    grip = cell["attach_settle_s"] + settings.grip_confirm_s
    ahead = rise_handoff(job)(settings) if more else 0.0
    (rise_full,), end_q = chain_times(release_q, [(job.place_above, 1.0, ahead)], cfg)
    (rise_conf,), _ = chain_times(release_q, [(job.place_above, approach, ahead)], cfg)
    segments = [s.capped() for s in [
        Segment("joint path to " + ("above the can" if down is job.above else "the approach"), joint, joint),
        Segment("descent to the can (to vacuum_early_m)" if settings.vacuum_early_m else "descent to the can",
                line_time(down_q, job.contact, 1.0, cfg, settings.vacuum_early_m),
                line_time(down_q, job.contact, approach, cfg, settings.vacuum_early_m)),
        Segment("attach settle + grip confirm", grip, grip),
        lift,
        carry,
        *descent,
        Segment("let go (vented from release_early_m)" if let_go[0] < valve else "release settle + settle",
                *let_go),
        Segment("rise" + (" (hands on)" if more else ""), rise_full, rise_conf),
    ]]  # fmt: skip
    return segments, end_q if more else place_q


def floor_cycle(
    job: CanJob, start: CartesianTarget, start_up: CartesianTarget, start_q: Sequence[float],
    cfg: MotionConfig, cell: dict, settings: BehaviorSettings, last: bool = False,
) -> tuple[list[Step], tuple[float, ...]]:  # fmt: skip
    """The floor's steps of one can from `start` (the previous release, or REST), and its end joints.

    `start_up` is the waypoint above `start` (the previous place_above; `start` itself at REST). `last`:
    the rise to place_above ends it (otherwise the next can's transit starts with it).
    """
    band = rim_band(job, settings)
    if band is None:
        raise ValueError(f"{job.can}: the floor needs the rim band (a rim height above place_release)")
    top, bottom = _at_z(job.place_release, band.top), _at_z(job.place_release, band.bottom)
    contact_q = _ik(job.contact, _ik(job.above, start_q, cfg), cfg)
    top_q = _ik(top, _ik(job.place_above, contact_q, cfg), cfg)
    bottom_q, release_q = _ik(bottom, top_q, cfg), _ik(job.place_release, top_q, cfg)
    first = "rise, transit and descent" if start_up != start else "from REST to the can"
    steps = [
        (f"{first} (blended)", floor_blend(start, start_up, job.above, job.contact, start_q, cfg)),
        ("grip (part-present event)", cell["attach_settle_s"]),
        ("lift, carry and approach to the band (blended)",
         floor_blend(job.contact, job.above, job.place_above, top, contact_q, cfg)),
    ]  # fmt: skip
    place = job.place_release
    if settings.guarded_pass:
        through = floor_line(top, bottom, top_q, cfg, settings.guard_speed)
        steps.append(("through the rim band (guard_speed)", through))
        steps.append(("release descent (0.5)", floor_line(bottom, place, bottom_q, cfg, RELEASE_SPEED)))
    else:  # no guarded pass: one line at 0.5 from the band's top
        steps.append(("release descent (0.5)", floor_line(top, place, top_q, cfg, RELEASE_SPEED)))
    steps.append(("let go (part-present event)", cell["release_settle_s"]))
    if last:
        steps.append(("rise", floor_line(job.place_release, job.place_above, release_q, cfg, None)))
    return steps, release_q


def _load(cell_path: Path, behavior_path: Path) -> tuple[MotionConfig, dict, BehaviorSettings]:
    settings = BehaviorSettings.from_values(_params(behavior_path, "behavior_server_node"))
    return motion_config(), _params(cell_path, "cell_sim"), settings


def bounds(cell_path: Path = CELL, behavior_path: Path = BEHAVIOR) -> list[tuple[str, list[Segment]]]:
    """Every can's segments (full speed and as configured), in the order a run of every can takes them."""
    cfg, cell, settings = _load(cell_path, behavior_path)
    q: tuple[float, ...] = tuple(REST_POSTURE)
    out = []
    jobs = load_jobs(cell_path)
    starts = transit_starts(jobs, cfg.arm)
    for k, job in enumerate(jobs):
        down = transit_end(job, starts, cfg.arm)
        low, clear = carry_plan(job, jobs, jobs[k + 1:], cfg.arm)  # as build_tree plans a run in order
        segments, q = cycle(job, q, cfg, cell, settings, k + 1 < len(jobs), down, low, clear)
        out.append((job.can, segments))
    return out


def floors(cell_path: Path = CELL, behavior_path: Path = BEHAVIOR) -> list[tuple[str, list[Step]]]:
    """Every can's time-optimal floor steps, in the order a run of every can takes them."""
    cfg, cell, settings = _load(cell_path, behavior_path)
    rest = forward_kinematics(REST_POSTURE, cfg.arm)
    start = CartesianTarget(*rest.tcp, rest.tool_pitch, rest.tool_yaw)
    start_up, q = start, tuple(REST_POSTURE)
    jobs = load_jobs(cell_path)
    out = []
    for k, job in enumerate(jobs):
        steps, q = floor_cycle(job, start, start_up, q, cfg, cell, settings, last=k == len(jobs) - 1)
        out.append((job.can, steps))
        start, start_up = job.place_release, job.place_above
    return out


def print_table(measured: dict[str, float] | None = None) -> None:
    """Per can: as configured, the plan at full speed, the floor (and the measured time, when given)."""
    rows, floor = bounds(), dict(floors())
    print(
        "| can | as configured (no latency), s | stack plan at full speed, s | time-optimal floor, s "
        "| measured, s | measured / full speed |\n|---|---:|---:|---:|---:|---:|"
    )
    for can, segments in rows:
        full, conf = sum(s.bound for s in segments), sum(s.configured for s in segments)
        low = sum(seconds for _, seconds in floor[can])
        got = (measured or {}).get(can)
        seen = f"{got:.2f}" if got is not None else "-"
        ratio = f"{got / full:.2f}x" if got is not None else "-"
        print(f"| {can} | {conf:.2f} | {full:.2f} | {low:.2f} | {seen} | {ratio} |")
    can, segments = rows[0]
    print(
        f"\nSegments of {can}, at full speed (as configured), s: "
        + ", ".join(f"{s.name} {s.bound:.2f} ({s.configured:.2f})" for s in segments)
    )
    print(f"\nSteps of {can}'s floor, s: " + ", ".join(f"{name} {sec:.2f}" for name, sec in floor[can]))


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(f"# Cycle per can: three bounds from the limits ({CELL.name}, {BEHAVIOR.name})\n")
    print_table()


if __name__ == "__main__":
    main()
