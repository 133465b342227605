#!/usr/bin/env python3
"""Latency from a /joy message to the /arm/joint_target it causes, against the real controller_node.

Run from the repository root (inside scripts/env.sh)::

    python bench/bench_teleop.py            # 2,000 measured Joys per subject (~1 min)
    python bench/bench_teleop.py --quick    # 100 (~10 s; test/test_bench_smoke.py)

What it measures:

* subjects, each a separate process in a DDS domain of its own: the real
  `salamander_teleop.nodes.controller_node` with its launch files, config/arm.yaml and config/teleop.yaml
  (but `target_rate_hz` 1 Hz, so its timer adds no fill-in targets: every target is the answer to a Joy,
  which makes answers countable; the timer is not on the Joy-to-target path), and a baseline measured
  in the same run,
  a minimal rclpy relay that republishes every Joy as a JointState with no logic at all (this script
  with ``--relay``). The ratio controller / relay is what the controller's own work costs.
* stimulus: Joy messages every `--period` s (default 15 ms), alternating "left stick deflected" (up or
  down, alternately) and "stick centred", stamped at publication, as joy_node publishes stick motion.
  the measured state at rest (/arm/joint_states_monitor, as the generator republishes it) at 50 Hz for
  the controller's jog.
* latency: for every deflected Joy, the time from just before `publish` to the arrival of the first
  joint target after it (in manual mode a deflection from centre starts a jog, which the controller
  answers at once; a centred Joy stops it and is not answered). Both subjects are measured on the same
  deflected Joys, after a warm-up. The relay answers every Joy; only the deflected ones are counted.
  A deflected Joy not answered before the next one counts as infinitely late in the percentiles. (The
  controller sends at most `joy_rate_limit_hz` = 100 Joy-driven targets per second: if load makes two
  deflected Joys arrive within 10 ms and the jog ends before the next timer tick, the second jog, which
  moved nothing, is not answered; the 30 ms between deflected Joys keeps that rare.)

Under the stack's own load (``--under-stack``): the README's stack (the runner on
launch/arm_control.launch.xml, with the simulated operator and `manual_place` true so that its run
places every can and lasts ~40 s) runs in a DDS domain of its own, in a private ROS_HOME, and both
subjects are measured while that run is in progress (the script waits for the run's start and says
whether the run was still going when each subject's measurement ended). That is the load the
controller sees on the robot's computer: every node of the stack on the same 2 cores.

Target (issue): Joy-to-target p99 <= 10 ms. Reported as PASS/MISS, not enforced. The script exits 1 only
when a subject failed to answer (fewer than 90% of the deflected Joys answered). Numbers depend on the
machine's load: the script prints CPU count and load averages.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState, Joy

REPO = Path(__file__).resolve().parents[1]
for _pkg in ("salamander_control", "salamander_teleop"):
    if str(REPO / _pkg) not in sys.path:
        sys.path.insert(0, str(REPO / _pkg))

from bench_stack_cpu import LAUNCH, StackRun, stop_group  # noqa: E402

from salamander_control import names  # noqa: E402
from salamander_control.kinematics import JOINT_NAMES, REST_POSTURE  # noqa: E402
from salamander_testing.config_files import launch_param_files  # noqa: E402
from salamander_testing.node_process import stack_ros_args  # noqa: E402

PARAMS_FILES = [arg for path in launch_param_files("controller_node") for arg in ("--params-file", str(path))]
"""The controller's --params-file arguments, as the launch file gives them (arm.yaml, teleop.yaml)."""

TITLE = "Salamander teleop latency benchmark"
TARGET_P99_MS = 10.0
WARMUP = 50
"""Deflected Joys answered before measuring starts (discovery, first-call costs)."""


