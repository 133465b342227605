"""Soak (issue 23): stacks back to back, every can of each, a random single fault every ~2 min; counts.

Run from the repository root inside scripts/env.sh:

    python bench/soak.py                          # 200 cans (67 stacks), no time bound
    python bench/soak.py --cans 60 --minutes 30 --domain 110

Each stack starts launch/arm_control.launch.xml through the runner in a private ROS_DOMAIN_ID and a
fresh ROS_HOME (no run progress carries over: the world and the run are new at every start), the cell
on its kinematic engine without uncertainty, and the demo run of all 3 cans; after its run ends the
stack is stopped with a Ctrl-C (SIGINT to the group) and the next one starts. The trial machinery of
`fault_campaign` watches each stack: limit crossings (every /joint_states sample), stop hits, cans
astray (cell ground truth) and crashes (the runner's output: a node exit other than the one killed, a
Traceback, a FATAL). The stop at the end of each stack is judged too (every exit code 0, nothing bad
printed: `stop_trial.BAD_OUTPUT`); an unclean stop counts as a crash.

Faults, one at a time, seeded: when ~2 min (90-150 s, drawn) of wall time have passed since the last
fault, the next stack gets one, of a kind drawn from:

- ``kill``: SIGKILL of a respawning node while a can is carried or going down into its compartment;
  the run's end is then awaited confirming as an operator would (`fault_campaign.await_end`);
- ``freeze``: SIGSTOP of cell_sim, trajectory_generator or arm_cartesian_motion_node for 2-3 s, then
  SIGCONT, while a can is carried;
- ``fuzz``: a burst of 150 bad inputs on one interface (`fault_campaign.Fuzzer`) while the run goes;
- ``double_sigint``: the terminal's Ctrl-C mid-run plus a second SIGINT to every node 0-0.5 s later
  (as ``ros2 launch`` forwards it); the stop must be clean, and the next stack is a fresh one.

A sampler reads each node process's RSS (/proc) every ~10 s, from 15 s after the process started
(imports done). Printed: one line per stack, then the
table: cans clear / touching / on rim / other landings / not placed / astray, limit crossings, stop
hits, crashes (which), faults by kind, and per node RSS first / max / last sample (MiB) with the largest
growth of one process between its first and last sample. Exit code 0 when crashes, limit crossings and
cans astray are all zero (stop hits are reported).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from fault_campaign import (
    ENDED,
    LAUNCH,
    RUNNER,
    Fuzzer,
    Monitor,
    await_end,
    crashes,
    freeze_node,
    started_nodes,
)

from salamander_control import names
from salamander_testing.cell import cell_config_without_uncertainty
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import ros_env
from salamander_testing.runner_faults import kill_node, node_pid
from salamander_testing.stop_trial import BAD_OUTPUT, _forward_sigint, node_pids

RESPAWNING = [names.absolute(n) for n in (
    names.KINEMATICS_NODE, names.CARTESIAN_MOTION_NODE, names.IK_GHOST_NODE, names.BEHAVIOR_SERVER,
    names.CONTROLLER_NODE, names.OPERATOR_VIEW)]  # fmt: skip
FROZEN = [
    names.absolute(n) for n in (names.CELL_SIM, names.TRAJECTORY_GENERATOR, names.CARTESIAN_MOTION_NODE)
]
FAULTS = ("kill", "freeze", "fuzz", "double_sigint")
FUZZ_BURST = 150
_CODES = re.compile(r"^\[runner\] exit codes: (.*)$")




def _rss_bytes(pid: int) -> int:
    """Resident set size of process `pid` (Linux /proc), bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise ValueError(f"no VmRSS for {pid}")


