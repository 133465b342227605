"""The ManualAdjust benchmark's records and statistics (bench/bench_manual_adjust.py), pure.

One `Cycle` per can: the mode, the cell's uncertainty seed, what the tree reported, where the can truly
landed (the cell's ground truth; success = ``in_box_clear``), the cycle time and, with ManualAdjust,
the offset the operator confirmed and how long the wait took (the behaviour server's pinned log line)
and the operator's looks and strokes (the simulated operator's line). `summarise` turns a mode's cycles
into the table's numbers; `wilson` is the 95 % interval of a success rate. Unit-tested in
test/test_bench_manual_adjust_metrics.py.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

AUTONOMOUS, MANUAL = "autonomous", "manual"
CLEAR = "in_box_clear"
UNTOUCHED = "untouched"
"""The cell's word for a can the tree skipped before gripping it: no placement was tried, so it is not
counted in the success rate (it says something about the stack, e.g. a stale signal, not the placement)."""

ADJUST_LINE = re.compile(
    r"ManualAdjust\[place_(?P<can>[A-Za-z0-9_]+)\]: (?P<how>confirmed|aborted|timed_out), "
    r"offset \[(?P<x>-?\d+\.\d), (?P<y>-?\d+\.\d), (?P<z>-?\d+\.\d)\] mm after (?P<s>\d+\.\d) s"
)
"""The behaviour server's summary line of a ManualAdjust wait (pinned, docs/interfaces.md)."""
OPERATOR_LINE = re.compile(
    r"ManualAdjust\[place_(?P<can>[A-Za-z0-9_]+)\] is over \((?P<how>confirmed|aborted) by the operator "
    r"after (?P<looks>\d+) look\(s\), (?P<strokes>\d+) stroke\(s\)"
)
"""The simulated operator's line at the end of a wait (salamander_sim/operator/core.py)."""


@dataclass(frozen=True)
class Adjust:
    """A ManualAdjust wait: how it ended, the offset (mm) and its length (s); looks/strokes when known."""

    how: str
    offset_mm: tuple[float, float, float]
    seconds: float
    looks: int | None = None
    strokes: int | None = None

    @property
    def correction_mm(self) -> float:
        """Length of the XY offset the operator moved the can, mm."""
        return math.hypot(self.offset_mm[0], self.offset_mm[1])


@dataclass(frozen=True)
class Cycle:
    """One can of one mode (see the module docstring); `cycle_s` None when the run never ended."""

    mode: str
    seed: int
    can: str
    tree: str
    cell: str | None
    cycle_s: float | None
    adjust: Adjust | None = None

    @property
    def attempted(self) -> bool:
        """Whether a placement was tried (the tree did not skip the can untouched)."""
        return self.cell != UNTOUCHED

    @property
    def success(self) -> bool:
        """The cell's ground truth: the can rests in its compartment clear of all four walls."""
        return self.cell == CLEAR


def find_adjust(lines: Iterable[str], can: str) -> Adjust | None:
    """The last ManualAdjust summary of `can` in the stack's output, with the operator's looks if logged."""
    adjust = None
    operator = None
    for line in lines:
        match = ADJUST_LINE.search(line)
        if match and match["can"] == can:
            offset = (float(match["x"]), float(match["y"]), float(match["z"]))
            adjust = Adjust(match["how"], offset, float(match["s"]))
        match = OPERATOR_LINE.search(line)
        if match and match["can"] == can:
            operator = (int(match["looks"]), int(match["strokes"]))
    if adjust is not None and operator is not None:
        adjust = Adjust(adjust.how, adjust.offset_mm, adjust.seconds, *operator)
    return adjust


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a success rate (95 % for z = 1.96); (0, 1) without trials.

    Raises:
        ValueError: successes outside [0, n].
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class ModeSummary:
    """The numbers of one mode's column."""

    cans: int
    clear: int
    interval: tuple[float, float]
    untouched: int
    cycle_mean_s: float | None
    cycle_sd_s: float | None
    timeouts: int
    outcomes: Counter = field(default_factory=Counter)
    correction_mean_mm: float | None = None
    adjust_mean_s: float | None = None
    looks_mean: float | None = None

    @property
    def rate(self) -> float | None:
        """Share of cans placed clear, or None without cans."""
        return self.clear / self.cans if self.cans else None


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def summarise(cycles: Sequence[Cycle]) -> ModeSummary:
    """One mode's cycles -> its column: the rate over the cans a placement was tried for, means over the
    cans that have the value."""
    untouched = sum(not c.attempted for c in cycles)
    cycles = [c for c in cycles if c.attempted]
    clear = sum(c.success for c in cycles)
    times = [c.cycle_s for c in cycles if c.cycle_s is not None]
    adjusts = [c.adjust for c in cycles if c.adjust is not None and c.adjust.how == "confirmed"]
    looks = [a.looks for a in adjusts if a.looks is not None]
    return ModeSummary(
        cans=len(cycles),
        clear=clear,
        interval=wilson(clear, len(cycles)),
        untouched=untouched,
        cycle_mean_s=_mean(times),
        cycle_sd_s=statistics.stdev(times) if len(times) > 1 else None,
        timeouts=sum(c.cycle_s is None for c in cycles),
        outcomes=Counter(c.cell or "unknown" for c in cycles),
        correction_mean_mm=_mean([a.correction_mm for a in adjusts]),
        adjust_mean_s=_mean([a.seconds for a in adjusts]),
        looks_mean=_mean([float(n) for n in looks]),
    )


def _num(value: float | None, fmt: str = ".1f") -> str:
    return "-" if value is None else format(value, fmt)


def table(auto: ModeSummary, manual: ModeSummary) -> str:
    """The side-by-side Markdown table."""

    def rate(s: ModeSummary) -> str:
        return "-" if s.rate is None else f"{s.clear} / {s.cans} ({100 * s.rate:.0f} %)"

    def interval(s: ModeSummary) -> str:
        lo, hi = s.interval
        return f"{100 * lo:.0f}-{100 * hi:.0f} %"

    def cycle(s: ModeSummary) -> str:
        sd = "" if s.cycle_sd_s is None else f" ± {s.cycle_sd_s:.1f}"
        return "-" if s.cycle_mean_s is None else f"{s.cycle_mean_s:.1f}{sd}"

    def others(s: ModeSummary) -> str:
        rest = {k: v for k, v in s.outcomes.items() if k != CLEAR}
        return ", ".join(f"{k} {v}" for k, v in sorted(rest.items())) or "none"

    rows = [
        ("cans placed (a placement tried)", str(auto.cans), str(manual.cans)),
        ("cans the tree skipped untouched (not counted)", str(auto.untouched), str(manual.untouched)),
        ("placed clear of all four walls (cell's ground truth)", rate(auto), rate(manual)),
        ("95 % interval of that rate (Wilson)", interval(auto), interval(manual)),
        ("cycle time per can, mean ± sd [s]", cycle(auto), cycle(manual)),
        ("runs without a result in time", str(auto.timeouts), str(manual.timeouts)),
        ("other outcomes", others(auto), others(manual)),
        ("operator's correction per can, mean [mm]", "-", _num(manual.correction_mean_mm, ".2f")),
        ("operator's time per can (ManualAdjust wait), mean [s]", "-", _num(manual.adjust_mean_s)),
        ("operator's looks per can, mean", "-", _num(manual.looks_mean)),
    ]
    out = ["| metric | autonomous (manual_place false) | ManualAdjust + simulated operator |",
           "|---|---:|---:|"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out)
