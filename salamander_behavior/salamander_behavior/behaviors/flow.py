"""Leaves that shape the run: wait for the stack, pause, and decide what a can's failure means.

`CanOutcome` is the fallback of each can's selector. It reads the can's stage from the blackboard:

- unset (the vacuum never came on for it): the can was never touched. It is **skipped**, the reason
  (the failed leaf's name and feedback) is logged and recorded, and the run goes on with the next can.
  Unless the failed leaf says its failure was a fault of the stack (``stack_fault``): a limit condition
  that could not judge the arm at all (no, an invalid or a stale joint state), or a motion whose arm
  lease or whose Cartesian motion node was lost. That would skip every later can the same way and end
  the run "complete" having done nothing. The can is recorded skipped and the run **stops**.
- any other stage ("holding", "gripped", "released", "let_go", "lost"; behaviors/base.py): the can may
  be on the pad (or the arm stands in the box after letting go, or the can fell off on the way). The can
  is **aborted** and so is the run: the arm stays where it stopped, the vacuum stays as it is (on while
  holding), and nothing is ever put down outside the box. The log says what the tree knows from its own
  commands and the part-present switch, and what to do; it never claims what it did not observe. A can
  "lost" in transit may lie anywhere in the cell: the next run does not move before the operator
  confirmed the cell is clear (behaviors/lost.py), and the line says so.
"""

from __future__ import annotations

import py_trees
from py_trees.common import Access, Status

from salamander_behavior.behaviors.base import (
    STAGE_GRIPPED,
    STAGE_HOLDING,
    STAGE_LOST,
    STAGE_RELEASED,
    WAKE_LATE_S,
    PortBehavior,
    Ports,
    blackboard_client,
    offset_key,
    stage_key,
)
from salamander_behavior.report import CanResult, offset_mm
from salamander_control import names

CONFIRM = names.absolute(names.OPERATOR_CONFIRM)
VACUUM = names.absolute(names.GRIPPER_VACUUM)


def failed_leaf(root: py_trees.behaviour.Behaviour) -> py_trees.behaviour.Behaviour:
    """The deepest FAILURE under `root` (a failed condition or leaf; `root` itself when none is found).

    After a composite fails, its failed child keeps the FAILURE status until the next tick, so the
    path of FAILURE statuses leads to the leaf that caused it (a guard's condition or a motion).
    """
    node = root
    while node.children:
        failed = [c for c in node.children if c.status is Status.FAILURE]
        if not failed:
            break
        node = failed[-1]
    return node


def failure_reason(root: py_trees.behaviour.Behaviour) -> str:
    """``<leaf>: <feedback>`` of the deepest FAILURE under `root` (see `failed_leaf`)."""
    node = failed_leaf(root)
    message = node.feedback_message or "failed"
    return f"{node.name}: {message}"


class WaitUntilReady(PortBehavior):
    """RUNNING until arm (lease, action server, joint states) and gripper are ready; FAILURE on timeout.

    What it waits for is logged once when the wait begins (and again whenever that changes), then at
    most every `WAIT_LOG_PERIOD_S`: with ``use_sim:=false`` and no robot yet, the log says exactly what
    is missing (e.g. "waiting for /salamander/gripper/vacuum service and /salamander/gripper/part_present")
    without flooding. As information for the first `WAIT_LOG_PERIOD_S` (a stack that is still starting:
    the README demo's tree waits a moment for the lease's answer or the switch's first message), as a
    warning after that, as an error at ``ready_timeout_s``.
    """

    WAIT_LOG_PERIOD_S = 10.0

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._logged: tuple[str, float] | None = None  # (what was logged, when)

    def start(self, ports: Ports) -> None:
        """Nothing logged yet for this wait."""
        self._logged = None

    def step(self, ports: Ports) -> Status:
        """Poll both ports."""
        arm_ok, arm_why = ports.motion.ready()
        gripper_ok, gripper_why = ports.gripper.ready()
        if arm_ok and gripper_ok:
            self.feedback_message = "arm and gripper ready"
            ports.log.info("arm and gripper ready: starting the run")
            return Status.SUCCESS
        waiting = "; ".join(w for ok, w in ((arm_ok, arm_why), (gripper_ok, gripper_why)) if not ok)
        timeout = ports.settings().ready_timeout_s
        if self.elapsed() > timeout:
            self.feedback_message = f"not ready after {timeout:.0f} s: {waiting}"
            ports.log.error(self.feedback_message)
            return Status.FAILURE
        self.feedback_message = f"waiting: {waiting}"
        now = ports.clock()
        logged = self._logged
        if logged is None or logged[0] != waiting or now - logged[1] >= self.WAIT_LOG_PERIOD_S:
            self._logged = (waiting, now)
            if self.elapsed() >= self.WAIT_LOG_PERIOD_S:  # two call sites: rclpy fixes one's severity
                ports.log.warning(f"not starting yet: {waiting}")
            else:
                ports.log.info(f"not starting yet: {waiting}")
        return Status.RUNNING


