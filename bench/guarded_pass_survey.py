"""The guarded pass's property harness over many seeded draws, for the shipped settings and variants.

`test/test_guarded_pass_property.py` releases ONE can through the guarded pass and the search over the
physics cell, with a real `ContactDetector` on simulated efforts (its docstring says what it models and
what it simplifies), and checks the safety property: no can torn off, released or knocked outside its
compartment; every contact ends with the can held. Its hypothesis test draws 40 cases per CI run; this
script runs many more, from one seeded RNG, once per variant of the behaviour settings, so that a
change of a guard setting can be judged on the same draws before a benchmark over real processes:

- draws: box offset 0 .. 2 x the 1.95 mm clearance in any direction, yaw and grip within the cell's 3
  sigma, any compartment, any cell seed (as the hypothesis test);
- variants: the shipped `BehaviorSettings`, then one per ``--set name=value[,name=value...]``;
- printed per variant: the draws that broke the property (and how: the cell's events; how many of them
  in the known `GRAZE` mode, the harness's `grazed`), contacts,
  probes, searches that ran out, the worst seal use (load / limit) and the deepest compensator stroke
  over the contacts, the wall time.

Run from the repository root (after `source scripts/env.sh`):

    python bench/guarded_pass_survey.py --draws 300 --set guard_band_below_m=0.004

300 draws take about 50 s per variant. What the harness cannot show (no motor lag, no stream, the
run-on after a trip clamped at the band's bottom) is in its docstring; docs/design/guarded_moves.md has
the numbers this script gave.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
import test_guarded_pass_property as harness  # noqa: E402

from salamander_behavior.params import BehaviorSettings  # noqa: E402


def variant(text: str) -> dict[str, float | int | bool]:
    """``name=value[,name=value...]`` -> overrides of `BehaviorSettings`, typed as the field's default."""
    defaults = BehaviorSettings()
    out: dict[str, float | int | bool] = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        if not hasattr(defaults, name.strip()):
            raise argparse.ArgumentTypeError(f"{name.strip()!r} is no behaviour setting")
        kind = type(getattr(defaults, name.strip()))
        out[name.strip()] = value.strip().lower() == "true" if kind is bool else kind(value)
    return out


def survey(settings: BehaviorSettings, draws: int, seed: int) -> dict:
    """`draws` seeded draws through the harness with `settings`; what they did."""
    rng = random.Random(seed)
    broken: list[tuple[int, str]] = []
    contacts = probes = exhausted = grazes = 0
    use = stroke = 0.0
    start = time.monotonic()
    for i in range(draws):
        r, angle = rng.uniform(0.0, 2 * harness.CLEARANCE), rng.uniform(0.0, 2 * math.pi)
        box = (r * math.cos(angle), r * math.sin(angle), rng.uniform(-harness.YAW_LIMIT, harness.YAW_LIMIT))
        grip = (rng.uniform(-harness.GRIP_LIMIT, harness.GRIP_LIMIT),
                rng.uniform(-harness.GRIP_LIMIT, harness.GRIP_LIMIT))  # fmt: skip
        k, cell_seed = rng.randrange(harness.CFG.layout.compartments), rng.randrange(2**16)
        try:
            out = harness.check_property(box, grip, k, cell_seed, settings=settings, grazes=True)
        except AssertionError as exc:
            broken.append((i, str(exc).split("; events ")[-1]))
            continue
        if harness.grazed(out):  # the GRAZE mode: broken too, and named
            broken.append((i, f"GRAZE ({out.tear_gap * 1e6:+.1f} um): {out.events}"))
            grazes += 1
            continue
        contacts += len(out.contacts)
        probes += out.probes
        exhausted += out.exhausted
        use = max([use, *(c.seal_use for c in out.contacts)])
        stroke = max([stroke, *(c.stroke for c in out.contacts)])
    return {"broken": broken, "grazes": grazes, "contacts": contacts, "probes": probes,
            "exhausted": exhausted, "use": use, "stroke": stroke,
            "wall": time.monotonic() - start}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=300, help="draws per variant")
    parser.add_argument("--seed", type=int, default=7, help="the draws' RNG seed (one for every variant)")
    parser.add_argument("--set", dest="variants", type=variant, action="append", default=[],
                        metavar="NAME=VALUE[,...]", help="a variant of the shipped settings")  # fmt: skip
    args = parser.parse_args(argv)
    print(f"# Guarded pass survey: {args.draws} draws per variant, seed {args.seed}\n")
    print("| variant | draws | property broken (of them GRAZE) | contacts | probes | searches ran out "
          "| worst seal use | deepest stroke [mm] | wall [s] |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|")  # fmt: skip
    details = []
    for overrides in [{}, *args.variants]:
        name = ", ".join(f"{k}={v}" for k, v in overrides.items()) or "shipped"
        r = survey(dataclasses.replace(BehaviorSettings(), **overrides), args.draws, args.seed)
        print(f"| {name} | {args.draws} | {len(r['broken'])} ({r['grazes']}) | {r['contacts']} | "
              f"{r['probes']} | {r['exhausted']} | {r['use']:.2f} | {r['stroke'] * 1000:.2f} | "
              f"{r['wall']:.0f} |",
              flush=True)  # fmt: skip
        details += [f"- {name}, draw {i}: {events}" for i, events in r["broken"]]
    if details:
        print("\nDraws that broke the property (the cell's events):\n" + "\n".join(details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
