"""`MoveTo`: one MoveCartesian goal started in initialise, polled in update, cancelled in terminate.

A failure says why in words, e.g. ``IK early-fail coupled_limit: early fail, no joint target sent ...``
(the action's status and message), so the can's outcome leaf can log the reason it skips or stops.
Targets are sources evaluated when the goal starts: fixed poses, or a pose plus the can's place offset
from the blackboard (what ManualAdjust decided), checked against the pinned 30 mm bound once more.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import PortBehavior, Ports, blackboard_client, offset_key
from salamander_behavior.manual_adjust.core import AdjustLimits
from salamander_behavior.ports import (
    CartesianTarget,
    MotionHandle,
    MotionOutcome,
    MotionPath,
    MotionPhase,
    MotionRequest,
)
from salamander_control.kinematics import IkStatus

TargetSource = Callable[[], CartesianTarget]
"""Returns the goal's pose when the goal starts; raises ValueError when there is no valid one."""

OFFSET_BOUND = AdjustLimits().max_offset + 1e-9
"""A place offset beyond the pinned 30 mm is refused here too (belt and braces: the arm never goes there)."""


class FixedTarget:
    """A fixed pose."""

    def __init__(self, target: CartesianTarget) -> None:
        self.target = target

    def __call__(self) -> CartesianTarget:
        """The pose."""
        return self.target


class OffsetTarget:
    """`base` shifted by the can's place offset (blackboard ``/place_offset/<can>``).

    Args:
        base: the planned pose (place_release or place_above).
        can: whose offset to read.
    """

    def __init__(self, base: CartesianTarget, can: str) -> None:
        self.base = base
        self.can = can
        self._key = offset_key(can)
        self._bb = blackboard_client(f"OffsetTarget[{can}]", {self._key: Access.READ})

    def __call__(self) -> CartesianTarget:
        """The shifted pose.

        Raises:
            ValueError: no offset decided yet, or one that is not finite or beyond 30 mm.
        """
        try:
            dx, dy = self._bb.get(self._key)
        except KeyError as exc:
            raise ValueError(f"no place offset decided for {self.can} (blackboard {self._key})") from exc
        if not (math.isfinite(dx) and math.isfinite(dy)) or math.hypot(dx, dy) > OFFSET_BOUND:
            raise ValueError(f"place offset ({dx}, {dy}) m of {self.can} is not within 30 mm: refused")
        return self.base.shifted(dx, dy)


def describe_failure(outcome: MotionOutcome) -> str:
    """Words for a failed goal: the IK status (an early fail) and the action's message."""
    if outcome.status:
        try:
            reason = IkStatus(outcome.status).reason
        except ValueError:
            reason = f"status {outcome.status}"
        return f"IK early-fail {reason}: {outcome.message}"
    return outcome.message or "failed without a message"


class MoveTo(PortBehavior):
    """Move the TCP to a target with one MoveCartesian goal.

    Args:
        name: the leaf's name (also the goal's label in logs).
        target: where to (evaluated when the leaf starts).
        path: linear (straight TCP line) or joint.
        speed: name of the BehaviorSettings field that gives the speed_scale, e.g. "release_speed".
        role: what the move is for in the cycle ("place_release", ...); the structure tests read it.
    """

    def __init__(self, name: str, target: TargetSource, path: MotionPath, speed: str, role: str = "") -> None:
        super().__init__(name)
        self.target = target
        self.path = path
        self.speed = speed
        self.role = role
        self.request: MotionRequest | None = None
        self._handle: MotionHandle | None = None
        self._problem = ""
        self._timeout = math.inf

    def start(self, ports: Ports) -> None:
        """Evaluate the target and send the goal."""
        settings = ports.settings()
        self._timeout = settings.motion_timeout_s
        self._handle, self.request, self._problem = None, None, ""
        try:
            target = self.target()
        except ValueError as exc:
            self._problem = str(exc)
            return
        self.request = MotionRequest(target, self.path, float(getattr(settings, self.speed)), self.name)
        self._handle = ports.motion.send(self.request)

    def step(self, ports: Ports) -> Status:
        """RUNNING while the goal runs; SUCCESS when it arrived; FAILURE with the reason otherwise."""
        if self._handle is None or self.request is None:
            return self._fail(ports, self._problem or "no goal was sent")
        if not ports.motion.lease_held():
            return self._fail(ports, "the arm lease is not held: the generator would not follow this goal")
        outcome = self._handle.poll()
        where = self.request.target.describe()
        if outcome.phase is MotionPhase.SUCCEEDED:
            self.feedback_message = f"reached {where}"
            return Status.SUCCESS
        if outcome.phase is MotionPhase.FAILED:
            return self._fail(ports, describe_failure(outcome))
        if self.elapsed() > self._timeout:
            return self._fail(ports, f"no result after {self._timeout:.1f} s (motion_timeout_s): cancelled")
        if outcome.phase is MotionPhase.PENDING:
            self.feedback_message = f"goal to {where} sent, waiting for acceptance"
        else:
            self.feedback_message = f"{self.path.value} move to {where}: {outcome.progress:.0%}"
        return Status.RUNNING

    def _fail(self, ports: Ports, why: str) -> Status:
        self.feedback_message = why
        ports.log.error(f"{self.name}: {why}")
        return Status.FAILURE

    def terminate(self, new_status: Status) -> None:
        """Cancel a goal that has not ended (preempted by a guard, failed on timeout or lease)."""
        handle = self._handle
        if handle is not None and not handle.poll().done:
            handle.cancel()
            if new_status is Status.INVALID:
                self.feedback_message = "stopped: goal cancelled"
        self._handle = None