class Wait(PortBehavior):
    """Hold still for a time given by a BehaviorSettings field (read when the wait starts)."""

    def __init__(self, name: str, duration_field: str) -> None:
        super().__init__(name)
        self.duration_field = duration_field
        self._duration = 0.0

    def start(self, ports: Ports) -> None:
        """Read the duration; ask for a tick when it is up."""
        self._duration = float(getattr(ports.settings(), self.duration_field))
        ports.wake_after(self._duration + WAKE_LATE_S)

    def step(self, ports: Ports) -> Status:
        """SUCCESS once the time is up."""
        waited = self.elapsed()
        if waited >= self._duration:
            self.feedback_message = f"waited {self._duration:.2f} s"
            return Status.SUCCESS
        self.feedback_message = f"{waited:.2f} of {self._duration:.2f} s"
        return Status.RUNNING


class CanPlaced(PortBehavior):
    """The last leaf of a cycle: record the can as placed, with what the tree observed.

    It runs only after the can was released over its compartment (the place_release descent succeeded,
    the valve closed), the part-present switch dropped and the arm rose clear. That is what "placed"
    means to the tree: it has no view of where the can came to rest (the simulated cell logs its ground
    truth, "in box, clear of walls" with the clearances, on its own topic, which the tree never reads).
    """

    def __init__(self, name: str, can: str, compartment: int | None = None) -> None:
        super().__init__(name)
        self.can = can
        self.compartment = compartment
        self._key = offset_key(can)
        self._bb = blackboard_client(f"CanPlaced[{can}]", {self._key: Access.READ})

    def step(self, ports: Ports) -> Status:
        """Record and succeed."""
        dx, dy, *rest = self._bb.get(self._key) if self._bb.exists(self._key) else (0.0, 0.0)
        dz = max(rest[0], 0.0) if rest else 0.0  # the release used an upward dz only (OffsetTarget)
        offset = f"offset {offset_mm((dx, dy, dz))}"
        where = f"compartment {self.compartment}" if self.compartment is not None else "its compartment"
        detail = f"released over {where} at {offset}; part-present dropped after the vacuum went off"
        ports.report.record(self.can, CanResult.PLACED, detail)
        ports.log.info(f"{self.can}: placed ({detail})")
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
        fault = getattr(failed_leaf(self.attempt), "stack_fault", "")
        if stage is None and fault:
            # Not the can's fault (base.JOINT_STATE_FAULT, LEASE_FAULT, SERVER_FAULT): skipping would
            # skip every later can the same way and end "complete".
            ports.report.record(self.can, CanResult.SKIPPED, reason)
            ports.log.error(
                f"{self.can}: not started, run stopped: {reason}; a fault of the stack, not of the can: "
                f"{fault}; the arm holds where it is; start the run again once that is mended"
            )
            self.feedback_message = f"run stopped: {reason}"
            return Status.FAILURE
        if stage is None:
            ports.report.record(self.can, CanResult.SKIPPED, reason)
            ports.log.warning(f"{self.can}: skipped, never touched: {reason}")
            self.feedback_message = f"skipped: {reason}"
            return Status.SUCCESS
        if stage == STAGE_LOST:
            what = (
                "it fell off the pad and may lie anywhere in the cell (table, box, the arm's way; where "
                "it dropped: above); the arm stays where it stopped. Clear the cell: the next run does not "
                f"move before the operator confirms the cell is clear (true on {CONFIRM}: gamepad SQUARE, "
                "salamanderctl confirm) when it asks; no restart needed"
            )
        elif stage in (STAGE_HOLDING, STAGE_GRIPPED):
            what = (
                "the arm stays where it stopped, vacuum on (the can may be on the pad); the next run's pad "
                f"check finds it and asks to place it (confirm true on {CONFIRM}) or remove it (vacuum "
                f"off by hand: {VACUUM}); no restart needed"
            )
        elif stage == STAGE_RELEASED:
            what = (
                "the vacuum was asked off over its compartment (the reason says whether the valve "
                "answered) but the part-present switch did not confirm the can left the pad: it may still "
                "hang on the pad; the arm stays where it stopped; check the pad and the box"
            )
        else:
            what = (
                "it was let go over its compartment (part-present dropped), but the arm did not get "
                "clear; check the cell and restart"
            )
        ports.report.record(self.can, CanResult.ABORTED, reason)
        ports.log.error(f"{self.can}: aborted, run stopped: {reason}; {what}")
        self.feedback_message = f"aborted: {reason}"
        return Status.FAILURE
