#!/usr/bin/env python3
"""The placement benchmark: plain, shipped and manual placement on the same seeded cells, one run.

Run from the repository root inside scripts/env.sh::

    python bench/bench_placement.py                    # 20 seeds x 3 cans, 4 modes, 2 levels: 160+ starts
    python bench/bench_placement.py --seeds 2          # 16 stack starts
    python bench/bench_placement.py --quick            # 1 seed, 1 can per mode, level 1: 4 starts
    python bench/bench_placement.py --modes shipped --levels 1 --one-run   # a run of 3 cans per start

Time, measured on 2 cores (2026-12-04): a stack start costs ~5 s beyond its cans (start-up, stop); a can
8-11 s plain, 10-14 s shipped without a contact and 20-50 s with a search, 13-18 s with ManualAdjust.
`--seeds 2` took 9.3 min (12 starts, 32 cans), `--quick` 55 s on a quiet machine; the default run is ten
times `--seeds 2` plus the starts that resume after a can ended one: about 1.5-2 hours.

Four modes (`placement_metrics.MODES`) per seed and level, each its own start of the stack:

- **plain**: autonomous placement without its aids: the behaviour server's ``guarded_pass`` false (one
  unguarded release descent, so no contact sensing and no search) and ``box_estimate`` false;
- **shipped**: autonomous placement as config/behavior.yaml ships it (guarded pass, search, box estimate);
- **manual**: ManualAdjust (``manual_place`` true) with the simulated operator (``sim_operator:=true``);
- **known**: the same, with ``manual_place_known_m`` 1.2 mm: the operator places a can only while the box
  estimate knows its compartment worse than that (1 sigma per axis): a box's first can, and any can
  whose search found nothing; the others go in as in the shipped mode, at the estimate.

Levels (`--levels`, default 1,2): the scale of the cell's uncertainty: every sigma of config/cell.yaml
(`SIGMAS`: the box's true xy and yaw, the cans' spots, the grip offsets) times the level; the fixed
``box_error`` stays. The behaviour server's beliefs (the estimate's prior ``box_sigma_xy``, the search's
reach) stay as shipped: level 2 asks how the shipped placement copes with a cell twice as uncertain as it
was built for. Each seed is one draw of the cell (`uncertainty_seed` of /salamander/cell_sim; the
simulated operator's `seed` too) and is run in every mode at every level, so the columns meet the same
boxes and cans (paired; at level 2 the same normal draws, scaled).

Per start the stack is started as the README starts it, `python -m salamander_bringup.runner` on
launch/arm_control.launch.xml, with ``run_on_start:=false`` and ``view:=false`` (no browser view: no
port to share with another run); the seed, the level's sigmas and the mode's parameters are added to the
cell's and the behaviour server's parameters in a copy of the launch file (config/ and urdf/ are the
repository's, linked beside it), and each start gets a private ROS_HOME (no run progress, no box
estimate carried over) in the private ROS_DOMAIN_ID `--domain`. Once the arm, the Cartesian motion node
and the cell are up, the script sends one RunPickPlace goal per can (`--cans`, default every can of the
cell) and records per can (`placement_metrics.Cycle`): the outcome class (clear of all four walls,
touching a wall, on the rim, torn off the pad, held above the box with the run stopped, astray: the
cell's ground truth once the can rests off the pad, and its log line of a tear-off), the cycle time
(goal accepted to result), the operator's time (the ManualAdjust wait, the server's pinned line), the
probes of the rim search (0 without a contact). With ``--one-run`` the start's cans go in one goal, as a
production run and the README demo send them (the rise hands on to the next can's transit, the lease
is taken once): a can's cycle time then runs from the previous can's ``placed`` line (the first can's
from the tree's start, `run_times`) to its own, the behaviour server's log stamps; and, as a production
cell counts its cycle, each can's time from the previous can of the run leaving the pad to its own
(`release_times`, the cell's stamps: the first can's approach from rest and the last one's rise, once per
run, left out).

A can still on the pad when its goal ended (a search that ran out: "no probe of the search passed"; a
contact after ManualAdjust; an abort), a can lost in transit (torn off by an unguarded descent at the
rim: the tree's outcome "lost") or a goal without a result ends that start: the next goal would wait for
an operator. The cans after it run in a new start of the same seed (a fresh cell: the same box and
spots, the cans back on them, no box estimate carried over), so every seed gives every mode and level
its cans: 20 seeds x 3 cans, 60 per column. The table prints one column per mode and level: each class
with count / cans tried and its Wilson 95 % interval, cycle time mean ± sd, operator time per can,
probes per can. With 60 cans per column (the default) a column that places all 60 clear has a lower
bound of 94 %, one with 3 misses lies in 86-98 %; the 3 cans of one seed share a box, so the cans are
not independent draws of the box error (the intervals are optimistic where the box error dominates: more
seeds, not more cans, narrow them). A can the tree skipped before gripping it (a stale signal on a
loaded machine) is listed but not counted. A start whose stack does not come up within 120 s is reported
and skipped. Exit status 1 when no can was measured.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from placement_metrics import (
    KNOWN,
    MANUAL,
    MODE_TEXT,
    MODES,
    ON_PAD,
    OPERATOR_MODES,
    PLAIN,
    SHIPPED,
    UNTOUCHED,
    Cycle,
    find_adjust,
    find_search,
    level_text,
    summarise,
    table,
)

from salamander_control import names, params_file
from salamander_sim.cell.config import cell_param_specs, load_cell_config

REPO = Path(__file__).resolve().parents[1]
LAUNCH = REPO / "launch" / "arm_control.launch.xml"
CELL_CONFIG = REPO / "config" / "cell.yaml"
TITLE = "Salamander placement benchmark"
SIGMAS = ("box_error_sigma_xy", "box_error_sigma_yaw", "can_spot_sigma_xy", "grip_sigma_xy")
"""The cell's uncertainty sigmas a level scales (salamander_sim/cell/config.py)."""
MODE_PARAMS: dict[str, dict[str, str]] = {
    PLAIN: {"manual_place": "false", "guarded_pass": "false", "box_estimate": "false"},
    SHIPPED: {"manual_place": "false"},
    MANUAL: {"manual_place": "true"},
    KNOWN: {"manual_place": "true", "manual_place_known_m": "0.0012"},
}
"""The behaviour server's parameters each mode adds to config/behavior.yaml's."""
READY = (
    re.compile(r"\[trajectory_generator\].*started from the measured joint state"),
    re.compile(r"\[arm_cartesian_motion_node\].*ready:"),
)
OPERATOR_READY = re.compile(r"\[sim_operator\].*simulated operator up")
START_TIMEOUT = 120.0
AT_REST_TIMEOUT = 15.0


