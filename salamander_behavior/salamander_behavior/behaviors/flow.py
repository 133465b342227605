"""Leaves that shape the run: wait for the stack, pause, and decide what a can's failure means.

`CanOutcome` is the fallback of each can's selector. It reads the can's stage from the blackboard:

- unset (the vacuum never came on for it): the can was never touched. It is **skipped**, the reason
  (the failed leaf's name and feedback) is logged and recorded, and the run goes on with the next can.
- "holding" / "released": the can may be on the pad (or the arm stands in the box after letting go).
  The can is **aborted** and so is the run: the arm stays where it stopped, the vacuum stays as it is
  (on while holding), and nothing is ever put down outside the box. The log says what to do.
"""

from __future__ import annotations

import py_trees
from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    STAGE_HOLDING,
    PortBehavior,
    Ports,
    blackboard_client,
    offset_key,
    stage_key,
)
from salamander_behavior.report import CanResult


def failure_reason(root: py_trees.behaviour.Behaviour) -> str:
    """``<leaf>: <feedback>`` of the deepest FAILURE under `root` (a failed condition or leaf).

    After a composite fails, its failed child keeps the FAILURE status until the next tick, so the
    path of FAILURE statuses leads to the leaf that caused it (a guard's condition or a motion).
    """
    node = root
    while node.children:
        failed = [c for c in node.children if c.status is Status.FAILURE]
        if not failed:
            break
        node = failed[-1]
    message = node.feedback_message or "failed"
    return f"{node.name}: {message}"


class WaitUntilReady(PortBehavior):
    """RUNNING until arm (lease, action server, joint states) and cell are ready; FAILURE on timeout."""

    def step(self, ports: Ports) -> Status:
        """Poll both ports."""
        arm_ok, arm_why = ports.motion.ready()
        cell_ok, cell_why = ports.cell.ready()
        if arm_ok and cell_ok:
            self.feedback_message = "arm and cell ready"
            ports.log.info("arm and cell ready: starting the run")
            return Status.SUCCESS
        waiting = "; ".join(w for ok, w in ((arm_ok, arm_why), (cell_ok, cell_why)) if not ok)
        timeout = ports.settings().ready_timeout_s
        if self.elapsed() > timeout:
            self.feedback_message = f"not ready after {timeout:.0f} s: {waiting}"
            ports.log.error(self.feedback_message)
            return Status.FAILURE
        self.feedback_message = f"waiting: {waiting}"
        return Status.RUNNING


class Wait(PortBehavior):
    """Hold still for a time given by a BehaviorSettings field (read when the wait starts)."""

    def __init__(self, name: str, duration_field: str) -> None:
        super().__init__(name)
        self.duration_field = duration_field
        self._duration = 0.0

    def start(self, ports: Ports) -> None:
        """Read the duration."""
        self._duration = float(getattr(ports.settings(), self.duration_field))

    def step(self, ports: Ports) -> Status:
        """SUCCESS once the time is up."""
        waited = self.elapsed()
        if waited >= self._duration:
            self.feedback_message = f"waited {self._duration:.2f} s"
            return Status.SUCCESS
        self.feedback_message = f"{waited:.2f} of {self._duration:.2f} s"
        return Status.RUNNING


IN_BOX_PREFIX = "in_box"
"""The cell's results for a can that ended in a compartment ("in_box_clear", "in_box_touching")."""


class CanPlaced(PortBehavior):
    """The last leaf of a cycle: record the can as placed or missed, from what the cell reports.

    The arm has let the can go over the box and risen clear, so the run goes on either way (SUCCESS);
    only the record differs. A can is **placed** only when the cell's outcome result starts with
    "in_box" ("in_box_touching" is placed, touching a wall); any other result (on the rim, on another
    can, knocked off onto the table) is **missed** and logged as a warning. The cell's outcome arrives
    with its state messages, so the leaf waits up to `release_timeout_s` for it; without one the can is
    missed too: a placement nobody saw is not claimed.
    """

    def __init__(self, name: str, can: str) -> None:
        super().__init__(name)
        self.can = can
        self._key = offset_key(can)
        self._bb = blackboard_client(f"CanPlaced[{can}]", {self._key: Access.READ})
        self._timeout = 0.0

    def start(self, ports: Ports) -> None:
        """Read how long to wait for the cell's outcome."""
        self._timeout = ports.settings().release_timeout_s

    def step(self, ports: Ports) -> Status:
        """SUCCESS once the outcome is recorded; RUNNING while the cell has not reported it yet."""
        result = ports.cell.result(self.can)
        if result is None and self.elapsed() <= self._timeout:
            self.feedback_message = f"waiting for the cell to report where {self.can} ended"
            return Status.RUNNING
        dx, dy = self._bb.get(self._key) if self._bb.exists(self._key) else (0.0, 0.0)
        offset = f"offset [{dx * 1000:.1f}, {dy * 1000:.1f}, 0.0] mm"
        if result is None:
            where = f"the cell reported no outcome within {self._timeout:.1f} s"
        else:
            where = ports.cell.outcome(self.can) or result
        if result is not None and result.startswith(IN_BOX_PREFIX):
            touching = ", touching a wall" if result == "in_box_touching" else ""
            detail = f"released over the box at {offset}{touching}: {where}"
            ports.report.record(self.can, CanResult.PLACED, detail)
            ports.log.info(f"{self.can}: placed ({detail})")
        else:
            detail = f"released over the box but {where} (at {offset})"
            ports.report.record(self.can, CanResult.MISSED, detail)
            ports.log.warning(f"{self.can}: {detail}")
        self.feedback_message = detail
        return Status.SUCCESS


class CanOutcome(PortBehavior):
    """Fallback of a can: skip it (never touched) or abort the run (see the module docstring).

    Args:
        name: leaf name.
        can: the can.
        attempt: the can's attempt subtree, whose failed leaf gives the reason.
    """

    def __init__(self, name: str, can: str, attempt: py_trees.behaviour.Behaviour) -> None:
        super().__init__(name)
        self.can = can
        self.attempt = attempt
        self._key = stage_key(can)
        self._bb = blackboard_client(f"CanOutcome[{can}]", {self._key: Access.READ})

    def step(self, ports: Ports) -> Status:
        """SUCCESS for a skip, FAILURE (the run stops) for an abort."""
        reason = failure_reason(self.attempt)
        stage = self._bb.get(self._key) if self._bb.exists(self._key) else None
        if stage is None:
            ports.report.record(self.can, CanResult.SKIPPED, reason)
            ports.log.warning(f"{self.can}: skipped, never touched: {reason}")
            self.feedback_message = f"skipped: {reason}"
            return Status.SUCCESS
        if stage == STAGE_HOLDING:
            what = (
                "the arm holds it where it stopped, vacuum on; take it off the pad by hand (vacuum off: "
                "/salamander/cell/vacuum) and restart the behaviour server"
            )
        else:
            what = "it was let go over the box, but the arm did not get clear; check the cell and restart"
        ports.report.record(self.can, CanResult.ABORTED, reason)
        ports.log.error(f"{self.can}: aborted, run stopped: {reason}; {what}")
        self.feedback_message = f"aborted: {reason}"
        return Status.FAILURE