def _ppid(pid: int) -> int:
    """Parent of process `pid` (Linux /proc: field 4 of stat)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _age_s(pid: int) -> float:
    """Seconds since process `pid` started (Linux /proc: field 22 of stat, in clock ticks since boot)."""
    start_ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
class RssSampler(threading.Thread):
    """Every `period` s, the RSS of each node process of the current stack (pids from the runner's lines)."""

    def __init__(self, period: float = 10.0) -> None:
        super().__init__(daemon=True)
        self.period = period
        self.settle = 15.0  # s after a process's start before it is sampled (imports done, node up)
        self.runner: ChildProcess | None = None
        self.samples: dict[str, list[tuple[float, int, int]]] = defaultdict(list)  # fqn: (t, pid, rss)
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.period):
            runner = self.runner
            if runner is None:
                continue
            now = time.monotonic()
            for fqn, pid in node_pids(runner.lines).items():
                try:
                    if _age_s(pid) < self.settle:
                        continue  # still importing: its RSS is not yet the node's
                    self.samples[fqn].append((now, pid, _rss_bytes(pid)))
                except (OSError, ValueError):
                    pass  # exited (a kill, the stop) between the line and the read

    def stop(self) -> None:
        self._stop_event.set()

    def table(self) -> list[str]:
        """Per node: first / max / last sample and the largest growth of one process, MiB."""
        mib = 1024.0 * 1024.0
        rows = [f"  {'node':42s} {'first':>7s} {'max':>7s} {'last':>7s} {'growth/proc':>11s} samples"]
        for fqn in sorted(self.samples):
            s = self.samples[fqn]
            per_pid: dict[int, list[int]] = defaultdict(list)
            for _, pid, rss in s:
                per_pid[pid].append(rss)
            growth = max(v[-1] - v[0] for v in per_pid.values())
            rss = [r for _, _, r in s]
            rows.append(f"  {fqn:42s} {rss[0] / mib:7.1f} {max(rss) / mib:7.1f} {rss[-1] / mib:7.1f} "
                        f"{growth / mib:+11.1f} {len(s)}")  # fmt: skip
        return rows


def run_ended(runner: ChildProcess) -> bool:
    return any(e in line for line in runner.lines for e in ENDED) or not runner.alive()


def can_ids(mon: Monitor) -> list[str]:
    return [c["id"] for c in (mon.state or {}).get("cans", [])]


def inject(kind: str, mon: Monitor, runner: ChildProcess, rng: random.Random) -> tuple[str, str | None, bool]:
    """Inject one fault of `kind`. Returns (what, the killed node or None, injected)."""
    if kind == "kill":
        victim, moment = rng.choice(RESPAWNING), rng.choice(["carry", "descent"])
        test = mon.carrying if moment == "carry" else mon.descending
        if not mon.wait(lambda: run_ended(runner) or any(test(c) for c in can_ids(mon)), 180.0) \
                or run_ended(runner):  # fmt: skip
            return f"kill -9 {victim} during {moment}: moment missed", None, False
        since = len(runner.lines)
        try:
            kill_node(runner, victim, signal.SIGKILL, timeout=30.0)
        except AssertionError:
            return f"kill -9 {victim} during {moment}: respawn not seen", victim, True
        return f"kill -9 {victim} during {moment}: {await_end(mon, runner, since)}", victim, True
    if kind == "freeze":
        victim, seconds = rng.choice(FROZEN), round(rng.uniform(2.0, 3.0), 2)
        if not mon.wait(lambda: run_ended(runner) or any(mon.carrying(c) for c in can_ids(mon)), 180.0) \
                or run_ended(runner):  # fmt: skip
            return f"freeze {victim}: moment missed", None, False
        pid = node_pid(runner, victim)
        assert pid is not None and _ppid(pid) == runner.proc.pid
        since = len(runner.lines)
        freeze_node(mon, runner, victim, seconds)
        return f"freeze {victim} {seconds:.2f} s during carry: {await_end(mon, runner, since)}", None, True
    if kind == "fuzz":
        fuzzer = Fuzzer(mon, rng)
        interface = rng.choice(sorted(fuzzer.kinds()))
        if interface == "parameters":
            fuzzer.list_parameters(started_nodes(runner))
        fuzzer.wait_ready()
        send = fuzzer.kinds()[interface]
        for _ in range(FUZZ_BURST):
            send()
            mon.spin(0.01)
        return f"fuzz {FUZZ_BURST} x {interface}: {await_end(mon, runner, 0)}", None, True
    # double_sigint: mid-run, after a random delay into the run
    delay = round(rng.uniform(3.0, 40.0), 1)
    mon.spin(delay)  # where the stop lands is the point of the fault
    if not runner.alive():
        return "double SIGINT: stack gone before", None, False
    since = len(runner.lines)
    after = round(rng.uniform(0.0, 0.5), 2)
    runner.send_signal(signal.SIGINT)
    _forward_sigint(runner.lines, after)
    mon.wait(lambda: not runner.alive(), 60.0)
    return f"double SIGINT +{delay}s (second +{after}s): {stop_verdict(runner, since)}", None, True


