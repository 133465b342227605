"""The pad check: before every pick (and so at the start of a run) the tree makes sure the pad is empty.

A behaviour server restarted mid-run (the runner respawns it) may find a can on the pad: the one it
was carrying when it stopped. Picking with it there would carry it back and set it down on another
can's spot. So `ClearPad` runs before each can's pick and decides from the part-present switch alone:

- fresh false, without interruption for `clear_confirm_s` (0.1 s; after a release it has been false for
  far longer, so a pick does not wait): the pad is clear, SUCCESS (decision "clear"). But if a can was
  recorded as carried (the progress file, `held`), it is no longer on the pad, and the tree cannot tell
  whether it was taken off by hand or fell off (then it may lie anywhere in the cell, e.g. in the next
  can's compartment). So the leaf does not pick: it waits, from that moment on, for the operator's
  confirmation that the cell is clear (``/salamander/operator/confirm`` true): then its stage becomes
  "removed" (not where the cell config says; an empty goal does not pick it again), decision
  "removed", and the pick goes on;
  false or no answer within ``pad_wait_timeout_s``: FAILURE, its stage becomes "lost" (the run's
  progress keeps it lost: the next run asks again first, behaviors/lost.py). The vacuum is untouched.
- fresh true: a can is on the pad. The leaf does **not** pick. It switches the vacuum ON first (after a
  restart the valve state is unknown; on keeps a held can from dropping; the leaf never switches it
  off), logs what it found and what the operator may do, and waits, from that moment on, for:

  * the operator's confirmation (``/salamander/operator/confirm`` true, the topic ManualAdjust uses;
    only confirmations that arrive after the wait began count): with the carried can known, the
    decision is "place" and the tree places that can into its own compartment (tree.py: the can's
    place steps, from the carry on); with it unknown a confirmation is ignored (the tree never
    guesses which can it holds) and only removal is offered;
  * removal: part-present false, fresh, without interruption for ``removal_confirm_s``: decision
    "removed", SUCCESS, the pick goes on;
  * abort (confirm false) or no decision within ``pad_wait_timeout_s``: FAILURE; the run stops with
    the vacuum as it is (on), the arm where it stands;
- stale (older than ``part_present_timeout_s``): FAILURE at once ("cannot tell whether the pad is
  clear"): the tree does not pick on a signal it cannot trust.

The decision is written to ``/pad_decision/<label>`` (behaviors/base.py) for the selector after it.
Where it sits in the tree and why the release stays safe: tree.py.
"""

from __future__ import annotations

from typing import Any

from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    STAGE_HOLDING,
    STAGE_LOST,
    STAGE_REMOVED,
    WAKE_LATE_S,
    PortBehavior,
    Ports,
    blackboard_client,
    pad_key,
    stage_key,
)
from salamander_behavior.manual_adjust.operator_input import (
    ConfirmEvent,
    OperatorInbox,
    setup_inbox,
)
from salamander_behavior.ports import PendingCall
from salamander_control import names

CONFIRM = names.absolute(names.OPERATOR_CONFIRM)

CLEAR = "clear"
REMOVED = "removed"
PLACE = "place"


