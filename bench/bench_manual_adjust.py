#!/usr/bin/env python3
"""What ManualAdjust buys: autonomous placement against ManualAdjust with the simulated operator, one run.

Run from the repository root inside scripts/env.sh::

    python bench/bench_manual_adjust.py                # 5 seeds x 3 cans per mode (~10 stack starts, ~10 min)
    python bench/bench_manual_adjust.py --seeds 2      # shorter
    python bench/bench_manual_adjust.py --quick        # 1 seed, 1 can per mode (~1.5 min)

Each seed is one draw of the cell's uncertainty (`uncertainty_seed` of /salamander/cell_sim: the box's
true pose, the cans' true spots, the grip offsets; the sigmas are config/cell.yaml's defaults) and is run
in both modes, one after the other, so the two columns meet the same boxes and cans (a paired
comparison). Per seed and mode the stack is started as the README starts it, `python -m
salamander_bringup.runner` on launch/arm_control.launch.xml, with ``run_on_start:=false``,
``view:=false`` (no browser view: no port to share with another run) and ``sim_operator:=true`` in the
manual mode; the seed and ``manual_place`` are added to the cell's and the behaviour server's
parameters in a copy of the launch file (config/ and urdf/ are the repository's, linked beside it), and
each start gets a private ROS_HOME (the run's progress) in the private ROS_DOMAIN_ID `--domain`.

Once the arm, the Cartesian motion node and the cell are up, the script sends one RunPickPlace goal per
can (`--cans`, default every can of the cell) and records, per can (`manual_adjust_metrics.Cycle`):

- **success**: the cell's ground truth once the can is at rest off the pad: ``in_box_clear`` (in its
  compartment, clear of all four walls) or not (touching a wall, on the rim, tipped, ...);
- **cycle time**: from the goal's acceptance to its result (pick, carry, the wait, release, rise);
- with ManualAdjust: the offset the operator confirmed and the wait's length (the behaviour server's
  line ``ManualAdjust[place_can_k]: confirmed, offset [x, y, z] mm after T s``), and the operator's looks.

A can left on the pad (an abort) ends that start: the next goal would wait for an operator at the pad.
The table prints both modes side by side with the Wilson 95 % interval of each success rate. With 15
cans per mode (the default) a mode that places all 15 has a lower bound of 80 %, one that places 9 is
somewhere in 36-80 %: enough to tell "misses a third" from "misses none", not to pin a rate to a few
per cent; the 3 cans of one seed share a box, so the cans are not independent draws of the box error
(the interval is optimistic when the box error dominates). A can the tree skipped before gripping it
(e.g. a stale signal on a loaded machine) is listed but not counted: no placement was tried. A start
whose stack does not come up within 120 s is reported and skipped. Exit status 1 when no can was measured.
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
from pathlib import Path
from typing import Any

from manual_adjust_metrics import AUTONOMOUS, MANUAL, Cycle, find_adjust, summarise, table

from salamander_control import names, params_file
from salamander_sim.cell.config import cell_param_specs, load_cell_config

REPO = Path(__file__).resolve().parents[1]
LAUNCH = REPO / "launch" / "arm_control.launch.xml"
CELL_CONFIG = REPO / "config" / "cell.yaml"
TITLE = "Salamander ManualAdjust benchmark"
UNCERTAINTY = ("box_error_sigma_xy", "box_error_sigma_yaw", "box_error", "can_spot_sigma_xy", "grip_sigma_xy")
READY = (
    re.compile(r"\[trajectory_generator\].*started from the measured joint state"),
    re.compile(r"\[arm_cartesian_motion_node\].*ready:"),
)
OPERATOR_READY = re.compile(r"\[sim_operator\].*simulated operator up")
START_TIMEOUT = 120.0
AT_REST_TIMEOUT = 15.0


def launch_copy(folder: Path, seed: int, manual: bool) -> Path:
    """launch/arm_control.launch.xml copied into folder/launch with the seed and manual_place added.

    config/ and urdf/ are linked beside it, so the copy's ``$(dirname)/../config`` is the repository's.
    """
    (folder / "launch").mkdir(parents=True)
    for sub in ("config", "urdf"):
        (folder / sub).symlink_to(REPO / sub)
    tree = ET.parse(LAUNCH)
    added = {"cell_sim": ("uncertainty_seed", str(seed)),
             "behavior_server_node": ("manual_place", "true" if manual else "false")}  # fmt: skip
    found = set()
    for node in tree.getroot().iter("node"):
        if node.get("name") in added:
            name, value = added[node.get("name")]
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
        self.node = Node("bench_manual_adjust", context=self.context)
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
        if not self.spin_until(self.action.server_is_ready, 30.0):
            return "no action server", None
        sent = self.action.send_goal_async(self.goal_type(cans=[can]))
        if not self.spin_until(sent.done, 30.0) or not sent.result().accepted:
            return "rejected", None
        start = time.monotonic()
        result = sent.result().get_result_async()
        if not self.spin_until(result.done, timeout):
            sent.result().cancel_goal_async()
            self.spin_until(result.done, 20.0)
            return "timeout", None
        seconds = time.monotonic() - start
        answer = result.result().result
        outcomes = dict(zip(answer.cans, answer.outcomes, strict=True))
        return outcomes.get(can, "not_run"), seconds

    def landed(self, can: str, tree: str) -> str:
        """The cell's outcome of `can` once it rests off the pad; "on the pad" while held, "untouched"
        for a can the tree skipped (never gripped), "unknown" when the cell says nothing in time."""

        def settled() -> bool:
            entry = self.can(can)
            if entry is None:
                return False
            at_rest = entry["outcome"] is not None and entry.get("on") != "moving"
            return bool(entry.get("attached")) or at_rest

        if tree == "skipped" or not self.spin_until(settled, AT_REST_TIMEOUT):
            entry = self.can(can)
            if tree == "skipped" and entry is not None and entry["outcome"] is None:
                return "untouched"
            return "unknown" if entry is None or entry["outcome"] is None else str(entry["outcome"]["result"])
        entry = self.can(can)
        assert entry is not None
        return "on the pad" if entry.get("attached") else str(entry["outcome"]["result"])

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


def run_mode(
    mode: str, seed: int, cans: tuple[str, ...], args: argparse.Namespace, logs: Path, layout: Any
) -> tuple[list[Cycle], str]:
    """One stack start: every can of `cans` in `mode`; the cycles and the seed's box error."""
    manual = mode == MANUAL
    with tempfile.TemporaryDirectory(prefix="bench_manual_adjust_") as tmp:
        launch = launch_copy(Path(tmp) / "tree", seed, manual)
        home = Path(tmp) / "ros_home"
        launch_args = ["run_on_start:=false", "view:=false", f"sim_operator:={'true' if manual else 'false'}",
                       *args.launch_arg]  # fmt: skip
        stack = Stack(launch, launch_args, args.domain, home, logs / f"seed{seed}_{mode}.log")
        peer = Peer(args.domain)
        cycles: list[Cycle] = []
        try:
            wanted = [*READY, *([OPERATOR_READY] if manual else [])]
            up = peer.spin_until(
                lambda: stack.proc.poll() is None and peer.state is not None and all(map(stack.seen, wanted)),
                START_TIMEOUT,
            )
            if not up:
                tail = "\n".join(stack.text()[-15:])
                print(f"  seed {seed} {mode}: the stack did not come up in {START_TIMEOUT:g} s (log "
                      f"{stack.log.name}); last lines:\n{tail}", flush=True)
                return [], "n/a (no start)"
            box = box_error(peer.state, layout)
            for can in cans:
                tree, seconds = peer.run(can, args.run_timeout)
                cell = peer.landed(can, tree) if seconds is not None else None
                adjust = find_adjust(stack.text(), can) if manual else None
                cycles.append(Cycle(mode, seed, can, tree, cell, seconds, adjust))
                print(f"  seed {seed} {mode:10s} {can}: tree {tree}, cell {cell}, "
                      f"{'-' if seconds is None else f'{seconds:.1f} s'}", flush=True)
                if seconds is None or tree == "lost" or (peer.state or {}).get("held"):
                    break  # no result, a can lost or on the pad: the next goal would wait for an operator
        finally:
            peer.close()
            stack.stop()
    return cycles, box


