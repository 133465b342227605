"""What the simulated operator's ManualAdjust costs when the arm is perfect: the floor of the operator time.

    python bench/operator_floor.py                 # 4000 waits per start error, ~1 min
    python bench/operator_floor.py --waits 500     # quicker

The placement benchmark measures the operator's time per can on the whole stack (bench_placement.py).
This script asks how much of it no stack can remove: it runs the simulated person
(`salamander_sim.operator.core.SimOperator`, its shipped parameters, config/sim_operator.yaml's
defaults) against an ideal cell: the held can moves exactly with the jog (no arm, no lag), the cell's
state comes at config/cell.yaml's `state_rate_hz` as in the simulated cell, and each wait starts with the
can off its compartment's centre by a normal draw of the given sigma per axis. It prints, per start
error, the looks per wait and the operator's time (seeing the wait to pressing confirm; the
benchmark's operator time also includes the press reaching the tree, ~0.04 s).

Zero start error is a box estimate and a grip that are both perfect; 0.7 mm per axis is the cell's own
per-can scatter (a can 0.5 mm off its spot and gripped 0.5 mm off the pad's axis), which no estimate of
the box removes; 1.66 mm is a box's first can (the box's 1.5 mm and that scatter).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for package in ("salamander_control", "salamander_sim"):  # without scripts/env.sh's PYTHONPATH
    if str(REPO / package) not in sys.path:
        sys.path.insert(0, str(REPO / package))

from salamander_control.operator_commands import Confirm, Jog  # noqa: E402
from salamander_control.params_file import node_values  # noqa: E402
from salamander_sim.operator.core import STALE_S, SimOperator  # noqa: E402
from salamander_sim.operator.params import OperatorSettings  # noqa: E402
from salamander_sim.operator.perception import PlacementError, Wait  # noqa: E402

DT = 0.005
"""s per simulation step."""
SIGMAS_MM = (0.0, 0.5, 0.7, 1.0, 1.66)
TIMEOUT_S = 60.0


def state_period() -> float:
    """s between the simulated cell's state messages (config/cell.yaml's state_rate_hz)."""
    cell = node_values([REPO / "config" / "cell.yaml"], "/salamander/cell_sim", require_section=True)
    return 1.0 / float(cell["state_rate_hz"])


def one_wait(
    person: SimOperator, tick_period: float, start: tuple[float, float], period: float
) -> tuple[int, float]:
    """(looks, seconds from seeing the wait to pressing confirm) for a can `start` (m) off the centre."""
    now, offset, jog, jog_at = 0.0, [0.0, 0.0], (0.0, 0.0), -math.inf
    next_state, next_tick = 0.0, 0.0
    person.see_wait(Wait("place_can_0", (0.0, 0.0, 0.0)), now)
    while now < TIMEOUT_S:
        if now - jog_at <= STALE_S:  # ManualAdjust's staleness: an old twist counts as zero
            offset[0] += jog[0] * DT
            offset[1] += jog[1] * DT
        if now >= next_state:
            error = PlacementError(0, start[0] - offset[0], start[1] - offset[1])
            person.see_scene(error, now)
            next_state += period
        if now >= next_tick:
            person.see_wait(Wait("place_can_0", (offset[0], offset[1], 0.0)), now)
            for action in person.tick(now):
                if isinstance(action, Jog):
                    jog, jog_at = (action.vx, action.vy), now
                elif isinstance(action, Confirm):
                    record = person.current
                    assert record is not None
                    person.see_wait(None, now)
                    return record.looks, now - record.began
            next_tick += tick_period
        now += DT
    raise RuntimeError(f"no confirm within {TIMEOUT_S} s from {start}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--waits", type=int, default=4000, help="waits per start error")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    period = state_period()
    settings = OperatorSettings()
    print("# The simulated operator's time on an ideal arm\n")
    print(f"person: look sigma {settings.look_sigma_xy * 1e3:.1f} mm per axis, confirms within "
          f"{settings.confirm_tolerance_xy * 1e3:.1f} mm, reaction {settings.reaction_time_min_s}-"
          f"{settings.reaction_time_max_s} s, strokes of {settings.stroke_time_s} s; cell state every "
          f"{period:.2f} s; {args.waits} waits per row\n")
    print("| start error, 1 sigma per axis | looks per wait | one look only | operator time per wait |")
    print("|---:|---:|---:|---:|")
    draw = random.Random(args.seed)
    for sigma_mm in SIGMAS_MM:
        person = SimOperator(settings, random.Random(draw.random()))
        looks, times = [], []
        for _ in range(args.waits):
            start = (draw.gauss(0.0, sigma_mm * 1e-3), draw.gauss(0.0, sigma_mm * 1e-3))
            n, seconds = one_wait(person, 1.0 / settings.jog_rate_hz, start, period)
            looks.append(n)
            times.append(seconds)
        one = sum(1 for n in looks if n == 1) / len(looks)
        print(f"| {sigma_mm:.2f} mm | {statistics.mean(looks):.2f} | {one:.0%} | "
              f"{statistics.mean(times):.2f} ± {statistics.stdev(times):.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
