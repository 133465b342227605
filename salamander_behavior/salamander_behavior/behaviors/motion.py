"""`MoveTo`: one MoveCartesian goal started in initialise, polled in update, cancelled in terminate.

A failure says why in words, e.g. ``IK early-fail coupled_limit: early fail, no joint target sent ...``
(the action's status and message), so the can's outcome leaf can log the reason it skips or stops.
Targets are sources evaluated when the goal starts, with the parameters then: fixed poses, or a pose plus
the can's place offset from the blackboard (what ManualAdjust decided), checked against the pinned 30 mm
bound once more; the carry's (`CarryTarget`) ends low over the compartment where the plan allows it.

IK retries (`behaviors.ik_retry`): a move with a retry policy whose goal fails *early* with an IK status
(nothing was sent, the arm did not move) tries the policy's variants one goal at a time, each only
after the previous one was refused early too, and logs the one that worked (``IK retry: descend to
can_1 solved with branch=down, tool_pitch=+0.10``). A failure that is not the IK's (timeout, lost
lease, rejected goal) is never retried, and neither is any failure after the arm moved part way.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    BOX_ESTIMATE_KEY,
    LEASE_FAULT,
    SERVER_FAULT,
    PortBehavior,
    Ports,
    blackboard_client,
    offset_key,
)
from salamander_behavior.behaviors.box import operator_places, read_estimate
from salamander_behavior.behaviors.ik_retry import IkRetry, describe, variants
from salamander_behavior.manual_adjust.core import AdjustLimits
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import CanJob
from salamander_behavior.ports import (
    CartesianTarget,
    MotionHandle,
    MotionOutcome,
    MotionPath,
    MotionPhase,
    MotionRequest,
)
from salamander_control.kinematics import IkStatus

TargetSource = Callable[[BehaviorSettings], CartesianTarget]
"""Returns the goal's pose when the goal starts (given the parameters then); raises ValueError when there
is no valid one."""

NO_LEASE = "the arm lease is not held: the generator would not follow this goal"
"""A motion leaf's failure when the run's lease is not held (a `base.LEASE_FAULT`)."""

OFFSET_BOUND = AdjustLimits().max_offset + 1e-9
"""A place offset beyond the pinned 30 mm is refused here too (belt and braces: the arm never goes there)."""


class FixedTarget:
    """A fixed pose."""

    def __init__(self, target: CartesianTarget) -> None:
        self.target = target

    def __call__(self, settings: BehaviorSettings | None = None) -> CartesianTarget:
        """The pose."""
        return self.target


class OffsetTarget:
    """`base` shifted by the can's place offset (blackboard ``/place_offset/<can>``).

    A downward dz (ManualAdjust with ``allow_z``: the operator lowered the held can for a look) is not
    applied: the release descent and the rise never go below their planned heights, so no offset can
    drive the can into the box floor. An upward dz (at most 30 mm) is applied.

    Args:
        base: the planned pose (place_release or place_above).
        can: whose offset to read.
    """

    def __init__(self, base: CartesianTarget, can: str) -> None:
        self.base = base
        self.can = can
        self._key = offset_key(can)
        self._bb = blackboard_client(f"OffsetTarget[{can}]", {self._key: Access.READ})

    def __call__(self, settings: BehaviorSettings | None = None) -> CartesianTarget:
        """The shifted pose.

        Raises:
            ValueError: no offset decided yet, or one that is not finite or beyond 30 mm (XY radius, or
                |dz|).
        """
        try:
            dx, dy, *rest = self._bb.get(self._key)
        except KeyError as exc:
            raise ValueError(f"no place offset decided for {self.can} (blackboard {self._key})") from exc
        dz = rest[0] if rest else 0.0
        finite = math.isfinite(dx) and math.isfinite(dy) and math.isfinite(dz)
        if not finite or math.hypot(dx, dy) > OFFSET_BOUND or abs(dz) > OFFSET_BOUND:
            raise ValueError(
                f"place offset ({dx}, {dy}, {dz}) m of {self.can} is not within 30 mm: refused"
            )
        return self.base.shifted(dx, dy, max(dz, 0.0))


LOW_CARRY_LEAD = 0.005
"""m: a low carry ends at least this far above the rim band's top (`carry_end`)."""


