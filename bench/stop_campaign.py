"""Ctrl-C campaign: stop the whole stack through the launch runner many times, at varied moments; counts.

Run from the repository root inside scripts/env.sh:

    python bench/stop_campaign.py                 # 24 stops (8 per moment), ~15 min on a quiet machine
    python bench/stop_campaign.py --stops 6 --domain 102
    python bench/stop_campaign.py --twice         # every node gets the Ctrl-C twice, as under ros2 launch
    python bench/stop_campaign.py --moments run --max-delay 25 --stacks-after 6 --stop-timeout 20
                                                  # mid-run stops; gdb stacks of a node still up after 6 s

Each stop (`salamander_testing.stop_trial.stop_once`) starts launch/arm_control.launch.xml with
the runner in the private ROS_DOMAIN_ID, waits for a moment of the stack's life (``start``: the nodes
are still importing; ``discovery``: the generator has anchored; ``run``: the behaviour server's run has
started), waits a further delay drawn from a seeded RNG (0 to 3 s), sends the terminal's Ctrl-C, and
judges the stop: runner exit 0, every node's exit code 0, no traceback / FATAL / KeyboardInterrupt in
the output. Printed: one line per stop, then the counts per moment and in all, the slowest stop and the
non-zero exit codes per node. With ``--twice`` each node also gets a second SIGINT 0 to 0.5 s (seeded)
after the group's, as ``ros2 launch`` forwards the terminal's Ctrl-C to nodes that got it already
(`stop_trial`, ``forward_after``). Exit code 0 when every stop was clean, 1 otherwise (the output of each
unclean stop is kept under --logs).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

from salamander_testing.ros_helpers import ros_env
from salamander_testing.stop_trial import MOMENTS, stop_once


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", type=int, default=24, help="number of stops (spread over the moments)")
    parser.add_argument("--domain", type=int, default=102, help="private ROS_DOMAIN_ID (not the suite's)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--logs", type=Path, default=Path("/tmp/stop_campaign"), help="runner logs")
    parser.add_argument("--max-delay", type=float, default=3.0, help="s after the moment: 0 to this")
    parser.add_argument("--moments", default=",".join(MOMENTS), help="moments to stop at, comma-separated")
    parser.add_argument("--stacks-after", type=float, default=None, metavar="S",
                        help="gdb the native stacks of every node still running S s after the Ctrl-C")
    parser.add_argument("--stop-timeout", type=float, default=30.0, help="the runner's --stop-timeout")
    parser.add_argument("--twice", action="store_true", help="a second SIGINT to every node (ros2 launch)")
    args = parser.parse_args(argv)
    args.logs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    moments = [m.strip() for m in args.moments.split(",") if m.strip()]
    per_moment: dict[str, Counter[str]] = {m: Counter() for m in moments}
    nonzero: Counter[str] = Counter()
    slowest = 0.0
    started = time.monotonic()
    for i in range(args.stops):
        moment = moments[i % len(moments)]
        delay = round(rng.uniform(0.0, args.max_delay), 2)
        forward_after = round(rng.uniform(0.0, 0.5), 2) if args.twice else None
        outcome = stop_once(moment, delay, ros_env(args.domain), args.logs / f"stop_{i:03d}.log",
                            stop_timeout=args.stop_timeout, forward_after=forward_after,
                            stacks_after=args.stacks_after)  # fmt: skip
        verdict = "clean" if outcome.clean else "UNCLEAN"
        per_moment[moment][verdict] += 1
        per_moment[moment]["reached" if outcome.reached else "moment missed"] += 1
        for fqn, code in outcome.node_codes.items():
            if code != 0:
                nonzero[f"{fqn} {code}"] += 1
        if outcome.runner_code is None:
            nonzero["runner hung"] += 1
        slowest = max(slowest, outcome.stop_s)
        twice = "" if forward_after is None else f" second SIGINT +{forward_after:.2f}s"
        print(f"{i:3d} {verdict:7s} {outcome.summary()}{twice}", flush=True)
    total = Counter()
    for counts in per_moment.values():
        total.update(counts)
    print(f"\n{args.stops} stops in {time.monotonic() - started:.0f} s")
    for moment, counts in per_moment.items():
        print(f"  {moment:9s} clean {counts['clean']}, unclean {counts['UNCLEAN']}, "
              f"moment reached {counts['reached']}, missed {counts['moment missed']}")  # fmt: skip
    print(f"  all       clean {total['clean']}, unclean {total['UNCLEAN']}; slowest stop {slowest:.1f} s")
    print(f"  non-zero exit codes: {dict(nonzero) or 'none'}")
    return 0 if total["UNCLEAN"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
