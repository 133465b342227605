"""MoveCartesian goals from start to result: early fail, control cycles, retarget, cancel, completion.

The Cartesian motion node is a thin shell around this module (and `cartesian.config`, which validates
goals before acceptance). Starting a goal checks the whole path (an infeasible one ends at once with
an `Outcome` and no joint target); then `step` runs once per control cycle, returning the joint target
to send, the feedback and, eventually, the outcome.

Decisions documented here:
- A new goal preempts the active one only if its own path check passes; the active goal then ends
  ABORTED ("preempted") and the new one continues from the current commanded state without stopping.
  A new goal that fails its check leaves the active one running.
- Linear goals succeed when the plan has finished and the measured TCP (FK of /joint_states) is within
  `position_tolerance` (and the tool attitude within `angle_tolerance`) of the target and has moved
  slower than `SETTLED_SPEED` for `SETTLED_S` (not passing through); after `settle_timeout_s` without
  that they abort (time the node itself did not run, a stall, does not count: `Stalls`).
  An arm that stands still short of the target after the plan (the generator ended a stream that paused
  too long) resumes along a new line from where it stands, at most `MAX_RESUMES`
  times (`LinearGoalRun._resume_if_stopped_short`). Joint goals succeed when the measured pose (FK of the
  measured joints) is within `position_tolerance` / `angle_tolerance` of the IK answer's, with the elbow
  on its branch (both branches reach the same pose), the test by which the next goal starts from that
  end (`RestStart`): a joint goal has succeeded exactly when its
  successor may start where it left the command (the generator's command rests there a few tens of
  milliseconds before the measured joints come within a milliradian). They abort after
  `joint_path_timeout_s`; an arm that stands still away from the end (the generator dropped the target:
  a measurement it took for a pushed arm) gets the target again, at most `MAX_RESUMES` times
  (`JointGoalRun._resend_if_standing`).
- The generator's command says it sooner: a goal has also arrived (a line once its plan has finished)
  the cycle the trajectory generator's command (/arm/joint_command, the node's `resting`) rests at the
  goal's end joints, with the measured TCP trailing it by no more than `TRAIL_M` (the motors' lag: when
  a joint path's command comes to rest the measured TCP is 1.5-3 mm behind and comes within 1 mm 30-60
  ms later); the next goal then starts at that end (`RestStart`) on the same test, so "arrived" and "the
  successor may start from its end" stay one test. An arm that does not follow its command is never
  taken for arrived: it trails by more, and the generator re-anchors a command the measurement leaves
  behind.
- A goal that does not preempt starts at rest. It starts where the previous goal left the command
  (`RestStart`: the end of a goal that succeeded, its pose and joints) when the measured arm is within
  `position_tolerance` / `angle_tolerance` of it, else at the measured pose. A goal succeeds with the
  measured arm up to `position_tolerance` (1 mm) short, still settling; a line planned from there
  started with the command pulled back to it (the generator blends its command onto the new stream's
  start) and ran slanted: a vertical guarded probe after a 5.7 mm sideways move met a divider 0.1 mm
  off the probe's XY and tore the can off (docs/design/guarded_moves.md).
- Cancel brakes a linear motion on its own line with the plan's limits; the goal ends CANCELED once the
  commanded motion and the measured arm stand. A joint goal is cancelled by re-targeting the measured
  joints (the trajectory generator decelerates within its joint limits).
- A line's tail: once the plan is within `plan.TAIL_LEAD_S` of its final deceleration, the rest of its
  samples go out at once (`Cycle.ahead`, with `step(ahead=True)`: the node), so the generator ends the
  line at its end, at rest, even if this node dies; that is what keeps a stopped stream short of the
  line's end while every line brakes with all of its acceleration (docs/design/cartesian_plan.md).
  Nothing can brake those samples afterwards: a cancel then lets the line finish and ends CANCELED at its
  end, a retarget or a preempting line starts from its end after its last sample (`sent_until`), and a
  guarded goal sends its tail only once the measured TCP has left its band.
- A live change of the arm parameters re-checks the rest of a running linear path; if it became
  infeasible the motion brakes at once and the goal aborts with the status of the first bad point.
- The goal's elbow `branch` ("" = nearest the current joints, "up", "down"): a joint goal solves the
  end pose on that branch only (its failure status is that branch's). A linear goal cannot change
  branch: the elbow branch flips only through the stretched/folded posture |q1 - q2| = pi/2, where a
  straight TCP line would need unbounded joint speed, and the path check already refuses such a jump.
  So a linear goal runs on the branch the arm is in: naming that branch changes nothing (the path's
  IK is seeded from, and stays on, it), naming the other one fails early with status Ok (not an IK
  answer) and a message saying to get there with a joint goal first.
- Every failure decided before a joint target was sent (an early fail) has a message beginning with
  `EARLY_FAIL` (the tree retries IK variants only after those: docs/interfaces.md).
- A guarded goal (`guard_force` > 0, linear only) feeds every new measured sample to a
  `contact.ContactDetector`. When it trips, the motion brakes on its line as a cancel does (never past the
  line's end) and the goal ends, once the commanded motion and the measured arm stand, ABORTED with status
  Ok and a `Contact` (the measured TCP and the force estimate at the trip; message ``contact: <|F|> N at (x,
  y, z) mm after <d> mm of the line``). Without a usable effort sample for `joint_state_timeout_s` it brakes
  the same way and aborts ("guard blind"). A guarded goal whose first measured sample carries no efforts at
  all fails early: never silently unguarded. Its command never leads the measured TCP by more than
  `GUARD_LEAD_M` + what the command covered in the last `GUARD_LEAD_S` (the guard feels only the measured
  arm): past that it brakes and
  resumes from where the arm stands (`_check_lead`). Design: docs/design/guarded_moves.md.
- A goal with a band (`CartesianGoal.banded`) starts from rest (it never preempts a moving linear goal:
  early fail) and crosses the band at its speed without stopping; a guarded one feels for contact only
  while the measured TCP is inside the band (the rest of the line is fast, and an arm's inertia torques
  there are no contact). It cannot be retargeted (the band belongs to its target).

Pure Python, no rclpy.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from salamander_control.cartesian.config import PATH_JOINT, PATH_LINEAR, CartesianGoal, MotionConfig
from salamander_control.cartesian.contact import ContactDetector, Efforts
from salamander_control.cartesian.motion import LinearMotion, MotionStep, plan_checked
from salamander_control.cartesian.plan import CartesianState, PlanningError
from salamander_control.kinematics import ArmParams, IkStatus, forward_kinematics, solve_ik_pitched
from salamander_control.kinematics.ik import branch_of

RESUME_STILL_S = 0.2
"""A finished linear goal's arm standing this long (within `RESUME_STILL_M`) off its target has stopped."""
RESUME_STILL_M = 2e-5
"""m (and rad): how little the measured pose may move and still count as standing."""
SETTLED_SPEED = 0.02
"""m/s: a linear goal succeeds only once the measured TCP has moved slower than this for `SETTLED_S`."""
SETTLED_S = 0.06
"""s of measurements: a brake that turns round near the target is that slow for only 20-40 ms."""
STOPPED_SPEED = 0.002
"""m/s: a braked goal (cancel, contact) ends once the measured TCP has moved slower than this for
`SETTLED_S` (the arm trails the command by the stream delay and the motors' lag)."""
ELBOW_FOLD_TOL = 0.02
"""rad: a joint goal's measured elbow angle q1 - q2 this close to the goal's counts as on its branch
(`JointGoalRun._arrived`: near the fold, where the branches meet)."""
MAX_RESUMES = 3
"""How often a goal resumes from where the arm stopped short (`LinearGoalRun`, `JointGoalRun`)."""
MAX_TAIL = 80
"""Most samples one tail holds (0.8 s at 100 Hz; the node's publisher and the generator's subscription
keep more, `names.JOINT_TARGET_DEPTH`): a longer final deceleration goes out as far as this at once, the
rest as the next tail."""
GUARD_LEAD_M = 0.003
"""m a guarded goal's command may run ahead of the measured TCP, plus what it covered in `GUARD_LEAD_S`."""
GUARD_LEAD_S = 0.15
"""s: the normal lead is what the command covered in the generator's stream delay (30 ms) and the
motors' lag (50 ms in simulation), plus the sample's age: at a steady speed that speed times them; while
the command slows down (into a band) more than its present speed times them."""