def carry_end(
    job: CanJob, low: CartesianTarget | None, settings: BehaviorSettings, operator: bool
) -> CartesianTarget:
    """Where the carry ends before the can's offset: `low`, or place_above.

    `low` (`plan.low_carry_end`: straight below place_above, where the joint-space carry keeps clear of
    the rim and of every can that may stand around it) when ``low_carry`` is on, the tree, not the
    `operator`, places the can (ManualAdjust nudges the can sideways at place_above, above the placed
    cans; `behaviors.box.operator_places`) and the rim band's top (``guard_band_above_m`` above the rim)
    lies at least `LOW_CARRY_LEAD` below it. The release descent then starts there.
    """
    if low is None or job.rim_pass_z is None or not settings.low_carry or operator:
        return job.place_above
    band_top = job.rim_pass_z + settings.guard_band_above_m
    return low if low.z - band_top >= LOW_CARRY_LEAD else job.place_above


class CarryTarget(OffsetTarget):
    """The carry's end (`carry_end`) shifted by the can's place offset (as `OffsetTarget`).

    Whether the operator places the can is decided as `ManualPlaceOff` decides it at the carry's end,
    from the parameters and the box estimate on the blackboard (`behaviors.box.operator_places`).

    Args:
        job: the can (its place_above, rim height and planned place point).
        low: where the carry may end below place_above; None: never.
    """

    def __init__(self, job: CanJob, low: CartesianTarget | None) -> None:
        super().__init__(job.place_above, job.can)
        self.job = job
        self.low = low
        self._box = blackboard_client(f"CarryTarget[{job.can}]", {BOX_ESTIMATE_KEY: Access.READ})

    def __call__(self, settings: BehaviorSettings | None = None) -> CartesianTarget:
        """The shifted pose (raises ValueError as `OffsetTarget`)."""
        above = super().__call__(settings)
        if settings is None:
            return above
        operator, _ = operator_places(read_estimate(self._box), settings, self.job.planned_xy)
        return above.shifted(0.0, 0.0, carry_end(self.job, self.low, settings, operator).z - self.base.z)


def outcome_fault(outcome: MotionOutcome) -> str:
    """The stack's fault a failed goal names (`base.LEASE_FAULT`, `base.SERVER_FAULT`), "" for its own."""
    if outcome.lease_lost:
        return LEASE_FAULT
    return SERVER_FAULT if outcome.server_fault else ""


def describe_failure(outcome: MotionOutcome) -> str:
    """Words for a failed goal: the IK status (an early fail, or one on the way) and the action's message."""
    if outcome.status:
        try:
            reason = IkStatus(outcome.status).reason
        except ValueError:
            reason = f"status {outcome.status}"
        # "early-fail" only when nothing moved: a goal the IK stopped on its way left the arm part-way.
        kind = "IK early-fail" if outcome.early else "IK failed on the way:"
        return f"{kind} {reason}: {outcome.message}"
    return outcome.message or "failed without a message"


