#!/usr/bin/env python3
"""The first motion after start-up: commanded against measured joint speeds (issue 23, item 5).

Run from the repository root inside scripts/env.sh::

    python bench/startup_speed.py                      # 10 stacks, every other one under CPU load
    python bench/startup_speed.py --stacks 4 --load 0  # 4 stacks, no added load

Each stack: `python -m salamander_bringup.runner launch/arm_control.launch.xml` with the launch file's
defaults (the simulated arm and cell, the demo run on start) in a private ROS_DOMAIN_ID (`--domain`,
default 105) and a fresh ROS_HOME. With `--load N`, every other stack runs next to N busy processes
(one per core: the start-up of nine Python processes then competes for the CPU). This script's node
records every /arm/joint_command and /joint_states: the receive time (monotonic), the header stamp,
positions and velocities, until `--window` s after the first motion (the first command that differs
from the first one sent), then stops the stack (SIGINT to its process group).

Printed per stack, per joint (base_yaw .. wrist_yaw), the largest value over [first motion - 0.2 s,
first motion + window] of:

- ``cmd``: |dq / dstamp| between consecutive commands; ``cmd.v``: their velocity field;
- ``js.v``: the /joint_states velocity field (the simulated motors' mean over their tick);
- ``js/stamp``: |dq / dstamp| between consecutive joint states; ``js/recv``: |dq / dreceive|;
- ``w/stamp``, ``w/recv``: the same over windows of at least 0.1 s (a monitor's view);

the generator's max_velocity (config/motion_limits.yaml) under them; a value above it is marked ``!``.
Then the largest gaps between consecutive stamps and receive times of each topic and any line of the
stack that says a goal was dropped or the arm re-anchored. At the end, per row: in how many stacks a
joint went above its limit, and the largest speed / limit. ``js.v``, ``js/stamp`` and ``w/stamp`` are
the simulated arm's own motion; the ``recv`` rows add this script's receive-time jitter (a monitor that
times samples by their arrival reads those). Exit status 1 when a stack did not move.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
LAUNCH = REPO / "launch" / "arm_control.launch.xml"
JOINTS = ("base_yaw", "shoulder_pitch", "beam_pitch", "wrist_pitch", "wrist_yaw")
MOVED = 1e-4
"""rad: a command this far from the first one is the first motion."""
BEFORE_S = 0.2
"""s before the first motion that the maxima include."""
WINDOW_MIN_S = 0.1
"""s: the shortest span of the windowed speeds."""
MARKS = ("re-anchored", "dropped", "stands still", "disagrees", "holding", "stop hit")


def motion_limits() -> tuple[float, ...]:
    """The generator's max_velocity per joint, from config/motion_limits.yaml."""
    data = yaml.safe_load((REPO / "config" / "motion_limits.yaml").read_text())
    ((_, section),) = data.items()
    v = section["ros__parameters"]["max_velocity"]
    return tuple(float(v[j]) for j in JOINTS)


@dataclass
class Stream:
    """Every message of one JointState topic: receive time and stamp (s), positions, velocities."""

    recv: list[float] = field(default_factory=list)
    stamp: list[float] = field(default_factory=list)
    pos: list[tuple[float, ...]] = field(default_factory=list)
    vel: list[tuple[float, ...]] = field(default_factory=list)

    def on_msg(self, msg) -> None:
        """Subscription callback: record the message in joint order (messages without all five: skipped)."""
        recv = time.monotonic()
        by_name = dict(zip(msg.name, msg.position, strict=False))
        if not all(j in by_name for j in JOINTS):
            return
        vels = dict(zip(msg.name, msg.velocity, strict=False))
        self.recv.append(recv)
        self.stamp.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
        self.pos.append(tuple(by_name[j] for j in JOINTS))
        self.vel.append(tuple(vels.get(j, math.nan) for j in JOINTS))

    def between(self, t0: float, t1: float) -> Stream:
        """The messages stamped in [t0, t1]."""
        keep = [i for i, s in enumerate(self.stamp) if t0 <= s <= t1]
        return Stream(
            [self.recv[i] for i in keep], [self.stamp[i] for i in keep],
            [self.pos[i] for i in keep], [self.vel[i] for i in keep],
        )  # fmt: skip


