"""Test doubles of the ports: a fake clock, logger, node, arm and gripper (for unit tests and bench_tree.py).

They behave like the real stack in the ways the tree depends on, and no more: a goal runs for a few
polls and then succeeds (or fails as scripted, e.g. an IK early fail); a guarded goal stops at a contact
where the test's `FakeMotion.obstacle` says it meets one; a cancelled goal fails; the fake
gripper grips the can whose contact pose the pad is at when the vacuum comes on, reports it through the
part-present reading (fresh on every call, until the test makes the switch fall silent) and records
where every release happened, so a test can assert that a can is never let go anywhere but over the box.
`StaysRunning` stands for a motion behaviour under the limit conditions' guards.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import py_trees
from py_trees.common import Status

from salamander_behavior.ports import (
    CartesianTarget,
    Contact,
    DoneCall,
    MotionOutcome,
    MotionPhase,
    MotionRequest,
    PartReading,
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


class StaysRunning(py_trees.behaviour.Behaviour):
    """A motion that stays RUNNING: counts ticks, records how it was stopped, calls `step` each tick."""

    def __init__(self, step: Callable[[], None] | None = None) -> None:
        super().__init__("move")
        self.ticks = 0
        self.terminated: list[Status] = []
        self.step = step

    def update(self) -> Status:
        """Call `step`; stay RUNNING."""
        self.ticks += 1
        if self.step is not None:
            self.step()
        self.feedback_message = "moving"
        return Status.RUNNING

    def terminate(self, new_status: Status) -> None:
        """Record how it was stopped."""
        self.terminated.append(new_status)


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
    """How a fake goal ends: after `polls` polls, SUCCEEDED (status 0) or FAILED with status/message.

    `early`: a failure is an early fail (nothing sent, the arm did not move; `MotionOutcome.early`),
    as the Cartesian node's IK refusals are; False scripts a failure after the arm moved part way.
    `lease_lost`, `server_fault`: a failure because the arm lease the goal was sent under is gone, or
    because the Cartesian node did not take or follow it (`MotionOutcome`).
    """

    polls: int = 2
    succeed: bool = True
    status: int = 0
    message: str = ""
    early: bool = True
    lease_lost: bool = False
    server_fault: bool = False


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
        self._cleared = False  # the goal passed its obstacle check
        self.remaining = math.nan
        """The distance remaining the last poll reported (m; 0 once it has ended, NaN before it ran)."""

    def poll(self) -> MotionOutcome:
        """PENDING on the first poll, ACTIVE until `script.polls` (progress short of 1), then the end.

        The distance remaining runs down in step with the progress, from the pose the last goal reached.
        A guarded goal meets its `FakeMotion.obstacle` at its end, or, with a band, as soon as it is
        past the band's end (the real contact happens inside the band, before a hand-off below it).
        """
        if self._final is not None:
            return self._final
        self.polls += 1
        start = self.motion.position
        span = math.dist(start.position, self.target.position) if start is not None else math.nan
        runs = self.script.succeed or not self.script.early  # an early fail never runs
        progress = self.polls / (self.script.polls + 1) if runs else 0.0
        band = self.request.band
        # A contact happens in the band: at the goal's end, or once it is past the band's end.
        past_band = band is not None and (1.0 - progress) * span <= band.end
        ended = self.polls > self.script.polls
        ask = not self.cancelled and not self._cleared and (ended or past_band)
        met = self.motion.meets(self.request) if ask else None
        self._cleared = self._cleared or ask  # the obstacle is asked once per goal
        if self.cancelled:
            self._final = MotionOutcome(MotionPhase.FAILED, 0, "canceled")
        elif ended or met is not None:
            if met is not None:
                self._final = MotionOutcome(
                    MotionPhase.FAILED, 0, f"contact: {met.describe()}", contact=met
                )
                self.motion.position = CartesianTarget(
                    *met.tcp, self.target.tool_pitch, self.target.tool_yaw
                )
            elif self.script.succeed:
                self._final = MotionOutcome(MotionPhase.SUCCEEDED, 0, "reached")
                self.motion.position = self.target
                self.remaining = 0.0
            else:
                script = self.script
                self._final = MotionOutcome(
                    MotionPhase.FAILED, script.status, script.message, early=script.early,
                    lease_lost=script.lease_lost, server_fault=script.server_fault,
                )
        else:
            # An early fail never runs (the real node decides before its first cycle): PENDING until then.
            phase = MotionPhase.ACTIVE if self.polls > 1 and runs else MotionPhase.PENDING
            self.remaining = (1.0 - progress) * span
            return MotionOutcome(phase, progress=progress, remaining=self.remaining)
        self.motion.finished.append((self.request, self._final))
        return self._final

    @property
    def ended(self) -> MotionOutcome | None:
        """The goal's final outcome once it has ended (None while it runs), read without polling it."""
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
        self._cleared = False
        return RetargetReply(True, 0, "retargeted", target)


