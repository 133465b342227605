"""A linear MoveCartesian goal in motion (`LinearGoalRun`): the line streamed, felt, braked and ended.

`goal.start_goal` checks and plans the line and builds the run; `step` runs once per control cycle.
What every goal shares (outcomes, arrival, stalls): `goal_common`.

Decisions documented here:
- Linear goals succeed when the plan has finished and the measured TCP (FK of /joint_states) is within
  `position_tolerance` (and the tool attitude within `angle_tolerance`) of the target and has moved
  slower than `SETTLED_SPEED` for `SETTLED_S` (not passing through); after `settle_timeout_s` without
  that they abort (time the node itself did not run, a stall, does not count: `Stalls`).
  An arm that stands still short of the target after the plan (the generator ended a stream that paused
  too long) resumes along a new line from where it stands, at most `MAX_RESUMES` times
  (`LinearGoalRun._resume_if_stopped_short`). A goal has also arrived the cycle the generator's command
  rests at its end with the arm trailing it (`goal_common.arrived_by_command`).
- Cancel brakes a linear motion on its own line with the plan's limits; the goal ends CANCELED once the
  commanded motion and the measured arm stand.
- A line's tail: once the plan is within `plan.TAIL_LEAD_S` of its final deceleration, the rest of its
  samples go out at once (`Cycle.ahead`, with `step(ahead=True)`: the node), so the generator ends the
  line at its end, at rest, even if this node dies; that is what keeps a stopped stream short of the
  line's end while every line brakes with all of its acceleration (docs/design/cartesian_plan.md).
  Nothing can brake those samples afterwards: a cancel then lets the line finish and ends CANCELED at its
  end, a retarget or a preempting line starts from its end after its last sample (`sent_until`), and a
  guarded goal sends its tail only once the measured TCP has left its band.
- A live change of the arm parameters re-checks the rest of a running linear path; if it became
  infeasible the motion brakes at once and the goal aborts with the status of the first bad point.
- A guarded goal (`guard_force` > 0, linear only) feeds every new measured sample to a
  `contact.ContactDetector`. When it trips, the motion brakes on its line as a cancel does (never past the
  line's end) and the goal ends, once the commanded motion and the measured arm stand, ABORTED with status
  Ok and a `Contact` (the measured TCP and the force estimate at the trip; message ``contact: <|F|> N at (x,
  y, z) mm after <d> mm of the line``). Without a usable effort sample for `joint_state_timeout_s` it brakes
  the same way and aborts ("guard blind"). A guarded goal whose first measured sample carries no efforts at
  all fails early: never silently unguarded. Its command never leads the measured TCP by more than
  `GUARD_LEAD_M` + what the command covered in the last `GUARD_LEAD_S` (the guard feels only the measured
  arm): past that it brakes and resumes from where the arm stands (`_check_lead`). Design:
  docs/design/guarded_moves.md.
- A goal with a band (`CartesianGoal.banded`) starts from rest (it never preempts a moving linear goal:
  early fail) and crosses the band at its speed without stopping; a guarded one feels for contact only
  while the measured TCP is inside the band (the rest of the line is fast, and an arm's inertia torques
  there are no contact). It cannot be retargeted (the band belongs to its target).

Pure Python, no rclpy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from salamander_control.cartesian.config import PATH_LINEAR, CartesianGoal, MotionConfig
from salamander_control.cartesian.contact import ContactDetector, Efforts
from salamander_control.cartesian.goal_common import (
    GUARD_LEAD_M,
    MAX_RESUMES,
    RESUME_STILL_M,
    RESUME_STILL_S,
    Contact,
    Cycle,
    Feedback,
    Outcome,
    RestStart,
    Stalls,
    arrived_by_command,
    fmt_m,
    lease_taken_outcome,
    measured_pose,
    pose_error,
    tcp_of,
)
from salamander_control.cartesian.motion import LinearMotion, MotionStep, plan_checked
from salamander_control.cartesian.plan import CartesianState, PlanningError
from salamander_control.kinematics import ArmParams, IkStatus

SETTLED_SPEED = 0.02
"""m/s: a linear goal succeeds only once the measured TCP has moved slower than this for `SETTLED_S`."""
SETTLED_S = 0.06
"""s of measurements: a brake that turns round near the target is that slow for only 20-40 ms."""
STOPPED_SPEED = 0.002
"""m/s: a braked goal (cancel, contact) ends once the measured TCP has moved slower than this for
`SETTLED_S` (the arm trails the command by the stream delay and the motors' lag)."""
MAX_TAIL = 80
"""Most samples one tail holds (0.8 s at 100 Hz; the node's publisher and the generator's subscription
keep more, `names.JOINT_TARGET_DEPTH`): a longer final deceleration goes out as far as this at once, the
rest as the next tail."""
GUARD_LEAD_S = 0.15
"""s: the normal lead is what the command covered in the generator's stream delay (30 ms) and the
motors' lag (50 ms in simulation), plus the sample's age: at a steady speed that speed times them; while
the command slows down (into a band) more than its present speed times them."""


class LinearGoalRun:
    """A linear goal in motion. Build it with `start_goal`."""

    kind = PATH_LINEAR

    def __init__(
        self, goal: CartesianGoal, motion: LinearMotion, guard: ContactDetector | None = None
    ) -> None:
        self.goal = goal
        self.guard = guard
        self._line_start = motion.plan.start.pose[:3].copy()
        self.target = np.asarray(goal.pose, dtype=float)
        self.motion = motion
        self._travelled = 0.0
        self._last_tcp = motion.plan.start.pose[:3].copy()
        self._done_at: float | None = None
        self._pending: Outcome | None = None  # the outcome once a brake (cancel, bad params) stands
        self._sent_final = False
        self.resumes = 0
        self._still: tuple[np.ndarray, float] | None = None  # (measured pose, since) while finished
        self._last_meas: tuple[np.ndarray, float] | None = None  # (measured pose, when) for `_track_speed`
        self._slow_since: float | None = None  # measurement time since which the TCP moves slowly
        self._stopped_since: float | None = None  # ... and slower than `STOPPED_SPEED` (`_stopped`)
        self._paused = ""  # why a guarded goal braked to wait for the arm (`_check_lead`); "" = not
        self._in_band = False  # the measured TCP was inside the goal's band at the last measurement
        self._tail_until: float | None = None  # clock time of the last sample of a tail sent ahead
        self._tail_cancel = False  # a cancel came while the sent tail runs: the line ends at its end
        self.stalls = Stalls()  # not counted toward the settle timeout (`_waited`)

    @property
    def cancelling(self) -> bool:
        """Whether the motion is braking to a stop (not a guarded goal's pause for a lagging arm)."""
        return (self.motion.braking and not self._paused) or self._tail_cancel

    @property
    def sent_until(self) -> float:
        """Clock time of the last sample sent ahead (the tail's end), -inf when none was.

        A preempting linear goal continues after it (the node's `_execute`).
        """
        return -math.inf if self._tail_until is None else self._tail_until

    def _in_tail(self, now: float) -> bool:
        """Whether the generator holds samples of this goal beyond `now` (its tail): none can be braked."""
        return self._tail_until is not None and now <= self._tail_until + 1e-9

    def step(
        self,
        now: float,
        cfg: MotionConfig,
        measured_q: Any,
        measured_at: float | None = None,
        efforts: Efforts | None = None,
        ahead: bool = False,
        resting: tuple[float, ...] | None = None,
    ) -> Cycle:
        """One control cycle: the joint target, the feedback, and the outcome once decided.

        `measured_at` is when `measured_q` was measured (the clock of `now`; None: now). A resume needs the
        arm still over that much measured time: the catch-up cycles of a late call share one measurement.
        `efforts` are that sample's (a guarded goal's input; None: none). With `ahead` (the node) the
        line's final deceleration comes whole in `Cycle.ahead` once it is due (`plan.TAIL_LEAD_S`); without
        it, cycle by cycle (a caller that moves a model arm to each target). `resting`: the generator's
        command when it rests (`arrived_by_command`; None: unknown or moving).
        """
        meas = measured_pose(measured_q, cfg.arm)
        at = now if measured_at is None else measured_at
        self._check_guard(now, at, measured_q, meas, efforts, cfg)
        lead_event = self._check_lead(now, meas, cfg)
        if self._in_tail(now):  # the generator holds this cycle's target: the plan's state is enough
            motion = self.motion
            ms = MotionStep(None, None, motion.state(now), motion.plan.ended(motion.elapsed(now)), None)
        else:
            ms = self.motion.step(now, cfg.arm)
        self._track_speed(at, meas)
        target = None
        tail: tuple = ()
        if ms.joints is not None and not self._sent_final:
            target = (ms.joints, ms.joint_velocities)
            self._sent_final = ms.finished  # the end target is sent once, then held by the generator
            if ahead and not ms.finished and self._tail_due(now, meas):
                tail = self._tail(now, cfg)
        tcp = ms.state.pose[:3]
        self._travelled += float(np.linalg.norm(tcp - self._last_tcp))
        self._last_tcp = tcp.copy()
        remaining_cmd = float(np.linalg.norm(self.target[:3] - tcp))
        total = self._travelled + remaining_cmd
        progress = 1.0 if total <= 0.0 else self._travelled / total
        dist = math.nan if meas is None else float(np.linalg.norm(self.target[:3] - meas[:3]))
        feedback = Feedback(tcp_of(meas), dist, min(max(progress, 0.0), 1.0))
        if ms.failure is not None:
            status, message = ms.failure
            return Cycle(
                None,
                feedback,
                Outcome("aborted", status, f"{message}; the arm holds its last target", tcp_of(meas)),
            )
        if not ms.finished:
            return Cycle(target, feedback, None, lead_event, tail)
        event = self._resume_if_stopped_short(at, meas, measured_q, cfg)
        outcome = None if event else self._decide(now, at, meas, cfg, resting)
        return Cycle(target, feedback, outcome, event or lead_event)

    def _tail_due(self, now: float, meas: np.ndarray | None) -> bool:
        """Whether the rest of the plan goes out whole this cycle (`plan.TAIL_LEAD_S`).

        Once the plan is within its lead of its final deceleration, and never while something may still
        have to brake it: a guarded goal only once the measured TCP has left its band downwards (the
        guard feels only inside it; a guarded goal without a band always feels, and streams to its end).
        """
        motion = self.motion
        if motion.braking or motion.failed or self._pending is not None or self._paused:
            return False
        if self.guard is not None and (not self.goal.banded or meas is None):
            return False
        if motion.t0 is None or motion.elapsed(now) < motion.plan.tail_from:
            return False
        return self.guard is None or float(np.linalg.norm(self.target[:3] - meas[:3])) < self.goal.band_end

    def _tail(self, now: float, cfg: MotionConfig) -> tuple:
        """The plan's samples after `now` on the control grid, to its end at rest (`Cycle.ahead`).

        The trajectory generator then holds the line's whole deceleration: a stream that stops after
        this (the node died) still ends at the line's end, at rest, never past it. Should a sample's IK
        fail (the limits narrowed meanwhile), the tail ends before it and the normal cycle reports the
        failure; the generator's stream timeout brakes on the line, as for any stream that stops.
        """
        period = 1.0 / cfg.control_rate_hz
        samples = []
        t = now
        for _ in range(MAX_TAIL):
            t += period
            ms = self.motion.step(t, cfg.arm)
            if ms.joints is None:
                break
            samples.append((t, ms.joints, ms.joint_velocities))
            if ms.finished:
                self._sent_final = True
                break
        if samples:
            self._tail_until = samples[-1][0]
        return tuple(samples)

    def _check_guard(
        self,
        now: float,
        at: float,
        measured_q: Any,
        meas: np.ndarray | None,
        efforts: Efforts | None,
        cfg: MotionConfig,
    ) -> None:
        """Feed the guard the sample; on a trip (or a guard blind too long) brake on the line at `now`."""
        guard = self.guard
        if guard is None or guard.tripped or self._pending is not None or self._in_tail(now):
            return
        if self.motion.failed or self.cancelling or not self._guard_armed(meas):
            return
        state = guard.update(at, measured_q, efforts if efforts is not None else Efforts(None))
        if state.tripped and meas is not None and state.force is not None:
            tcp, force = tcp_of(meas), state.force
            travelled = float(np.linalg.norm(meas[:3] - self._line_start))
            x, y, z = (1000.0 * v for v in tcp)
            message = (
                f"contact: {math.hypot(*force):.2f} N at ({x:.1f}, {y:.1f}, {z:.1f}) mm after "
                f"{travelled * 1000:.1f} mm of the line"
            )
            self._pending = Outcome("aborted", IkStatus.OK, message, tcp, Contact(tcp, force))
        elif state.blind_for > cfg.joint_state_timeout_s:
            message = (
                f"guard blind: no usable efforts in /joint_states for {state.blind_for:.2f} s "
                f"({state.problem}); braked to a stop on the line"
            )
            self._pending = Outcome("aborted", IkStatus.OK, message, tcp_of(meas))
        else:
            return
        # As hard as the unscaled limits and the joints allow: a slow goal's own limits brake softly.
        self.motion.brake(now, cfg.limits, cfg.arm, cfg.joint_rate_limits)
        self._sent_final = False

    def _guard_armed(self, meas: np.ndarray | None) -> bool:
        """Whether the guard feels now: always, or with a band while the measured TCP is inside it.

        Outside the band the detector is not fed at all, so its baseline (the held load) is taken at
        the band's speed, not while the arm decelerates into it. Without a measurement it stays as it was.
        """
        goal = self.goal
        if not goal.banded:
            return True
        if meas is not None:
            d = float(np.linalg.norm(self.target[:3] - meas[:3]))
            self._in_band = goal.band_end <= d <= goal.band_start
        return self._in_band

    def _check_lead(self, now: float, meas: np.ndarray | None, cfg: MotionConfig) -> str:
        """A guarded goal's command must not run far ahead of the arm it feels with; brake when it does.

        The plan runs on time, not on the arm: a stream the generator stopped following (its sender
        starved past `stream_timeout`) leaves the arm standing while the command goes on, and the
        generator may later jump to the newest sample. The guard feels only the measured arm, so a
        command `GUARD_LEAD_M` + its path over the last `GUARD_LEAD_S` ahead of it brakes on the line (a
        pause, not an outcome); once the arm stands still, `_resume_if_stopped_short` plans the rest from
        where it stands. Returns the line to log, or "".
        """
        if self.guard is None or meas is None or self.motion.braking or self._pending is not None:
            return ""
        if self._in_tail(now):
            return ""  # the generator holds the rest: nothing to brake
        if self.motion.failed or self.motion.t0 is None:
            return ""
        cmd = self.motion.state(now)
        lead = float(np.linalg.norm(cmd.pose[:3] - meas[:3]))
        # What the command covered in the lag window (on a line, the distance between its two ends):
        # its present speed alone under-counts while it slows down, and a decelerating arm is no stall.
        covered = float(np.linalg.norm(cmd.pose[:3] - self.motion.state(now - GUARD_LEAD_S).pose[:3]))
        bound = GUARD_LEAD_M + covered
        if lead <= bound:
            return ""
        self.motion.brake(now, cfg.limits, cfg.arm, cfg.joint_rate_limits)
        self._sent_final = False
        self._paused = (
            f"guarded move: the command ran {lead * 1000:.1f} mm ahead of the measured TCP (over "
            f"{bound * 1000:.1f} mm: the generator stopped following?); braked to wait for the arm"
        )
        return self._paused

    def _resume_if_stopped_short(
        self, measured_at: float, meas: np.ndarray | None, measured_q: Any, cfg: MotionConfig
    ) -> str:
        """After the plan: an arm that stands still off the target starts a new line from where it stands.

        The trajectory generator ends a stream that pauses longer than its `stream_timeout` (a sender
        stalled on a loaded machine, not only a dead one): it brakes along the line back to its newest
        sample and ignores the rest of that stream, the final target included. The arm then stands on the
        line, short of the target, until the settle timeout. Here the goal sees it standing still
        (`RESUME_STILL_S`) outside the tolerance and plans the rest again from the measured pose at rest,
        a new stream the generator follows, at most `MAX_RESUMES` times; a target that cannot be reached
        from there (a narrowed limit, no lease) is left to the settle timeout as before. Returns the
        line to log, or "".
        """
        if self.cancelling or meas is None or measured_q is None or self.resumes >= MAX_RESUMES:
            return ""
        if self._pending is not None:
            return ""
        d, ang = pose_error(meas, self.target)
        if d <= cfg.position_tolerance and ang <= cfg.angle_tolerance:
            return ""
        if self._still is None or float(np.max(np.abs(meas - self._still[0]))) > RESUME_STILL_M:
            self._still = (meas.copy(), measured_at)
        if measured_at - self._still[1] < RESUME_STILL_S:
            return ""
        limits = cfg.limits.scaled(self.goal.speed_scale).minimum(self.motion.plan.limits)
        try:
            plan, _ = plan_checked(
                CartesianState.at_rest(meas), self.target, limits, cfg.arm, tuple(measured_q), cfg.sampling,
                cfg.joint_rate_limits, self.goal.slow_band(cfg.limits),
            )
        except PlanningError:
            plan = None
        if plan is None:
            self.resumes = MAX_RESUMES  # not from here: the settle timeout decides
            return ""
        self.motion = LinearMotion(plan, None, measured_q, cfg.sampling)
        self._done_at, self._sent_final, self._still, self._paused = None, False, None, ""
        self.resumes += 1
        return (
            f"the arm stopped {d * 1000:.2f} mm short of {fmt_m(self.target)} and stands still (the "
            f"generator ended the stream: a pause over its stream_timeout?); resuming along a new line from "
            f"the measured TCP {fmt_m(meas)} ({self.resumes} of {MAX_RESUMES})"
        )

    def _track_speed(self, measured_at: float, meas: np.ndarray | None) -> None:
        """Track since when the measured TCP has moved slower than `SETTLED_SPEED`.

        A new measurement has a later time; the catch-up cycles of a late call share one.
        """
        if meas is None:
            return
        last = self._last_meas
        if last is not None and measured_at > last[1]:
            speed = float(np.linalg.norm(meas[:3] - last[0][:3])) / (measured_at - last[1])
            if speed > SETTLED_SPEED:
                self._slow_since = None
            elif self._slow_since is None:
                self._slow_since = last[1]
            if speed > STOPPED_SPEED:
                self._stopped_since = None
            elif self._stopped_since is None:
                self._stopped_since = last[1]
        if last is None or measured_at > last[1]:
            self._last_meas = (meas.copy(), measured_at)

    def _settled(self, measured_at: float) -> bool:
        return self._slow_since is not None and measured_at - self._slow_since >= SETTLED_S

    def _stopped(self, measured_at: float) -> bool:
        return self._stopped_since is not None and measured_at - self._stopped_since >= SETTLED_S

    def _waited(self, now: float) -> float:
        """Time the node ran since the plan finished (`_done_at`), its stalls left out (`Stalls`)."""
        return self.stalls.ran(self._done_at, now)

    def _decide(
        self, now: float, at: float, meas: np.ndarray | None, cfg: MotionConfig,
        resting: tuple[float, ...] | None = None,
    ) -> Outcome | None:
        if self._done_at is None:
            self._done_at = now
        if self._tail_until is not None and self._pending is not None:
            # Decided while the generator held the sent tail (a cancel, parameters gone infeasible): the
            # line ended at its end; the outcome stands once the arm does.
            if not self._stopped(at) and self._waited(now) <= cfg.settle_timeout_s:
                return None
            return self._pending._replace(final_tcp=tcp_of(meas))
        if self.motion.braking and (self._pending is not None or not self._paused):
            # A brake ends once the measured arm stands too (it trails the command by the stream delay and
            # the motors' lag): the next goal then starts where the generator holds the arm, not short of
            # it (a start short of the held target is a jump the generator refuses to follow).
            if not self._stopped(at) and self._waited(now) <= cfg.settle_timeout_s:
                return None
            if self._pending is not None:
                return self._pending._replace(final_tcp=tcp_of(meas))
            stop = self.motion.plan.end_pose
            return Outcome("canceled", IkStatus.OK, f"canceled; stopped at TCP {fmt_m(stop)}", tcp_of(meas))
        if self._paused and (self.resumes >= MAX_RESUMES or self._waited(now) > cfg.settle_timeout_s):
            return Outcome("aborted", IkStatus.OK, f"{self._paused}; no resume left", tcp_of(meas))
        why = "no valid joint state"
        if math.isinf(at):
            why += " (none received)"
        elif at < now:  # the node's newest valid one, gone stale (a pure caller passes none: `at` is `now`)
            why += f" (the newest valid one came {now - at:.2f} s before)"
        if meas is not None:
            d, ang = pose_error(meas, self.target)
            # Arrived, and not passing through: the generator's brake after a stream it ended can sweep
            # the arm through the target (or turn round there) on its way back to the newest sample. Or
            # the generator's command rests at the line's end: it followed the whole stream.
            settled = d <= cfg.position_tolerance and ang <= cfg.angle_tolerance and self._settled(at)
            if settled or arrived_by_command(resting, self.motion.joints, meas, self.target):
                message = f"reached {fmt_m(self.target)} ({d * 1000:.2f} mm)"
                return Outcome("succeeded", IkStatus.OK, message, tcp_of(meas))
            why = f"measured TCP {fmt_m(meas)} still {d * 1000:.2f} mm / {ang:.4f} rad off"
        if self._waited(now) > cfg.settle_timeout_s:
            return Outcome(
                "aborted",
                IkStatus.OK,
                f"timeout: trajectory finished but {why} after {cfg.settle_timeout_s:.1f} s "
                f"(tolerance {cfg.position_tolerance * 1000:.2f} mm / {cfg.angle_tolerance:.4f} rad)",
                tcp_of(meas),
            )
        return None

    def retarget(self, pose: Any, now: float, cfg: MotionConfig) -> tuple[bool, IkStatus | None, str]:
        """Swap the target while moving, if the new path from the current state is feasible.

        Returns:
            (accepted, status, message); status is None when the retarget was not even tried (the goal
            is stopping), else Ok or the IK status of the first infeasible point of the new path.
        """
        if self.motion.braking or self.motion.failed:
            return False, None, "the active goal is stopping; retarget refused"
        if self.goal.banded:
            return False, None, "a goal with a slow band keeps its target; retarget refused"
        tail = self._tail_until if self._in_tail(now) else None
        try:
            limits = cfg.limits.scaled(self.goal.speed_scale)
            # In the sent tail the new plan starts where it ends, at rest, after its last sample.
            at = now if tail is None else tail
            check = self.motion.retarget(pose, at, limits, cfg.arm, cfg.joint_rate_limits)
        except PlanningError as exc:
            return False, None, str(exc)
        if not check.ok:
            return (
                False,
                check.status,
                f"retarget refused, motion continues to the old target: {check.message}",
            )
        if tail is not None:
            self.motion.t0 = tail  # its first sample one period after the tail's last (at its start)
        self.target = np.asarray(pose, dtype=float)
        self._done_at, self._sent_final, self._still = None, False, None
        return True, IkStatus.OK, f"retargeted to {fmt_m(self.target)}"

    def rest(self, now: float, arm: ArmParams) -> RestStart | None:
        """Where the command rests once this goal succeeded (its plan's end); None after a brake."""
        if self.motion.failed or self.motion.braking or self.cancelling:
            return None
        return RestStart(self.motion.state(now).pose.copy(), self.motion.joints)

    def cancel(self, now: float, cfg: MotionConfig, measured_q: Any = None) -> None:
        """Brake on the current line; the goal ends CANCELED once the motion and the arm stand.

        In the sent tail the line is already decelerating as hard as its plan allows, and the generator
        holds the rest: it ends at its end, and the goal then ends CANCELED.
        """
        if self._in_tail(now):
            self._tail_cancel = True
            end = self.motion.plan.end_pose
            self._pending = Outcome(
                "canceled",
                IkStatus.OK,
                f"canceled in the line's final deceleration (sent ahead); stopped at its end {fmt_m(end)}",
                (math.nan,) * 3,
            )
            return
        self.motion.brake(now)
        self._sent_final, self._paused = False, ""

    def lease_taken(self, now: float, holder: str, measured_q: Any, cfg: MotionConfig) -> Outcome:
        """The outcome that ends this goal at once: sent without a token, and `holder` now holds the lease.

        Nothing it sends moves the arm any more: the generator brakes a stream it no longer gets along
        its path, and finishes a final deceleration it already took (the sent tail).
        """
        how = (
            "it finishes the line's final deceleration, taken before" if self._in_tail(now)
            else "it brakes the arm along the line"
        )
        return lease_taken_outcome(self.goal, holder, how, measured_q, cfg)

    def on_params(self, now: float, cfg: MotionConfig) -> str | None:
        """Re-check the rest of the path with new arm params; brake and abort when it became infeasible."""
        if self.motion.braking or self.motion.failed:
            return None
        check = self.motion.remaining_check(now, cfg.arm)
        if check.ok:
            return None
        if self._in_tail(now):
            how = "its final deceleration was sent ahead: it ends at its end"
        else:
            self.motion.brake(now)
            self._sent_final = False
            how = "braked to a stop"
        message = f"arm parameters changed, the rest of the path is infeasible; {how}: {check.message}"
        self._pending = Outcome("aborted", check.status, message, (math.nan,) * 3)
        return message