START_LEAD_S = 0.03
"""s: a linear goal from rest samples its plan on a grid that began this long before the goal (at most:
never at or before the previous goal's last sample). The trajectory generator follows a stream its
`stream_delay_s` (0.03 s) behind the newest sample; the first timer cycle then sends the start at rest
(which anchors the stream, stamped that far back) and the plan's first `START_LEAD_S`, so the command
starts at once instead of one delay later (`stream_start`; docs/design/stream_following.md, "Anchored
start"). A generator with a longer delay starts the command that much less early; one with a shorter
delay follows with this much look-ahead: both stay on the plan."""

COMMAND_AT_TOL = 1e-6
"""rad: the generator's resting command is at a goal's end joints this close to them (Ruckig ends exactly
at its target, a followed stream at its last sample)."""
TRAIL_M = GUARD_LEAD_M
"""m: how far the measured TCP may trail a command resting at a goal's end for the goal to count as
arrived (`arrived_by_command`): the motors' lag, and no more than a guarded goal starting there allows
its command to lead the arm (`GUARD_LEAD_M`)."""
TRAIL_RAD = 0.03
"""rad: the same for the tool angles (the wrist's lag at the end of a joint path)."""

EARLY_FAIL = "early fail, no joint target sent for this goal"
"""The start of every early-fail message (nothing was sent: the arm did not move for this goal)."""


