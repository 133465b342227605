"""The box estimate in the tree: the offset it gives a can, and the evidence a placed can gives it.

`estimated_offset` is what `PlaceOffset` writes as a can's place offset before the carry (so the can is
carried to place_above + that offset and the release descent is straight down) and where ManualAdjust
starts (manual_adjust/behavior.py): the estimate's offset at the can's compartment, within
ManualAdjust's 30 mm, with source "estimate"; the plan (0, 0) with source "plan" when ``box_estimate``
is off or the estimate has no evidence yet.

`operator_places` decides whether the operator places a can (ManualAdjust) or the tree does: the
operator with ``manual_place`` true, unless ``manual_place_known_m`` is set and the estimate already
knows the can's compartment within it (`BoxEstimate.sigma_at`, 1 sigma on each axis). So with an
operator at the cell the first can or two of a box are theirs and the later ones go in at the estimate,
guarded, searched, and back to the operator only when a search finds nothing.

`BoxEvidence` follows `CanPlaced` in a can's place steps: a can placed with a "manual" (ManualAdjust
confirmed) or "search" (a probe passed the rim) offset is evidence of where the box stands; the leaf
adds it to the estimate on the blackboard (``/box_estimate``, behaviors/base.py) and logs one line
(``box estimate: offset (x, y) mm, yaw d deg, sigma (sx, sy) mm from can_i (search|ManualAdjust)``).
It always succeeds: the can is placed whatever the estimate makes of it. An offset that was itself the
estimate's (or the plan's) is not evidence (it would only confirm itself).

Where to read more: box_estimate.py (the model), docs/interfaces.md ("Box estimate").
"""

from __future__ import annotations

import math

import py_trees
from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    BOX_ESTIMATE_KEY,
    OFFSET_ESTIMATE,
    OFFSET_MANUAL,
    OFFSET_PLAN,
    OFFSET_SEARCH,
    PortBehavior,
    Ports,
    blackboard_client,
    offset_key,
    offset_source_key,
)
from salamander_behavior.box_estimate import BoxEstimate, Evidence
from salamander_behavior.manual_adjust.core import AdjustLimits, within_radius
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.report import offset_mm

NO_OFFSET_M = 1e-6
"""m; an estimated offset shorter than this is the plan."""
EVIDENCE_SOURCES = (OFFSET_MANUAL, OFFSET_SEARCH)


def weighed_estimate(estimate: BoxEstimate | None, settings: BehaviorSettings) -> BoxEstimate | None:
    """The estimate under the noise parameters in force; None: ``box_estimate`` off, or no evidence yet."""
    if not settings.box_estimate or estimate is None or estimate.empty:
        return None
    return estimate.with_noise(settings.estimate_noise)


def operator_places(
    estimate: BoxEstimate | None, settings: BehaviorSettings, planned: tuple[float, float]
) -> tuple[bool, str]:
    """Whether the operator places the can at `planned` (True: ManualAdjust), and why, for a log line."""
    if not settings.manual_place:
        return False, "manual_place is false"
    known = settings.manual_place_known_m
    if known <= 0.0:
        return True, "manual_place is true"
    weighed = weighed_estimate(estimate, settings)
    if weighed is None:
        return True, "manual_place is true and the box estimate has no evidence yet"
    sx, sy = weighed.sigma_at(planned)
    sigma = f"({sx * 1e3:.2f}, {sy * 1e3:.2f}) mm (1 sigma; manual_place_known_m {known * 1e3:.2f} mm)"
    if max(sx, sy) > known:
        return True, f"manual_place is true and the box estimate knows this compartment to {sigma} only"
    return False, f"the box estimate knows this compartment to {sigma}: no operator needed"


def estimated_offset(
    estimate: BoxEstimate | None, settings: BehaviorSettings, planned: tuple[float, float]
) -> tuple[tuple[float, float], str]:
    """(dx, dy) m and its source (OFFSET_ESTIMATE or OFFSET_PLAN) for a can placed at `planned`."""
    weighed = weighed_estimate(estimate, settings)
    if weighed is None:
        return (0.0, 0.0), OFFSET_PLAN
    offset = weighed.offset_at(planned)
    offset = within_radius(offset, AdjustLimits.max_offset)
    if math.hypot(*offset) < NO_OFFSET_M:
        return (0.0, 0.0), OFFSET_PLAN
    return offset, OFFSET_ESTIMATE


