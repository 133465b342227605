#!/usr/bin/env python3
"""Benchmark of one tick of the pick-and-place tree, against a trivial py_trees tree of the same size.

Run from the repository root::

    source scripts/env.sh && python bench/bench_tree.py            # 10,000 ticks (~10 s)
    source scripts/env.sh && python bench/bench_tree.py --quick    # smoke run (1,000 ticks)

What it measures:

* full tree: the behaviour server's tree for config/cell.yaml (three cans, each cycle wrapped in the
  real limit guard of salamander_behavior.behaviors.guard), on the fakes of
  salamander_behavior.mock.ports: every
  Cartesian goal answers RUNNING for `--polls` ticks, then SUCCESS; the fake gripper grips and lets go at
  once. `manual_place` is true for every second run, with operator twists and a confirmation fed
  through ManualAdjust's real subscription callbacks, so the nudge path (goal + retargets) is ticked too.
  A run that ends is rebuilt (untimed) until `--ticks` ticks are timed. Only `tree.tick()` is timed
  (time.perf_counter_ns); feeding the joint-state cache and the operator messages is not.
* baseline: ``Sequence(memory=False)`` of N ``py_trees.behaviours.Success`` leaves, N = the full tree's
  behaviour count, so every tick visits all N leaves (the full tree visits only the active path).
  Both are ticked in interleaved blocks of 100, so that both see the same machine load.
* snapshot: ``py_trees.display.unicode_tree(root, show_status=True)`` of the full tree, what the node
  publishes at snapshot_rate_hz.

Prints p50/p99/max wall time per tick, the p99 of the thread's CPU time (what the tick itself costs,
without the preemptions a loaded machine adds to the wall time), the wall-time ratios to the baseline
and the verdict against the target (full tree p99 wall <= 1 ms). The target is reported, never
enforced (exit 0).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("salamander_control", "salamander_behavior"):  # convenience when PYTHONPATH is not set
    if importlib.util.find_spec(pkg) is None:
        sys.path.insert(0, str(ROOT / pkg))

import py_trees  # noqa: E402

from salamander_behavior.behaviors.guard import GuardSettings, guard_conditions, guarded  # noqa: E402
from salamander_behavior.limits.cache import JointStateCache  # noqa: E402
from salamander_behavior.mock.ports import FakeClock, Rig, Script  # noqa: E402
from salamander_behavior.params import BehaviorSettings  # noqa: E402
from salamander_behavior.plan import load_jobs  # noqa: E402
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE  # noqa: E402

TITLE = "Salamander behaviour tree benchmark results"
TARGET_P99_MS = 1.0


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class FullTree:
    """Runs of the real tree on fakes; `tick()` returns the time of one tree tick in ns."""

    def __init__(self, polls: int) -> None:
        self.jobs = load_jobs(ROOT / "config" / "cell.yaml")
        self.polls = polls
        self.runs = 0
        self.size = 0
        self._new_run()

    def _new_run(self) -> None:
        clock = FakeClock()
        cache = JointStateCache(clock=clock)

        def guard(child: py_trees.behaviour.Behaviour, can: str) -> py_trees.behaviour.Behaviour:
            conditions = guard_conditions(GuardSettings(), cache=cache, prefix=f"{can}.")
            return guarded(child, conditions, name=f"Guarded[{can}]")

        manual = self.runs % 2 == 1
        settings = BehaviorSettings(manual_place=manual)
        self.rig = Rig(
            self.jobs, settings=settings, default=Script(polls=self.polls), guard=guard, clock=clock
        )
        self.cache = cache
        self.size = sum(1 for _ in self.rig.root.iterate())
        self.runs += 1
        self._adjust_ticks = 0

    def _feed(self) -> None:
        """Untimed: a fresh joint state, and operator input while a ManualAdjust waits."""
        self.cache.put(JOINT_NAMES, REST_POSTURE)
        for behavior in self.rig.root.iterate():
            if behavior.name.startswith("ManualAdjust[") and behavior.status.value == "RUNNING":
                self._adjust_ticks += 1
                if self._adjust_ticks < 20:
                    self.rig.jog(0.02, 0.0)
                elif self._adjust_ticks == 30:
                    self.rig.confirm(True)
                return
        self._adjust_ticks = 0

    def tick(self) -> tuple[int, int]:
        """One timed tick, (wall, CPU) ns (a finished run is replaced first, untimed)."""
        if self.rig.finished:
            self._new_run()
        self._feed()
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        self.rig.tree.tick()
        dt, dc = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
        self.rig.clock.advance(0.05)
        return dt, dc


class Baseline:
    """Sequence(memory=False) over `size - 1` Success leaves; `tick()` returns one tick's time in ns."""

    def __init__(self, size: int) -> None:
        leaves = [py_trees.behaviours.Success(f"s{i}") for i in range(size - 1)]
        root = py_trees.composites.Sequence("baseline", memory=False, children=leaves)
        self.tree = py_trees.trees.BehaviourTree(root)
        self.tree.setup()

    def tick(self) -> tuple[int, int]:
        """One timed tick, (wall, CPU) ns."""
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        self.tree.tick()
        return time.perf_counter_ns() - t0, time.thread_time_ns() - c0