def cell_values() -> dict[str, Any]:
    """The cell's parameter values: its defaults under config/cell.yaml's."""
    values = {spec.name: spec.default for spec in cell_param_specs()}
    values.update(params_file.node_values([CELL_CONFIG], names.absolute(names.CELL_SIM)))
    return values


def level_sigmas(values: Mapping[str, Any], level: float) -> dict[str, float]:
    """`SIGMAS` of `values` times `level`.

    Raises:
        ValueError: a level that is not positive, or a scaled sigma outside the cell's range.
    """
    if not level > 0:
        raise ValueError(f"a level must be a positive number, got {level}")
    specs = {spec.name: spec for spec in cell_param_specs()}
    out = {name: float(values[name]) * level for name in SIGMAS}
    for name, value in out.items():
        problem = specs[name].check(value)
        if problem:
            raise ValueError(f"level {level:g}: {problem}")
    return out


def launch_copy(folder: Path, seed: int, mode: str, sigmas: Mapping[str, float]) -> Path:
    """launch/arm_control.launch.xml copied into folder/launch with the seed, sigmas and mode added.

    The cell gets ``uncertainty_seed`` and `sigmas`, the behaviour server `MODE_PARAMS`, the simulated
    operator the seed as its own (started only in the manual mode); config/ and
    urdf/ are linked beside the copy, so its ``$(dirname)/../config`` is the repository's.
    """
    (folder / "launch").mkdir(parents=True)
    for sub in ("config", "urdf"):
        (folder / sub).symlink_to(REPO / sub)
    tree = ET.parse(LAUNCH)
    cell = {"uncertainty_seed": str(seed), **{k: f"{v:.7f}" for k, v in sigmas.items()}}
    # The simulated operator draws its looks, reactions and strokes from the seed too: with one seed for
    # every start, every box met the same sequence of a person's errors (the same phantom 0.8 mm at the
    # third can's second look).
    operator = {"seed": str(seed)}
    added = {"cell_sim": cell, "behavior_server_node": MODE_PARAMS[mode], "sim_operator": operator}
    found = set()
    for node in tree.getroot().iter("node"):
        if node.get("name") in added:
            for name, value in added[node.get("name")].items():
                ET.SubElement(node, "param", {"name": name, "value": value})
            found.add(node.get("name"))
    if found != set(added):
        raise RuntimeError(f"{LAUNCH} starts no {', '.join(sorted(set(added) - found))}")
    path = folder / "launch" / LAUNCH.name
    tree.write(path)
    return path


