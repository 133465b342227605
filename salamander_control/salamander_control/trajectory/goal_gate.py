"""Which goals on /arm/joint_target may move the arm: the lease, message order, well-formedness.

Pure state machine (clocks passed in), so the trajectory generator's acceptance rules are tested
without ROS. It owns the `ArmLease` and routes every lease operation through one place, so that a
lease expiring inside any call (a goal, a heartbeat, a timer tick) is noticed exactly once by the
control loop, which must then bring the arm to a stop.

The lease's time is the owner's running time: a stall of the owner itself (its timer reports every run,
`GoalGate.ran`) is not counted against the holder's heartbeat, as the measurement watch does not count
it against the joint states (trajectory/measurement_watch.py).

Rules, in order:
1. Lease: while someone holds it, only the holder's goals count: `header.frame_id` must be the
   holder's lease token (ArmLease ACQUIRE's reply); the holder's client id, or any other string, is
   refused. "" is the anonymous gamepad/preset sender, accepted only while the lease is free. Goals that
   carry the token of a lease that expired stay refused (also once the lease is free): a controller
   that lost its heartbeat must not resume moving the arm by accident; it acquires again (a new token).
   Refusal reasons name the holder's client id, never a token: any frame_id may be one (an expired,
   a wrong, an unknown token), so a reason names a sender's frame_id by its fingerprint only
   (`lease.fingerprint`, the one the grant's log line shows).
2. Order: a goal stamped earlier than the last accepted goal is stale and dropped. A zero stamp means
   "now" and is always in order; a stamp more than `max_future` s ahead of the clock is refused (it
   would make every later goal look stale).
3. Form: names, lengths and values are checked by `joint_state.merge_goal`; the goal is merged onto
   the current goal (a subset of joints is a valid goal). Velocities (JointState.velocity) are
   optional; when given they must be one finite number per name (the unnamed joints get 0), else the
   whole goal is refused: a goal with velocities is followed as part of a stream (trajectory.core).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from typing import NamedTuple

from salamander_control.joint_state import JointStateError, merge_goal
from salamander_control.trajectory.lease import ArmLease, LeaseReply, fingerprint, same_token

STALL_MIN_S = 0.1
"""s; a gap between two runs of the owner longer than this (and than `STALL_PERIODS` of its timer's
period) is a stall: the owner did not run (a starved or stopped process), see `GoalGate.ran`."""
STALL_PERIODS = 3.0


class Verdict(Enum):
    """Outcome of a goal check; the node logs each refusal kind on its own throttled line."""

    ACCEPTED = "accepted"
    MALFORMED = "malformed"
    STALE = "stale"
    LEASE = "lease"


class GoalDecision(NamedTuple):
    """A verdict; when accepted the merged five-joint goal (and its velocities, if any), else why not."""

    verdict: Verdict
    goal: tuple[float, ...] | None
    reason: str
    velocity: tuple[float, ...] | None = None


class GoalGate:
    """Lease holder, goal ordering and goal parsing of the trajectory generator.

    Args:
        max_future: how far ahead of the receiver's clock a goal stamp may be, s.
    """

    def __init__(self, max_future: float = 1.0) -> None:
        self._lease = ArmLease()
        self._max_future_ns = int(max_future * 1e9)
        self._last_stamp_ns = 0
        self._locked_out = ""  # the token of the last lease that expired (its goals stay refused)
        self._unreported = ""  # an expiry the control loop has not yet been told about
        self._last_run = -math.inf  # the newest time passed in, s
        self._allowed_gap: float | None = None  # None until the owner's timer reports (`ran`)
        self._credited = 0.0  # stall time given to the holder since the last `ran`, s

    @property
    def holder(self) -> str:
        """Current lease holder ("" when free), as of the last call that passed the clock."""
        return self._lease.holder

    @property
    def timeout(self) -> float:
        """Heartbeat timeout of the holder, s (0 when free)."""
        return self._lease.timeout

    def seconds_left(self, now: float) -> float:
        """Time before the lease expires without a heartbeat, s (0 when free)."""
        return self._lease.seconds_left(now)

    def acquire(self, client: str, timeout: float, now: float, token: str = "") -> LeaseReply:
        """Take the lease (a new token), or refresh it with the holder's `token`."""
        self.expire(now)
        return self._lease.acquire(client, timeout, now, token)

    def heartbeat(self, client: str, token: str, now: float) -> LeaseReply:
        """Keep the lease alive (the holder's client id and token)."""
        self.expire(now)
        return self._lease.heartbeat(client, token, now)

    def release(self, client: str, token: str, now: float) -> LeaseReply:
        """Give the lease back (the arm keeps going to its goal: a release is not a stop)."""
        self.expire(now)
        return self._lease.release(client, token, now)

    def ran(self, now: float, period: float) -> float:
        """The owner's timer ran at `now` and runs again within `period` s; returns the stall given.

        The stall given is the time (s) added to the holder's deadline since the last call (0.0: none),
        for the owner's log. From the first call on, a gap longer than the allowed one (`STALL_MIN_S`,
        or `STALL_PERIODS` timer periods) between two calls that pass the clock is a stall of the owner:
        its excess moves the holder's deadline on (`ArmLease.extend`). The holder's heartbeats could not
        be taken while the owner did not run; they wait in its queue and may be taken just after the
        timer's first cycle, which would otherwise expire the lease of a client that kept its heartbeat.
        A client that stopped is still dropped `timeout` s of the owner's running time after its last
        heartbeat.
        """
        self.expire(now)
        self._allowed_gap = max(STALL_MIN_S, STALL_PERIODS * period)
        credited, self._credited = self._credited, 0.0
        return credited

    def expect(self, period: float) -> None:
        """The owner's timer now runs every `period` s.

        Until the next `ran`, a gap as long as the older or the newer period allows is no stall (a timer
        slowed down between two runs is not one).
        """
        if self._allowed_gap is not None:
            self._allowed_gap = max(self._allowed_gap, STALL_PERIODS * period)

    def _account(self, now: float) -> None:
        """Give the holder a stall that ended at `now` (see `ran`); times older than the newest pass."""
        gap = now - self._last_run
        if self._allowed_gap is not None and gap > self._allowed_gap and self._lease.holder:
            self._lease.extend(gap - self._allowed_gap)
            self._credited += gap - self._allowed_gap
        self._last_run = max(self._last_run, now)

    def expire(self, now: float) -> str:
        """Drop a holder whose heartbeat is overdue; returns that holder or ""."""
        self._account(now)
        token = self._lease.token
        gone = self._lease.expire(now)
        if gone:
            self._locked_out = token
            self._unreported = gone
        return gone

    def poll_expired(self, now: float) -> str:
        """The holder whose lease expired since the last poll (whichever call noticed it), or ""."""
        self.expire(now)
        gone, self._unreported = self._unreported, ""
        return gone

    def check(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        stamp_ns: int,
        sender: str,
        current_goal: Sequence[float],
        now: float,
        now_ns: int,
        velocities: Sequence[float] = (),
    ) -> GoalDecision:
        """Decide about one goal message; only an accepted goal changes the gate's state.

        Args:
            names: joint names of the goal.
            positions: one position per name, rad.
            stamp_ns: header stamp, ns (0 = "now").
            sender: header.frame_id, the sender's lease token ("" = anonymous).
            current_goal: the five-joint goal the unnamed joints keep.
            now: monotonic time for the lease, s.
            now_ns: the clock the stamps are compared with, ns.
            velocities: empty, or one velocity per name, rad/s (JointState.velocity).
        """
        self.expire(now)
        holder = self._lease.holder
        if holder and not self._lease.allows(sender, now):
            return GoalDecision(
                Verdict.LEASE, None,
                f"goal from {_sender(sender)} refused: lease held by {holder!r} (the frame_id is not its "
                "lease token)",
            )
        if not holder and same_token(sender, self._locked_out):
            return GoalDecision(
                Verdict.LEASE, None,
                f"goal with an expired lease's token {fingerprint(sender)} refused: acquire the lease again",
            )
        who = f"lease holder {holder!r}" if holder else _sender(sender)  # held: the sender is the token
        if stamp_ns > now_ns + self._max_future_ns:
            ahead = (stamp_ns - now_ns) * 1e-9
            return GoalDecision(Verdict.STALE, None, f"goal from {who} stamped {ahead:.3f} s in the future")
        if stamp_ns and stamp_ns < self._last_stamp_ns:
            behind = (self._last_stamp_ns - stamp_ns) * 1e-9
            return GoalDecision(
                Verdict.STALE, None, f"goal from {who} is {behind:.3f} s older than the last accepted goal"
            )
        try:
            goal = merge_goal(names, positions, current_goal, velocities)
        except JointStateError as exc:
            return GoalDecision(Verdict.MALFORMED, None, f"goal from {who} refused: {exc}")
        self._last_stamp_ns = max(self._last_stamp_ns, stamp_ns or now_ns)
        return GoalDecision(Verdict.ACCEPTED, goal.positions, "", goal.velocities)


def _sender(sender: str) -> str:
    """A goal's sender as a reason names it: its frame_id by fingerprint only (it may be a lease token)."""
    return f"frame_id {fingerprint(sender)}" if sender else "anonymous sender"
