"""The common base of the tree's leaves: ports from `setup(**kwargs)`, blackboard keys, never-block update.

py_trees_ros conventions (followed by hand, the package is not installable here): nothing ROS-related
arrives through ``__init__``; ``BehaviourTree.setup(node=node, ports=ports)`` passes the node and the
`Ports` to every behaviour's ``setup``. ``update()`` only polls what ``initialise()`` started and sets
``feedback_message`` on every path; ``terminate()`` cancels what the behaviour started.

Blackboard keys shared between leaves of one can (both absolute, one per can):

- ``/place_offset/<can>``: the offset (dx, dy, dz) (m) from the planned place target (a 2-tuple means
  dz = 0). ManualAdjust writes the operator's offset (dz only with ``allow_z``); `box.PlaceOffset`
  writes the box estimate's offset at the can's compartment ((0, 0, 0) without one) before the carry;
  a search probe that passed the rim writes the start offset plus the probe's (`behaviors.search`);
  the carry, the release descent and the rise read it, using dz only upwards.
- ``/place_offset_source/<can>``: where that offset came from: "plan" (none), "estimate" (the box
  estimate), "manual" (ManualAdjust, confirmed) or "search" (a search probe that passed the rim). A
  "manual" or "search" offset of a placed can is evidence of where the box stands.
- ``/box_estimate``: the `box_estimate.BoxEstimate` of the box the cans go into (absolute, one for the
  run): `tree.build_tree` puts the one the server keeps; `box.PlaceOffset` applies it and ManualAdjust
  starts from it; `behaviors.box.BoxEvidence` replaces it after a can placed with a "manual" or "search"
  offset; the server reads it back after every tick and keeps it with the run's progress.
- ``/can_stage/<can>``: what the tree knows of the can, from its own commands and the part-present switch:
  "holding" once the vacuum was commanded on for it, "gripped" once part-present held for `grip_confirm_s`
  (from then on the switch must stay true and fresh: `behaviors.vacuum.StillHeld`), "released" once the
  vacuum was commanded off over its compartment, "let_go" once part-present dropped after that. The
  outcome leaf skips a can whose stage is unset (never touched), unless its failure was a fault of the
  stack (``stack_fault``, below), and stops the run otherwise: a can on the pad is never put down anywhere
  but over the box. "removed" is written by the pad check (`behaviors.pad.ClearPad`) for the can recorded
  as carried when it was taken off the pad by hand instead of placed (or was not on the pad when the run
  began), and by `behaviors.lost.CellCleared` for a lost can once the operator confirmed the cell is
  clear. "lost" is written by `StillHeld` when part-present dropped while the can was carried (lost in
  transit: it may lie anywhere in the cell).
- ``/rim_search/<can>``: how the can's rim search ended, "passed" or "exhausted" (no probe passed:
  `behaviors.search.AfterSearch` decides whether the operator places it); unset before.
- ``/pad_decision/<label>``: what a pad check decided ("clear", "removed" or "place"; behaviors/pad.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import py_trees
from py_trees.common import Access, Status

from salamander_behavior.params import BehaviorSettings
from salamander_behavior.ports import Clock, GripperPort, Logger, MotionHandle, MotionPort
from salamander_behavior.report import RunReport

STAGE_HOLDING = "holding"  # vacuum commanded on; the can may be on the pad
STAGE_GRIPPED = "gripped"  # part-present confirmed: the can is carried
STAGE_RELEASED = "released"  # vacuum commanded off over the compartment; not yet seen leaving the pad
STAGE_LET_GO = "let_go"  # part-present dropped after the vacuum went off
STAGE_REMOVED = "removed"  # the pad check saw it taken off the pad by hand (or gone when the run began)
STAGE_LOST = "lost"  # part-present dropped while carried: it left the pad outside the box

# A leaf's ``stack_fault``: why its last failure was a fault of the stack, not of the can ("" when it was
# the can's): the joint states, the lease, the Cartesian motion node. `flow.CanOutcome` stops the run on
# one instead of skipping a can never touched: the same fault would skip every later can and end the run
# "complete" having done nothing.
JOINT_STATE_FAULT = (
    "the arm's measured state cannot be judged; check the joint state stream (the driver, the "
    "trajectory generator)"
)
LEASE_FAULT = (
    "the arm lease this run holds was lost (the generator stopped following its goals; the lease "
    "lines above say how); check the trajectory generator and the machine's load"
)
SERVER_FAULT = (
    "the Cartesian motion node did not take or follow the tree's goal (gone, hung, not answering or "
    "refusing it: the line above and that node's log say which); check that node (the runner restarts "
    "it) and the machine's load"
)


def offset_key(can: str) -> str:
    """Blackboard key of a can's place offset."""
    return f"/place_offset/{can}"


