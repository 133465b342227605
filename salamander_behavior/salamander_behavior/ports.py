"""What the behaviours need from the outside world, as small value types and protocols (no rclpy).

The tree's leaves never talk to ROS themselves: they go through a `MotionPort` (the arm: lease, Cartesian
goals, retargets) and a `GripperPort` (the gripper's hardware contract: the vacuum valve and the
part-present switch, nothing else; docs/interfaces.md, "Hardware contract"). The behaviour server gives
them the ROS implementations (`ros.arm_motion_client.ArmMotionCore`, `ros.gripper_client.GripperIO`); the
unit tests and the benchmark give them the fakes of `salamander_behavior.mock.ports`. Every call here
returns at once: a request is started and then *polled* on later ticks, so a tick never blocks the
executor.

The gripper port has no view of the cell: no can ids, no positions, no placement outcomes. What the tree
knows of a can on the pad is the part-present signal and how old it is (`PartReading`); every decision
made on it checks the age first (`part_present_timeout_s`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, Protocol

Clock = Callable[[], float]
"""Monotonic seconds; injected so that tests run on a fake clock."""


@dataclass(frozen=True)
class CartesianTarget:
    """A TCP pose in base_link: position (m), tool pitch and tool yaw (rad), as MoveCartesian takes it."""

    x: float
    y: float
    z: float
    tool_pitch: float = 0.0
    tool_yaw: float = 0.0

    def __post_init__(self) -> None:
        """Refuse a non-finite pose: the arm never gets a target computed from bad data."""
        values = (self.x, self.y, self.z, self.tool_pitch, self.tool_yaw)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"a Cartesian target must be finite, got {values}")

    @classmethod
    def pad_down(cls, x: float, y: float, z: float) -> CartesianTarget:
        """The pad pointing straight down with tool yaw = atan2(y, x), which keeps wrist_yaw at zero."""
        yaw = math.atan2(y, x) if (x or y) else 0.0
        return cls(x, y, z, 0.0, yaw)

    def shifted(self, dx: float, dy: float, dz: float = 0.0) -> CartesianTarget:
        """The same pose moved by (dx, dy, dz); the tool attitude is kept (a nudge is a translation)."""
        return CartesianTarget(self.x + dx, self.y + dy, self.z + dz, self.tool_pitch, self.tool_yaw)

    @property
    def position(self) -> tuple[float, float, float]:
        """(x, y, z), m."""
        return (self.x, self.y, self.z)

    def describe(self) -> str:
        """Short text for logs: position in m to 0.1 mm."""
        return f"({self.x:.4f}, {self.y:.4f}, {self.z:.4f})"


class MotionPath(StrEnum):
    """MoveCartesian's path field."""

    LINEAR = "linear"
    JOINT = "joint"


ELBOW_BRANCHES = ("up", "down")
"""MoveCartesian's pinned elbow branches ("" = the solution nearest the current joints)."""


@dataclass(frozen=True)
class MotionRequest:
    """One MoveCartesian goal as the tree asks for it; `label` names it in logs.

    `branch` is the goal's elbow branch: "" (nearest the current joints), "up" or "down"; the IK retry
    variants pin it (`behaviors.ik_retry`). `guard_force` (N) > 0 makes it a guarded move: the Cartesian
    node stops the line at the first contact, an external force on the tool above this (estimated from
    the joint efforts), and the outcome carries the `Contact`; 0 is an ordinary move. `handoff` (m) > 0:
    the leaf hands on to its next goal when the measured TCP is this close to the target, and the
    Cartesian node reports that moment at once (the goal's `handoff_distance`), not at its feedback rate.
    `band`: a stretch of a linear goal crossed slowly without stopping (`MotionBand`); a guarded goal with
    a band feels for contact only there.
    """

    target: CartesianTarget
    path: MotionPath
    speed_scale: float
    label: str
    branch: str = ""
    guard_force: float = 0.0
    handoff: float = 0.0
    band: MotionBand | None = None

    def __post_init__(self) -> None:
        """Refuse a branch MoveCartesian does not know (it would reject the goal), a bad force or distance."""
        if self.branch not in ("", *ELBOW_BRANCHES):
            raise ValueError(f"branch must be '', 'up' or 'down', got {self.branch!r}")
        if not (math.isfinite(self.guard_force) and self.guard_force >= 0.0):
            raise ValueError(f"guard_force must be a finite force >= 0 N, got {self.guard_force}")
        if not (math.isfinite(self.handoff) and self.handoff >= 0.0):
            raise ValueError(f"handoff must be a finite distance >= 0 m, got {self.handoff}")
        if self.band is not None and self.path is not MotionPath.LINEAR:
            raise ValueError("only a linear goal can have a band")


