"""The placement benchmark's records and statistics (bench/bench_placement.py), pure.

One `Cycle` per can: the mode (`MODES`), the uncertainty level, the cell's uncertainty seed, what the
tree reported, where the can truly landed (the cell's ground truth), whether the cell tore it off the pad
(its log line ``can_k torn off the pad``), the cycle time, the search's probes (the behaviour server's
lines ``can_k: probe N/M passed|met the rim``; 0 without a contact) and, with ManualAdjust, the offset the
operator confirmed and how long the wait took (the server's pinned line) and the operator's looks and
strokes (the simulated operator's line).

`Cycle.outcome` sorts every can into one class of `OUTCOMES` (first match wins): torn off (whatever it
landed on afterwards), held on the pad when the run stopped (a search that ran out, a contact after
ManualAdjust, an abort), in its compartment clear of all four walls, touching a wall, on the rim, and
astray (anything else: on the table, on another can, tipped, dropped, unknown). A can the tree skipped
untouched is none of them: no placement was tried, it is listed and not counted.

`summarise` turns one column's cycles (a mode at a level) into the table's numbers; `wilson` is the
95 % interval of a share; `table` prints the columns side by side. Unit-tested in
test/test_bench_placement_metrics.py.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

PLAIN, SHIPPED, MANUAL, KNOWN = "plain", "shipped", "manual", "known"
MODES = (PLAIN, SHIPPED, MANUAL, KNOWN)
"""plain: autonomous, guarded pass (and so the search) and box estimate off; shipped: autonomous as
config/behavior.yaml ships it; manual: ManualAdjust with the simulated operator; known: the same, but
only until the box estimate knows a can's compartment (``manual_place_known_m``)."""
OPERATOR_MODES = (MANUAL, KNOWN)
"""The modes with the simulated operator at the cell."""
MODE_TEXT = {
    PLAIN: "plain (no guard, search, estimate)",
    SHIPPED: "shipped (guard, search, estimate)",
    MANUAL: "ManualAdjust + simulated operator",
    KNOWN: "ManualAdjust until the box is known + simulated operator",
}

CELL_CLEAR, CELL_TOUCHING, CELL_RIM = "in_box_clear", "in_box_touching", "on_rim"
ON_PAD = "on the pad"
"""`Cycle.cell` of a can still held on the pad when its goal ended (the run stopped with it held)."""
UNTOUCHED = "untouched"
"""`Cycle.cell` of a can the tree skipped before gripping it: no placement was tried, so it is not
counted (it says something about the stack, e.g. a stale signal, not the placement)."""

CLEAR, TOUCHING, RIM, TORN, HELD, ASTRAY = (
    "clear", "touching", "on the rim", "torn off", "held, run stopped", "astray",
)  # fmt: skip
OUTCOMES = (CLEAR, TOUCHING, RIM, TORN, HELD, ASTRAY)
OUTCOME_TEXT = {
    CLEAR: "clear of all four walls (cell's ground truth)",
    TOUCHING: "touching a wall",
    RIM: "on the rim",
    TORN: "torn off the pad",
    HELD: "held above the box, run stopped",
    ASTRAY: "astray (table, another can, tipped, dropped, unknown)",
}

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
PROBE_LINE = re.compile(r"\]: (?P<can>[A-Za-z0-9_]+): probe (?P<n>\d+)/(?P<m>\d+) (?:passed|met) the rim")
"""The behaviour server's line of each probe of a rim search (behaviors/search.py, `RimPass`)."""
CONTACT_LINE = re.compile(r"\]: (?P<can>[A-Za-z0-9_]+): met the rim: ")
"""The behaviour server's line of the first contact of a release descent (behaviors/search.py)."""
TORN_LINE = re.compile(r"\]: (?P<can>[A-Za-z0-9_]+) torn off the pad")
"""The physics cell's line of a seal that broke under load (salamander_sim/cell/physics.py)."""


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
class Search:
    """What a can's release descent met: a contact at the first pass, probes tried, torn off the pad."""

    contact: bool = False
    probes: int = 0
    torn: bool = False


@dataclass(frozen=True)
class Cycle:
    """One can of one mode at one level (see the module docstring); `cycle_s` None: no result in time.

    `release_to_release_s` (``--one-run`` only): from the previous can of the same run leaving the pad to
    this one leaving it, the cell's log stamps; None for a run's first can or one that never left the pad.

    `start` counts the stack starts of this seed, mode and level: a can that ends a start (torn off,
    lost, held) leaves the cans after it to a new start of the same seed.
    """

    mode: str
    level: float
    seed: int
    can: str
    tree: str
    cell: str | None
    cycle_s: float | None
    adjust: Adjust | None = None
    search: Search = Search()
    start: int = 1
    release_to_release_s: float | None = None

    @property
    def attempted(self) -> bool:
        """Whether a placement was tried (the tree did not skip the can untouched)."""
        return self.cell != UNTOUCHED

    @property
    def outcome(self) -> str:
        """The can's class in `OUTCOMES` (the module docstring's order); `UNTOUCHED` when never tried."""
        if not self.attempted:
            return UNTOUCHED
        if self.search.torn:
            return TORN
        if self.cell == ON_PAD:
            return HELD
        return {CELL_CLEAR: CLEAR, CELL_TOUCHING: TOUCHING, CELL_RIM: RIM}.get(self.cell or "", ASTRAY)


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