class Contact(NamedTuple):
    """Where a guarded goal met resistance: the measured TCP (m) and the estimated force (N), base_link."""

    tcp: tuple[float, float, float]
    force: tuple[float, float, float]


class Outcome(NamedTuple):
    """How a goal ended: result is "succeeded", "aborted" or "canceled"; `contact` when a guard tripped."""

    result: str
    status: IkStatus
    message: str
    final_tcp: tuple[float, float, float]
    contact: Contact | None = None


class Feedback(NamedTuple):
    """Measured TCP, its distance to the target (m) and progress 0..1.

    Progress of a linear goal is travelled / (travelled + remaining) along the commanded TCP path, so it
    rises smoothly and stays meaningful across retargets (it drops only if a retarget moves the target
    away); of a joint goal, 1 - remaining / initial distance of the measured TCP.
    """

    tcp: tuple[float, float, float]
    distance_remaining: float
    progress: float


class Cycle(NamedTuple):
    """What one control cycle produced: a joint target to send (or None), feedback, outcome (or None).

    `ahead`: the line's final deceleration, sent whole after `target` (`LinearGoalRun`, "tail"): each
    (clock time it describes, joints, joint velocities), one control period apart, the last at rest.
    """

    target: tuple[tuple[float, ...], tuple[float, ...] | None] | None
    feedback: Feedback | None
    outcome: Outcome | None
    event: str = ""  # something the node should log (a resumed motion)
    ahead: tuple[tuple[float, tuple[float, ...], tuple[float, ...]], ...] = ()


def measured_pose(q: Any, arm: ArmParams) -> np.ndarray | None:
    """FK of measured joints as a pose (5,), or None without a measurement."""
    if q is None:
        return None
    fk = forward_kinematics(q, arm)
    return np.array([*fk.tcp, fk.tool_pitch, fk.tool_yaw])