@dataclass(frozen=True)
class MotionBand:
    """MoveCartesian's band: from `start` to `end` m before the target at `speed_scale` (start > end >= 0).

    In speed scales, as the tree knows its speeds; the Cartesian node turns it into its own
    `cartesian.plan.SlowBand` (m/s) with its limits.
    """

    speed_scale: float
    start: float
    end: float

    def __post_init__(self) -> None:
        """Refuse what MoveCartesian would reject."""
        if not (0.0 < self.speed_scale <= 1.0 and math.isfinite(self.start) and self.start > self.end >= 0.0):
            raise ValueError(f"a band needs 0 < speed_scale <= 1 and start > end >= 0, got {self}")


@dataclass(frozen=True)
class Contact:
    """Where a guarded move met resistance: the measured TCP (m) and the external force on the tool (N).

    Both in base_link, as MoveCartesian's result gives them (`contact_tcp`, `contact_force`).
    """

    tcp: tuple[float, float, float]
    force: tuple[float, float, float]

    @property
    def force_n(self) -> float:
        """The force's magnitude (N)."""
        return math.hypot(*self.force)

    def describe(self) -> str:
        """E.g. "TCP (412.3, -180.1, -2.0) mm, 6.1 N"."""
        x, y, z = (v * 1000 for v in self.tcp)
        return f"TCP ({x:.1f}, {y:.1f}, {z:.1f}) mm, {self.force_n:.1f} N"


class MotionPhase(Enum):
    """Where a goal stands; SUCCEEDED and FAILED are final."""

    PENDING = "pending"  # sent, not accepted yet
    ACTIVE = "active"  # accepted and moving
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class MotionOutcome:
    """What polling a goal says.

    Attributes:
        phase: where the goal stands.
        status: the IkStatus value of an early fail (0 = Ok: the failure was not the IK's).
        message: the action's message, or why the goal never ran (rejected, server missing).
        progress: 0..1 from the action feedback while ACTIVE.
        remaining: the measured TCP's distance to the target (m) from the action feedback while ACTIVE;
            NaN before any.
        early: the goal FAILED before any joint target was sent for it (the Cartesian node's early
            fail: the arm did not move). Only then may the tree try an IK retry variant.
        contact: a guarded move that stopped at a contact (FAILED, status 0): where and how hard; None
            otherwise.
        lease_lost: it FAILED because the arm lease it was sent under is gone (the generator stopped
            following it): a fault of the stack, not of the goal.
        server_fault: it FAILED because the Cartesian node did not take or follow it (no action server,
            rejected for `REJECT_RETRY_S`, no answer, no feedback while it ran, no result): a fault of
            the stack, not of the goal (the tree sends only well-formed goals).
    """

    phase: MotionPhase
    status: int = 0
    message: str = ""
    progress: float = 0.0
    remaining: float = math.nan
    early: bool = False
    contact: Contact | None = None
    lease_lost: bool = False
    server_fault: bool = False

    @property
    def ik_early_fail(self) -> bool:
        """FAILED early with an IK status: the target itself is unsolvable (what IK retries address)."""
        return self.phase is MotionPhase.FAILED and self.early and self.status != 0

    @property
    def done(self) -> bool:
        """Whether the goal has ended (either way)."""
        return self.phase in (MotionPhase.SUCCEEDED, MotionPhase.FAILED)


