"""A lower bound of the pick-and-place cycle per can, from the configured limits and fixed waits.

Each can's cycle is the tree's sequence of motions and waits (salamander_behavior/tree.py):

1. joint path from where the last can was released (place_above; REST for the first can) to above the can,
2. linear descent to the contact pose, 3. the cell's attach settle (`attach_settle_s`, config/cell.yaml)
   and the tree's grip confirmation (`grip_confirm_s`), 4. linear lift back above the can,
5. linear carry to place_above, 6. linear release descent to place_release,
7. the cell's release settle (`release_settle_s`) and the tree's `settle_s`, 8. linear rise to place_above.

The bound plans every motion exactly as the stack does (the Cartesian node's `start_goal` for the lines,
the generator's Ruckig for the joint path, at the generator's joint limits) but at speed scale 1.0,
except the release descent, which the operating notes fix at 0.5; waits are counted at their configured
lengths, with no tick latency and no time between segments. "As configured" plans the same motions at
the shipped speed scales (config/behavior.yaml): the rest of a measured cycle is latency between steps.

Run: `python bench/cycle_bound.py` (after `source scripts/env.sh`); `bench_stack_cpu.py` prints the
same table next to the measured time per can.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import yaml

from salamander_behavior.plan import CanJob, load_jobs
from salamander_behavior.ports import CartesianTarget
from salamander_control.cartesian.config import MotionConfig, parse_goal
from salamander_control.cartesian.goal import start_goal
from salamander_control.kinematics import REST_POSTURE, solve_ik_pitched
from salamander_control.trajectory.otg import MotionLimits, Otg

ROOT = Path(__file__).resolve().parents[1]
CELL = ROOT / "config" / "cell.yaml"
BEHAVIOR = ROOT / "config" / "behavior.yaml"
RELEASE_SPEED = 0.5  # the operating notes: the release descent at speed scale 0.5, whatever else changes
DT = 0.002  # the generator's cycle


@dataclass(frozen=True)
class Segment:
    """One step of a can's cycle: its name, the bound's seconds and the seconds as configured."""

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


def _ik(target: CartesianTarget, seed: tuple[float, ...], cfg: MotionConfig) -> tuple[float, ...]:
    res = solve_ik_pitched((target.x, target.y, target.z), target.tool_pitch, target.tool_yaw, cfg.arm,
                           seed=seed)  # fmt: skip
    if not res.ok:
        raise ValueError(f"{target} cannot be solved: {res.status.message}")
    return tuple(res.q)


def line_time(start_q: tuple[float, ...], target: CartesianTarget, scale: float, cfg: MotionConfig) -> float:
    """Seconds of the Cartesian node's linear plan from `start_q` (at rest) to `target` at `scale`."""
    tcp = (target.x, target.y, target.z)
    goal = parse_goal(tcp, target.tool_pitch, target.tool_yaw, "linear", scale, "cycle_bound")
    run, early = start_goal(goal, cfg, 0.0, start_q, None)
    if early is not None:
        raise ValueError(f"linear goal to {target}: {early.message}")
    return float(run.motion.plan.duration)


def joint_time(start_q: tuple[float, ...], goal_q: tuple[float, ...], limits: MotionLimits) -> float:
    """Seconds of the generator's time-optimal (Ruckig) joint move from rest to rest."""
    otg = Otg(limits, DT, start_q)
    otg.set_target(goal_q)
    for k in range(1, 100_000):
        if otg.step().finished:
            return k * DT
    raise RuntimeError("the joint move did not finish")


def cycle(
    job: CanJob, start_q: tuple[float, ...], cfg: MotionConfig, cell: dict, tree: dict
) -> tuple[list[Segment], tuple[float, ...]]:
    """The segments of one can's cycle from `start_q`, and the joints it ends at (place_above)."""
    limits = MotionLimits(*cfg.joint_limits)
    above_q = _ik(job.above, start_q, cfg)
    contact_q = _ik(job.contact, above_q, cfg)
    place_q = _ik(job.place_above, above_q, cfg)
    release_q = _ik(job.place_release, place_q, cfg)
    transit, approach = float(tree["transit_speed"]), float(tree["approach_speed"])
    release = float(tree["release_speed"])
    joint = joint_time(start_q, above_q, limits)  # the joint path runs at the generator's limits
    segments = [s.capped() for s in [
        Segment("joint path to above the can", joint, joint),
        Segment("descent to the can", line_time(above_q, job.contact, 1.0, cfg),
                line_time(above_q, job.contact, approach, cfg)),
        Segment("attach settle + grip confirm", cell["attach_settle_s"] + tree["grip_confirm_s"],
                cell["attach_settle_s"] + tree["grip_confirm_s"]),
        Segment("lift", line_time(contact_q, job.above, 1.0, cfg),
                line_time(contact_q, job.above, approach, cfg)),
        Segment("carry to place_above", line_time(above_q, job.place_above, 1.0, cfg),
                line_time(above_q, job.place_above, transit, cfg)),
        Segment("release descent (0.5 fixed)", line_time(place_q, job.place_release, RELEASE_SPEED, cfg),
                line_time(place_q, job.place_release, release, cfg)),
        Segment("release settle + settle", cell["release_settle_s"] + tree["settle_s"],
                cell["release_settle_s"] + tree["settle_s"]),
        Segment("rise", line_time(release_q, job.place_above, 1.0, cfg),
                line_time(release_q, job.place_above, approach, cfg)),
    ]]  # fmt: skip
    return segments, place_q


def bounds(cell_path: Path = CELL, behavior_path: Path = BEHAVIOR) -> list[tuple[str, list[Segment]]]:
    """Every can's segments, in the order a run of every can takes them."""
    cfg = MotionConfig()
    cell = _params(cell_path, "cell_sim")
    tree = _params(behavior_path, "behavior_server_node")
    q: tuple[float, ...] = tuple(REST_POSTURE)
    out = []
    for job in load_jobs(cell_path):
        segments, q = cycle(job, q, cfg, cell, tree)
        out.append((job.can, segments))
    return out


def print_table(measured: dict[str, float] | None = None) -> None:
    """The per-can bound and as-configured sums (and the measured time per can, when given)."""
    rows = bounds()
    print("| can | lower bound, s | as configured (no latency), s | measured, s | measured / bound |")
    print("|---|---:|---:|---:|---:|")
    for can, segments in rows:
        low, conf = sum(s.bound for s in segments), sum(s.configured for s in segments)
        got = (measured or {}).get(can)
        seen = f"{got:.2f}" if got is not None else "-"
        ratio = f"{got / low:.2f}x" if got is not None else "-"
        print(f"| {can} | {low:.2f} | {conf:.2f} | {seen} | {ratio} |")
    print("\nSegments of the first can (s): " + ", ".join(
        f"{s.name} {s.bound:.2f} ({s.configured:.2f})" for s in rows[0][1]))


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(f"# Cycle per can: lower bound from the limits ({CELL.name}, {BEHAVIOR.name})\n")
    print_table()


if __name__ == "__main__":
    main()