def _pose_error(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(TCP distance, largest tool angle difference) between two poses."""
    return float(np.linalg.norm(a[:3] - b[:3])), max(
        abs(a[3] - b[3]), abs(math.remainder(a[4] - b[4], 2 * math.pi))
    )


def _within_tolerance(a: np.ndarray, b: np.ndarray, cfg: MotionConfig) -> bool:
    d, ang = _pose_error(a, b)
    return d <= cfg.position_tolerance and ang <= cfg.angle_tolerance


def arrived_by_command(
    resting: tuple[float, ...] | None, joints: Any, meas: np.ndarray | None, pose: np.ndarray
) -> bool:
    """Whether the generator's command rests at `joints` (the end of a goal at `pose`) and the arm follows.

    `resting`: the joints of the generator's newest command when it rests (every velocity zero) and is
    fresh, else None (the node's `_resting_command`). The measured pose `meas` must trail `pose` by no
    more than `TRAIL_M` / `TRAIL_RAD` (the module docstring says why).
    """
    if resting is None or meas is None:
        return False
    if max(abs(a - float(b)) for a, b in zip(resting, joints, strict=True)) > COMMAND_AT_TOL:
        return False
    d, ang = _pose_error(meas, pose)
    return d <= TRAIL_M and ang <= TRAIL_RAD


def _at_end(
    meas: np.ndarray, pose: np.ndarray, joints: Any, cfg: MotionConfig, resting: tuple[float, ...] | None
) -> bool:
    """Whether the arm is at a goal's end (`pose`, `joints`).

    The measured pose within the tolerances of it, or the generator's command `resting` there with the
    arm trailing it (`arrived_by_command`): the one test of a joint goal's arrival and of a successor
    starting at a goal's end (`RestStart`).
    """
    return _within_tolerance(meas, pose, cfg) or arrived_by_command(resting, joints, meas, pose)


def _tcp(pose: np.ndarray | None) -> tuple[float, float, float]:
    return (math.nan,) * 3 if pose is None else (float(pose[0]), float(pose[1]), float(pose[2]))


def _lease_taken(goal: CartesianGoal, holder: str, how: str, measured_q: Any, cfg: MotionConfig) -> Outcome:
    """The outcome of a goal sent without a lease token once `holder` holds the lease (`*.lease_taken`).

    `how`: what the generator does with the arm then.
    """
    reason = (
        f"the arm lease was taken by {holder!r} while this goal of {goal.client_id!r}, sent without a "
        "lease token, ran: the generator refuses its targets from now on"
    )
    return Outcome("aborted", IkStatus.OK, f"{reason}; {how}", _tcp(measured_pose(measured_q, cfg.arm)))


class Stalls:
    """The times the node did not run (a stopped or starved process): not the arm's time.

    They do not count toward a goal's timeouts (`ran`): the node saw no measurement in them, so the arm had
    no chance to be seen arriving or standing short (a 4.5 s SIGSTOP over a line's end aborted its goal in
    the cycle the node ran again, where it now resumes: test_trajectory_streaming_ros).
    """

    def __init__(self) -> None:
        self._spans: list[tuple[float, float]] = []

    def excuse(self, start: float, end: float) -> None:
        """The node did not run from `start` to `end`.

        Calls come in time order; what an earlier call excused counts once (a long stall is caught up over
        several timer calls, each of which excuses from its own start to now).
        """
        if self._spans:
            start = max(start, self._spans[-1][1])
        if end > start:
            self._spans.append((start, end))

    def ran(self, since: float, now: float) -> float:
        """Time from `since` to `now` that the node ran (the excused stalls left out)."""
        lost = sum(max(0.0, min(b, now) - max(a, since)) for a, b in self._spans)
        return now - since - lost


class RestStart(NamedTuple):
    """Where a goal that succeeded left the command, at rest: the next goal's start (`start_goal`)."""

    pose: np.ndarray
    """(5,): x, y, z, tool pitch, tool yaw."""
    joints: tuple[float, ...]
    """The commanded joints there (the next goal's IK seed)."""


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
        feedback = Feedback(_tcp(meas), dist, min(max(progress, 0.0), 1.0))
        if ms.failure is not None:
            status, message = ms.failure
            return Cycle(
                None,
                feedback,
                Outcome("aborted", status, f"{message}; the arm holds its last target", _tcp(meas)),
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
            tcp, force = _tcp(meas), state.force
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
            self._pending = Outcome("aborted", IkStatus.OK, message, _tcp(meas))
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
        d, ang = _pose_error(meas, self.target)
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
            return self._pending._replace(final_tcp=_tcp(meas))
        if self.motion.braking and (self._pending is not None or not self._paused):
            # A brake ends once the measured arm stands too (it trails the command by the stream delay and
            # the motors' lag): the next goal then starts where the generator holds the arm, not short of
            # it (a start short of the held target is a jump the generator refuses to follow).
            if not self._stopped(at) and self._waited(now) <= cfg.settle_timeout_s:
                return None
            if self._pending is not None:
                return self._pending._replace(final_tcp=_tcp(meas))
            stop = self.motion.plan.end_pose
            return Outcome("canceled", IkStatus.OK, f"canceled; stopped at TCP {fmt_m(stop)}", _tcp(meas))
        if self._paused and (self.resumes >= MAX_RESUMES or self._waited(now) > cfg.settle_timeout_s):
            return Outcome("aborted", IkStatus.OK, f"{self._paused}; no resume left", _tcp(meas))
        why = "no valid joint state"
        if math.isinf(at):
            why += " (none received)"
        elif at < now:  # the node's newest valid one, gone stale (a pure caller passes none: `at` is `now`)
            why += f" (the newest valid one came {now - at:.2f} s before)"
        if meas is not None:
            d, ang = _pose_error(meas, self.target)
            # Arrived, and not passing through: the generator's brake after a stream it ended can sweep
            # the arm through the target (or turn round there) on its way back to the newest sample. Or
            # the generator's command rests at the line's end: it followed the whole stream.
            settled = d <= cfg.position_tolerance and ang <= cfg.angle_tolerance and self._settled(at)
            if settled or arrived_by_command(resting, self.motion.joints, meas, self.target):
                return Outcome(
                    "succeeded", IkStatus.OK, f"reached {fmt_m(self.target)} ({d * 1000:.2f} mm)", _tcp(meas)
                )
            why = f"measured TCP {fmt_m(meas)} still {d * 1000:.2f} mm / {ang:.4f} rad off"
        if self._waited(now) > cfg.settle_timeout_s:
            return Outcome(
                "aborted",
                IkStatus.OK,
                f"timeout: trajectory finished but {why} after {cfg.settle_timeout_s:.1f} s "
                f"(tolerance {cfg.position_tolerance * 1000:.2f} mm / {cfg.angle_tolerance:.4f} rad)",
                _tcp(meas),
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
        return _lease_taken(self.goal, holder, how, measured_q, cfg)

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


class JointGoalRun:
    """A "joint" goal: one joint target (the IK of the goal); done when the measured joints arrive."""

    kind = PATH_JOINT

    sent_until = -math.inf
    """A joint goal sends nothing ahead (`LinearGoalRun.sent_until`)."""

    def __init__(
        self, goal: CartesianGoal, q_goal: tuple[float, ...], start: np.ndarray, now: float, arm: ArmParams
    ) -> None:
        self.goal = goal
        self.target = np.asarray(goal.pose, dtype=float)
        self.q_goal = q_goal
        self._end = measured_pose(q_goal, arm)
        self.t0 = now
        self._initial = max(float(np.linalg.norm(self.target[:3] - start[:3])), 1e-9)
        self._send: tuple[float, ...] | None = q_goal
        self._pending: Outcome | None = None
        self.cancelling = False
        self.resumes = 0
        self._still: tuple[tuple[float, ...], float] | None = None  # (measured joints, since)
        self.stalls = Stalls()  # not counted toward the path timeout

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
        """Send the target (again if the arm stands still away from it); report; succeed on arrival.

        Arrival: the measured pose within `position_tolerance` / `angle_tolerance` of the end's, or the
        generator's command `resting` there with the arm trailing it (`arrived_by_command`; the module
        docstring says why). `measured_at`: as for
        `LinearGoalRun.step` (when the measurement was received; None: `now`). `efforts` are unused (a
        joint goal is never guarded: `config.parse_goal`); so is `ahead` (a joint goal is one target).
        """
        event = ""
        meas = measured_pose(measured_q, cfg.arm)
        if self._pending is None and meas is not None:
            at = now if measured_at is None else measured_at
            event = self._resend_if_standing(at, measured_q, meas, cfg)
        target = None if self._send is None else (self._send, None)
        self._send = None
        dist = math.nan if meas is None else float(np.linalg.norm(self.target[:3] - meas[:3]))
        progress = 0.0 if meas is None else min(max(1.0 - dist / self._initial, 0.0), 1.0)
        feedback = Feedback(_tcp(meas), dist, progress)
        if self._pending is not None:
            return Cycle(target, feedback, self._pending._replace(final_tcp=_tcp(meas)))
        outcome = None
        if self._arrived(meas, cfg, measured_q, resting):
            outcome = Outcome(
                "succeeded", IkStatus.OK, f"reached {fmt_m(self.target)} in joint space", _tcp(meas)
            )
        if outcome is None and self.stalls.ran(self.t0, now) > cfg.joint_path_timeout_s:
            outcome = Outcome(
                "aborted",
                IkStatus.OK,
                f"timeout: the measured pose not within {cfg.position_tolerance * 1000:.1f} mm / "
                f"{cfg.angle_tolerance} rad of the goal after {cfg.joint_path_timeout_s:.1f} s",
                _tcp(meas),
            )
        return Cycle(target, feedback, outcome, event)

    def _arrived(
        self, meas: np.ndarray | None, cfg: MotionConfig, measured_q: Any,
        resting: tuple[float, ...] | None = None,
    ) -> bool:
        """Whether the arm is at the end, the elbow on the end's branch.

        At the end: the measured pose within the tolerances of the end's, or the command `resting` there
        with the arm trailing it (`arrived_by_command`).

        The two branches reach the same pose: a goal to the other branch than the arm's, at the pose
        where it stands, had "arrived" before the arm moved. Near the fold (|q1 - q2| = pi/2) both
        branches' joints are close and the sign of cos(q1 - q2) flickers, so an elbow within
        `ELBOW_FOLD_TOL` of the goal's counts as on its branch.
        """
        if meas is None or self._end is None or not _at_end(meas, self._end, self.q_goal, cfg, resting):
            return False
        q1, q2, g1, g2 = float(measured_q[1]), float(measured_q[2]), self.q_goal[1], self.q_goal[2]
        return branch_of(q1, q2) is branch_of(g1, g2) or abs((q1 - q2) - (g1 - g2)) <= ELBOW_FOLD_TOL

    def _resend_if_standing(
        self, measured_at: float, measured_q: Any, meas: np.ndarray, cfg: MotionConfig
    ) -> str:
        """Send the target again when the measured joints stand still (`RESUME_STILL_S`) away from it.

        `meas`: their pose (FK, as `step` computed it once for the cycle).

        The trajectory generator drops a goal when the measurement disagrees with its commands (it takes
        that for a pushed arm or a restarted driver: docs/design/trajectory_generator.md) and the arm
        then holds; a joint goal has no stream the generator could resume, so without this it waited
        `joint_path_timeout_s` (30 s, seen on a loaded machine). Sending the same target again is
        harmless: the generator plans from where it holds the arm. At most `MAX_RESUMES` times; returns
        the line to log, or "".
        """
        q = tuple(float(v) for v in measured_q)
        if self._arrived(meas, cfg, q) or self.resumes >= MAX_RESUMES:
            return ""
        still = self._still
        moved = math.inf if still is None else max(abs(a - b) for a, b in zip(q, still[0], strict=True))
        if moved > RESUME_STILL_M:
            self._still = (q, measured_at)
        if measured_at - self._still[1] < RESUME_STILL_S:
            return ""
        self._send, self._still = self.q_goal, None
        self.resumes += 1
        off = float(np.linalg.norm(meas[:3] - self._end[:3]))
        return (
            f"the arm stands still {off * 1000:.1f} mm from the joint goal for {fmt_m(self.target)} (the "
            f"generator dropped it? a measurement it took for a pushed arm); sending it again "
            f"({self.resumes} of {MAX_RESUMES})"
        )

    def retarget(self, pose: Any, now: float, cfg: MotionConfig) -> tuple[bool, IkStatus | None, str]:
        """Re-solve the IK for the new pose and send it as the new joint target (returns as above)."""
        if self.cancelling:
            return False, None, "the active goal is stopping; retarget refused"
        res = solve_ik_pitched(pose[:3], pose[3], pose[4], cfg.arm, seed=self.q_goal)
        if not res.ok:
            return False, res.status, f"retarget refused ({res.status.reason}: {res.status.message})"
        self.target, self.q_goal, self._send, self.t0 = np.asarray(pose, dtype=float), res.q, res.q, now
        self._end, self._still = measured_pose(res.q, cfg.arm), None
        return True, IkStatus.OK, f"retargeted to {fmt_m(self.target)}"

    def rest(self, now: float, arm: ArmParams) -> RestStart | None:
        """Where the command rests once this goal succeeded (the generator's goal: the IK answer)."""
        if self.cancelling:
            return None
        return None if self._end is None else RestStart(self._end, self.q_goal)

    def cancel(self, now: float, cfg: MotionConfig, measured_q: Any = None) -> None:
        """Hold the measured joints; the goal ends CANCELED on the next cycle."""
        self.cancelling = True
        if measured_q is not None:
            self._send = tuple(measured_q)
        self._pending = Outcome(
            "canceled", IkStatus.OK, "canceled; holding the measured joints", (math.nan,) * 3
        )

    def lease_taken(self, now: float, holder: str, measured_q: Any, cfg: MotionConfig) -> Outcome:
        """As `LinearGoalRun.lease_taken`, for a joint goal.

        The generator took this goal's one target while the lease was free and goes on to it until the
        holder sends another.
        """
        how = f"the arm goes on to this goal's target, which it took before, until {holder!r} sends another"
        return _lease_taken(self.goal, holder, how, measured_q, cfg)

    def on_params(self, now: float, cfg: MotionConfig) -> str | None:
        """The trajectory generator clamps joint targets itself; nothing to re-check here."""
        return None


GoalRun = LinearGoalRun | JointGoalRun


def stream_start(goal: CartesianGoal, now: float, last_sample: float, period: float) -> float:
    """The clock time a goal that does not preempt counts its control cycles from (the first: a period on).

    A joint goal starts `now`; a linear goal, which starts from rest, `START_LEAD_S` back, but after the
    last sample any goal sent (`last_sample`, clock time: the generator drops a sample stamped before the
    one it took last). A preempting goal continues the running goal's grid instead (the node's affair).
    """
    if goal.path != PATH_LINEAR:
        return now
    return max(now - START_LEAD_S, last_sample + period)


def start_goal(
    goal: CartesianGoal,
    cfg: MotionConfig,
    now: float,
    measured_q: Any,
    active: GoalRun | None,
    efforts: Efforts | None = None,
    rest: RestStart | None = None,
    resting: tuple[float, ...] | None = None,
) -> tuple[GoalRun | None, Outcome | None]:
    """Check and start `goal`; (run, None) when it may move, (None, outcome) when it fails at once.

    A linear goal continues from the active linear motion's commanded state (position, velocity,
    acceleration) so a preemption does not jerk the arm; otherwise it starts at rest: at `rest` (where the
    previous goal that succeeded left the command) when the measured arm is within the tolerances of it
    or the generator's command `resting` there with the arm trailing it (`arrived_by_command`), else at
    the measured pose (the module docstring says why). `efforts` are those of the measured sample: a
    guarded goal fails early when it carries none.
    """
    meas = measured_pose(measured_q, cfg.arm)
    if goal.guarded and (efforts is None or efforts.missing):
        msg = f"{EARLY_FAIL}: no efforts in /joint_states: a guarded move cannot run"
        return None, Outcome("aborted", IkStatus.OK, msg, _tcp(meas))
    moving = isinstance(active, LinearGoalRun) and not active.motion.failed
    if moving and goal.banded:
        msg = (
            f"{EARLY_FAIL}: a goal with a slow band starts from rest; the active linear goal is still "
            f"moving (wait for its result, or cancel it)"
        )
        return None, Outcome("aborted", IkStatus.OK, msg, _tcp(meas))
    if moving:
        start, seed = active.motion.state(now), active.motion.joints
    elif rest is not None and meas is not None and _at_end(meas, rest.pose, rest.joints, cfg, resting):
        start, seed = CartesianState.at_rest(rest.pose), rest.joints
    else:
        start, seed = CartesianState.at_rest(meas), tuple(measured_q)
    if goal.path == PATH_JOINT:
        p = goal.pose
        res = solve_ik_pitched(p[:3], p[3], p[4], cfg.arm, seed=seed, branch=goal.branch or None)
        if not res.ok:
            on = f" on the {goal.branch} branch" if goal.branch else ""
            msg = (
                f"{EARLY_FAIL}: {res.status.reason}: goal {fmt_m(p)} cannot be solved{on} "
                f"({res.status.message})"
            )
            return None, Outcome("aborted", res.status, msg, _tcp(meas))
        return JointGoalRun(goal, res.q, start.pose, now, cfg.arm), None
    current = branch_of(seed[1], seed[2]).value
    if goal.branch and goal.branch != current:
        msg = (
            f"{EARLY_FAIL}: branch {goal.branch!r} refused for a linear path: the arm is on the "
            f"{current!r} branch and a straight TCP line cannot change the elbow branch (it would pass "
            f"the stretched/folded posture); reach the {goal.branch!r} branch with a joint goal first"
        )
        return None, Outcome("aborted", IkStatus.OK, msg, _tcp(meas))
    limits = cfg.limits.scaled(goal.speed_scale)
    try:
        plan, check = plan_checked(
            start, goal.pose, limits, cfg.arm, seed, cfg.sampling, cfg.joint_rate_limits,
            goal.slow_band(cfg.limits),
        )
    except PlanningError as exc:
        return None, Outcome("aborted", IkStatus.OK, f"{EARLY_FAIL}: {exc}", _tcp(meas))
    if plan is None:
        return None, Outcome(
            "aborted",
            check.status,
            f"{EARLY_FAIL}: {check.message}",
            _tcp(meas),
        )
    # From rest the plan starts at the first control cycle (its first target is the start, at rest);
    # a preemption continues the running motion from `now`.
    guard = None
    if goal.guarded:
        guard = ContactDetector(
            goal.guard_force, cfg.arm, now, cfg.guard_debounce_samples, cfg.guard_baseline_samples
        )
    motion = LinearMotion(plan, now if moving else None, seed, cfg.sampling)
    return LinearGoalRun(goal, motion, guard), None


def fmt_m(p: Any) -> str:
    """A position (m) for a log line: "(0.4600, 0.1800, -0.0650) m"."""
    return f"({p[0]:.4f}, {p[1]:.4f}, {p[2]:.4f}) m"
