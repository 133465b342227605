"""The suction leaves: switch the vacuum valve, then decide from the part-present switch alone.

The tree's only view of a can on the pad is the gripper's hardware contract (`GripperPort`): the valve
it commands and the part-present switch it hears, with the switch's age. So:

- **gripped** = part-present true, fresh, without interruption for `grip_confirm_s` after the valve
  opened (`WaitForPartPresent(present=True)`);
- **let go** = part-present false in a message that arrived after the valve was closed
  (`WaitForPartPresent(present=False)`);
- **lost in transit** = part-present false while the can is carried (`StillHeld`, a condition ticked
  before the carry, the manual placement and the place_release descent on every tick, so a drop stops
  the running motion the tick it is heard). The can's stage becomes "lost": the run's progress keeps it
  until the operator confirms the cell is clear (behaviors/lost.py). One false reading is enough, on
  purpose: a debounce (tried, 0.1 s) let the cycle run on into the release, whose vacuum-off then
  read the drop as the can let go over its compartment, "placed" (the switch property in test_tree.py
  found it). A switch that chatters stops a run with the can on the pad, which is safe; the pad check
  before a pick does wait for a steady false (`clear_confirm_s`, behaviors/pad.py).

Every one of them first checks the signal's age against `part_present_timeout_s`: a stale signal tells
nothing, so the step fails with what is known ("part-present signal 2.5 s old: cannot tell whether can_0
is on the pad; holding") and the can's outcome leaf stops the run with the vacuum as it is. No leaf ever
switches the vacuum off because of a failure.

`SetVacuum` marks the can's stage on the blackboard the moment it asks for the valve ("holding" for
on, "released" for off), before the answer: from then on the can may be on the pad, and the can's
outcome leaf must not treat a failure as a harmless skip. In the tree, the one `SetVacuum(False)` per
can sits right after the place_release descent in a memory sequence, so it only runs after that
descent succeeded (tree.py; salamander_behavior/test/test_tree.py checks the structure and random
failure runs).
"""

from __future__ import annotations

import py_trees
from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    STAGE_GRIPPED,
    STAGE_HOLDING,
    STAGE_LET_GO,
    STAGE_LOST,
    STAGE_RELEASED,
    WAKE_LATE_S,
    PortBehavior,
    Ports,
    blackboard_client,
    stage_key,
)
from salamander_behavior.ports import PendingCall


