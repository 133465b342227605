"""Manual placement (docs/interfaces.md): the operator nudges the can over its compartment.

`ManualPlaceOff` is read when a can reaches place_above (carried there at the box estimate's offset,
`behaviors.box.PlaceOffset`): with ``manual_place`` false it succeeds and that offset stands; with true
it fails, and its selector runs `ManualAdjust` (with ``manual_place_known_m`` set, only while the box
estimate does not yet know the can's compartment that well: `behaviors.box.operator_places`):

- the wait begins in ``initialise`` (a `ManualAdjustIntegrator` started at that instant: earlier
  confirmations do not count, and the inbox is emptied), from the box estimate's offset (the arm goes
  there first, so the operator mostly just confirms; the 30 mm bound stays around the planned target);
- each tick feeds the queued twists and confirmations to the integrator in arrival order (30 mm,
  50 mm/s, 0.3 s stale, `manual_timeout_s`), writes the offset (dx, dy, dz) to ``/place_offset/<can>``
  (which the following place_release descent and rise read) and keeps the arm at place_above + offset
  through a `NudgeCommander` (one MoveCartesian goal, retargeted as the offset changes);
- with ``allow_z`` the operator's z moves the can too: up to `max_offset_z` (30 mm) up, and down at
  most to the planned place_release height (never below where the plan releases the can). The
  descent and the rise use only an upward dz (`behaviors.motion.OffsetTarget`): a can lowered for a
  look is released no lower than planned, so a downward z can never drive it into the box floor;
- confirm (true): logs ``ManualAdjust[<name>]: confirmed, offset [x, y, z] mm after N s``, lets the arm
  finish the last nudge, marks the offset's source "manual" (evidence of the box), then SUCCESS;
- false, or no confirmation within the timeout: logs the same line with "aborted" / "timed_out" and
  FAILS. The can stays on the pad (the release is only reachable through success), and the can's
  outcome leaf stops the run with the arm holding the can at the adjusted place_above.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    BOX_ESTIMATE_KEY,
    OFFSET_ESTIMATE,
    OFFSET_MANUAL,
    PortBehavior,
    Ports,
    blackboard_client,
    offset_key,
    offset_source_key,
)
from salamander_behavior.behaviors.box import estimated_offset, operator_places, read_estimate
from salamander_behavior.manual_adjust.core import AdjustOutcome, ManualAdjustIntegrator
from salamander_behavior.manual_adjust.nudge import NudgeCommander
from salamander_behavior.manual_adjust.operator_input import (
    ConfirmEvent,
    OperatorInbox,
    shared_operator_inbox,
)
from salamander_behavior.ports import CartesianTarget
from salamander_behavior.report import offset_mm
from salamander_control import names
from salamander_control.manual_wait import wait_text
from salamander_control.ros.log import LOG_THROTTLE_S


class ManualPlaceOff(PortBehavior):
    """SUCCESS when the tree places the can (the offset `PlaceOffset` wrote stands); FAILURE: the operator.

    Who places it: `operator_places` (``manual_place``, and ``manual_place_known_m`` against the box
    estimate).

    Read each time a can gets here, so a live ``ros2 param set`` applies from the next can on.

    Args:
        name: leaf name.
        planned: the can's planned place point (compartment centre) in base_link, m.
    """

    def __init__(self, name: str, planned: tuple[float, float]) -> None:
        super().__init__(name)
        self.planned = planned
        self._bb = blackboard_client(f"ManualPlaceOff[{name}]", {BOX_ESTIMATE_KEY: Access.READ})

    def step(self, ports: Ports) -> Status:
        """Decide from the current parameter snapshot and the box estimate."""
        operator, why = operator_places(read_estimate(self._bb), ports.settings(), self.planned)
        if operator:
            self.feedback_message = f"{why}: the operator places this can"
            return Status.FAILURE
        self.feedback_message = f"{why}: placed at the offset decided before the carry"
        return Status.SUCCESS


class ManualAdjust(PortBehavior):
    """Wait at place_above for the operator's nudges and confirmation (see the module docstring).

    Args:
        name: leaf name, e.g. ``ManualAdjust[place_can_0]``.
        adjust_name: the name in the log line, e.g. ``place_can_0``.
        can: whose offset to write.
        base: the planned place_above pose.
        floor: the planned place_release pose: with ``allow_z`` the held can goes no lower than it
            (None: not known, so z may only go up).
    """

    def __init__(
        self, name: str, adjust_name: str, can: str, base: CartesianTarget,
        floor: CartesianTarget | None = None,
    ) -> None:
        super().__init__(name)
        self.adjust_name = adjust_name
        self.can = can
        self.base = base
        self.floor = floor
        self.node: Any = None
        self.inbox: OperatorInbox | None = None
        self.integrator: ManualAdjustIntegrator | None = None
        self.commander: NudgeCommander | None = None
        self._key, self._source = offset_key(can), offset_source_key(can)
        self._bb = blackboard_client(
            f"ManualAdjust[{can}]",
            {self._key: Access.WRITE, self._source: Access.WRITE, BOX_ESTIMATE_KEY: Access.READ},
        )
        self._summary_logged = False
        self._ignored = 0

    def setup(self, **kwargs: Any) -> None:
        """Take the ports and the node; subscribe the operator topics (once per node).

        An ``inbox`` in kwargs (tests, the benchmark) is used instead of subscribing.

        Raises:
            KeyError: no ``node`` (and no ``inbox``) or no ``ports`` in kwargs.
        """
        super().setup(**kwargs)
        if kwargs.get("inbox") is not None:
            self.inbox = kwargs["inbox"]
            self.node = kwargs.get("node")
            return
        try:
            self.node = kwargs["node"]
        except KeyError as exc:
            raise KeyError(f"didn't find 'node' in setup's kwargs [{self.qualified_name}]") from exc
        assert self.ports is not None
        self.inbox = shared_operator_inbox(self.node, self.ports.clock)

    def start(self, ports: Ports) -> None:
        """The wait begins now."""
        settings = ports.settings()
        now = self.started_at
        if self.inbox is not None:
            self.inbox.drain()  # received before the wait began: never counts
        limits = settings.adjust_limits
        down = 0.0 if self.floor is None else max(self.base.z - self.floor.z, 0.0)
        limits = replace(limits, max_down_z=down)
        planned = (self.floor.x, self.floor.y) if self.floor is not None else (self.base.x, self.base.y)
        start, source = estimated_offset(read_estimate(self._bb), settings, planned)
        self.integrator = ManualAdjustIntegrator(limits, start_time=now, start=start)
        self.commander = NudgeCommander(self.base, self.name)
        self._bb.set(self._key, self.integrator.offset3, overwrite=True)
        self._bb.set(self._source, source, overwrite=True)
        self._summary_logged = False
        self._ignored = 0
        z_lo, z_hi = limits.z_range
        z = f", z {z_lo * 1000:+.1f} to {z_hi * 1000:+.1f} mm" if limits.allow_z else ""
        begin = offset_mm(self.integrator.offset3)
        begin = f" + the box estimate's offset {begin}" if source == OFFSET_ESTIMATE else ""
        ports.log.info(
            f"ManualAdjust[{self.adjust_name}]: waiting for the operator at place_above "
            f"{self.base.describe()}{begin}: jog on {names.OPERATOR_JOG}, confirm on "
            f"{names.OPERATOR_CONFIRM} (at most 30 mm from the planned target{z}, "
            f"{settings.manual_timeout_s:.0f} s)"
        )

    def step(self, ports: Ports) -> Status:
        """Integrate, nudge, and decide."""
        integ, commander = self.integrator, self.commander
        if integ is None or commander is None or self.inbox is None:
            self.feedback_message = "not set up: no operator inbox"
            return Status.FAILURE
        now = ports.clock()
        for event in self.inbox.drain():
            if isinstance(event, ConfirmEvent):
                integ.on_confirm(event.confirmed, event.received)
            else:
                integ.update(event.received)  # the previous twist counts up to this one's arrival
                if not integ.on_twist(event.vx, event.vy, event.received, event.vz):
                    self._ignored += 1
        outcome = integ.update(now)
        if self._ignored:
            ports.log.warning(
                f"ManualAdjust[{self.adjust_name}]: ignored {self._ignored} jog twist(s) with NaN/inf",
                throttle_duration_sec=LOG_THROTTLE_S,
            )
            self._ignored = 0
        offset = integ.offset3
        self._bb.set(self._key, offset, overwrite=True)
        mm = offset_mm(offset)
        if outcome is AdjustOutcome.WAITING:
            self._nudge(ports, offset)
            timeout = integ.limits.timeout
            self.feedback_message = wait_text(mm, integ.elapsed(now), timeout)
            if self.commander is not None and self.commander.stuck:  # shown, not only logged: the view
                # would show an offset the arm never reached until a confirm said so
                failed = offset_mm(self.commander.failed or offset)
                self.feedback_message += f"; the arm could not follow (the nudge to {failed} failed: the log)"
            return Status.RUNNING
        if not self._summary_logged:
            self._summary_logged = True
            line = integ.summary(self.adjust_name, now)
            if outcome is AdjustOutcome.CONFIRMED:
                ports.log.info(line)
            else:
                ports.log.error(f"{line}: the can stays on the pad")
        if outcome is AdjustOutcome.ABORTED:
            commander.cancel()
            self.feedback_message = f"aborted by the operator at offset {mm}: not released"
            return Status.FAILURE
        if outcome is AdjustOutcome.TIMED_OUT:
            commander.cancel()
            self.feedback_message = f"no confirmation within {integ.limits.timeout:.1f} s: not released"
            return Status.FAILURE
        settled = self._nudge(ports, offset)
        if settled:
            self._bb.set(self._source, OFFSET_MANUAL, overwrite=True)  # evidence of the box (BoxEvidence)
            self.feedback_message = f"confirmed at offset {mm}"
            return Status.SUCCESS
        if commander.stuck:
            self.feedback_message = f"confirmed, but the arm cannot reach offset {mm}: not released"
            ports.log.error(f"ManualAdjust[{self.adjust_name}]: {self.feedback_message}")
            return Status.FAILURE
        self.feedback_message = f"confirmed; finishing the nudge to {mm}"
        return Status.RUNNING

    def _nudge(self, ports: Ports, offset: tuple[float, ...]) -> bool:
        assert self.commander is not None
        settled, note = self.commander.update(ports.motion, offset, ports.settings().nudge_speed)
        if note:
            ports.log.warning(
                f"ManualAdjust[{self.adjust_name}]: {note}", throttle_duration_sec=LOG_THROTTLE_S
            )
        return settled

    def terminate(self, new_status: Status) -> None:
        """Stop a nudge still running (a guard tripped, or the wait failed)."""
        if self.commander is not None:
            self.commander.cancel()
