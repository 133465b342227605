"""A joint-space MoveCartesian goal in motion (`JointGoalRun`): one joint target, done on arrival.

`goal.start_goal` solves the goal's IK and builds the run; `step` runs once per control cycle. What
every goal shares (outcomes, arrival, stalls): `goal_common`.

Decisions documented here:
- Joint goals succeed when the measured pose (FK of the measured joints) is within `position_tolerance`
  / `angle_tolerance` of the IK answer's, with the elbow on its branch (both branches reach the same
  pose): the test by which the next goal starts from that end (`RestStart`), so a joint goal has
  succeeded exactly when its successor may start where it left the command (the generator's command
  rests there a few tens of milliseconds before the measured joints come within a milliradian). They
  abort after `joint_path_timeout_s`; an arm that stands still away from the end (the generator dropped
  the target: a measurement it took for a pushed arm) gets the target again, at most `MAX_RESUMES` times
  (`JointGoalRun._resend_if_standing`).
- A joint goal is cancelled by re-targeting the measured joints (the trajectory generator decelerates
  within its joint limits).

Pure Python, no rclpy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from salamander_control.cartesian.config import PATH_JOINT, CartesianGoal, MotionConfig
from salamander_control.cartesian.contact import Efforts
from salamander_control.cartesian.goal_common import (
    MAX_RESUMES,
    RESUME_STILL_M,
    RESUME_STILL_S,
    Cycle,
    Feedback,
    Outcome,
    RestStart,
    Stalls,
    at_end,
    fmt_m,
    lease_taken_outcome,
    measured_pose,
    tcp_of,
)
from salamander_control.kinematics import ArmParams, IkStatus, solve_ik_pitched
from salamander_control.kinematics.ik import branch_of

ELBOW_FOLD_TOL = 0.02
"""rad: a joint goal's measured elbow angle q1 - q2 this close to the goal's counts as on its branch
(`JointGoalRun._arrived`: near the fold, where the branches meet)."""


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
        generator's command `resting` there with the arm trailing it (`arrived_by_command`; `goal_common`
        says why). `measured_at`: as for `LinearGoalRun.step` (when the measurement was received; None:
        `now`). `efforts` are unused (a joint goal is never guarded: `config.parse_goal`); so is `ahead`
        (a joint goal is one target).
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
        feedback = Feedback(tcp_of(meas), dist, progress)
        if self._pending is not None:
            return Cycle(target, feedback, self._pending._replace(final_tcp=tcp_of(meas)))
        outcome = None
        if self._arrived(meas, cfg, measured_q, resting):
            outcome = Outcome(
                "succeeded", IkStatus.OK, f"reached {fmt_m(self.target)} in joint space", tcp_of(meas)
            )
        if outcome is None and self.stalls.ran(self.t0, now) > cfg.joint_path_timeout_s:
            outcome = Outcome(
                "aborted",
                IkStatus.OK,
                f"timeout: the measured pose not within {cfg.position_tolerance * 1000:.1f} mm / "
                f"{cfg.angle_tolerance} rad of the goal after {cfg.joint_path_timeout_s:.1f} s",
                tcp_of(meas),
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
        if meas is None or self._end is None or not at_end(meas, self._end, self.q_goal, cfg, resting):
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
        return lease_taken_outcome(self.goal, holder, how, measured_q, cfg)

    def on_params(self, now: float, cfg: MotionConfig) -> str | None:
        """The trajectory generator clamps joint targets itself; nothing to re-check here."""
        return None