OFFSET_PLAN = "plan"
OFFSET_ESTIMATE = "estimate"
OFFSET_MANUAL = "manual"
OFFSET_SEARCH = "search"


def offset_source_key(can: str) -> str:
    """Blackboard key of where a can's place offset came from (OFFSET_*; see the module docstring)."""
    return f"/place_offset_source/{can}"


BOX_ESTIMATE_KEY = "/box_estimate"
"""Blackboard key of the box estimate (see the module docstring)."""


def pad_key(label: str) -> str:
    """Blackboard key of a pad check's decision (see the module docstring)."""
    return f"/pad_decision/{label}"


def stage_key(can: str) -> str:
    """Blackboard key of a can's stage (see the module docstring; unset before the vacuum came on)."""
    return f"/can_stage/{can}"


class HandOff:
    """The goal a motion leaf left running for the next motion leaf to bend out of (a blend).

    A leaf with a hand-off point (`motion.MoveTo`'s ``handoff``) succeeds once its goal is that close to
    its end and leaves the goal running here. The next motion leaf either blends (its goal goes out at
    once and the Cartesian node continues from the running motion's commanded state, no stop) or waits
    until the goal here has ended and starts from rest. A motion leaf that ends in any other way than
    SUCCESS cancels the goal here too, so a guard, a dropped can or a cancelled run stops it.
    """

    def __init__(self) -> None:
        self._handle: MotionHandle | None = None

    def put(self, handle: MotionHandle) -> None:
        """Leave `handle` running for the next motion leaf."""
        self._handle = handle

    def live(self) -> MotionHandle | None:
        """The handed-on goal while it runs (None: none, or it has ended: then it is forgotten)."""
        if self._handle is not None and self._handle.poll().done:
            self._handle = None
        return self._handle

    def cancel(self) -> None:
        """Stop the handed-on goal (no-op without one)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


WAKE_LATE_S = 0.002
"""s after a hold's end that its `Ports.wake_after` asks for: a timer may fire a little early."""


@dataclass(frozen=True)
class Ports:
    """What the leaves use instead of ROS: arm, gripper, clock, parameters, logger, run report.

    `handoff` is the run's one slot for a goal handed on between motion leaves (`HandOff`). `wake_after(s)`
    asks for a tick `s` seconds from now, besides the periodic ones (a hold that ends between two ticks);
    without a server (tests) it does nothing.
    """

    motion: MotionPort
    gripper: GripperPort
    clock: Clock
    settings: Callable[[], BehaviorSettings]
    log: Logger
    report: RunReport
    handoff: HandOff = field(default_factory=HandOff)
    wake_after: Callable[[float], None] = field(default=lambda _s: None)


class PortBehavior(py_trees.behaviour.Behaviour):
    """A leaf that gets its `Ports` in setup; `start` / `step` are the never-blocking hooks.

    Subclasses implement ``start(ports)`` (called from initialise) and ``step(ports) -> Status``
    (called from update). Before setup the leaf fails with a message instead of raising.
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.ports: Ports | None = None
        self.started_at = 0.0
        self.feedback_message = "not started"

    def setup(self, **kwargs: Any) -> None:
        """Take the ports (``BehaviourTree.setup(node=..., ports=...)``).

        Raises:
            KeyError: no ``ports`` in kwargs.
        """
        try:
            self.ports = kwargs["ports"]
        except KeyError as exc:
            raise KeyError(f"didn't find 'ports' in setup's kwargs [{self.qualified_name}]") from exc

    def initialise(self) -> None:
        """Note the start time and start whatever the leaf does."""
        if self.ports is not None:
            self.started_at = self.ports.clock()
            self.start(self.ports)

    def update(self) -> Status:
        """Poll; never blocks."""
        if self.ports is None:
            self.feedback_message = "not set up: call setup(ports=...)"
            return Status.FAILURE
        return self.step(self.ports)

    def elapsed(self) -> float:
        """Seconds since initialise."""
        return self.ports.clock() - self.started_at if self.ports is not None else 0.0

    def start(self, ports: Ports) -> None:
        """Start the leaf's work (send a goal, call a service); default: nothing."""

    def step(self, ports: Ports) -> Status:
        """Decide the status from what has arrived; must set feedback_message."""
        raise NotImplementedError


def blackboard_client(name: str, keys: dict[str, Access]) -> py_trees.blackboard.Client:
    """A blackboard client with `keys` registered."""
    client = py_trees.blackboard.Client(name=name)
    for key, access in keys.items():
        client.register_key(key=key, access=access)
    return client