class SetVacuum(PortBehavior):
    """Open (on) or close the vacuum valve through the gripper's service; FAILURE if it refuses or is silent.

    Args:
        name: leaf name.
        can: the can this is for (its blackboard stage is set).
        on: True to open the valve (vacuum on).
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
        self._call = ports.gripper.set_vacuum(self.on)

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


class WaitForPartPresent(PortBehavior):
    """Wait for the part-present switch: true (the can gripped) or false (the can let go).

    present=True: the switch must read true in fresh messages without interruption for the
    `confirm_field` time (a seal that breaks a moment later, the pad still settling, is not a grip).
    present=False: a fresh false that arrived after this leaf started (it runs right after the valve
    closed). Success advances the can's stage ("gripped" / "let_go"). A stale signal fails at once.

    Args:
        name: leaf name.
        can: the can.
        present: the switch state to wait for.
        timeout_field: the BehaviorSettings field giving the timeout (s).
        confirm_field: the BehaviorSettings field giving the confirmation time (s), or None.
    """

    def __init__(
        self, name: str, can: str, present: bool, timeout_field: str, confirm_field: str | None = None
    ) -> None:
        super().__init__(name)
        self.can = can
        self.present = present
        self.timeout_field = timeout_field
        self.confirm_field = confirm_field
        self._key = stage_key(can)
        self._bb = blackboard_client(f"WaitForPartPresent[{name}]", {self._key: Access.WRITE})
        self._timeout = 0.0
        self._confirm = 0.0
        self._bound = 0.0
        self._since: float | None = None

    def start(self, ports: Ports) -> None:
        """Read the timeout, the confirmation time and the freshness bound."""
        settings = ports.settings()
        self._timeout = float(getattr(settings, self.timeout_field))
        self._confirm = float(getattr(settings, self.confirm_field)) if self.confirm_field else 0.0
        self._bound = settings.part_present_timeout_s
        self._since = None

    def step(self, ports: Ports) -> Status:
        """SUCCESS when the switch agrees (for the confirmation time); FAILURE when stale or timed out."""
        now = ports.clock()
        reading = ports.gripper.part_present()
        verb = "gripped" if self.present else "let go"
        if not reading.fresh(now, self._bound):
            question = "is on the pad" if self.present else "left the pad"
            valve = "on" if self.present else "off"
            self.feedback_message = (
                f"{reading.stale_text(now)}: cannot tell whether {self.can} {question}; "
                f"holding (vacuum {valve})"
            )
            ports.log.error(f"{self.name}: {self.feedback_message}")
            return Status.FAILURE
        agrees = reading.value is self.present and (self.present or reading.received_at >= self.started_at)
        if agrees:
            if self._since is None:
                self._since = now
                if self._confirm > 0.0:
                    ports.wake_after(self._confirm + WAKE_LATE_S)  # the hold ends between two ticks
            if now - self._since >= self._confirm:
                self._bb.set(self._key, STAGE_GRIPPED if self.present else STAGE_LET_GO, overwrite=True)
                self.feedback_message = f"{self.can} {verb} (part-present {str(self.present).lower()})"
                return Status.SUCCESS
        else:
            self._since = None
        if self.elapsed() > self._timeout:
            switch = "true" if reading.value else "false"
            self.feedback_message = (
                f"{self.can} not {verb} after {self._timeout:.1f} s (part-present {switch})"
            )
            ports.log.error(f"{self.name}: {self.feedback_message}")
            return Status.FAILURE
        if self._since is not None:
            self.feedback_message = f"{self.can} {verb} for {now - self._since:.2f} of {self._confirm:.2f} s"
        else:
            self.feedback_message = f"waiting for part-present {str(self.present).lower()}"
        return Status.RUNNING


class StillHeld(PortBehavior):
    """While `can` is carried (stage "gripped"): SUCCESS only on a fresh part-present true.

    Ticked before the can's cycle on every tick (tree.py), so it watches the lift, the carry, the manual
    placement and the place_release descent; the tick it fails, the running motion is cancelled and the
    arm stops where it is, the vacuum left on. A fresh false marks the can "lost" (a stale signal leaves
    it "gripped": it may still be on the pad), and a lost can's cycle fails from then on. Outside the
    carry (before the grip, after the valve closed) it has nothing to watch and succeeds.

    `watched`: the cycle it guards. A drop's line names the step that cycle was running (its tip, as
    ticked last) and, where that step knows it (a `drop_hint`, e.g. `search.RimPass`'s), where the can
    most likely lies, so the operator knows where to look first.
    """

    def __init__(self, name: str, can: str, watched: py_trees.behaviour.Behaviour | None = None) -> None:
        super().__init__(name)
        self.can = can
        self.watched = watched
        self._key = stage_key(can)
        self._bb = blackboard_client(f"StillHeld[{can}]", {self._key: Access.WRITE})

    def step(self, ports: Ports) -> Status:
        """Check once per tick."""
        stage = self._bb.get(self._key) if self._bb.exists(self._key) else None
        if stage == STAGE_LOST:
            self.feedback_message = (
                f"{self.can} is no longer on the pad: part-present dropped while carrying (lost in transit)"
            )
            return Status.FAILURE
        if stage != STAGE_GRIPPED:
            self.feedback_message = f"{self.can} not carried"
            return Status.SUCCESS
        now = ports.clock()
        reading = ports.gripper.part_present()
        if not reading.fresh(now, ports.settings().part_present_timeout_s):
            self.feedback_message = (
                f"{reading.stale_text(now)}: cannot tell whether {self.can} is still on the pad; "
                "holding (the arm stops where it is, vacuum on)"
            )
        elif reading.value:
            self.feedback_message = f"{self.can} on the pad"
            return Status.SUCCESS
        else:
            self._bb.set(self._key, STAGE_LOST, overwrite=True)
            self.feedback_message = (
                f"{self.can} is no longer on the pad: part-present dropped while carrying "
                f"({now - reading.changed_at:.2f} s ago; lost in transit{self._during()}); "
                "the arm stops where it is, vacuum on"
            )
        ports.log.error(f"{self.name}: {self.feedback_message}")
        return Status.FAILURE

    def _during(self) -> str:
        """The step the watched cycle was running (", during 'carry can_0'"), with its `drop_hint`; or ""."""
        tip = None if self.watched is None else self.watched.tip()
        if tip is None or tip is self:
            return ""
        hint = getattr(tip, "drop_hint", None)
        return f", during {tip.name!r}" + (f": {hint()}" if callable(hint) else "")
