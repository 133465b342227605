"""What both kinds of MoveCartesian goal share: what a cycle reports, how a goal ends, where it starts.

`Cycle` (a control cycle's target, feedback and outcome), `Outcome` and `Contact` (how a goal ended),
`RestStart` (where a goal that succeeded left the command: the next goal's start), `Stalls` (time the
node did not run, which no timeout counts) and the one test of "the arm is at a goal's end" (`at_end`).
The goals themselves: `linear_goal.LinearGoalRun`, `joint_goal.JointGoalRun`; `goal.start_goal` starts
either.

- The generator's command says it sooner: a goal has also arrived (a line once its plan has finished)
  the cycle the trajectory generator's command (/arm/joint_command, the node's `resting`) rests at the
  goal's end joints, with the measured TCP trailing it by no more than `TRAIL_M` (the motors' lag: when
  a joint path's command comes to rest the measured TCP is 1.5-3 mm behind and comes within 1 mm 30-60
  ms later); the next goal then starts at that end (`RestStart`) on the same test, so "arrived" and "the
  successor may start from its end" stay one test. An arm that does not follow its command is never
  taken for arrived: it trails by more, and the generator re-anchors a command the measurement leaves
  behind.
- Every failure decided before a joint target was sent (an early fail) has a message beginning with
  `EARLY_FAIL` (the tree retries IK variants only after those: docs/interfaces.md).

Pure Python, no rclpy.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from salamander_control.cartesian.config import CartesianGoal, MotionConfig
from salamander_control.kinematics import ArmParams, IkStatus, forward_kinematics

RESUME_STILL_S = 0.2
"""A finished linear goal's arm standing this long (within `RESUME_STILL_M`) off its target has stopped."""
RESUME_STILL_M = 2e-5
"""m (and rad): how little the measured pose may move and still count as standing."""
MAX_RESUMES = 3
"""How often a goal resumes from where the arm stopped short (`LinearGoalRun`, `JointGoalRun`)."""
GUARD_LEAD_M = 0.003
"""m a guarded goal's command may run ahead of the measured TCP, plus what it covered in
`linear_goal.GUARD_LEAD_S`."""
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


def pose_error(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(TCP distance, largest tool angle difference) between two poses."""
    return float(np.linalg.norm(a[:3] - b[:3])), max(
        abs(a[3] - b[3]), abs(math.remainder(a[4] - b[4], 2 * math.pi))
    )


def _within_tolerance(a: np.ndarray, b: np.ndarray, cfg: MotionConfig) -> bool:
    """Whether two poses are within the goal tolerances (`position_tolerance`, `angle_tolerance`)."""
    d, ang = pose_error(a, b)
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
    d, ang = pose_error(meas, pose)
    return d <= TRAIL_M and ang <= TRAIL_RAD


def at_end(
    meas: np.ndarray, pose: np.ndarray, joints: Any, cfg: MotionConfig, resting: tuple[float, ...] | None
) -> bool:
    """Whether the arm is at a goal's end (`pose`, `joints`).

    The measured pose within the tolerances of it, or the generator's command `resting` there with the
    arm trailing it (`arrived_by_command`): the one test of a joint goal's arrival and of a successor
    starting at a goal's end (`RestStart`).
    """
    return _within_tolerance(meas, pose, cfg) or arrived_by_command(resting, joints, meas, pose)


def tcp_of(pose: np.ndarray | None) -> tuple[float, float, float]:
    """The TCP of a pose as a tuple, NaNs without one (an `Outcome`'s or a `Feedback`'s)."""
    return (math.nan,) * 3 if pose is None else (float(pose[0]), float(pose[1]), float(pose[2]))


def lease_taken_outcome(
    goal: CartesianGoal, holder: str, how: str, measured_q: Any, cfg: MotionConfig
) -> Outcome:
    """The outcome of a goal sent without a lease token once `holder` holds the lease (`*.lease_taken`).

    `how`: what the generator does with the arm then.
    """
    reason = (
        f"the arm lease was taken by {holder!r} while this goal of {goal.client_id!r}, sent without a "
        "lease token, ran: the generator refuses its targets from now on"
    )
    return Outcome("aborted", IkStatus.OK, f"{reason}; {how}", tcp_of(measured_pose(measured_q, cfg.arm)))


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



def fmt_m(p: Any) -> str:
    """A position (m) for a log line: "(0.4600, 0.1800, -0.0650) m"."""
    return f"({p[0]:.4f}, {p[1]:.4f}, {p[2]:.4f}) m"