def row(name: str, samples: Sequence[tuple[int, int]], base: Sequence[tuple[int, int]] | None) -> list[str]:
    """p50/p99/max wall, p99 CPU (ms), and the wall ratios to the baseline."""
    wall = [w for w, _ in samples]
    cpu = [c for _, c in samples]
    p50, p99, worst = (percentile(wall, q) / 1e6 for q in (0.5, 0.99, 1.0))
    ratio = "-"
    if base is not None:
        b50, b99 = (percentile([w for w, _ in base], q) / 1e6 for q in (0.5, 0.99))
        ratio = f"{p50 / b50:.2f} / {p99 / b99:.2f}"
    return [name, f"{p50:.3f}", f"{p99:.3f}", f"{worst:.3f}", f"{percentile(cpu, 0.99) / 1e6:.3f}", ratio]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=10_000, help="timed ticks per tree (default 10,000)")
    parser.add_argument("--polls", type=int, default=20, help="ticks a fake goal stays RUNNING (default 20)")
    parser.add_argument("--quick", action="store_true", help="1,000 ticks: a smoke run")
    args = parser.parse_args(argv)
    ticks = 1000 if args.quick else args.ticks
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; {ticks} ticks per tree"
    )
    full = FullTree(args.polls)
    for _ in range(200):  # warm-up: imports, caches, first runs
        full.tick()
    baseline = Baseline(full.size)
    times: list[tuple[int, int]] = []
    base: list[tuple[int, int]] = []
    while len(times) < ticks:  # interleaved blocks: both trees see the same machine load
        times += [full.tick() for _ in range(100)]
        base += [baseline.tick() for _ in range(100)]
    snaps = []
    for _ in range(max(50, ticks // 50)):
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        py_trees.display.unicode_tree(full.rig.root, show_status=True)
        snaps.append((time.perf_counter_ns() - t0, time.thread_time_ns() - c0))
    p99 = percentile([w for w, _ in times], 0.99) / 1e6
    p99_cpu = percentile([c for _, c in times], 0.99) / 1e6
    verdict = "PASS" if p99 <= TARGET_P99_MS else "MISS"
    rows = [
        ["tree", "p50 ms", "p99 ms", "max ms", "p99 CPU ms", "ratio to baseline p50 / p99"],
        row(f"full tree ({full.size} behaviours, guard, fakes)", times, base),
        row(f"baseline: Sequence of {full.size - 1} Success", base, None),
        row("snapshot: unicode_tree of the full tree", snaps, None),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(TITLE)
    for i, r in enumerate(rows):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print(
        f"target: full tree p99 <= {TARGET_P99_MS:.1f} ms: {verdict} "
        f"({p99:.3f} ms wall, {p99_cpu:.3f} ms CPU); {full.runs} runs ticked; "
        f"load average at end {os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