class FakeMotion:
    """A fake `MotionPort`.

    Args:
        scripts: by goal label (the leaf's name), how the goal ends; others use `default`. A list scripts
            the label's successive goals (an IK retry's variants carry the leaf's label); its last
            script repeats.
        default: the script of every other goal.

    Attributes:
        efforts: what `contact_sensing` answers (None: no joint state yet).
        obstacle: for a guarded goal (guard_force > 0), where it meets resistance: the contact's TCP
            (the goal then ends FAILED with the `Contact`, the pad stopped there), or None (it passes).
            Unguarded goals always pass (the fake has no physics).
        contact_force: the force a contact reports (N, base_link).
    """

    def __init__(
        self,
        scripts: dict[str, Script | list[Script]] | None = None,
        default: Script = Script(),  # noqa: B008 (frozen)
    ) -> None:
        self.scripts = dict(scripts or {})
        self.default = default
        self.handles: list[FakeHandle] = []
        self.finished: list[tuple[MotionRequest, MotionOutcome]] = []
        self.position: CartesianTarget | None = None
        self.cancels = 0
        self.is_ready = True
        self.has_lease = True
        self.refuse_retargets = False
        self.efforts: bool | None = True
        self.obstacle: Callable[[MotionRequest], tuple[float, float, float] | None] | None = None
        self.contact_force: tuple[float, float, float] = (0.0, 0.0, 6.0)

    def release_point(self) -> CartesianTarget | None:
        """Where a can let go now comes off the pad: where the goal still running ends, else where the pad is.

        The cell's valve vents for `release_settle_s` and a guarded descent hands on before its end so that
        the can lets go as the pad arrives (`release_early_m`); the fake lets go at once, so it places
        the release at the end of the goal that is still moving the pad.
        """
        running = self.running()
        return running.target if running is not None else self.position

    def running(self) -> FakeHandle | None:
        """The goal still moving the pad (sent, polled, not ended, not cancelled), if any."""
        running = [h for h in self.handles if h._final is None and not h.cancelled and h.polls > 0]
        return running[-1] if running else None

    def contact_sensing(self) -> bool | None:
        """As set by the test (`efforts`)."""
        return self.efforts

    def meets(self, request: MotionRequest) -> Contact | None:
        """The contact a guarded `request` meets (`obstacle`), None when it passes or is unguarded."""
        if request.guard_force <= 0.0 or self.obstacle is None:
            return None
        tcp = self.obstacle(request)
        return None if tcp is None else Contact(tcp, self.contact_force)

    def ready(self) -> tuple[bool, str]:
        """As set by the test."""
        return (True, "") if self.is_ready else (False, "fake arm not ready")

    def lease_held(self) -> bool:
        """As set by the test."""
        return self.has_lease

    def send(self, request: MotionRequest) -> FakeHandle:
        """Start a goal with its script."""
        script = self.scripts.get(request.label, self.default)
        if isinstance(script, list):
            sent = sum(1 for h in self.handles if h.request.label == request.label)
            script = script[min(sent, len(script) - 1)]
        handle = FakeHandle(self, request, script)
        self.handles.append(handle)
        return handle

    @property
    def labels(self) -> list[str]:
        """Labels of every goal sent, in order."""
        return [h.request.label for h in self.handles]


def release_descent(label: str) -> bool:
    """Whether a goal's `label` names a release descent (a rim pass's goal down to the release height)."""
    return label.startswith("over the rim ") and label.endswith((" through the rim", ": to the release"))


@dataclass
class Release:
    """A release the fake gripper saw: which can, where the pad was."""

    can: str
    at: CartesianTarget | None