def stop_verdict(runner: ChildProcess, since: int) -> str:
    """'clean' when the runner exited 0 and every node 0 with nothing bad printed since `since`."""
    try:
        code = runner.wait(timeout=40.0)
    except Exception:  # noqa: BLE001 - a hung runner is the verdict
        runner.stop(timeout=5.0)
        return "UNCLEAN: runner hung"
    lines = runner.lines[since:]
    codes = {}
    for line in lines:
        match = _CODES.match(line)
        if match:
            codes = dict(item.rsplit(" ", 1) for item in match.group(1).split(", "))
    bad = [line for line in lines if any(m in line for m in BAD_OUTPUT)]
    nonzero = {k: v for k, v in codes.items() if v != "0"}
    if code == 0 and codes and not nonzero and not bad:
        return "clean"
    return f"UNCLEAN: runner {code}, nonzero {nonzero}, {bad[:2]}"


def stack(args, index: int, fault: str | None, rng: random.Random, sampler: RssSampler) -> dict[str, Any]:
    """One fresh stack, its demo run of every can, an optional fault; its counts."""
    log = args.logs / f"stack_{index:03d}.log"
    cell = cell_config_without_uncertainty(args.logs, engine="kinematic")
    home = Path(tempfile.mkdtemp(prefix="ros_home_", dir=args.logs))
    env = {**ros_env(args.domain), "ROS_HOME": str(home)}
    runner = ChildProcess([*RUNNER, str(LAUNCH), f"cell_config:={cell}"], env, log, process_group=True)
    sampler.runner = runner
    mon = Monitor(args.domain)
    res: dict[str, Any] = {"fault": None, "what": "no fault", "killed": None, "stop": "?"}
    try:
        if not mon.wait(lambda: "run started" in runner.text() or not runner.alive(), 120.0):
            res["what"] = "no run started"
        elif fault is not None:
            try:
                res["what"], res["killed"], injected = inject(fault, mon, runner, rng)
            except Exception as exc:  # noqa: BLE001 - the soak goes on; the table shows the error
                res["what"], injected = f"{fault}: FAULT ERROR {exc!r}", False
                res["error"] = True
            res["fault"] = fault if injected else None
        mon.wait(lambda: run_ended(runner), 300.0)
        mon.spin(1.0)
        res["crashes"] = crashes(runner, res["killed"])
        if fault == "double_sigint" and res["fault"]:
            res["stop"] = "by the fault"
            if "UNCLEAN" in res["what"]:
                res["crashes"].append(res["what"])
        else:
            since = len(runner.lines)
            runner.send_signal(signal.SIGINT)  # the terminal's Ctrl-C, the run over
            res["stop"] = stop_verdict(runner, since)
            if res["stop"] != "clean":
                res["crashes"].append(f"stop: {res['stop']}")
        res["cans"] = Counter()
        for can in (mon.state or {}).get("cans", []):
            result = (can["outcome"] or {}).get("result")
            res["cans"][result or "not placed"] += 1
        res["astray"] = sorted(mon.astray)
        res["crossings"], res["stop_hits"], res["samples"] = len(mon.crossings), mon.stop_hits, mon.samples
        return res
    finally:
        sampler.runner = None
        runner.stop(timeout=30.0)
        mon.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cans", type=int, default=200, help="stop after this many cans (3 per stack)")
    parser.add_argument("--minutes", type=float, default=None, help="start no stack after this many minutes")
    parser.add_argument("--fault-every", type=float, default=120.0, help="mean seconds between faults")
    parser.add_argument("--faults", nargs="+", choices=FAULTS, default=list(FAULTS), help="kinds to draw")
    parser.add_argument("--domain", type=int, default=110, help="private ROS_DOMAIN_ID (not the suite's)")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()) / "soak")
    args = parser.parse_args(argv)
    args.logs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    sampler = RssSampler()
    sampler.start()
    started = time.monotonic()
    next_fault = started + rng.uniform(0.75, 1.25) * args.fault_every
    cans: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    crash_lines: list[str] = []
    astray_lines: list[str] = []
    index = 0
    while sum(cans.values()) < args.cans:
        if args.minutes is not None and time.monotonic() - started > args.minutes * 60.0:
            break
        t0 = time.monotonic()
        fault = rng.choice(args.faults) if t0 >= next_fault - 45.0 else None
        try:
            res = stack(args, index, fault, rng, sampler)
        except KeyboardInterrupt:  # Ctrl-C: the stack is stopped (its `finally`); print what was counted
            print(f"{index:3d} interrupted by the user: not counted", flush=True)
            break
        faults["injection errors"] += int(res.get("error", False))
        if res["fault"]:
            faults[res["fault"]] += 1
            next_fault = time.monotonic() + rng.uniform(0.75, 1.25) * args.fault_every
        cans.update(res["cans"])
        row = Counter(crashes=len(res["crashes"]), crossings=res["crossings"], stop_hits=res["stop_hits"],
                      astray=len(res["astray"]))  # fmt: skip
        totals.update(row)
        crash_lines += [f"stack {index}: {line}" for line in res["crashes"]]
        astray_lines += [f"stack {index} ({res['what']}): {line}" for line in res["astray"]]
        print(f"{index:3d} {res['what']}; cans {dict(res['cans'])}; stop {res['stop']}; {res['samples']} "
              f"joint states, crashes {row['crashes']}, crossings {row['crossings']}, stop hits "
              f"{row['stop_hits']}, astray {row['astray']} ({time.monotonic() - t0:.0f} s)",
              flush=True)  # fmt: skip
        index += 1
    sampler.stop()
    elapsed = time.monotonic() - started
    n = sum(cans.values())
    placed_other = n - cans["in_box_clear"] - cans["in_box_touching"] - cans["on_rim"] - cans["not placed"]
    print(f"\nsoak: {index} stacks, {n} cans in {elapsed / 60:.1f} min ({elapsed / max(n, 1):.1f} s per can; "
          f"200 cans ~ {200 * elapsed / max(n, 1) / 60:.0f} min), seed {args.seed}")  # fmt: skip
    print("| metric | count |\n|---|---|")
    for label, value in [
        ("cans in box, clear", cans["in_box_clear"]),
        ("cans in box, touching a wall", cans["in_box_touching"]),
        ("cans on the rim", cans["on_rim"]), ("cans landed elsewhere (on can/table/tipped)", placed_other),
        ("cans not placed (run stopped or interrupted)", cans["not placed"]),
        ("cans astray", totals["astray"]), ("limit crossings", totals["crossings"]),
        ("stop hits", totals["stop_hits"]), ("crashes", totals["crashes"]),
    ] + [(f"faults: {k}", faults[k]) for k in (*FAULTS, "injection errors")]:  # fmt: skip
        print(f"| {label} | {value} |")
    for line in crash_lines[:10] + astray_lines[:10]:
        print(f"  {line}")
    print("\nRSS per node (MiB; first / max / last sample of the soak, growth of one process first->last):")
    print("\n".join(sampler.table()))
    return 0 if not (totals["crashes"] or totals["crossings"] or totals["astray"]) else 1


if __name__ == "__main__":
    sys.exit(main())