def detail(cycles: list[Cycle], boxes: dict[int, str]) -> str:
    out = ["| seed | true box - configured | mode | can | tree | cell | cycle [s] | offset [mm] | wait [s] |"
           " looks |", "|---:|---|---|---|---|---|---:|---|---:|---:|"]
    for c in cycles:
        a = c.adjust
        offset = "-" if a is None else ", ".join(f"{v:.1f}" for v in a.offset_mm[:2])
        cycle = "-" if c.cycle_s is None else f"{c.cycle_s:.1f}"
        wait = "-" if a is None else f"{a.seconds:.1f}"
        looks = "-" if a is None or a.looks is None else str(a.looks)
        out.append(f"| {c.seed} | {boxes.get(c.seed, 'n/a')} | {c.mode} | {c.can} | {c.tree} | {c.cell} "
                   f"| {cycle} | {offset} | {wait} | {looks} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="cell uncertainty draws, each run in both modes")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--cans", type=int, default=0, help="cans per start (0: every can of the cell)")
    parser.add_argument("--quick", action="store_true", help="1 seed, 1 can per mode (the smoke run)")
    parser.add_argument("--run-timeout", type=float, default=150.0, help="s per can before it counts as hung")
    parser.add_argument("--domain", type=int, default=104, help="private ROS_DOMAIN_ID (not the suite's)")
    parser.add_argument("--logs", type=Path, default=Path("/tmp/bench_manual_adjust"),
                        help="one runner log per seed and mode")  # fmt: skip
    parser.add_argument("--launch-arg", action="append", default=[], metavar="NAME:=VALUE")
    args = parser.parse_args()
    seeds_n, cans_n = (1, 1) if args.quick else (args.seeds, args.cans)
    layout = load_cell_config(CELL_CONFIG).layout
    cans = layout.can_ids[: cans_n or None]
    seeds = list(range(args.first_seed, args.first_seed + seeds_n))
    args.logs.mkdir(parents=True, exist_ok=True)
    values = {spec.name: spec.default for spec in cell_param_specs()}
    values.update(params_file.node_values([CELL_CONFIG], names.absolute(names.CELL_SIM)))
    print(f"# {TITLE}\n")
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average at start "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"cell uncertainty (config/cell.yaml, else the cell's defaults): "
          f"{', '.join(f'{k} {values[k]}' for k in UNCERTAINTY if k in values) or 'none configured'}")
    print(f"seeds {seeds[0]}..{seeds[-1]}, cans {', '.join(cans)} per seed and mode; logs in {args.logs}\n")
    cycles: list[Cycle] = []
    boxes: dict[int, str] = {}
    for seed in seeds:
        for mode in (AUTONOMOUS, MANUAL):
            done, box = run_mode(mode, seed, cans, args, args.logs, layout)
            cycles += done
            if box != "n/a (no start)" or seed not in boxes:
                boxes[seed] = box
    if not cycles:
        print("measurement failed: no can was measured", file=sys.stderr)
        return 1
    print("\n## Per can\n")
    print(detail(cycles, boxes))
    print("\n## Side by side\n")
    auto = summarise([c for c in cycles if c.mode == AUTONOMOUS])
    manual = summarise([c for c in cycles if c.mode == MANUAL])
    print(table(auto, manual))
    print(f"\nload average at end {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
