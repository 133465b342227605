"""The common base of the tree's leaves: ports from `setup(**kwargs)`, blackboard keys, never-block update.

py_trees_ros conventions (followed by hand, the package is not installable here): nothing ROS-related
arrives through ``__init__``; ``BehaviourTree.setup(node=node, ports=ports)`` passes the node and the
`Ports` to every behaviour's ``setup``. ``update()`` only polls what ``initialise()`` started and sets
``feedback_message`` on every path; ``terminate()`` cancels what the behaviour started.

Blackboard keys shared between leaves of one can (both absolute, one per can):

- ``/place_offset/<can>``: the XY offset (m) from the planned place target. ManualAdjust writes the
  operator's offset; `ManualPlaceOff` writes (0, 0); the release descent and the rise read it.
- ``/can_stage/<can>``: "holding" once the vacuum was commanded on for the can, "released" once it was
  commanded off. The outcome leaf skips a can whose stage is unset (never touched) and stops the run
  otherwise: a can on the pad is never put down anywhere but over the box.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import py_trees
from py_trees.common import Access, Status

from salamander_behavior.params import BehaviorSettings
from salamander_behavior.ports import CellPort, Clock, Logger, MotionPort
from salamander_behavior.report import RunReport

STAGE_HOLDING = "holding"
STAGE_RELEASED = "released"


def offset_key(can: str) -> str:
    """Blackboard key of a can's place offset."""
    return f"/place_offset/{can}"


def stage_key(can: str) -> str:
    """Blackboard key of a can's stage ("holding" / "released"; unset before the vacuum came on)."""
    return f"/can_stage/{can}"


@dataclass(frozen=True)
class Ports:
    """What the leaves use instead of ROS: arm, cell, clock, parameters, logger, run report."""

    motion: MotionPort
    cell: CellPort
    clock: Clock
    settings: Callable[[], BehaviorSettings]
    log: Logger
    report: RunReport


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
