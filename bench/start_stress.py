#!/usr/bin/env python3
"""Start-up stress: start nodes of the stack hundreds of times and count how each start ended.

Run from the repository root inside scripts/env.sh::

    python bench/start_stress.py --starts 200                      # the Cartesian node, alone
    python bench/start_stress.py --starts 100 --peers --load 1     # with the rest of the stack, a busy core
    python bench/start_stress.py --nodes trajectory_generator,ik_ghost_node --executor single

Each round starts every node of ``--nodes`` at once, with the command, parameter files, names and
remaps of launch/arm_control.launch.xml (`launch_plan`, as the runner starts them), lets them run
``--up`` seconds (imports and the first second of the node's life: the crash of issue 23 item 3 came
about a second after start), sends SIGINT (held through the imports, as the runner holds it, so that
an import interrupted on a loaded machine does not count as a crash) and waits for the exit code. A
start ends clean (exit 0), crashed (killed by a signal: -11 SIGSEGV, -6 SIGABRT, ...), failed (another
code) or hung (not gone ``--stop-timeout`` s after the SIGINT: killed). Nothing is respawned: every
crash is counted.

``--peers`` starts the rest of the stack once, in the same private domain, before the rounds (the nodes
then start into a live graph: discovery, latched topics, the behaviour server's goals); a peer that
exits is reported. ``--load N`` keeps N busy processes (a spinning Python loop each) running throughout.
``--executor events|single`` makes `run_node` spin every started node on the EventsExecutor or the
SingleThreadedExecutor whatever its entry point asks (a wrapper patches `run_node` before the node's
module is imported); ``launch`` (default) keeps each node's own choice.

Crash evidence: Python's faulthandler is on in every node (PYTHONFAULTHANDLER; the EventsExecutor turns
it on too), so a crash prints the Python stack of every thread; core dumps are allowed (RLIMIT_CORE,
the kernel's ``core`` pattern: a file ``core`` in the node's working folder), the first ``--cores`` are
kept under ``--logs`` for gdb (``gdb -batch -ex 'thread apply all bt' python CORE``); a hung start gets
its Python stacks (SIGUSR1, `run_node`'s faulthandler) and gdb's C stacks of every thread before the kill.
The output of every start that did not end clean is kept under ``--logs`` too.

Printed: one line per round (the exit codes), then per node: starts, clean, crashed (by signal),
failed, hung, the executor, and the wall time. ``--budget S`` ends the rounds early after S seconds.
Exit code 0 when every start ended clean, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from salamander_bringup.launch_plan import load_plan, parse_overrides, resolve_commands
from salamander_control.ros.held_signals import HELD_SIGNALS

REPO = Path(__file__).resolve().parents[1]
LAUNCH = REPO / "launch" / "arm_control.launch.xml"
DEFAULT_NODES = ("arm_cartesian_motion_node",)

# Makes run_node spin the node on the executor given as argv[1], then runs the console script argv[2]
# (its module imports run_node after the patch, so it gets the patched one).
_WRAPPER = textwrap.dedent('''
    import sys
    from importlib.metadata import entry_points
    from salamander_control.ros import run
    mode, script = sys.argv[1], sys.argv[2]
    real = run.run_node
    def run_node(factory, args=None, events_executor=False):
        return real(factory, args, events_executor=(mode == "events"))
    run.run_node = run_node
    print(f"start_stress: run_node on the {mode} executor", flush=True)
    (entry,) = entry_points(group="console_scripts", name=script)
    sys.argv = [script, *sys.argv[3:]]
    sys.exit(entry.load()())
''')


@dataclass
class Tally:
    """How the starts of one node ended."""

    starts: int = 0
    clean: int = 0
    crashed: Counter[str] = field(default_factory=Counter)
    failed: Counter[int] = field(default_factory=Counter)
    hung: int = 0

    def line(self) -> str:
        """One summary line."""
        crashed = ", ".join(f"{n} {sig}" for sig, n in self.crashed.items()) or "0"
        failed = ", ".join(f"{n} x exit {code}" for code, n in self.failed.items()) or "0"
        return (f"starts {self.starts}, clean {self.clean}, crashed {crashed}, failed {failed}, "
                f"hung {self.hung}")  # fmt: skip


def _child_setup() -> None:
    """In the child: core dumps of any size (written where the kernel's core_pattern says), and SIGINT
    held until `run_node` has its handler, as the runner starts the nodes (`held_signals`)."""
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)


def _gdb_backtrace(pid: int, out: Path) -> None:
    """Every thread's C stack of the live process `pid` (gdb attaches, prints, detaches) into `out`."""
    try:
        done = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        out.write_text(done.stdout + done.stderr)
    except (OSError, subprocess.TimeoutExpired) as exc:
        out.write_text(f"gdb failed: {exc}\n")


def _describe(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def main(argv: Sequence[str] | None = None) -> int:  # noqa: C901, PLR0912, PLR0915  (a bench's main loop)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default=",".join(DEFAULT_NODES), help="node names, comma-separated")
    parser.add_argument("--starts", type=int, default=200, help="rounds (starts of each node)")
    parser.add_argument("--up", type=float, default=3.0, help="s each start runs before its SIGINT")
    parser.add_argument("--up-max", type=float, default=None,
                        help="draw each round's up time from [--up, --up-max] (seeded) instead")  # fmt: skip
    parser.add_argument("--seed", type=int, default=7, help="seed of the --up-max draws")
    parser.add_argument("--stop-timeout", type=float, default=20.0, help="s after SIGINT before a kill")
    parser.add_argument("--peers", action="store_true", help="run the rest of the stack alongside")
    parser.add_argument("--load", type=int, default=0, help="busy processes kept running")
    parser.add_argument("--executor", choices=("launch", "events", "single"), default="launch")
    parser.add_argument("--domain", type=int, default=93, help="private ROS_DOMAIN_ID (not the suite's)")
    parser.add_argument("--logs", type=Path, default=Path("/tmp/start_stress"), help="unclean starts' output")
    parser.add_argument("--cores", type=int, default=3, help="core files kept at most")
    parser.add_argument("--budget", type=float, default=1200.0, help="s after which no round starts")
    parser.add_argument("--launch-arg", action="append", default=[], metavar="NAME:=VALUE",
                        help="extra launch arguments (e.g. view:=false)")  # fmt: skip
    args = parser.parse_args(argv)

    args.logs.mkdir(parents=True, exist_ok=True)
    params_dir = tempfile.mkdtemp(prefix="start_stress_")
    resolved = resolve_commands(load_plan(LAUNCH, parse_overrides(args.launch_arg)), params_dir)
    by_name = {n.name: (n, cmd) for n, cmd in zip(resolved.plan.nodes, resolved.commands, strict=True)}
    wanted = [n.strip() for n in args.nodes.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        print(f"unknown nodes {unknown}; the launch file starts {sorted(by_name)}", file=sys.stderr)
        return 2
    env = {**os.environ, "ROS_DOMAIN_ID": str(args.domain), "PYTHONUNBUFFERED": "1",
           "PYTHONFAULTHANDLER": "1", "RCUTILS_LOGGING_BUFFERED_STREAM": "0"}  # fmt: skip
    wrapper = Path(params_dir) / "executor_wrapper.py"
    wrapper.write_text(_WRAPPER)

    def command(name: str) -> list[str]:
        node, cmd = by_name[name]
        if args.executor == "launch":
            return cmd
        ros_args = cmd[cmd.index("--ros-args"):] if "--ros-args" in cmd else []
        return [sys.executable, str(wrapper), args.executor, node.executable, *ros_args]

    def spawn(name: str, cwd: Path, out: Path) -> subprocess.Popen[bytes]:
        cwd.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as sink:
            return subprocess.Popen(command(name) if name in wanted else by_name[name][1], env=env, cwd=cwd,
                                    stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                    process_group=0, preexec_fn=_child_setup)  # fmt: skip

    work = Path(params_dir)
    rng = random.Random(args.seed)
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    peers: dict[str, subprocess.Popen[bytes]] = {}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    tallies = {name: Tally() for name in wanted}
    cores_kept = 0
    started = time.monotonic()
    rounds = 0
    print(f"start stress: nodes {wanted}, executor {args.executor}, up {args.up:g} s, peers {args.peers}, "
          f"load {args.load}, domain {args.domain}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    try:
        if args.peers:
            for name in by_name:
                if name not in wanted:
                    peers[name] = spawn(name, work / "peers" / name, work / "peers" / f"{name}.log")
            time.sleep(8.0)  # the peers import and come up once; the rounds then start into a live graph
        for rounds in range(1, args.starts + 1):  # noqa: B007  (rounds is read after the loop)
            if time.monotonic() - started > args.budget:
                rounds -= 1
                print(f"budget of {args.budget:g} s spent", flush=True)
                break
            procs = {name: spawn(name, work / name, work / f"{name}.log") for name in wanted}
            up = args.up if args.up_max is None else rng.uniform(args.up, args.up_max)
            time.sleep(up)  # the start-up window under test, not a synchronisation
            for proc in procs.values():
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
            codes: dict[str, str] = {}
            for name, proc in procs.items():
                tally = tallies[name]
                tally.starts += 1
                try:
                    code = proc.wait(timeout=args.stop_timeout)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGUSR1)  # run_node's faulthandler: every thread's stack
                    time.sleep(1.0)
                    _gdb_backtrace(proc.pid, args.logs / f"round{rounds:04d}_{name}.gdb.txt")
                    proc.kill()
                    proc.wait()
                    tally.hung += 1
                    codes[name] = "hung"
                else:
                    codes[name] = str(code)
                    if code == 0:
                        tally.clean += 1
                    elif code < 0:
                        tally.crashed[_describe(code)] += 1
                    else:
                        tally.failed[code] += 1
                if codes[name] != "0":
                    keep = args.logs / f"round{rounds:04d}_{name}"
                    shutil.copy(work / f"{name}.log", keep.with_suffix(".log"))
                    core = work / name / "core"
                    if core.exists():
                        if cores_kept < args.cores:
                            shutil.move(core, keep.with_suffix(".core"))
                            cores_kept += 1
                        else:
                            core.unlink()
            dead = [f"{n} {p.returncode}" for n, p in peers.items() if p.poll() is not None]
            print(f"{rounds:4d} {time.monotonic() - started:6.0f}s "
                  + " ".join(f"{n}={c}" for n, c in codes.items())
                  + (f"  peers gone: {dead}" if dead else ""), flush=True)  # fmt: skip
    finally:
        for proc in [*procs.values(), *peers.values()]:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in [*procs.values(), *peers.values()]:
            try:
                proc.wait(timeout=args.stop_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
        for proc in load:
            proc.kill()
            proc.wait()
        shutil.rmtree(params_dir, ignore_errors=True)
    elapsed = time.monotonic() - started
    print(f"\n{rounds} rounds in {elapsed:.0f} s (executor {args.executor}, load {args.load}, "
          f"peers {args.peers}); load average now {os.getloadavg()[0]:.1f}")  # fmt: skip
    for name, tally in tallies.items():
        print(f"  {name:28s} {tally.line()}")
    if peers:
        print("  peers' exit codes: " + ", ".join(f"{n} {p.returncode}" for n, p in peers.items()))
    unclean = any(t.clean != t.starts for t in tallies.values())
    return 1 if unclean else 0


if __name__ == "__main__":
    sys.exit(main())