def first_motion(commands: Stream) -> float | None:
    """The stamp of the first command that differs from the first one by more than MOVED, or None."""
    if not commands.pos:
        return None
    q0 = commands.pos[0]
    for stamp, q in zip(commands.stamp, commands.pos, strict=True):
        if max(abs(a - b) for a, b in zip(q, q0, strict=True)) > MOVED:
            return stamp
    return None


def pairwise_speed(times: list[float], pos: list[tuple[float, ...]]) -> list[float]:
    """Per joint, the largest |dq / dt| between consecutive samples (dt <= 0: skipped)."""
    worst = [0.0] * len(JOINTS)
    for i in range(1, len(times)):
        dt = times[i] - times[i - 1]
        if dt <= 1e-6:
            continue
        worst = [max(w, abs(y - x) / dt) for w, x, y in zip(worst, pos[i - 1], pos[i], strict=True)]
    return worst


def window_speed(times: list[float], pos: list[tuple[float, ...]], span: float = WINDOW_MIN_S) -> list[float]:
    """Per joint, the largest |dq / dt| between a sample and the newest one at least `span` before it."""
    worst = [0.0] * len(JOINTS)
    j = 0
    for i, t in enumerate(times):
        while j + 1 < i and times[j + 1] <= t - span:
            j += 1
        if t - times[j] < span:
            continue
        worst = [max(w, abs(y - x) / (t - times[j])) for w, x, y in zip(worst, pos[j], pos[i], strict=True)]
    return worst


def max_abs(rows: list[tuple[float, ...]]) -> list[float]:
    """Per joint, the largest |value| (NaN where there is none)."""
    if not rows:
        return [math.nan] * len(JOINTS)
    return [
        max((abs(r[k]) for r in rows if math.isfinite(r[k])), default=math.nan) for k in range(len(JOINTS))
    ]


def max_gap(values: list[float]) -> float:
    """The largest difference between consecutive values (0 for fewer than two)."""
    return max((b - a for a, b in zip(values, values[1:], strict=False)), default=0.0)


def report(
    commands: Stream, states: Stream, window: float, limits: tuple[float, ...]
) -> tuple[str, dict[str, float]]:
    """The table of one stack (see the module docstring) and, per row, the largest speed / limit."""
    t0 = first_motion(commands)
    if t0 is None:
        return "no motion recorded", {}
    cmd = commands.between(t0 - BEFORE_S, t0 + window)
    js = states.between(t0 - BEFORE_S, t0 + window)
    rows = {
        "cmd": pairwise_speed(cmd.stamp, cmd.pos),
        "cmd.v": max_abs(cmd.vel),
        "js.v": max_abs(js.vel),
        "js/stamp": pairwise_speed(js.stamp, js.pos),
        "js/recv": pairwise_speed(js.recv, js.pos),
        "w/stamp": window_speed(js.stamp, js.pos),
        "w/recv": window_speed(js.recv, js.pos),
    }
    lines = [f"{'':9s}" + "".join(f"{j:>16s}" for j in JOINTS)]
    ratios = {}
    for name, values in rows.items():
        cells = []
        for v, lim in zip(values, limits, strict=True):
            bad = math.isfinite(v) and v > lim * 1.001
            cells.append(f"{v:15.3f}{'!' if bad else ' '}")
        finite = [v / lim for v, lim in zip(values, limits, strict=True) if math.isfinite(v)]
        ratios[name] = max(finite, default=0.0)
        lines.append(f"{name:9s}" + "".join(cells))
    lines.append(f"{'limit':9s}" + "".join(f"{v:15.3f} " for v in limits))
    lines.append(
        f"{len(cmd.stamp)} commands, {len(js.stamp)} joint states; largest gaps (ms): commands stamp "
        f"{max_gap(cmd.stamp) * 1e3:.1f} / receive {max_gap(cmd.recv) * 1e3:.1f}, joint states stamp "
        f"{max_gap(js.stamp) * 1e3:.1f} / receive {max_gap(js.recv) * 1e3:.1f}"
    )
    return "\n".join(lines), ratios