class ClearPad(PortBehavior):
    """Before picking `before`: succeed on a clear pad; with a can on it, wait for place or removal.

    Args:
        name: leaf name, e.g. ``pad clear before can_1?``.
        label: the pad check's label (its blackboard key), e.g. ``can_1``.
        before: what comes next, for the log ("picking can_1", "ending the run").
        held: the can recorded as carried (the progress file), None when unknown: only removal is
            offered then.
    """

    def __init__(self, name: str, label: str, before: str, held: str | None = None) -> None:
        super().__init__(name)
        self.label = label
        self.before = before
        self.held = held
        self._key = pad_key(label)
        keys = {self._key: Access.WRITE}
        if held is not None:
            keys[stage_key(held)] = Access.WRITE
        self._bb = blackboard_client(f"ClearPad[{label}]", keys)
        self.inbox: OperatorInbox | None = None
        self._waiting_since: float | None = None
        self._vacuum: PendingCall | None = None
        self._vacuum_ok = False
        self._clear_since: float | None = None
        self._ignored_logged = False
        self._asking_clear = False  # the held can is not on the pad: waiting for "the cell is clear"

    def setup(self, **kwargs: Any) -> None:
        """Take the ports; the operator inbox from kwargs (tests) or the node's shared one."""
        super().setup(**kwargs)
        self.inbox = setup_inbox(kwargs, self.ports.clock if self.ports is not None else None)

    def start(self, ports: Ports) -> None:
        """No decision yet."""
        self._waiting_since = None
        self._vacuum = None
        self._vacuum_ok = False
        self._clear_since = None
        self._ignored_logged = False
        self._asking_clear = False
        self._confirmed = False  # a confirmation taken while the vacuum's answer was still pending

    def _decide(self, decision: str, message: str, ports: Ports) -> Status:
        self._bb.set(self._key, decision, overwrite=True)
        if decision in (CLEAR, REMOVED) and self.held is not None:
            self._bb.set(stage_key(self.held), STAGE_REMOVED, overwrite=True)
        self.feedback_message = message
        if self._waiting_since is not None:
            ports.log.info(f"{self.name}: {message}")
        return Status.SUCCESS

    def _fail(self, message: str, ports: Ports) -> Status:
        self.feedback_message = message
        ports.log.error(f"{self.name}: {message}")
        return Status.FAILURE

    def step(self, ports: Ports) -> Status:
        """Decide from the switch and the operator (see the module docstring)."""
        now = ports.clock()
        settings = ports.settings()
        reading = ports.gripper.part_present()
        if not reading.fresh(now, settings.part_present_timeout_s):
            return self._fail(
                f"{reading.stale_text(now)}: cannot tell whether the pad is clear before {self.before}; "
                "not picking (vacuum as it is)",
                ports,
            )
        if self._waiting_since is None:
            if not reading.value:
                lasted, confirm = now - reading.changed_at, settings.clear_confirm_s
                if lasted < confirm:  # a can on the pad whose switch flickered false must not be picked over
                    self.feedback_message = (
                        f"part-present false for {lasted:.2f} s: the pad counts as clear once it stays false "
                        f"for {confirm:.2f} s (clear_confirm_s)"
                    )
                    ports.wake_after(confirm - lasted + WAKE_LATE_S)
                    return Status.RUNNING
                if self.held:
                    return self._begin_ask_clear(ports, now)
                return self._decide(CLEAR, "pad clear", ports)
            return self._begin_wait(ports, now)
        if self._asking_clear:
            return self._ask_clear(ports, now)
        return self._wait(ports, now, reading.value)

    def _begin_ask_clear(self, ports: Ports, now: float) -> Status:
        self._waiting_since = now
        self._asking_clear = True
        if self.inbox is not None:
            self.inbox.drain()  # confirmations before the wait began never count
        timeout = ports.settings().pad_wait_timeout_s
        ports.log.warning(
            f"{self.name}: the pad is clear, but {self.held} (recorded as carried) is not on it: taken off "
            f"by hand or fallen off, the tree cannot tell; not {self.before} until the operator confirms "
            f"the cell is clear (true on {CONFIRM}: gamepad SQUARE, salamanderctl confirm; false stops the "
            f"run; the run waits at most {timeout:.0f} s)"
        )
        self.feedback_message = f"{self.held} is not on the pad: waiting for the operator (cell clear?)"
        return Status.RUNNING

    def _ask_clear(self, ports: Ports, now: float) -> Status:
        assert self._waiting_since is not None and self.held is not None
        for event in self.inbox.drain() if self.inbox is not None else []:
            if not isinstance(event, ConfirmEvent) or event.received < self._waiting_since:
                continue
            if event.confirmed:
                held = f"{self.held} counted as removed"
                return self._decide(REMOVED, f"the operator confirmed the cell is clear: {held}", ports)
            return self._lost("stopped by the operator", ports)
        timeout = ports.settings().pad_wait_timeout_s
        if now - self._waiting_since > timeout:
            return self._lost(f"no confirmation within {timeout:.0f} s", ports)
        self.feedback_message = (
            f"{self.held} is not on the pad: waiting for the operator to confirm the cell is clear, "
            f"{now - self._waiting_since:.1f} of {timeout:.0f} s"
        )
        return Status.RUNNING

    def _lost(self, why: str, ports: Ports) -> Status:
        """No confirmation: the held can counts as lost (the next run asks again before it moves)."""
        assert self.held is not None
        self._bb.set(stage_key(self.held), STAGE_LOST, overwrite=True)
        return self._fail(f"{why}: {self.held} recorded as lost; not {self.before}", ports)

    def _begin_wait(self, ports: Ports, now: float) -> Status:
        self._waiting_since = now
        if self.inbox is not None:
            self.inbox.drain()  # confirmations before the wait began never count
        self._vacuum = ports.gripper.set_vacuum(True)  # keep it: the valve state is unknown after a restart
        if self.held is not None:
            self._bb.set(stage_key(self.held), STAGE_HOLDING, overwrite=True)
            offer = (
                f"place it into {self.held}'s compartment (confirm true on {names.OPERATOR_CONFIRM}; "
                f"{self.held} is recorded as carried) or remove it"
            )
        else:
            offer = (
                "which can it is is not known, so it is not placed: remove it (vacuum off by hand on "
                f"{names.GRIPPER_VACUUM}); confirm false aborts"
            )
        timeout = ports.settings().pad_wait_timeout_s
        ports.log.warning(
            f"a can is on the pad before {self.before}: not picking; {offer} (the run waits, at most "
            f"{timeout:.0f} s; vacuum switched on to keep it)"
        )
        self.feedback_message = f"a can is on the pad: waiting for the operator ({offer})"
        return Status.RUNNING

    def _wait(self, ports: Ports, now: float, present: bool | None) -> Status:
        settings = ports.settings()
        assert self._waiting_since is not None
        if self._vacuum is not None and not self._vacuum_ok:
            if self._vacuum.done():
                ok, message = self._vacuum.result()
                if not ok:
                    return self._fail(f"could not switch the vacuum on ({message}); not picking", ports)
                self._vacuum_ok = True
            elif now - self._waiting_since > settings.vacuum_timeout_s:
                return self._fail(
                    f"vacuum on: no answer within {settings.vacuum_timeout_s:.1f} s; not picking", ports
                )
        events = self.inbox.drain() if self.inbox is not None else []
        for event in events:
            if not isinstance(event, ConfirmEvent) or event.received < self._waiting_since:
                continue
            if not event.confirmed:
                return self._fail("aborted by the operator: the can stays on the pad (vacuum on)", ports)
            if self.held is None:
                if not self._ignored_logged:
                    self._ignored_logged = True
                    ports.log.warning(
                        f"{self.name}: confirmation ignored: which can is on the pad is not known; "
                        "remove it (or abort with confirm false)"
                    )
                continue
            self._confirmed = True  # acted on below once the vacuum is on (it was dropped before)
        if self._confirmed and self._vacuum_ok:
            return self._decide(PLACE, f"confirmed: placing {self.held} into its compartment", ports)
        if present is False:
            self._clear_since = now if self._clear_since is None else self._clear_since
            if now - self._clear_since >= settings.removal_confirm_s:
                what = f" ({self.held}, counted as removed)" if self.held else ""
                message = f"the can was removed from the pad{what}: picking goes on"
                return self._decide(REMOVED, message, ports)
        else:
            self._clear_since = None
        if now - self._waiting_since > settings.pad_wait_timeout_s:
            return self._fail(
                f"no decision within {settings.pad_wait_timeout_s:.0f} s: the can stays on the pad "
                "(vacuum on); not picking",
                ports,
            )
        self.feedback_message = (
            f"a can is on the pad: waiting for the operator, {now - self._waiting_since:.1f} of "
            f"{settings.pad_wait_timeout_s:.0f} s"
        )
        return Status.RUNNING


class PadDecided(PortBehavior):
    """SUCCESS unless the pad check `label` decided "place" (then its selector places the held can)."""

    def __init__(self, name: str, label: str) -> None:
        super().__init__(name)
        self._key = pad_key(label)
        self._bb = blackboard_client(f"PadDecided[{label}]", {self._key: Access.READ})

    def step(self, ports: Ports) -> Status:
        """Read the decision."""
        decision = self._bb.get(self._key) if self._bb.exists(self._key) else None
        if decision == PLACE:
            self.feedback_message = "the operator confirmed: the held can is placed first"
            return Status.FAILURE
        self.feedback_message = f"nothing to place ({decision or 'no decision'})"
        return Status.SUCCESS