@dataclass
class FakeGripper:
    """A fake `GripperPort`: grips the can whose contact the pad is at when the vacuum comes on.

    Or the one it reaches first while the vacuum stays on (it may come on before the descent arrives).

    The part-present reading is `holding is not None`, heard "now" on every call, until `fall_silent()`
    freezes it (value and arrival time) as a dead driver or a lost topic would.

    Args:
        motion: where the pad is (its `position`).
        contacts: contact pose by can id.
        clock: the tree's clock (the reading's arrival time).
        grip: False makes gripping fail (nothing is held).
        let_go: False makes the can stay on the pad after the vacuum went off (a stuck can or switch).
    """

    motion: FakeMotion
    contacts: dict[str, CartesianTarget]
    clock: Callable[[], float]
    grip: bool = True
    let_go: bool = True
    is_ready: bool = True
    vacuum: bool = False
    holding: str | None = None
    silent_since: float | None = None
    commands: list[bool] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)
    off_after: list[tuple[str, MotionPhase] | None] = field(default_factory=list)
    """For each vacuum-off command: the label and end of the last goal that had finished before it, or of
    the goal still running then (ACTIVE: a descent that handed on before its end)."""
    _last: PartReading = field(default_factory=PartReading)
    _sealing: bool = False  # the vacuum came on over no can: the first contact the pad reaches seals

    def ready(self) -> tuple[bool, str]:
        """As set by the test."""
        return (True, "") if self.is_ready else (False, "waiting for the fake gripper")

    def _seal(self) -> None:
        pad = self.motion.position
        if not (self._sealing and self.vacuum and self.grip and self.holding is None and pad is not None):
            return
        for can, contact in self.contacts.items():
            if math.dist(contact.position, pad.position) < 1e-9:
                self.holding, self._sealing = can, False

    def set_vacuum(self, on: bool) -> PendingCall:
        """Switch at once; gripping and releasing happen immediately (a release where the pad arrives)."""
        self.commands.append(on)
        if not on:
            running = self.motion.running()
            last = self.motion.finished[-1] if self.motion.finished else None
            if running is not None:  # handed on before its end: vented while it finishes
                self.off_after.append((running.request.label, MotionPhase.ACTIVE))
            else:
                self.off_after.append((last[0].label, last[1].phase) if last else None)
        self.vacuum, self._sealing = on, on
        self._seal()
        if not on and self.holding is not None:
            self.releases.append(Release(self.holding, self.motion.release_point()))
            self.holding = None if self.let_go else self.holding
        return DoneCall(True, f"vacuum {'on' if on else 'off'}")

    def fall_silent(self) -> None:
        """No more part-present messages from now on (the last one stays, ageing)."""
        self.part_present()
        self.silent_since = self.clock()

    def part_present(self) -> PartReading:
        """`holding is not None`, heard now (or the last reading, once silent)."""
        if self.silent_since is not None:
            return self._last
        self._seal()
        now = self.clock()
        value = self.holding is not None
        changed = self._last.changed_at if self._last.value is value else now
        self._last = PartReading(value, now, changed)
        return self._last


class Rig:
    """A whole tree on fakes, ticked by hand: the unit tests' and the benchmark's test bench.

    Args:
        jobs: the cans.
        settings: the parameter snapshot (change `rig.settings` between ticks to test live changes).
        scripts: FakeMotion scripts by goal label.
        default: FakeMotion's default script.
        guard: optional guard wrapper (tree.Guard).
        grip: whether the fake gripper grips.
        clock: the fake clock (pass one to share it, e.g. with a JointStateCache).
        held: the job of the can recorded as carried (tree.build_tree's `held`); put it on the pad
            with ``rig.gripper.holding = job.can`` to play a restart with a can held.
        lost: the cans recorded as lost in transit (tree.build_tree's `lost`).
        box: the box estimate the run starts with (tree.build_tree's `box`).
        cell: every can of the cell (tree.build_tree's `cell`; () : no carry ends low).
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
        held: Any = None,
        lost: tuple[str, ...] = (),
        box: Any = None,
        cell: tuple[Any, ...] = (),
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
        contacts = {j.can: j.contact for j in (*self.jobs, *([held] if held is not None else []))}
        self.gripper = FakeGripper(self.motion, contacts, self.clock, grip=grip)
        self.log = ListLogger()
        self.report = RunReport()
        self.node = FakeNode()
        self.ports = Ports(
            self.motion, self.gripper, self.clock, lambda: self.settings, self.log, self.report
        )
        self.root = build_tree(self.jobs, guard, held, lost, box, self.settings.arm, cell)
        self.tree = py_trees.trees.BehaviourTree(self.root)
        self.tree.setup(node=self.node, ports=self.ports)
        self.ticks = 0

    def tick(self, dt: float = 0.05) -> None:
        """One tick, then time moves on by `dt`; a goal handed on runs by itself (one poll a tick)."""
        self.ports.handoff.live()
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

    def jog(self, vx: float, vy: float = 0.0, vz: float = 0.0) -> None:
        """Deliver an operator twist through the subscription callback."""
        from geometry_msgs.msg import Twist

        from salamander_control import names

        msg = Twist()
        msg.linear.x, msg.linear.y, msg.linear.z = vx, vy, vz
        self.node.subscriptions[names.OPERATOR_JOG](msg)

    def confirm(self, value: bool) -> None:
        """Deliver an operator confirmation through the subscription callback."""
        from std_msgs.msg import Bool

        from salamander_control import names

        self.node.subscriptions[names.OPERATOR_CONFIRM](Bool(data=value))
