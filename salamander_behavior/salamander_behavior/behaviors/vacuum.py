"""The suction leaves: switch the vacuum, then wait for the cell to report the can gripped or let go.

`SetVacuum` marks the can's stage on the blackboard the moment it asks for the vacuum ("holding" for
on, "released" for off), before the answer: from then on the can may be on the pad, and the can's
outcome leaf must not treat a failure as a harmless skip. In the tree, the one `SetVacuum(False)` per
can sits right after the place_release descent in a memory sequence, so it only runs after that
descent succeeded (tree.py; salamander_behavior/test/test_tree.py checks the structure and random
failure runs).
"""

from __future__ import annotations

from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    STAGE_HOLDING,
    STAGE_RELEASED,
    PortBehavior,
    Ports,
    blackboard_client,
    stage_key,
)
from salamander_behavior.ports import PendingCall


class SetVacuum(PortBehavior):
    """Switch the vacuum on or off through the cell's service; FAILURE if it refuses or does not answer.

    Args:
        name: leaf name.
        can: the can this is for (its blackboard stage is set).
        on: True for on.
    """

    def __init__(self, name: str, can: str, on: bool) -> None:
        super().__init__(name)
        self.can = can
        self.on = on
        self._key = stage_key(can)
        self._bb = blackboard_client(f"SetVacuum[{can}]", {self._key: Access.WRITE})
        self._call: PendingCall | None = None
        self._timeout = 0.0

    def start(self, ports: Ports) -> None:
        """Mark the stage, then call the service."""
        self._bb.set(self._key, STAGE_HOLDING if self.on else STAGE_RELEASED, overwrite=True)
        self._timeout = ports.settings().vacuum_timeout_s
        self._call = ports.cell.set_vacuum(self.on)

    def step(self, ports: Ports) -> Status:
        """SUCCESS once the service said yes."""
        word = "on" if self.on else "off"
        if self._call is None:
            self.feedback_message = "no vacuum request was made"
            return Status.FAILURE
        if not self._call.done():
            if self.elapsed() > self._timeout:
                self.feedback_message = f"vacuum {word}: no answer within {self._timeout:.1f} s"
                ports.log.error(f"{self.name}: {self.feedback_message}")
                return Status.FAILURE
            self.feedback_message = f"vacuum {word}: waiting for the service"
            return Status.RUNNING
        ok, message = self._call.result()
        self.feedback_message = f"vacuum {word}: {message}"
        if not ok:
            ports.log.error(f"{self.name}: {self.feedback_message}")
            return Status.FAILURE
        return Status.SUCCESS


class WaitForHeld(PortBehavior):
    """Wait until the cell reports `can` on the pad (attached=True) or off it (attached=False).

    With a `confirm_field`, the state must hold without interruption for that long (s): a grip that
    the cell undoes a moment later (the pad still settling pushes the can into the table) is not
    mistaken for a held can.

    Args:
        name: leaf name.
        can: the can.
        attached: the state to wait for.
        timeout_field: the BehaviorSettings field giving the timeout (s).
        confirm_field: the BehaviorSettings field giving the confirmation time (s), or None.
    """

    def __init__(
        self, name: str, can: str, attached: bool, timeout_field: str, confirm_field: str | None = None
    ) -> None:
        super().__init__(name)
        self.can = can
        self.attached = attached
        self.timeout_field = timeout_field
        self.confirm_field = confirm_field
        self._timeout = 0.0
        self._confirm = 0.0
        self._since: float | None = None

    def start(self, ports: Ports) -> None:
        """Read the timeout and confirmation time."""
        settings = ports.settings()
        self._timeout = float(getattr(settings, self.timeout_field))
        self._confirm = float(getattr(settings, self.confirm_field)) if self.confirm_field else 0.0
        self._since = None

    def step(self, ports: Ports) -> Status:
        """SUCCESS when the cell agrees (for the confirmation time); FAILURE after the timeout."""
        now = ports.clock()
        held = ports.cell.held()
        verb = "gripped" if self.attached else "let go"
        if (held == self.can) == self.attached:
            self._since = now if self._since is None else self._since
            if now - self._since >= self._confirm:
                self.feedback_message = f"{self.can} {verb}"
                return Status.SUCCESS
        else:
            self._since = None
        if self.elapsed() > self._timeout:
            state = f"the pad holds {held}" if held else "the pad holds nothing"
            self.feedback_message = f"{self.can} not {verb} after {self._timeout:.1f} s ({state})"
            ports.log.error(f"{self.name}: {self.feedback_message}")
            return Status.FAILURE
        if self._since is not None:
            self.feedback_message = f"{self.can} {verb} for {now - self._since:.2f} of {self._confirm:.2f} s"
        else:
            self.feedback_message = f"waiting for {self.can} to be {verb}"
        return Status.RUNNING


class StillHeld(PortBehavior):
    """SUCCESS while the cell reports `can` on the pad; FAILURE (it was lost in transit) otherwise."""

    def __init__(self, name: str, can: str) -> None:
        super().__init__(name)
        self.can = can

    def step(self, ports: Ports) -> Status:
        """Check once per tick."""
        held = ports.cell.held()
        if held == self.can:
            self.feedback_message = f"{self.can} on the pad"
            return Status.SUCCESS
        where = ports.cell.outcome(self.can) or "position unknown"
        self.feedback_message = f"{self.can} is no longer on the pad ({where})"
        ports.log.error(f"{self.name}: {self.feedback_message}")
        return Status.FAILURE