@dataclass(frozen=True)
class RetargetReply:
    """The answer of one RetargetCartesian call: `target` is the pose that was asked for."""

    accepted: bool
    status: int
    message: str
    target: CartesianTarget


class MotionHandle(Protocol):
    """One goal in flight; every method returns at once."""

    request: MotionRequest

    def poll(self) -> MotionOutcome:
        """The goal's state now."""
        ...

    def cancel(self) -> None:
        """Ask the server to stop the goal (no-op once it has ended)."""
        ...

    def retarget(self, target: CartesianTarget) -> bool:
        """Start swapping the goal's target; False (nothing sent) while an earlier retarget is unanswered."""
        ...

    @property
    def retarget_pending(self) -> bool:
        """Whether a retarget call is waiting for its answer."""
        ...

    def take_retarget_reply(self) -> RetargetReply | None:
        """The answer of the last retarget, once (None while pending or when already taken)."""
        ...


class MotionPort(Protocol):
    """The arm as the tree sees it."""

    def ready(self) -> tuple[bool, str]:
        """(True, "") when goals can run: lease held, action server up, joint states fresh; else why not."""
        ...

    def lease_held(self) -> bool:
        """Whether the tree holds the arm lease now (a goal without it would not move the arm)."""
        ...

    def send(self, request: MotionRequest) -> MotionHandle:
        """Start a goal (a failed start is reported by the handle's first poll)."""
        ...

    def contact_sensing(self) -> bool | None:
        """Whether the joint states carry efforts (guarded moves possible); None before the first one.

        The first joint state heard decides, and the answer is kept from then on.
        """
        ...


class PendingCall(Protocol):
    """A service call in flight."""

    def done(self) -> bool:
        """Whether the answer (or a failure to get one) is there."""
        ...

    def result(self) -> tuple[bool, str]:
        """(success, message); only meaningful once done."""
        ...


@dataclass(frozen=True)
class PartReading:
    """The part-present switch as last heard, on the port's clock (`Clock`).

    Attributes:
        value: the switch (True = a part seals the pad), None before the first message.
        received_at: when the newest message arrived (-inf before the first).
        changed_at: when the value last changed (the first message counts as a change; -inf before it).
    """

    value: bool | None = None
    received_at: float = -math.inf
    changed_at: float = -math.inf

    def age(self, now: float) -> float:
        """Seconds since the newest message (inf before the first)."""
        return now - self.received_at

    def fresh(self, now: float, bound: float) -> bool:
        """Whether a message arrived within `bound` s (a signal older than that tells nothing)."""
        return self.value is not None and self.age(now) <= bound

    def stale_text(self, now: float) -> str:
        """What is known about a stale signal, e.g. "part-present signal 2.5 s old"."""
        if self.value is None:
            return "no part-present signal received"
        return f"part-present signal {self.age(now):.1f} s old"


class GripperPort(Protocol):
    """The gripper's hardware contract: the vacuum valve (a service) and the part-present switch."""

    def ready(self) -> tuple[bool, str]:
        """(True, "") when the vacuum service is up and part-present is fresh; else what is missing."""
        ...

    def set_vacuum(self, on: bool) -> PendingCall:
        """Open (True) or close the vacuum valve."""
        ...

    def part_present(self) -> PartReading:
        """The part-present switch as last heard, with its age."""
        ...


class Logger(Protocol):
    """The subset of rclpy's logger the behaviours use (a test logger records the lines)."""

    def info(self, message: str, **kwargs: Any) -> Any:
        """Log at INFO."""
        ...

    def warning(self, message: str, **kwargs: Any) -> Any:
        """Log at WARN."""
        ...

    def error(self, message: str, **kwargs: Any) -> Any:
        """Log at ERROR."""
        ...


@dataclass(frozen=True)
class DoneCall:
    """A `PendingCall` that is already answered (e.g. "service not available")."""

    success: bool
    message: str

    def done(self) -> bool:
        """Always answered."""
        return True

    def result(self) -> tuple[bool, str]:
        """The fixed answer."""
        return (self.success, self.message)