def find_search(lines: Iterable[str], can: str) -> Search:
    """`can`'s contact, probes (the highest probe number logged) and tear-off in the stack's output."""
    contact, probes, torn = False, 0, False
    for line in lines:
        match = PROBE_LINE.search(line)
        if match and match["can"] == can:
            probes = max(probes, int(match["n"]))
        match = CONTACT_LINE.search(line)
        contact = contact or bool(match and match["can"] == can)
        match = TORN_LINE.search(line)
        torn = torn or bool(match and match["can"] == can)
    return Search(contact or probes > 0, probes, torn)


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a share (95 % for z = 1.96); (0, 1) without trials.

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
class Summary:
    """The numbers of one column (a mode at a level)."""

    cans: int
    counts: Counter
    untouched: int
    cycle_mean_s: float | None
    cycle_sd_s: float | None
    timeouts: int
    astray: Counter = field(default_factory=Counter)
    contacts: int = 0
    probes_per_can: float | None = None
    operator_s_per_can: float | None = None
    waits: int = 0
    correction_mean_mm: float | None = None
    looks_mean: float | None = None
    release_to_release: tuple[float, float | None, int] | None = None  # mean s, sd s (None: one can), cans

    def share(self, outcome: str) -> tuple[int, tuple[float, float]]:
        """How many cans ended in `outcome` and the Wilson 95 % interval of that share."""
        k = self.counts.get(outcome, 0)
        return k, wilson(k, self.cans)


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def summarise(cycles: Sequence[Cycle]) -> Summary:
    """One column's cycles -> its numbers.

    Shares and per-can means are over the cans a placement was tried for (operator time and probes
    count 0 for a can without a wait or a search); the cycle time over those with a result; the
    correction and looks over the confirmed waits.
    """
    untouched = sum(not c.attempted for c in cycles)
    cycles = [c for c in cycles if c.attempted]
    times = [c.cycle_s for c in cycles if c.cycle_s is not None]
    released = [c.release_to_release_s for c in cycles if c.release_to_release_s is not None]
    sd = statistics.stdev(released) if len(released) > 1 else None
    waits = [c.adjust for c in cycles if c.adjust is not None]
    confirmed = [a for a in waits if a.how == "confirmed"]
    looks = [float(a.looks) for a in confirmed if a.looks is not None]
    n = len(cycles)
    return Summary(
        cans=n,
        counts=Counter(c.outcome for c in cycles),
        untouched=untouched,
        cycle_mean_s=_mean(times),
        cycle_sd_s=statistics.stdev(times) if len(times) > 1 else None,
        timeouts=sum(c.cycle_s is None for c in cycles),
        astray=Counter(c.cell or "unknown" for c in cycles if c.outcome == ASTRAY),
        contacts=sum(c.search.contact for c in cycles),
        probes_per_can=sum(c.search.probes for c in cycles) / n if n else None,
        operator_s_per_can=sum(a.seconds for a in waits) / n if n else None,
        waits=len(waits),
        correction_mean_mm=_mean([a.correction_mm for a in confirmed]),
        looks_mean=_mean(looks),
        release_to_release=(statistics.fmean(released), sd, len(released)) if released else None,
    )


def _num(value: float | None, fmt: str = ".1f") -> str:
    return "-" if value is None else format(value, fmt)


def level_text(level: float) -> str:
    """A level as the tables write it: "sigma x1", "sigma x2"."""
    return f"sigma x{level:g}"


def table(columns: Sequence[tuple[str, Summary]]) -> str:
    """The Markdown table: one column per (heading, summary), a row per outcome class and measure."""

    def share(s: Summary, outcome: str) -> str:
        if not s.cans:
            return "-"
        k, (lo, hi) = s.share(outcome)
        return f"{k} / {s.cans} ({100 * k / s.cans:.0f} %; {100 * lo:.0f}-{100 * hi:.0f} %)"

    def cycle(s: Summary) -> str:
        sd = "" if s.cycle_sd_s is None else f" ± {s.cycle_sd_s:.1f}"
        return "-" if s.cycle_mean_s is None else f"{s.cycle_mean_s:.1f}{sd}"

    def released(s: Summary) -> str:
        if s.release_to_release is None:
            return "-"
        mean, sd, n = s.release_to_release
        return f"{mean:.2f}{'' if sd is None else f' ± {sd:.2f}'} ({n} cans)"

    def astray(s: Summary) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(s.astray.items())) or "none"

    rows: list[tuple[str, list[str]]] = [
        ("cans tried (a placement tried)", [str(s.cans) for _, s in columns]),
        ("cans the tree skipped untouched (not counted)", [str(s.untouched) for _, s in columns]),
    ]
    rows += [(f"{OUTCOME_TEXT[o]}, n / tried (95 % Wilson)", [share(s, o) for _, s in columns])
             for o in OUTCOMES]  # fmt: skip
    rows += [
        ("astray: where (cell's outcome)", [astray(s) for _, s in columns]),
        ("cycle time per can, mean ± sd [s]", [cycle(s) for _, s in columns]),
        ("... release to release within a run, mean ± sd [s]", [released(s) for _, s in columns]),
        ("runs without a result in time", [str(s.timeouts) for _, s in columns]),
        ("operator time per can (ManualAdjust waits / cans tried) [s]",
         [_num(s.operator_s_per_can) for _, s in columns]),
        ("operator's correction per confirmed wait, mean [mm]",
         [_num(s.correction_mean_mm, ".2f") for _, s in columns]),
        ("operator's looks per confirmed wait, mean", [_num(s.looks_mean) for _, s in columns]),
        ("cans that met the rim (a contact)", [str(s.contacts) for _, s in columns]),
        ("probes per can (0 without a contact), mean", [_num(s.probes_per_can, ".2f") for _, s in columns]),
    ]  # fmt: skip
    out = ["| metric | " + " | ".join(h for h, _ in columns) + " |", "|---|" + "---:|" * len(columns)]
    out += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]
    return "\n".join(out)