class MotionLeaf(PortBehavior):
    """A leaf that runs MoveCartesian goals one at a time: its handle, its failure line, its cancel.

    Goals go out through `_go` and are polled through `_poll`, which honour the run's `HandOff`: a leaf
    that blends (``blend``) sends at once while a goal handed on by the leaf before still runs (the
    Cartesian node bends out of that motion); one that does not waits until that goal has ended. A
    blend the Cartesian node refuses (an early fail from the running motion's state) is sent again from
    rest once the handed-on goal has ended. `terminate` cancels a goal that has not ended unless the
    leaf handed it on (the leaf preempted by a guard, a dropped can, a timeout or the lease), and any
    end but SUCCESS cancels a handed-on goal too; `_fail` logs the leaf's failure once and fails.
    """

    def __init__(self, name: str, blend: bool = False) -> None:
        super().__init__(name)
        self.blend = blend
        self._handle: MotionHandle | None = None
        self._queued: MotionRequest | None = None  # to send once the handed-on goal has ended
        self._handed_on = False
        self.stack_fault = ""
        """Why the last failure was the stack's, not the can's ("" otherwise; behaviors/base.py)."""

    def initialise(self) -> None:
        """Forget the last run's fault, then start (`PortBehavior`)."""
        self.stack_fault = ""
        super().initialise()

    def _go(self, ports: Ports, request: MotionRequest) -> None:
        """Send `request` now, or queue it behind a handed-on goal when this leaf does not blend."""
        self._handed_on = False
        if not self.blend and ports.handoff.live() is not None:
            self._handle, self._queued = None, request
        else:
            self._handle, self._queued = ports.motion.send(request), None

    def _poll(self, ports: Ports) -> MotionOutcome:
        """The goal's outcome; PENDING while it waits behind a handed-on goal."""
        prior = ports.handoff.live()
        if self._queued is not None:
            if prior is not None:
                return MotionOutcome(MotionPhase.PENDING, message="waiting for the move before to end")
            self._handle, self._queued = ports.motion.send(self._queued), None
        assert self._handle is not None
        outcome = self._handle.poll()
        if prior is not None and outcome.phase is MotionPhase.FAILED and outcome.early:
            ports.log.info(
                f"{self.name}: no blend out of the running move ({outcome.message}); "
                "starting from rest once it has ended"
            )
            self._handle, self._queued = None, self._handle.request
            return MotionOutcome(MotionPhase.PENDING, message="waiting for the move before to end")
        return outcome

    def _hand_on(self, ports: Ports) -> None:
        """Leave the running goal to the next motion leaf (this leaf is about to succeed)."""
        assert self._handle is not None
        ports.handoff.put(self._handle)
        self._handed_on = True

    def _fail(self, ports: Ports, why: str, fault: str = "") -> Status:
        self.feedback_message, self.stack_fault = why, fault
        ports.log.error(f"{self.name}: {why}")
        return Status.FAILURE

    def terminate(self, new_status: Status) -> None:
        """Cancel a goal that has not ended (unless handed on); any end but SUCCESS: the handed-on one too."""
        handle = self._handle
        if handle is not None and not self._handed_on:
            handle.cancel()  # no poll first: a poll of a goal whose answer is overdue would send it again
            if new_status is Status.INVALID and self.status is Status.RUNNING:
                self.feedback_message = "stopped: goal cancelled"
        if new_status is not Status.SUCCESS and self.ports is not None:
            self.ports.handoff.cancel()
        self._handle, self._queued, self._handed_on = None, None, False