class PlaceOffset(PortBehavior):
    """Write the can's place offset: the box estimate's at its compartment (zero without one); SUCCESS.

    Ticked before the carry, so the carry ends over the offset and the release descent that follows is
    vertical through the rim band (a line from place_above to an offset release would cross the rim
    short of the offset). Read each time a can gets here, so a live ``ros2 param set`` applies from the
    next can on. When the tree places the can (`operator_places`) it logs the offset and why (ManualAdjust
    logs its own start).

    Args:
        name: leaf name.
        can: whose offset to write.
        planned: the can's planned place point (compartment centre) in base_link, m.
    """

    def __init__(self, name: str, can: str, planned: tuple[float, float]) -> None:
        super().__init__(name)
        self.can = can
        self.planned = planned
        self._key, self._source = offset_key(can), offset_source_key(can)
        self._bb = blackboard_client(
            f"PlaceOffset[{can}]",
            {self._key: Access.WRITE, self._source: Access.WRITE, BOX_ESTIMATE_KEY: Access.READ},
        )

    def step(self, ports: Ports) -> Status:
        """Decide from the estimate and the current parameter snapshot."""
        settings = ports.settings()
        estimate = read_estimate(self._bb)
        (dx, dy), source = estimated_offset(estimate, settings, self.planned)
        self._bb.set(self._key, (dx, dy, 0.0), overwrite=True)
        self._bb.set(self._source, source, overwrite=True)
        if source == OFFSET_ESTIMATE and estimate is not None:
            self.feedback_message = f"the box estimate's offset {offset_mm((dx, dy))}"
            operator, why = operator_places(estimate, settings, self.planned)
            if not operator:
                ports.log.info(
                    f"{self.can}: placed at the box estimate's offset {offset_mm((dx, dy, 0.0))} "
                    f"(from {estimate.count} can{'s' if estimate.count != 1 else ''})"
                    + (f"; {why}" if settings.manual_place else "")
                )
        else:
            self.feedback_message = "the planned place target"
        return Status.SUCCESS


def read_estimate(client: py_trees.blackboard.Client) -> BoxEstimate | None:
    """The estimate on the blackboard (None: none, or not a BoxEstimate); `client` may read it."""
    value = client.get(BOX_ESTIMATE_KEY) if client.exists(BOX_ESTIMATE_KEY) else None
    return value if isinstance(value, BoxEstimate) else None


class BoxEvidence(PortBehavior):
    """After a placed can: its "manual" or "search" offset updates the box estimate (module docstring).

    Args:
        name: leaf name.
        can: the placed can.
        compartment: its compartment.
        planned: the planned place point (the compartment centre) in base_link, m.
        centre: the box's planned centre (for a first estimate), m.
    """

    def __init__(self, name: str, can: str, compartment: int, planned: tuple[float, float],
                 centre: tuple[float, float]) -> None:
        super().__init__(name)
        self.can = can
        self.compartment = compartment
        self.planned = planned
        self.centre = centre
        self._offset, self._source = offset_key(can), offset_source_key(can)
        self._bb = blackboard_client(
            f"BoxEvidence[{can}]",
            {self._offset: Access.READ, self._source: Access.READ, BOX_ESTIMATE_KEY: Access.WRITE},
        )

    def step(self, ports: Ports) -> Status:
        """Update the estimate when the can's offset is evidence; always SUCCESS."""
        source = self._bb.get(self._source) if self._bb.exists(self._source) else OFFSET_PLAN
        if source not in EVIDENCE_SOURCES or not self._bb.exists(self._offset):
            self.feedback_message = f"offset from the {source or OFFSET_PLAN}: not evidence of the box"
            return Status.SUCCESS
        dx, dy, *_ = self._bb.get(self._offset)
        settings = ports.settings()
        estimate = read_estimate(self._bb) or BoxEstimate(self.centre, settings.estimate_noise)
        try:
            evidence = Evidence(self.can, self.planned, (dx, dy), source, self.compartment)
        except ValueError as exc:
            self.feedback_message = f"not evidence: {exc}"
            ports.log.warning(f"box estimate: {self.can}'s offset left out: {exc}")
            return Status.SUCCESS
        estimate = estimate.with_noise(settings.estimate_noise).with_evidence(evidence)
        self._bb.set(BOX_ESTIMATE_KEY, estimate, overwrite=True)
        line = estimate.update_line()
        ports.log.info(line)
        self.feedback_message = line
        return Status.SUCCESS

