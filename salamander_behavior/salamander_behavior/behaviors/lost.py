"""A can lost in transit stops every later run until the operator confirms the cell is clear.

A can whose part-present switch dropped while it was carried (`behaviors.vacuum.StillHeld`: stage
"lost") left the pad outside the box: it may lie on the table, across a compartment wall or in the arm's
way, and the tree, which sees only the gripper's contract, cannot tell where. The run's progress keeps it
"lost" (progress.py) across runs and restarts, and the next run begins, once the stack is ready and
before any motion, with `CellCleared`:

- it logs what was lost and what the operator must do, and waits, from that moment on (confirmations
  that arrived before never count, as at the pad check and in ManualAdjust), for
  ``/salamander/operator/confirm``: true = "the cell is clear" (the operator took the can away or put
  it back on its spot): each lost can's stage becomes "removed" (the progress then records it as taken
  away by hand: an empty goal does not pick it, a goal naming it does) and the run goes on; false, or
  no answer within ``pad_wait_timeout_s``: FAILURE, the run stops where it stands (the arm has not
  moved) and the cans stay lost for the next run to ask again.

Why the run waits instead of refusing its goal: the pad check (behaviors/pad.py) already asks the
operator inside the run, on the same topic, with the same bounds; so one gesture (gamepad SQUARE,
``salamanderctl confirm``) answers both, and a respawned server's run_on_start run resumes after the
confirmation instead of being refused. Nothing moves while it waits. (The operator view enables its
confirm button for a ManualAdjust wait only.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    STAGE_REMOVED,
    PortBehavior,
    Ports,
    blackboard_client,
    stage_key,
)
from salamander_behavior.manual_adjust.operator_input import (
    ConfirmEvent,
    OperatorInbox,
    setup_inbox,
)
from salamander_control import names

CONFIRM = names.absolute(names.OPERATOR_CONFIRM)


class CellCleared(PortBehavior):
    """Wait for the operator's confirmation that the cell is clear of the `lost` cans (module docstring).

    Args:
        name: leaf name, e.g. ``cell clear of can_1?``.
        lost: the cans recorded as lost in transit (the run's progress), in cell order; not empty.
    """

    def __init__(self, name: str, lost: Sequence[str]) -> None:
        super().__init__(name)
        if not lost:
            raise ValueError("CellCleared needs at least one lost can")
        self.lost = tuple(lost)
        self._bb = blackboard_client(f"CellCleared[{name}]", {stage_key(c): Access.WRITE for c in self.lost})
        self.inbox: OperatorInbox | None = None
        self._waiting_since = 0.0

    def setup(self, **kwargs: Any) -> None:
        """Take the ports; the operator inbox from kwargs (tests) or the node's shared one."""
        super().setup(**kwargs)
        self.inbox = setup_inbox(kwargs, self.ports.clock if self.ports is not None else None)

    def start(self, ports: Ports) -> None:
        """The wait begins: earlier confirmations are dropped; say what is asked."""
        self._waiting_since = ports.clock()
        if self.inbox is not None:
            self.inbox.drain()
        cans = ", ".join(self.lost)
        timeout = ports.settings().pad_wait_timeout_s
        ports.log.warning(
            f"{cans} fell off the pad in transit in an earlier run and may lie anywhere in the cell: not "
            f"moving until the operator confirms the cell is clear (true on {CONFIRM}: "
            f"gamepad SQUARE, salamanderctl confirm; false stops the run; the run waits at most "
            f"{timeout:.0f} s)"
        )

    def step(self, ports: Ports) -> Status:
        """SUCCESS on a confirmation after the wait began; FAILURE on false or the timeout."""
        now = ports.clock()
        cans = ", ".join(self.lost)
        events = self.inbox.drain() if self.inbox is not None else []
        for event in events:
            if not isinstance(event, ConfirmEvent) or event.received < self._waiting_since:
                continue
            if not event.confirmed:
                return self._fail(f"stopped by the operator: {cans} still to be confirmed clear", ports)
            for can in self.lost:
                self._bb.set(stage_key(can), STAGE_REMOVED, overwrite=True)
            self.feedback_message = f"the operator confirmed the cell is clear of {cans}"
            ports.log.info(f"{self.name}: {self.feedback_message}: counted as removed; the run goes on")
            return Status.SUCCESS
        timeout = ports.settings().pad_wait_timeout_s
        if now - self._waiting_since > timeout:
            return self._fail(
                f"no confirmation within {timeout:.0f} s that the cell is clear of {cans}: not moving", ports
            )
        self.feedback_message = (
            f"{cans} lost in transit: waiting for the operator to confirm the cell is clear, "
            f"{now - self._waiting_since:.1f} of {timeout:.0f} s"
        )
        return Status.RUNNING

    def _fail(self, message: str, ports: Ports) -> Status:
        self.feedback_message = message
        ports.log.error(f"{self.name}: {message}")
        return Status.FAILURE
