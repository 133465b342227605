"""Guarded moves: the external force on the tool, estimated from the measured joint efforts, and the trip.

A MoveCartesian goal with `guard_force` > 0 stops at the first contact. `ContactDetector` is fed the
newest measured joint sample (positions and efforts, motor order) every control cycle and decides:

- The estimate: the external force F on the TCP (N, base_link) is the least-squares solution of
  J(q)^T F = tau - tau_expected(q), with J = `kinematics.fk.position_jacobian` (3x5): five joint
  torques, three unknowns, so what no TCP force explains (a torque about the pad's own axis, the
  noise) stays out of F.
- The load at the goal's start is not a contact: a held can hangs on the pad. Its force F0 =
  lstsq(J(q0)^T, tau0) is taken to stay constant in base_link (a weight does), the rest of tau0,
  r0 = tau0 - J(q0)^T F0 (what the arm's own links and friction ask of the motors), constant in joint
  space: tau_expected(q) = r0 + J(q)^T F0. With one baseline sample that is tau0 + J(q)^T F0 -
  J(q0)^T F0; F0 and r0 are averaged over the first `baseline_samples` usable samples of the goal
  (the averaging divides the baseline's noise by sqrt(n), which every later estimate carries).
  Not modelled: how the arm's own gravity torques change with the pose and the inertia torques of the
  goal's accelerations (guarded moves are short and slow; docs/design/guarded_moves.md).
- The trip: |F| above `guard_force` for `debounce` samples in a row. The magnitude, not the component
  against the motion: the can meeting a divider's side on a vertical descent pushes sideways, and a
  sideways push is what tears a can off the pad. An unusable sample in between neither counts nor
  resets the run (a glitch during a real contact must not delay the stop).
- A sample is counted once: the control cycles of a late call share one measurement (same `at`).
- Unusable samples (no efforts, NaN/inf or beyond `MAX_ABS_EFFORT`, an effort array of the wrong
  length, no measurement at all) are never a trip; `blind_for` says for how long there has been no
  usable one, and the goal fails once that exceeds the node's `joint_state_timeout_s` (`cartesian.goal`).

Pure Python + numpy, no rclpy. Design and numbers: docs/design/guarded_moves.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from salamander_control.kinematics import JOINT_NAMES, ArmParams
from salamander_control.kinematics.fk import position_jacobian

DEFAULT_DEBOUNCE = 2
"""Samples in a row above the threshold that trip: one noisy sample never does (test_contact.py)."""
DEFAULT_BASELINE_SAMPLES = 5
"""Usable samples at the goal's start averaged into the baseline (50 ms at 100 Hz)."""
MAX_ABS_EFFORT = 1e4
"""N m; a larger effort is garbage (the arm's motors give a few N m), unusable like NaN: arithmetic on
values near the float range would turn the estimate into inf/NaN, which compares as no contact."""


class Efforts(NamedTuple):
    """The efforts of one joint state in motor order, or why there are none.

    `values` is None when unusable: `problem` is "" for an empty effort field (the driver publishes
    none: a guarded goal fails early), else the reason (NaN, wrong length, a joint missing).
    """

    values: tuple[float, ...] | None
    problem: str = ""

    @property
    def missing(self) -> bool:
        """The message carried no efforts at all."""
        return self.values is None and not self.problem


NO_SAMPLE = Efforts(None, "no valid joint state")


def read_efforts(
    names: Sequence[str], efforts: Sequence[float], joints: Sequence[str] = JOINT_NAMES
) -> Efforts:
    """The efforts of `joints` from a joint state's parallel `names`/`efforts` arrays (see `Efforts`)."""
    if len(efforts) == 0:
        return Efforts(None)
    if len(efforts) != len(names):
        return Efforts(None, f"{len(efforts)} efforts for {len(names)} names")
    by_name = dict(zip(names, efforts, strict=True))
    missing = [n for n in joints if n not in by_name]
    if missing:
        return Efforts(None, f"no effort for {', '.join(missing)}")
    try:
        values = tuple(float(by_name[n]) for n in joints)
    except (TypeError, ValueError):
        return Efforts(None, "efforts are not all numbers")
    unreported = [n for n, v in zip(joints, values, strict=True) if math.isnan(v)]
    if unreported:  # ros2_control's joint_state_broadcaster: NaN for a joint without an effort interface
        return Efforts(None, f"no effort reported (NaN) for {', '.join(unreported)}")
    bad = [f"{n}={v}" for n, v in zip(joints, values, strict=True) if not math.isfinite(v)]
    if bad:
        return Efforts(None, f"efforts not finite for {', '.join(bad)}")
    huge = [f"{n}={v:g}" for n, v in zip(joints, values, strict=True) if abs(v) > MAX_ABS_EFFORT]
    if huge:
        return Efforts(None, f"efforts beyond +-{MAX_ABS_EFFORT:g} N m for {', '.join(huge)}")
    return Efforts(values)


