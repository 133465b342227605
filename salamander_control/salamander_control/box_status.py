"""What /salamander/box/estimate carries: the box estimate for people (JSON in a std_msgs/String). Pure.

The behaviour server publishes it (latched) whenever its estimate of where the box stands changes
(salamander_behavior/box_estimate.py: offset, yaw, uncertainty, the cans it rests on), and after a
"new box" reset; `salamanderctl status` and the operator view show `BoxStatus.text()`. One format, in the
package every one of them may import, so the three never drift apart. Units are mm and degrees::

    {"offset_mm": [1.2, -0.4], "yaw_deg": 0.15, "sigma_mm": [0.4, 0.4], "sigma_yaw_deg": 0.3,
     "yaw_estimated": true, "cans": 2, "from": ["can_0 (ManualAdjust)", "can_1 (search)"]}

Invariant: `from_json(to_json(s)) == s`; text that is not this format raises ValueError (a reader shows
"unreadable" rather than dying).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class BoxStatus:
    """The box estimate as shown: translation and its 1-sigma (mm), yaw and its 1-sigma (deg), cans."""

    offset_mm: tuple[float, float] = (0.0, 0.0)
    yaw_deg: float = 0.0
    sigma_mm: tuple[float, float] = (0.0, 0.0)
    sigma_yaw_deg: float = 0.0
    yaw_estimated: bool = False
    cans: int = 0
    sources: tuple[str, ...] = ()
    """Which cans it rests on and how each was found, e.g. ``can_0 (ManualAdjust)``, oldest first."""

    def to_json(self) -> str:
        """The message's text."""
        return json.dumps({
            "offset_mm": list(self.offset_mm), "yaw_deg": self.yaw_deg, "sigma_mm": list(self.sigma_mm),
            "sigma_yaw_deg": self.sigma_yaw_deg, "yaw_estimated": self.yaw_estimated, "cans": self.cans,
            "from": list(self.sources),
        })  # fmt: skip

    @staticmethod
    def from_json(text: str) -> BoxStatus:
        """Read a message's text.

        Raises:
            ValueError: not JSON, or not this format.
        """
        try:
            data = json.loads(text)
            status = BoxStatus(
                offset_mm=_pair(data["offset_mm"]),
                yaw_deg=float(data["yaw_deg"]),
                sigma_mm=_pair(data["sigma_mm"]),
                sigma_yaw_deg=float(data["sigma_yaw_deg"]),
                yaw_estimated=bool(data["yaw_estimated"]),
                cans=int(data["cans"]),
                sources=tuple(str(s) for s in data.get("from", [])),
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, OverflowError, RecursionError) as exc:
            raise ValueError(f"not a box estimate: {text[:80]!r}") from exc  # never an exception that kills
        numbers = (*status.offset_mm, status.yaw_deg, *status.sigma_mm, status.sigma_yaw_deg)
        if not all(math.isfinite(v) for v in numbers) or status.cans < 0:
            raise ValueError(f"not a box estimate (non-finite or negative): {text[:80]!r}")
        return status

    def text(self) -> str:
        """One line for people.

        E.g. ``offset (1.2, -0.4) mm, yaw 0.15 deg, sigma (0.4, 0.4) mm, yaw sigma 0.30 deg; from 2
        cans``, or ``none yet (the plan): ...`` before any evidence.
        """
        if self.cans == 0:
            return "none yet (the plan): no can placed by ManualAdjust or the search since the box came in"
        x, y = self.offset_mm
        sx, sy = self.sigma_mm
        yaw = f"yaw {self.yaw_deg:.2f} deg" if self.yaw_estimated else "yaw not yet seen (one compartment)"
        cans = f"{self.cans} can{'s' if self.cans != 1 else ''}"
        return (
            f"offset ({x:.1f}, {y:.1f}) mm, {yaw}, sigma ({sx:.1f}, {sy:.1f}) mm, yaw sigma "
            f"{self.sigma_yaw_deg:.2f} deg; from {cans}"
        )


def _pair(value: object) -> tuple[float, float]:
    x, y = value  # type: ignore[misc]
    return (float(x), float(y))


def status_text(text: str) -> str:
    """`BoxStatus.text()` of a message's text, or ``unreadable (...)`` for one that is not the format."""
    try:
        return BoxStatus.from_json(text).text()
    except ValueError as exc:
        return f"unreadable ({exc})"
