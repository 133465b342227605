"""Reading the behaviour server's tree snapshot (/salamander/behavior/tree, std_msgs/String, latched).

The snapshot is the only run state every node can read (the RunPickPlace feedback goes to the goal's
client alone). Its layout is `salamander_behavior.active_run.snapshot_text`:

    run: RUNNING (1 placed, 0 missed, 0 skipped, 0 aborted)
    can_0: placed: released over compartment 0 ...
    <blank line>
    {-} PickAndPlace [*]
        {-} can_1 [*]
            --> ManualAdjust[place_can_1] [*] -- waiting for the operator: offset [1.0, 2.0, 0.0] mm, ...

`parse` returns the run's state word, the outcome of each finished can, the running step (the deepest
line marked ``[*]``) and, while a ManualAdjust waits, its name and offset. Pure; unknown text gives an
"unknown" state rather than an error (the view must not die on a format change; a test pins the format
against the server's own function).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from salamander_control.manual_wait import read_wait_offset

_HEAD = re.compile(r"^run: (?P<state>[A-Z_]+)(?: \((?P<summary>.*)\))?$")
_CAN = re.compile(r"^(?P<can>[A-Za-z0-9_]+): (?P<result>placed|missed|skipped|aborted|lost): (?P<detail>.*)$")
_RUNNING = re.compile(
    r"^(?P<indent>\s*)(?:\{.\}|\[.\]|\(.\)|/_/|-->|-\^-)?\s*(?P<name>\S.*?) \[\*\](?: -- (?P<msg>.*))?$"
)
_WAITING = re.compile(r"^ManualAdjust\[(?P<name>[^\]]+)\]$")

ACTIVE_STATES = frozenset({"RUNNING"})


@dataclass(frozen=True)
class ManualWait:
    """A ManualAdjust waiting for the operator: its name (``place_can_0``) and offset (mm)."""

    name: str
    offset_mm: tuple[float, float, float]


@dataclass(frozen=True)
class RunSnapshot:
    """What the view shows of the run."""

    state: str = "UNKNOWN"  # IDLE, RUNNING, SUCCESS, FAILURE, CANCELLED, INVALID, UNKNOWN (no snapshot)
    summary: str = ""
    outcomes: dict[str, str] = field(default_factory=dict)  # can -> placed|missed|skipped|aborted|lost
    can: str = ""  # the running can, "" between cans
    step: str = ""  # the running leaf, "" when nothing runs
    detail: str = ""  # the running leaf's feedback message
    manual: ManualWait | None = None

    @property
    def running(self) -> bool:
        """Whether the tree is running (a run is active as far as the snapshot says)."""
        return self.state in ACTIVE_STATES


def parse(text: str, cans: tuple[str, ...] = ()) -> RunSnapshot:
    """The snapshot's run state; `cans` names the cans whose tree branch gives the running can."""
    lines = text.splitlines()
    if not lines:
        return RunSnapshot()
    head = _HEAD.match(lines[0].strip())
    if head is None:
        return RunSnapshot()
    outcomes: dict[str, str] = {}
    running: list[tuple[int, str, str]] = []  # (indent, name, message) of every [*] line
    for line in lines[1:]:
        can = _CAN.match(line)
        if can and not line.startswith(" "):
            outcomes[can["can"]] = can["result"]
            continue
        mark = _RUNNING.match(line)
        if mark:
            running.append((len(mark["indent"]), mark["name"].strip(), mark["msg"] or ""))
    can = next((name for _, name, _ in running if name in cans), "")
    step, detail = ("", "")
    if len(running) > 1:  # the root alone running has no step yet
        _, step, detail = max(running, key=lambda r: r[0])
    manual = None
    wait = _WAITING.match(step)
    offset = read_wait_offset(detail)
    if wait and offset:
        manual = ManualWait(wait["name"], offset)
    return RunSnapshot(head["state"], head["summary"] or "", outcomes, can, step, detail, manual)
