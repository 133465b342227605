"""The words a waiting ManualAdjust shows in the tree snapshot, and how its readers parse them. Pure.

While ManualAdjust waits for the operator, its feedback (shown after the leaf in the behaviour server's
tree snapshot, `/salamander/behavior/tree`: ``ManualAdjust[place_can_0] [*] -- <text>``) is
`wait_text`. The operator view (salamander_view/snapshot.py) and the simulated operator
(salamander_sim/operator/perception.py) read the offset back with `WAIT_OFFSET`. One format, in the
package all three import, so the writer and the readers never drift apart
(salamander_control/test/test_manual_wait.py holds them together).
"""

from __future__ import annotations

import re

_MM = r"-?\d+(?:\.\d+)?"
WAIT_OFFSET = rf"waiting for the operator: offset \[(?P<x>{_MM}), (?P<y>{_MM}), (?P<z>{_MM})\] mm"
"""Regular expression of the offset in a waiting ManualAdjust's text (groups x, y, z: mm)."""


def wait_text(offset_mm: str, elapsed_s: float, timeout_s: float) -> str:
    """A waiting ManualAdjust's feedback; `offset_mm` as the tree writes offsets (``[x, y, z] mm``)."""
    return f"waiting for the operator: offset {offset_mm}, {elapsed_s:.1f} of {timeout_s:.0f} s"


def read_wait_offset(text: str) -> tuple[float, float, float] | None:
    """The offset (mm) in a waiting ManualAdjust's text; None when the text shows none."""
    match = re.search(WAIT_OFFSET, text)
    return None if match is None else (float(match["x"]), float(match["y"]), float(match["z"]))