class MoveTo(MotionLeaf):
    """Move the TCP to a target with one MoveCartesian goal.

    Args:
        name: the leaf's name (also the goal's label in logs).
        target: where to (evaluated when the leaf starts).
        path: linear (straight TCP line) or joint.
        speed: name of the BehaviorSettings field that gives the speed_scale, e.g. "release_speed".
        role: what the move is for in the cycle ("place_release", ...); the structure tests read it.
        retry: what an IK retry may vary (`IkRetry`; the `ik_retry` parameter switches retries off).
        handoff: given the parameters, the distance (m) from the target at which the leaf succeeds
            and leaves the goal running for the next motion leaf to bend out of (`base.HandOff`),
            judged on the *measured* TCP (the feedback's distance remaining: a motion the generator
            stopped is never handed on); 0 or None: never.
        blend: the goal may go out while a goal handed on by the leaf before still runs (see
            `MotionLeaf`).
    """

    def __init__(
        self,
        name: str,
        target: TargetSource,
        path: MotionPath,
        speed: str,
        role: str = "",
        retry: IkRetry = IkRetry.NONE,
        handoff: Callable[[BehaviorSettings], float] | None = None,
        blend: bool = False,
    ) -> None:
        super().__init__(name, blend)
        self.target = target
        self.handoff = handoff
        self.path = path
        self.speed = speed
        self.role = role
        self.retry = retry
        self.request: MotionRequest | None = None
        """The goal in flight: the planned one, or the IK retry variant being tried."""
        self._problem = ""
        self._timeout = math.inf
        self._handoff_at = 0.0
        self._first_failure: MotionOutcome | None = None  # the planned goal's IK early fail
        self._variants: list[MotionRequest] = []
        self._tried = 0

    def start(self, ports: Ports) -> None:
        """Evaluate the target and send the goal."""
        settings = ports.settings()
        self._timeout = settings.motion_timeout_s
        self._handle, self.request, self._problem = None, None, ""
        self._first_failure, self._variants, self._tried = None, [], 0
        try:
            target = self.target(settings)
        except ValueError as exc:
            self._problem = str(exc)
            return
        self._handoff_at = self.handoff(settings) if self.handoff is not None else 0.0
        speed = float(getattr(settings, self.speed))
        self.request = MotionRequest(target, self.path, speed, self.name, handoff=self._handoff_at)
        self._go(ports, self.request)

    def step(self, ports: Ports) -> Status:
        """RUNNING while the goal runs; SUCCESS when it arrived; FAILURE with the reason otherwise."""
        if self.request is None:
            return self._fail(ports, self._problem or "no goal was sent")
        if not ports.motion.lease_held():
            return self._fail(ports, NO_LEASE, LEASE_FAULT)
        outcome = self._poll(ports)
        where = self.request.target.describe()
        if outcome.phase is MotionPhase.SUCCEEDED:
            self.feedback_message = f"reached {where}"
            if self._first_failure is not None:
                ports.log.info(f"IK retry: {self.name} solved with {describe(self.request)}")
                self.feedback_message += f" (IK retry: {describe(self.request)})"
            return Status.SUCCESS
        if outcome.phase is MotionPhase.FAILED:
            return self._on_failure(ports, outcome)
        if self.elapsed() > self._timeout:
            return self._fail(ports, f"no result after {self._timeout:.1f} s (motion_timeout_s): cancelled")
        if outcome.phase is MotionPhase.PENDING:
            self.feedback_message = outcome.message or f"goal to {where} sent, waiting for acceptance"
            return Status.RUNNING
        if outcome.remaining <= self._handoff_at:  # False for NaN (no feedback yet)
            self._hand_on(ports)
            self.feedback_message = (
                f"{self.path.value} move to {where}: handed on {outcome.remaining * 1000:.0f} mm before it"
            )
            return Status.SUCCESS
        self.feedback_message = f"{self.path.value} move to {where}: {outcome.progress:.0%}"
        return Status.RUNNING

    def _on_failure(self, ports: Ports, outcome: MotionOutcome) -> Status:
        """Fail, or send the next IK retry variant (only ever after early fails: the arm has not moved)."""
        assert self.request is not None
        fault = outcome_fault(outcome)
        if self._first_failure is None:
            settings = ports.settings()
            if not (outcome.ik_early_fail and settings.ik_retry and self.retry is not IkRetry.NONE):
                return self._fail(ports, describe_failure(outcome), fault)
            self._first_failure = outcome
            self._variants = variants(self.request, self.retry, settings.ik_retry_pitch_offsets)
            ports.log.warning(
                f"IK retry: {self.name}: {describe_failure(outcome)}; "
                f"trying {len(self._variants)} variant(s) ({self.retry.value})"
            )
        elif not outcome.early:  # the variant moved the arm, then failed: never retried from part way
            return self._fail(
                ports, f"IK retry variant {describe(self.request)} failed: {describe_failure(outcome)}", fault
            )
        if not self._variants:
            return self._fail(
                ports,
                f"{describe_failure(self._first_failure)}; no IK retry variant solved it "
                f"({self._tried} tried)",
                fault,
            )
        self.request = self._variants.pop(0)
        self._tried += 1
        self._go(ports, self.request)
        self.feedback_message = f"IK retry {self._tried}: {describe(self.request)}"
        return Status.RUNNING