class Recorder:
    """A node in the stack's domain that records both topics on a thread of its own."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState

        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node("startup_speed_recorder", context=self.context)
        qos = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
        self.commands, self.states = Stream(), Stream()
        self.node.create_subscription(JointState, "/arm/joint_command", self.commands.on_msg, qos)
        self.node.create_subscription(JointState, "/joint_states", self.states.on_msg, qos)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self.node.destroy_node()
        self.context.try_shutdown()


def burners(n: int) -> list[subprocess.Popen]:
    """`n` processes that keep a core busy each."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def one_stack(index: int, args: argparse.Namespace, limits: tuple[float, ...]) -> dict[str, float]:
    """Start, record and stop one stack; print its table. Per row, the largest speed / limit ({}: none)."""
    loaded = args.load > 0 and index % 2 == 1
    load = burners(args.load) if loaded else []
    home = Path(tempfile.mkdtemp(prefix="startup_speed_"))
    env = {**os.environ, "ROS_DOMAIN_ID": str(args.domain), "ROS_HOME": str(home),
           "RCUTILS_LOGGING_BUFFERED_STREAM": "0", "PYTHONUNBUFFERED": "1"}  # fmt: skip
    rec = Recorder(args.domain)
    log = home / "stack.log"
    started = time.monotonic()
    with log.open("w") as out:
        runner = subprocess.Popen(
            [sys.executable, "-m", "salamander_bringup.runner", str(LAUNCH)], env=env, stdout=out,
            stderr=subprocess.STDOUT, process_group=0, cwd=REPO,
        )  # fmt: skip
        try:
            deadline = started + args.timeout
            moved_at = None
            while time.monotonic() < deadline and runner.poll() is None:
                if moved_at is None and first_motion(rec.commands) is not None:
                    moved_at = time.monotonic()
                if moved_at is not None and time.monotonic() > moved_at + args.window + 0.5:
                    break
                time.sleep(0.1)  # a bench's polling of its own recorder thread, not a test's synchronisation
        finally:
            os.killpg(runner.pid, signal.SIGINT)
            try:
                runner.wait(timeout=30.0)
            except subprocess.TimeoutExpired:
                os.killpg(runner.pid, signal.SIGKILL)
                runner.wait()
            rec.close()
            for p in load:
                p.kill()
                p.wait()
    text, ratios = report(rec.commands, rec.states, args.window, limits)
    lines = log.read_text(errors="replace").splitlines()
    marks = [line.rstrip() for line in lines if any(m in line for m in MARKS)]
    if args.dump:
        dump = {k: vars(getattr(rec, k)) for k in ("commands", "states")}
        (home / "streams.json").write_text(json.dumps(dump))
    print(f"--- stack {index}{' (under load: ' + str(args.load) + ' busy processes)' if loaded else ''}, "
          f"{time.monotonic() - started:.0f} s, log {log}")  # fmt: skip
    print(text)
    for line in marks[:8]:
        print(f"    {line[:200]}")
    sys.stdout.flush()
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=10)
    parser.add_argument("--load", type=int, default=2, help="busy processes next to every other stack")
    parser.add_argument("--window", type=float, default=3.0, help="s recorded after the first motion")
    parser.add_argument("--timeout", type=float, default=120.0, help="s to wait for the first motion")
    parser.add_argument("--domain", type=int, default=105, help="private ROS_DOMAIN_ID (not the suite's)")
    parser.add_argument("--dump", action="store_true", help="write both streams to streams.json by the log")
    args = parser.parse_args(argv)
    limits = motion_limits()
    results = [one_stack(i, args, limits) for i in range(args.stacks)]
    moved = [r for r in results if r]
    print(f"\n{len(results)} stacks, {len(moved)} moved; per row: stacks over the limit, largest speed/limit")
    for name in moved[0] if moved else ():
        worst = max(r[name] for r in moved)
        over = sum(r[name] > 1.001 for r in moved)
        print(f"  {name:9s} {over:3d} of {len(moved)}   {worst:.3f}")
    return 0 if len(moved) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