def estimate_force(q: Any, tau: Any, arm: ArmParams) -> np.ndarray:
    """The TCP force F (N, base_link) that best explains the joint torques `tau`: lstsq of J(q)^T F = tau."""
    jt = position_jacobian(q, arm).T
    return np.linalg.lstsq(jt, np.asarray(tau, dtype=float), rcond=None)[0]


class GuardState(NamedTuple):
    """What the detector knows after a sample.

    Attributes:
        tripped: the guard has tripped (it stays tripped).
        force: the newest estimate of the external force (N, base_link), None before the baseline.
        blind_for: s since the last usable sample (0 after a usable one).
        problem: why the newest sample was unusable ("" when it was usable).
    """

    tripped: bool
    force: tuple[float, float, float] | None
    blind_for: float
    problem: str


class ContactDetector:
    """Trips when the estimated external force on the tool exceeds `guard_force` (see the module doc).

    Args:
        guard_force: N, > 0.
        arm: the arm model (the Jacobian's).
        start: clock time (s) of the goal's start: `blind_for` counts from it until a usable sample.
        debounce: samples in a row above `guard_force` that trip (>= 1).
        baseline_samples: usable samples averaged into the baseline (>= 1).
    """

    def __init__(
        self,
        guard_force: float,
        arm: ArmParams,
        start: float,
        debounce: int = DEFAULT_DEBOUNCE,
        baseline_samples: int = DEFAULT_BASELINE_SAMPLES,
    ) -> None:
        if not (math.isfinite(guard_force) and guard_force > 0.0):
            raise ValueError(f"guard_force must be a positive finite number, got {guard_force}")
        if debounce < 1 or baseline_samples < 1:
            raise ValueError(f"debounce, baseline_samples must be >= 1, got {debounce}, {baseline_samples}")
        self.guard_force = float(guard_force)
        self.arm = arm
        self.debounce = int(debounce)
        self.baseline_samples = int(baseline_samples)
        self._f0_sum = np.zeros(3)
        self._r0_sum = np.zeros(5)
        self._n0 = 0
        self._above = 0
        self._last_at: float | None = None
        self._usable_at = start
        self._state = GuardState(False, None, 0.0, "")

    @property
    def tripped(self) -> bool:
        """Whether the guard has tripped."""
        return self._state.tripped

    @property
    def baseline_force(self) -> np.ndarray | None:
        """F0, the tool load at the goal's start (N, base_link), once the baseline is complete."""
        return self._f0_sum / self._n0 if self._n0 >= self.baseline_samples else None

    def update(self, at: float, q: Any, efforts: Efforts) -> GuardState:
        """Take the sample measured at `at` (positions `q`, None: no measurement) and say what is known.

        A sample with the `at` of the previous one was already counted; it changes nothing but the
        blind time.
        """
        state = self._state
        if state.tripped:
            return state
        if self._last_at is not None and at <= self._last_at:
            return state._replace(blind_for=max(at - self._usable_at, 0.0))
        self._last_at = at
        usable = q is not None and efforts.values is not None
        if not usable:
            problem = (efforts.problem or "no efforts") if q is not None else NO_SAMPLE.problem
            self._state = state._replace(blind_for=max(at - self._usable_at, 0.0), problem=problem)
            return self._state
        self._usable_at = at
        jt = position_jacobian(q, self.arm).T
        tau = np.asarray(efforts.values, dtype=float)
        if self._n0 < self.baseline_samples:
            f0 = np.linalg.lstsq(jt, tau, rcond=None)[0]
            self._f0_sum += f0
            self._r0_sum += tau - jt @ f0
            self._n0 += 1
            self._state = GuardState(False, None, 0.0, "")
            return self._state
        f0, r0 = self._f0_sum / self._n0, self._r0_sum / self._n0
        force = np.linalg.lstsq(jt, tau - r0 - jt @ f0, rcond=None)[0]
        self._above = self._above + 1 if float(np.linalg.norm(force)) > self.guard_force else 0
        tripped = self._above >= self.debounce
        self._state = GuardState(tripped, (float(force[0]), float(force[1]), float(force[2])), 0.0, "")
        return self._state
