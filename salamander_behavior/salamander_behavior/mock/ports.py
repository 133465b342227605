"""Test doubles of the ports: a fake clock, logger, node, arm and cell (for unit tests and bench_tree.py).

They behave like the real stack in the ways the tree depends on, and no more: a goal runs for a few
polls and then succeeds (or fails as scripted, e.g. an IK early fail); a cancelled goal fails; the fake
cell grips the can whose contact pose the pad is at when the vacuum comes on and records where every
release happened, so a test can assert that a can is never let go anywhere but over the box.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from salamander_behavior.ports import (
    CartesianTarget,
    DoneCall,
    MotionOutcome,
    MotionPhase,
    MotionRequest,
    PendingCall,
    RetargetReply,
)


class FakeClock:
    """A clock the test advances by hand."""

    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        """Now."""
        return self.t

    def advance(self, dt: float) -> None:
        """Move time on by `dt` s."""
        self.t += dt


class ListLogger:
    """Records (level, message); accepts rclpy's keyword arguments (throttle_duration_sec, ...).

    Like rclpy's logger, it refuses a call site that logs at two severities (rclpy raises ValueError
    "Logger severity cannot be changed between calls", which kills a node), so tests catch it.
    """

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self._sites: dict[tuple[str, int], str] = {}

    def _record(self, level: str, message: str) -> None:
        caller = sys._getframe(2)
        site = (caller.f_code.co_filename, caller.f_lineno)
        if self._sites.setdefault(site, level) != level:
            raise ValueError(f"Logger severity cannot be changed between calls ({site[0]}:{site[1]})")
        self.lines.append((level, message))

    def info(self, message: str, **kwargs: Any) -> None:
        """Record at INFO."""
        self._record("info", message)

    def warning(self, message: str, **kwargs: Any) -> None:
        """Record at WARN."""
        self._record("warning", message)

    def error(self, message: str, **kwargs: Any) -> None:
        """Record at ERROR."""
        self._record("error", message)

    def text(self) -> str:
        """Every message, one per line."""
        return "\n".join(m for _, m in self.lines)


class FakeNode:
    """Records subscriptions (so a test can call the callbacks with real messages)."""

    def __init__(self) -> None:
        self.subscriptions: dict[str, Callable[[Any], None]] = {}
        self.qos: dict[str, Any] = {}
        self.logger = ListLogger()

    def create_subscription(
        self, msg_type: Any, topic: str, callback: Callable[[Any], None], qos: Any
    ) -> None:
        """Record the callback and QoS by topic."""
        self.subscriptions[topic] = callback
        self.qos[topic] = qos

    def get_logger(self) -> ListLogger:
        """The recording logger."""
        return self.logger


@dataclass(frozen=True)
class Script:
    """How a fake goal ends: after `polls` polls, SUCCEEDED (status 0) or FAILED with status/message."""

    polls: int = 2
    succeed: bool = True
    status: int = 0
    message: str = ""


class FakeHandle:
    """One fake goal (see `FakeMotion`)."""

    def __init__(self, motion: FakeMotion, request: MotionRequest, script: Script) -> None:
        self.motion = motion
        self.request = request
        self.script = script
        self.target = request.target
        self.polls = 0
        self.cancelled = False
        self.retargets: list[CartesianTarget] = []
        self._reply: RetargetReply | None = None
        self._pending: CartesianTarget | None = None
        self._final: MotionOutcome | None = None

    def poll(self) -> MotionOutcome:
        """PENDING on the first poll, ACTIVE until `script.polls`, then the scripted end."""
        if self._final is not None:
            return self._final
        self.polls += 1
        if self.cancelled:
            self._final = MotionOutcome(MotionPhase.FAILED, 0, "canceled")
        elif self.polls > self.script.polls:
            if self.script.succeed:
                self._final = MotionOutcome(MotionPhase.SUCCEEDED, 0, "reached")
                self.motion.position = self.target
            else:
                self._final = MotionOutcome(MotionPhase.FAILED, self.script.status, self.script.message)
        else:
            phase = MotionPhase.PENDING if self.polls == 1 else MotionPhase.ACTIVE
            return MotionOutcome(phase, progress=self.polls / max(self.script.polls, 1))
        self.motion.finished.append((self.request, self._final))
        return self._final

    def cancel(self) -> None:
        """Cancel (the next poll fails)."""
        if self._final is None:
            self.cancelled = True
            self.motion.cancels += 1

    def retarget(self, target: CartesianTarget) -> bool:
        """Accept unless one is pending; the answer comes with the next `take_retarget_reply`."""
        if self._pending is not None:
            return False
        self._pending = target
        self.retargets.append(target)
        return True

    @property
    def retarget_pending(self) -> bool:
        """Whether a retarget awaits its answer."""
        return self._pending is not None

    def take_retarget_reply(self) -> RetargetReply | None:
        """Answer the pending retarget: accepted while the goal runs (the polls start over)."""
        target, self._pending = self._pending, None
        if target is None:
            return None
        if self._final is not None:
            return RetargetReply(False, 255, "no active goal", target)
        if self.motion.refuse_retargets:
            return RetargetReply(False, 1, "retarget refused (out_of_reach)", target)
        self.target = target
        self.polls = min(self.polls, 1)
        return RetargetReply(True, 0, "retargeted", target)


class FakeMotion:
    """A fake `MotionPort`.

    Args:
        scripts: by goal label (the leaf's name), how the goal ends; others use `default`.
        default: the script of every other goal.
    """

    def __init__(self, scripts: dict[str, Script] | None = None, default: Script = Script()) -> None:  # noqa: B008
        self.scripts = dict(scripts or {})
        self.default = default
        self.handles: list[FakeHandle] = []
        self.finished: list[tuple[MotionRequest, MotionOutcome]] = []
        self.position: CartesianTarget | None = None
        self.cancels = 0
        self.is_ready = True
        self.has_lease = True
        self.refuse_retargets = False

    def ready(self) -> tuple[bool, str]:
        """As set by the test."""
        return (True, "") if self.is_ready else (False, "fake arm not ready")

    def lease_held(self) -> bool:
        """As set by the test."""
        return self.has_lease

    def send(self, request: MotionRequest) -> FakeHandle:
        """Start a goal with its script."""
        handle = FakeHandle(self, request, self.scripts.get(request.label, self.default))
        self.handles.append(handle)
        return handle

    @property
    def labels(self) -> list[str]:
        """Labels of every goal sent, in order."""
        return [h.request.label for h in self.handles]


@dataclass
class Release:
    """A release the fake cell saw: which can, where the pad was."""

    can: str
    at: CartesianTarget | None


@dataclass
class FakeCell:
    """A fake `CellPort`: grips the can whose contact the pad is at when the vacuum comes on.

    Args:
        motion: where the pad is (its `position`).
        contacts: contact pose by can id.
        grip: False makes gripping fail (nothing is held).
        results: the cell's placement result by can once let go (default "in_box_clear"), to script
            a can that misses its compartment ("on_rim", ...), or None for a cell that never reports it.
    """

    motion: FakeMotion
    contacts: dict[str, CartesianTarget]
    grip: bool = True
    is_ready: bool = True
    results: dict[str, str | None] = field(default_factory=dict)
    vacuum: bool = False
    holding: str | None = None
    commands: list[bool] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)
    off_after: list[tuple[str, MotionPhase] | None] = field(default_factory=list)
    """For each vacuum-off command: the label and end of the last goal that had finished before it."""

    def ready(self) -> tuple[bool, str]:
        """As set by the test."""
        return (True, "") if self.is_ready else (False, "fake cell not ready")

    def set_vacuum(self, on: bool) -> PendingCall:
        """Switch at once; gripping and releasing happen immediately."""
        self.commands.append(on)
        if not on:
            last = self.motion.finished[-1] if self.motion.finished else None
            self.off_after.append((last[0].label, last[1].phase) if last else None)
        self.vacuum = on
        pad = self.motion.position
        if on and self.grip and self.holding is None and pad is not None:
            for can, contact in self.contacts.items():
                if math.dist(contact.position, pad.position) < 1e-9:
                    self.holding = can
        if not on and self.holding is not None:
            self.releases.append(Release(self.holding, pad))
            self.holding = None
        return DoneCall(True, f"vacuum {'on' if on else 'off'}")

    def held(self) -> str | None:
        """The can on the pad."""
        return self.holding

    def outcome(self, can: str) -> str | None:
        """Where the can was let go, if it was."""
        return next(
            (f"let go at {r.at.describe() if r.at else '?'}" for r in self.releases if r.can == can), None
        )

    def result(self, can: str) -> str | None:
        """The scripted result (default "in_box_clear") once the can was let go, else None."""
        released = any(r.can == can for r in self.releases)
        return self.results.get(can, "in_box_clear") if released else None


class Rig:
    """A whole tree on fakes, ticked by hand: the unit tests' and the benchmark's test bench.

    Args:
        jobs: the cans.
        settings: the parameter snapshot (change `rig.settings` between ticks to test live changes).
        scripts: FakeMotion scripts by goal label.
        default: FakeMotion's default script.
        guard: optional guard wrapper (tree.Guard).
        grip: whether the fake cell grips.
        clock: the fake clock (pass one to share it, e.g. with a JointStateCache).
    """

    def __init__(
        self,
        jobs: Any,
        settings: Any = None,
        scripts: dict[str, Script] | None = None,
        default: Script = Script(),  # noqa: B008 (frozen)
        guard: Any = None,
        grip: bool = True,
        clock: FakeClock | None = None,
    ) -> None:
        import py_trees

        from salamander_behavior.behaviors.base import Ports
        from salamander_behavior.params import BehaviorSettings
        from salamander_behavior.report import RunReport
        from salamander_behavior.tree import build_tree

        self.jobs = tuple(jobs)
        self.settings = settings or BehaviorSettings()
        self.clock = clock or FakeClock()
        self.motion = FakeMotion(scripts, default)
        self.cell = FakeCell(self.motion, {j.can: j.contact for j in self.jobs}, grip=grip)
        self.log = ListLogger()
        self.report = RunReport()
        self.node = FakeNode()
        self.ports = Ports(self.motion, self.cell, self.clock, lambda: self.settings, self.log, self.report)
        self.root = build_tree(self.jobs, guard)
        self.tree = py_trees.trees.BehaviourTree(self.root)
        self.tree.setup(node=self.node, ports=self.ports)
        self.ticks = 0

    def tick(self, dt: float = 0.05) -> None:
        """One tick, then time moves on by `dt`."""
        self.tree.tick()
        self.ticks += 1
        self.clock.advance(dt)

    @property
    def finished(self) -> bool:
        """Whether the root has ended."""
        return self.root.status.value in ("SUCCESS", "FAILURE")

    def run(self, max_ticks: int = 20000, until: Callable[[], bool] | None = None) -> str:
        """Tick until the root ends (or `until()` holds); returns the root's status value."""
        for _ in range(max_ticks):
            if self.finished or (until is not None and until()):
                break
            self.tick()
        return self.root.status.value

    def leaf(self, name: str) -> Any:
        """The first behaviour named `name`."""
        for behavior in self.root.iterate():
            if behavior.name == name:
                return behavior
        raise KeyError(name)

    def jog(self, vx: float, vy: float = 0.0) -> None:
        """Deliver an operator twist through the subscription callback."""
        from geometry_msgs.msg import Twist

        from salamander_control import names

        msg = Twist()
        msg.linear.x, msg.linear.y = vx, vy
        self.node.subscriptions[names.OPERATOR_JOG](msg)

    def confirm(self, value: bool) -> None:
        """Deliver an operator confirmation through the subscription callback."""
        from std_msgs.msg import Bool

        from salamander_control import names

        self.node.subscriptions[names.OPERATOR_CONFIRM](Bool(data=value))