class Peer:
    """The script's node in the stack's domain: the cell's ground truth and the RunPickPlace client."""

    def __init__(self, domain: int) -> None:
        import json

        import rclpy
        from rclpy.action import ActionClient
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from std_msgs.msg import String

        from salamander_msgs.action import RunPickPlace

        self._json = json
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node("bench_placement", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.state: dict[str, Any] | None = None
        self.node.create_subscription(String, names.absolute(names.CELL_STATE), self._on_state, 10)
        self.action = ActionClient(self.node, RunPickPlace, names.absolute(names.RUN_PICK_PLACE))
        self.goal_type = RunPickPlace.Goal

    def _on_state(self, msg: Any) -> None:
        self.state = self._json.loads(msg.data)

    def spin_until(self, predicate: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return False
            self.executor.spin_once(timeout_sec=0.05)
        return True

    def can(self, can: str) -> dict[str, Any] | None:
        if self.state is None:
            return None
        return next((c for c in self.state["cans"] if c["id"] == can), None)

    def run(self, can: str, timeout: float) -> tuple[str, float | None]:
        """One RunPickPlace goal of `can`: (the tree's outcome for it, seconds from acceptance to result)."""
        outcomes, seconds = self.run_all([can], timeout)
        return outcomes.get(can, "not_run"), seconds

    def run_all(self, cans: Sequence[str], timeout: float) -> tuple[dict[str, str], float | None]:
        """One RunPickPlace goal of every can of `cans`: (the tree's outcome by can, seconds from
        acceptance to result). Without a result: every can's outcome is why, and None."""
        if not self.spin_until(self.action.server_is_ready, 30.0):
            return dict.fromkeys(cans, "no action server"), None
        sent = self.action.send_goal_async(self.goal_type(cans=list(cans)))
        if not self.spin_until(sent.done, 30.0) or not sent.result().accepted:
            return dict.fromkeys(cans, "rejected"), None
        start = time.monotonic()
        result = sent.result().get_result_async()
        if not self.spin_until(result.done, timeout):
            sent.result().cancel_goal_async()
            self.spin_until(result.done, 20.0)
            return dict.fromkeys(cans, "timeout"), None
        seconds = time.monotonic() - start
        answer = result.result().result
        return dict(zip(answer.cans, answer.outcomes, strict=True)), seconds

    def landed(self, can: str, tree: str) -> str:
        """The cell's outcome of `can` once it rests off the pad; "on the pad" while held, "untouched"
        for a can the tree skipped (never gripped), "unknown" when the cell says nothing in time.

        A can the tree placed (released, the switch dropped) is waited for off the pad: a state received
        before the release still shows it attached, and must not count it as held.
        """

        def settled() -> bool:
            entry = self.can(can)
            if entry is None:
                return False
            at_rest = entry["outcome"] is not None and entry.get("on") != "moving"
            return at_rest if tree == "placed" else bool(entry.get("attached")) or at_rest

        if tree == "skipped" or not self.spin_until(settled, AT_REST_TIMEOUT):
            entry = self.can(can)
            if tree == "skipped" and entry is not None and entry["outcome"] is None:
                return UNTOUCHED
            return "unknown" if entry is None or entry["outcome"] is None else str(entry["outcome"]["result"])
        entry = self.can(can)
        assert entry is not None
        return ON_PAD if entry.get("attached") else str(entry["outcome"]["result"])

    def close(self) -> None:
        # The action client first: left to the garbage collector after its context shut down, its
        # DDS reader can deadlock the interpreter's exit (seen with rclpy Kilted / Fast DDS 3.2).
        self.action.destroy()
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        self.context.try_shutdown()


class Stack:
    """The runner on a launch copy, its output kept (and written to `log`)."""

    def __init__(self, launch: Path, args: list[str], domain: int, ros_home: Path, log: Path) -> None:
        env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROS_HOME": str(ros_home), "PYTHONUNBUFFERED": "1"}
        cmd = [sys.executable, "-m", "salamander_bringup.runner", str(launch), *args]
        self.log = log.open("w")
        self.proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, process_group=0)  # fmt: skip
        self.lines: list[str] = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))
            self.log.write(line)

    def text(self) -> list[str]:
        with self.lock:
            return list(self.lines)

    def seen(self, pattern: re.Pattern[str]) -> bool:
        return any(pattern.search(line) for line in self.text())

    def stop(self) -> None:
        """Ctrl-C the runner's process group (it stops its nodes); kill it if that hangs."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.reader.join(5)
        self.log.close()


def box_error(state: dict[str, Any] | None, layout: Any) -> str:
    """The true box pose against the configured one, "dx, dy mm, dyaw mrad" (from the cell's state)."""
    box = (state or {}).get("box")
    if not isinstance(box, dict):
        return "n/a"
    dx, dy = (box["xy"][0] - layout.box_x) * 1000, (box["xy"][1] - layout.box_y) * 1000
    return f"{dx:+.1f}, {dy:+.1f} mm, {(box['yaw'] - layout.box_yaw) * 1000:+.1f} mrad"


def run_start(
    mode: str, level: float, seed: int, cans: Sequence[str], args: argparse.Namespace, layout: Any,
    sigmas: Mapping[str, float], start: int,
) -> tuple[list[Cycle], str]:
    """One stack start: the cans of `cans` in `mode` at `level`, in order, until one ends the start.

    Returns the cycles (the last one the can that ended the start, if any) and the seed's box error.
    """
    manual = mode in OPERATOR_MODES
    with tempfile.TemporaryDirectory(prefix="bench_placement_") as tmp:
        launch = launch_copy(Path(tmp) / "tree", seed, mode, sigmas)
        home = Path(tmp) / "ros_home"
        launch_args = ["run_on_start:=false", "view:=false", f"sim_operator:={'true' if manual else 'false'}",
                       *args.launch_arg]  # fmt: skip
        log = args.logs / f"seed{seed}_x{level:g}_{mode}{f'_start{start}' if start > 1 else ''}.log"
        stack = Stack(launch, launch_args, args.domain, home, log)
        peer = Peer(args.domain)
        cycles: list[Cycle] = []
        tag = f"seed {seed} {level_text(level)} {mode:7s}" + (f" (start {start})" if start > 1 else "")
        try:
            wanted = [*READY, *([OPERATOR_READY] if manual else [])]
            up = peer.spin_until(
                lambda: stack.proc.poll() is None and peer.state is not None and all(map(stack.seen, wanted)),
                START_TIMEOUT,
            )
            if not up:
                tail = "\n".join(stack.text()[-15:])
                print(f"  {tag}: the stack did not come up in {START_TIMEOUT:g} s (log {log}); last "
                      f"lines:\n{tail}", flush=True)
                return [], "n/a (no start)"
            box = box_error(peer.state, layout)
            if args.one_run:
                outcomes, run_s = peer.run_all(cans, args.run_timeout * len(cans))
                ran = stack.text()  # the run's log, read once for both timings
                in_run, released = run_times(ran, cans, time.time()), release_times(ran, cans)
            for can in cans:
                if args.one_run:
                    tree = outcomes.get(can, "not_run")
                    if tree == "not_run":
                        break  # the run stopped before it: the next start places it
                    seconds = in_run.get(can) if run_s is not None else None
                else:
                    tree, seconds = peer.run(can, args.run_timeout)
                # A goal refused or never sent tried nothing: the can counts as skipped unless the cell
                # saw it move; one that timed out is judged where it rests (on the pad: held).
                cell = peer.landed(can, tree if seconds is not None or tree == "timeout" else "skipped")
                lines = stack.text()
                adjust = find_adjust(lines, can) if manual else None
                search = find_search(lines, can)
                cycle = Cycle(mode, level, seed, can, tree, cell, seconds, adjust, search, start,
                              released.get(can) if args.one_run else None)  # fmt: skip
                cycles.append(cycle)
                print(f"  {tag} {can}: tree {tree}, cell {cell} -> {cycle.outcome}, "
                      f"{'-' if seconds is None else f'{seconds:.1f} s'}, probes {cycle.search.probes}",
                      flush=True)  # fmt: skip
                if seconds is None or tree == "lost" or cell == ON_PAD or (peer.state or {}).get("held"):
                    break  # no result, a can lost or on the pad: the next goal would wait for an operator
        finally:
            peer.close()
            stack.stop()
    return cycles, box


RUN_STARTED = re.compile(r"\[(?P<t>\d+\.\d+)\] \[[^\]]*behavior_server_node\]: run started: ")
TREE_STARTED = re.compile(
    r"\[(?P<t>\d+\.\d+)\] \[[^\]]*behavior_server_node\]: arm and gripper ready: starting the run"
)
CAN_PLACED = re.compile(r"\[(?P<t>\d+\.\d+)\] \[[^\]]*behavior_server_node\]: (?P<can>can_\d+): placed \(")
LEFT_PAD = re.compile(r"\[(?P<t>\d+\.\d+)\] \[[^\]]*cell_sim\]: (?P<can>can_\d+) left the pad")


def run_times(lines: Sequence[str], cans: Sequence[str], ended: float) -> dict[str, float]:
    """`--one-run`: each can's seconds within the run, from the behaviour server's log stamps.

    A can's time runs from the previous can's ``placed`` line to its own. The first can's runs from the
    tree's start (``arm and gripper ready: starting the run``), or from ``run started`` without that
    line: a run accepted while the cell's driver is still coming up waits for the gripper before its
    tree starts (seen: up to 1.7 s on 7 of 20 starts), which is the stack's start-up, not a can's cycle.
    The can that ended the run without a ``placed`` line runs to `ended` (wall clock, s: the result's
    arrival; the stamps are the nodes' wall clock too). Cans after it are left out.
    """
    begun = [float(m["t"]) for line in lines if (m := RUN_STARTED.search(line))]
    placed = {m["can"]: float(m["t"]) for line in lines if (m := CAN_PLACED.search(line))}
    if not begun:
        return {}
    tree = [t for line in lines if (m := TREE_STARTED.search(line)) and (t := float(m["t"])) >= begun[-1]]
    times, previous = {}, tree[0] if tree else begun[-1]
    for can in cans:
        end = placed.get(can, ended)
        times[can] = end - previous
        if can not in placed:
            break
        previous = end
    return times


def release_times(lines: Sequence[str], cans: Sequence[str]) -> dict[str, float]:
    """`--one-run`: each can's seconds from the previous can of the run leaving the pad to its own.

    The cell's ``<can> left the pad`` stamps (its ground truth, not the tree's). A production cell's cycle
    time: the first can's approach from rest and the last can's rise to its end come once per run, not
    per can, and are left out. Only cans whose predecessor in `cans` left the pad in the same run count.
    """
    left = {m["can"]: float(m["t"]) for line in lines if (m := LEFT_PAD.search(line))}
    return {
        can: left[can] - left[before]
        for before, can in zip(cans, cans[1:], strict=False)
        if before in left and can in left and left[can] > left[before]
    }


def run_mode(
    mode: str, level: float, seed: int, cans: Sequence[str], args: argparse.Namespace, layout: Any,
    sigmas: Mapping[str, float],
) -> tuple[list[Cycle], str]:
    """Every can of `cans` in `mode` at `level`: one start, and a new one (same seed) after a can that
    ended a start, with the cans left; the cycles and the seed's box error.

    A stack that does not come up ends the mode's cans for this seed (no retry).
    """
    cycles: list[Cycle] = []
    box, left, start = "n/a (no start)", list(cans), 1
    while left:
        done, seen = run_start(mode, level, seed, left, args, layout, sigmas, start)
        if not done:
            break
        cycles += done
        box = seen if box.startswith("n/a") else box
        left = left[len(done):]
        start += 1
    return cycles, box


def detail(cycles: Sequence[Cycle], boxes: Mapping[tuple[int, float], str]) -> str:
    out = ["| seed | level | true box - configured | mode | can | tree | cell | outcome | cycle [s] | probes "
           "| offset [mm] | wait [s] | looks |", "|---:|---|---|---|---|---|---|---|---:|---:|---|---:|---:|"]
    for c in cycles:
        a = c.adjust
        offset = "-" if a is None else ", ".join(f"{v:.1f}" for v in a.offset_mm[:2])
        cycle = "-" if c.cycle_s is None else f"{c.cycle_s:.1f}"
        wait = "-" if a is None else f"{a.seconds:.1f}"
        looks = "-" if a is None or a.looks is None else str(a.looks)
        probes = str(c.search.probes) + (" (contact)" if c.search.contact and not c.search.probes else "")
        box = boxes.get((c.seed, c.level), "n/a")
        seed = f"{c.seed}" + (f" (start {c.start})" if c.start > 1 else "")
        out.append(f"| {seed} | x{c.level:g} | {box} | {c.mode} | {c.can} | {c.tree} | {c.cell} "
                   f"| {c.outcome} | {cycle} | {probes} | {offset} | {wait} | {looks} |")
    return "\n".join(out)


def parse_levels(text: str) -> list[float]:
    """ "1,2" -> [1.0, 2.0] (argparse type)."""
    try:
        levels = [float(v) for v in text.split(",") if v.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"levels must be numbers separated by commas, got {text!r}") from err
    if not levels:
        raise argparse.ArgumentTypeError("at least one level")
    return levels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="cell uncertainty draws, each in every mode")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--cans", type=int, default=0, help="cans per start (0: every can of the cell)")
    parser.add_argument("--levels", type=parse_levels, default=[1.0, 2.0],
                        help="uncertainty scales, comma-separated (1,2: shipped and twice it)")  # fmt: skip
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--quick", action="store_true", help="1 seed, 1 can per mode, level 1 (smoke run)")
    parser.add_argument("--run-timeout", type=float, default=150.0, help="s per can before it counts as hung")
    parser.add_argument("--domain", type=int, default=104, help="private ROS_DOMAIN_ID (not the suite's)")
    parser.add_argument("--logs", type=Path, default=Path("/tmp/bench_placement"),
                        help="one runner log per seed, level and mode")  # fmt: skip
    parser.add_argument("--launch-arg", action="append", default=[], metavar="NAME:=VALUE")
    parser.add_argument("--one-run", action="store_true",
                        help="one RunPickPlace goal of a start's cans (as a production run and the README "
                             "demo), each can timed from the previous can's placed line; default: one goal "
                             "per can, timed from acceptance to result")  # fmt: skip
    args = parser.parse_args()
    seeds_n, cans_n, levels = (1, 1, [1.0]) if args.quick else (args.seeds, args.cans, args.levels)
    layout = load_cell_config(CELL_CONFIG).layout
    cans = layout.can_ids[: cans_n or None]
    seeds = list(range(args.first_seed, args.first_seed + seeds_n))
    modes = [m for m in MODES if m in args.modes]
    values = cell_values()
    try:
        sigmas = {level: level_sigmas(values, level) for level in levels}
    except ValueError as err:
        parser.error(str(err))
    args.logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(f"# {TITLE}\n")
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average at start "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for level in levels:
        print(f"{level_text(level)}: " + ", ".join(f"{k} {v:g}" for k, v in sigmas[level].items())
              + f", box_error {values['box_error']}")  # fmt: skip
    print(f"seeds {seeds[0]}..{seeds[-1]}, cans {', '.join(cans)} per seed, modes {', '.join(modes)}; "
          f"{len(seeds) * len(levels) * len(modes)} stack starts (more where a can ends one); "
          f"logs in {args.logs}\n")
    cycles: list[Cycle] = []
    boxes: dict[tuple[int, float], str] = {}
    for seed in seeds:
        for level in levels:
            for mode in modes:
                done, box = run_mode(mode, level, seed, cans, args, layout, sigmas[level])
                cycles += done
                if box != "n/a (no start)" or (seed, level) not in boxes:
                    boxes[(seed, level)] = box
    if not cycles:
        print("measurement failed: no can was measured", file=sys.stderr)
        return 1
    print("\n## Per can\n")
    print(detail(cycles, boxes))
    print("\n## Side by side\n")
    columns = [(f"{MODE_TEXT[m]}, {level_text(level)}",
                summarise([c for c in cycles if c.mode == m and c.level == level]))
               for level in levels for m in modes]  # fmt: skip
    print(table(columns))
    minutes = (time.monotonic() - started) / 60
    print(f"\n{sum(c.outcome != UNTOUCHED for c in cycles)} cans tried in {minutes:.1f} min; "
          f"load average at end {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