def relay_main() -> None:
    """The baseline: republish each Joy as a JointState at once (no validation, no state)."""
    rclpy.init()
    node = Node("joy_relay")
    pub = node.create_publisher(JointState, names.absolute(names.JOINT_TARGET), 10)

    def on_joy(msg: Joy) -> None:
        out = JointState(name=list(JOINT_NAMES), position=[float(a) for a in msg.axes[:5]])
        out.header.stamp = msg.header.stamp
        pub.publish(out)

    node.create_subscription(Joy, names.absolute(names.JOY), on_joy, 10)
    signal.signal(signal.SIGTERM, lambda *_: rclpy.try_shutdown())
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1), nearest-rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(
    cmd: list[str], domain: int, count: int, period: float, answers: int
) -> tuple[list[float], int, str, bool]:
    """Start the subject, drive it: (latencies in ms, unanswered deflected Joys, its output, exact).

    `answers` is how many targets the subject sends per (deflected, centred) pair: the controller 1,
    the relay 2. When the arrivals add up, the k-th deflected Joy's answer is arrival k * answers, so a
    late answer is never credited to the next Joy; otherwise each deflected Joy takes the first arrival
    before the next deflected Joy, and the shortfall is reported as missing.
    """
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain)}
    log = Path(f"/tmp/bench_teleop_{os.getpid()}_{domain}.log")
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=out, stderr=out)
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    executor = SingleThreadedExecutor(context=context)
    node = Node("bench_teleop", context=context)
    executor.add_node(node)
    arrivals: list[int] = []
    target = names.absolute(names.JOINT_TARGET)
    node.create_subscription(JointState, target, lambda _m: arrivals.append(time.perf_counter_ns()), 100)
    joy_pub = node.create_publisher(Joy, names.absolute(names.JOY), 10)
    # The controller reads the monitors' copy of the measured state (the generator republishes it in the
    # stack; there is no generator here): publish it as the generator would, at rest.
    js_pub = node.create_publisher(JointState, names.absolute(names.JOINT_STATES_MONITOR), 10)
    state = JointState(name=list(JOINT_NAMES), position=list(REST_POSTURE))
    node.create_timer(0.02, lambda: js_pub.publish(state))
    sends: list[int] = []
    try:
        deadline = time.monotonic() + 30.0
        while joy_pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        for _ in range(20):  # /joint_states reaches the controller before the first jog
            executor.spin_once(timeout_sec=0.02)
        total = 2 * (count + WARMUP)
        next_send = time.perf_counter()
        for i in range(total):
            while (wait := next_send - time.perf_counter()) > 0:
                executor.spin_once(timeout_sec=wait)
            msg = Joy(axes=[0.0] * 8, buttons=[0] * 13)
            if i % 2 == 0:
                msg.axes[1] = 0.8 if (i // 2) % 2 == 0 else -0.8
            msg.header.stamp = node.get_clock().now().to_msg()
            if i % 2 == 0:
                sends.append(time.perf_counter_ns())
            joy_pub.publish(msg)
            next_send += period
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    output = log.read_text(errors="replace")
    log.unlink()
    if len(arrivals) == answers * len(sends):
        lat = [(arrivals[answers * k] - sent) / 1e6 for k, sent in enumerate(sends)]
        return lat[WARMUP:], 0, output, True
    latencies, missing = [], 0
    j = 0
    for k, sent in enumerate(sends):
        limit = sends[k + 1] if k + 1 < len(sends) else sent + 1_000_000_000
        while j < len(arrivals) and arrivals[j] < sent:
            j += 1
        if j < len(arrivals) and arrivals[j] < limit:
            if k >= WARMUP:
                latencies.append((arrivals[j] - sent) / 1e6)
        elif k >= WARMUP:
            missing += 1
    return latencies, missing, output, False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relay", action="store_true", help="run as the baseline relay node (internal)")
    parser.add_argument("--quick", action="store_true", help="100 measured Joys per subject")
    parser.add_argument("--count", type=int, default=2000, help="measured (deflected) Joys per subject")
    parser.add_argument("--period", type=float, default=0.015, help="seconds between Joy messages")
    parser.add_argument("--domain", type=int, default=90 + os.getpid() % 40, help="first ROS_DOMAIN_ID used")
    parser.add_argument("--under-stack", action="store_true",
                        help="measure while the README's stack runs its demo (domain --domain + 5)")
    args = parser.parse_args()
    if args.relay:
        relay_main()
        return 0
    count = 100 if args.quick else args.count
    stack = start_stack(args.domain + 5) if args.under_stack else None
    try:
        return _run(args, count, stack)
    finally:
        if stack is not None:
            stop_group(stack.proc)


def start_stack(domain: int) -> StackRun:
    """The README's stack with the simulated operator, running; returns once its demo run started."""
    home = tempfile.mkdtemp(prefix="bench_teleop_stack_")  # the run's progress starts fresh here
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "PYTHONUNBUFFERED": "1", "ROS_HOME": home}
    cmd = [sys.executable, "-m", "salamander_bringup.runner", str(LAUNCH), "sim_operator:=true",
           "run_on_start:=false"]
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, process_group=0)
    run = StackRun(proc, [])
    threading.Thread(target=run.watch, daemon=True).start()
    # As an operator would: manual_place on, then a run of every can (the simulated operator places each).
    ctl = [sys.executable, "-m", "salamander_bringup.cli.ctl", "--timeout", "60"]
    subprocess.run([*ctl, "param", "set", "/salamander/behavior_server_node", "manual_place", "true"],
                   env=env, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    # In the runner's process group: `stop_group` ends it with the stack (it waits for the run's result).
    subprocess.Popen([*ctl, "run", "start"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, process_group=proc.pid)
    if not run.wait_for("run_start", 120.0):
        stop_group(proc)
        raise RuntimeError("the stack's demo run did not start within 120 s:\n" + "\n".join(run.lines[-30:]))
    return run


def _run(args: argparse.Namespace, count: int, stack: StackRun | None) -> int:
    subjects = {
        "relay (baseline)": ([sys.executable, str(Path(__file__).resolve()), "--relay"], 2),
        "controller_node": ([sys.executable, "-m", "salamander_teleop.nodes.controller_node", "--ros-args",
                             *stack_ros_args(names.CONTROLLER_NODE),
                             *PARAMS_FILES,
                             "-p", "target_rate_hz:=1.0"], 1),
    }
    results = {}
    during: dict[str, str] = {}
    for offset, (name, (cmd, answers)) in enumerate(subjects.items()):
        latencies, missing, output, exact = measure(cmd, args.domain + offset, count, args.period, answers)
        if stack is not None:
            with stack.lock:
                ended = stack.events.get("run_end")
            during[name] = "yes" if ended is None else f"no: {stack.ending} before the measurement's end"
        warnings = [line for line in output.splitlines() if "WARN" in line or "ERROR" in line]
        if warnings:
            print(f"{name} logged {len(warnings)} warnings, first: {warnings[0]}")
        if len(latencies) < 0.9 * count:
            print(f"{name}: only {len(latencies)} of {count} Joys answered ({missing} missing)\n{output}")
            return 1
        results[name] = (latencies, missing, "by count" if exact else "first after")
    print(TITLE)
    print(f"python {platform.python_version()}, rclpy, {os.cpu_count()} CPUs, load {os.getloadavg()}, "
          f"{count} measured Joys per subject, one every {args.period * 1e3:.0f} ms")
    if stack is not None:
        print("under the stack's own load (its demo run with the simulated operator); the run still going at "
              "the end of each subject's measurement: "
              + ", ".join(f"{name} {state}" for name, state in during.items()))
    print("| subject | p50 ms | p99 ms | max ms | answered | missing | matched |")
    print("|---|---|---|---|---|---|---|")
    for name, (lat, missing, how) in results.items():
        lat += [math.inf] * missing  # unanswered counts as infinitely late
        print(f"| {name} | {statistics.median(lat):.3f} | {percentile(lat, 0.99):.3f} | {max(lat):.3f} | "
              f"{len(lat) - missing} | {missing} | {how} |")
    ours, base = results["controller_node"][0], results["relay (baseline)"][0]
    p99 = percentile(ours, 0.99)
    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x" if math.isfinite(a) and math.isfinite(b) else "n/a (unanswered Joys)"

    print(f"ratio controller/relay: p50 {ratio(statistics.median(ours), statistics.median(base))}, "
          f"p99 {ratio(p99, percentile(base, 0.99))}")
    verdict = "PASS" if p99 <= TARGET_P99_MS else "MISS"
    print(f"target p99 <= {TARGET_P99_MS:.0f} ms: {verdict} ({p99:.3f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
