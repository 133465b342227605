"""py_trees conditions that watch the arm's limits from /joint_states.

The decisions are the pure checks of `salamander_behavior.limits`; this module only feeds them the
newest joint state, puts a `Hysteresis` on their slack and turns the verdict into a status.
`salamander_behavior.behaviors.guard.guarded` puts them in front of a motion.

Conventions (those of py_trees_ros, followed by hand since it is not installed here):

- The ROS node arrives through ``setup(node=...)``, never ``__init__``; there a condition subscribes
  /joint_states through `shared_joint_state_cache`, so all conditions of one node share ONE subscription
  and one `JointStateCache`. A cache passed to the constructor is used as is (tests, or a tree that
  feeds its own cache) and setup then needs no node.
- The subscription callback only validates and caches. ``update()`` decides from the cache, never
  blocks, and sets ``feedback_message`` on every path.
- Margins and thresholds are constructor arguments.

Unknown state: before setup, before the first joint state, when the newest one is older than
``max_age``, or when it lacks a joint, a condition cannot judge. It then returns FAILURE ("not known to
be clear"), not RUNNING: a guard must not let a motion start or go on blind, and a condition reporting
RUNNING would hold the tree instead of letting a fallback act. A caller that would rather wait for data
wraps it in ``py_trees.decorators.FailureIsRunning``. `JointNearLimit`, which succeeds when a joint IS
near, returns SUCCESS when unknown, so that its documented use under an ``Inverter`` fails safe too.
A hysteresis latched before a data gap is still latched after it.

Guarding a motion (details in `salamander_behavior.behaviors.guard`)::

    move = MoveTo("rise", target, MotionPath.LINEAR, "approach_speed")  # behaviors/motion.py
    root = guarded(move, settings=GuardSettings(), arm=lambda: arm_snapshot)
    tree = py_trees.trees.BehaviourTree(root)
    tree.setup(node=node, timeout=5.0)     # the conditions subscribe /joint_states here, once per node
    node.create_timer(0.1, tree.tick)      # the first tick a condition fails stops the move
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

import py_trees
from py_trees.common import Status

from salamander_behavior.behaviors.base import JOINT_STATE_FAULT
from salamander_behavior.limits.cache import JointStateCache, shared_joint_state_cache
from salamander_behavior.limits.checks import (
    CheckResult,
    check_coupled,
    check_positions,
    check_singularity,
    check_velocity_effort,
    require_nonnegative,
    require_positive,
)
from salamander_behavior.limits.combined import check_combined
from salamander_behavior.limits.hysteresis import Hysteresis
from salamander_behavior.limits.sample import JointSample
from salamander_behavior.limits.urdf_limits import JointLimit, load_urdf_limits, with_positions_of
from salamander_control import names
from salamander_control.kinematics import JOINT_NAMES, ArmParams

ArmSource = ArmParams | Callable[[], ArmParams]
"""A fixed ArmParams, or a callable returning the current snapshot (alpha/beta change at run time)."""


class JointStateBehaviour(py_trees.behaviour.Behaviour):
    """A leaf that judges the newest joint state of the node's shared cache (py_trees_ros wiring).

    ``setup(node=node)`` subscribes the one cache of the node (or the constructor's `cache` is read);
    `newest` gives the newest sample young enough to judge, or why there is none. Never blocks.

    Args:
        name: behaviour name.
        max_age: a joint state older than this (s) is stale: it cannot be judged.
        cache: a cache to read instead of subscribing in setup (then setup needs no node).
        topic: the joint state topic subscribed in setup (relative: resolved in the node's namespace).
    """

    refuse_malformed_newest = False
    """True: a malformed newest message makes the state unjudgeable (not just the last valid one kept)."""

    def __init__(
        self,
        name: str,
        *,
        max_age: float = 0.5,
        cache: JointStateCache | None = None,
        topic: str = names.JOINT_STATES,
    ) -> None:
        super().__init__(name)
        self.max_age = require_positive("max_age", max_age)
        self.cache = cache
        self.topic = topic
        self._topic_shown = topic  # the name messages give: the resolved one once set up with a node
        self.node: Any = None
        self.feedback_message = "not ticked yet"

    def setup(self, **kwargs: Any) -> None:
        """Subscribe the node's shared joint state cache (py_trees_ros style: ``setup(node=node)``).

        Raises:
            KeyError: no ``node`` in kwargs and no cache given to the constructor.
        """
        if self.cache is not None:
            self.node = kwargs.get("node")
            return
        try:
            self.node = kwargs["node"]
        except KeyError as exc:
            raise KeyError(
                f"didn't find 'node' in setup's kwargs [{self.qualified_name}][{type(self).__name__}]"
            ) from exc
        self.cache = shared_joint_state_cache(self.node, self.topic)
        self._topic_shown = self.node.resolve_topic_name(self.topic)  # absolute and remapped

    def newest(self) -> tuple[JointSample | None, str]:
        """(the newest sample young enough to judge, "") or (None, why it cannot be judged)."""
        cache = self.cache
        if cache is None:
            return None, "not set up: call setup(node=...) or pass a cache"
        state = cache.latest()
        if self.refuse_malformed_newest and cache.newest_malformed:
            return None, f"invalid joint state on {self._topic_shown}: {cache.last_refusal}"
        if state is None:
            return None, f"no joint state received on {self._topic_shown} yet"
        age = cache.now() - state.received
        if age > self.max_age:
            return None, f"joint state stale: {age:.2f} s old (max_age {self.max_age:.2f} s)"
        return state.sample, ""


class LimitCondition(JointStateBehaviour):
    """Base of the limit conditions: cache, staleness, lookahead, hysteresis, status and feedback.

    Subclasses implement `evaluate` (one pure check). The check's slack goes through
    ``Hysteresis(enter=0, exit=release)``: violated below 0, clear again at ``slack >= release``.

    Args:
        name: behaviour name.
        release: hysteresis band in the check's slack units (0 = none).
        max_age: a joint state older than this (s) is stale: the condition cannot judge.
        lookahead: also judge the state extrapolated this far (s) at the measured velocities.
        cache: a cache to read instead of subscribing in setup (then setup needs no node).
        topic: the joint state topic subscribed in setup (relative: resolved in the node's namespace).
    """

    near_semantics = False
    """True for conditions that SUCCEED when the limit is near (and when unknown)."""
    uses_lookahead = True

    def __init__(
        self,
        name: str,
        *,
        release: float,
        max_age: float = 0.5,
        lookahead: float = 0.0,
        cache: JointStateCache | None = None,
        topic: str = names.JOINT_STATES,
    ) -> None:
        super().__init__(name, max_age=max_age, cache=cache, topic=topic)
        self.release = require_nonnegative("release", release)
        self.lookahead = require_nonnegative("lookahead", lookahead)
        self.hysteresis = Hysteresis(0.0, self.release)
        self.result: CheckResult | None = None
        """The last check result (None until one was judged)."""
        self.stack_fault = ""
        """Why the last update could not judge the arm (no, an invalid or a stale joint state), "" when
        it could: a fault of the stack, not of a can (`flow.CanOutcome` stops the run on it instead of
        skipping the can)."""

    def evaluate(self, sample: JointSample) -> CheckResult:
        """Run this condition's check on one joint state (subclasses).

        Raises:
            JointStateError: the sample cannot be judged (e.g. a joint missing).
        """
        raise NotImplementedError

    def update(self) -> Status:
        """Judge the newest joint state; never blocks."""
        sample, why = self.newest()
        self.stack_fault = JOINT_STATE_FAULT if sample is None else ""
        if sample is None:
            return self._unknown(why)
        try:
            result = self.evaluate(sample)
            if self.uses_lookahead and self.lookahead > 0.0 and sample.velocities:
                ahead = self.evaluate(sample.extrapolated(self.lookahead))
                if ahead.slack < result.slack:
                    result = replace(ahead, message=f"in {self.lookahead:.2f} s: {ahead.message}")
        except ValueError as exc:  # JointStateError, or an ArmParams provider that failed validation
            return self._unknown(str(exc))
        self.result = result
        violated = self.hysteresis.update(result.slack)
        if not violated:
            verdict = "not near" if self.near_semantics else "clear"
        else:
            verdict = "near" if self.near_semantics else "VIOLATED"
            if result.slack >= 0.0:
                verdict += f" (latched until {self.release:g} past the threshold)"
        self.feedback_message = f"{verdict}: {result.message}"
        return Status.SUCCESS if violated == self.near_semantics else Status.FAILURE

    def _unknown(self, reason: str) -> Status:
        if self.near_semantics:
            self.feedback_message = f"counted as near: {reason}"
            return Status.SUCCESS
        self.feedback_message = f"not clear: {reason}"
        return Status.FAILURE


_PROBE = JointSample.from_arrays(JOINT_NAMES, (0.0, 0.0, 0.5, 0.0, 0.0))
"""A harmless posture on which constructors run their check once, so bad parameters fail at build time."""


def _mid_sample(limits: Sequence[JointLimit]) -> JointSample:
    mid = [(lim.lower + lim.upper) / 2 for lim in limits]
    return JointSample.from_arrays([lim.name for lim in limits], mid)


def _arm_of(arm: ArmSource) -> ArmParams:
    return arm if isinstance(arm, ArmParams) else arm()


class _PositionsOf:
    """The URDF's limits with the position bounds of the arm model as `arm` gives it now (None: as given).

    Rebuilt only when the snapshot changes (the nodes swap in a new frozen `ArmParams` on a parameter
    change), so a tick costs one identity check.
    """

    def __init__(self, limits: Sequence[JointLimit], arm: ArmSource | None) -> None:
        self.limits, self.arm = tuple(limits), arm
        self._seen: ArmParams | None = None
        self._now = self.limits

    def __call__(self) -> tuple[JointLimit, ...]:
        if self.arm is None:
            return self.limits
        arm = _arm_of(self.arm)
        if arm is not self._seen:
            self._seen, self._now = arm, with_positions_of(self.limits, arm)
        return self._now


class JointsWithinLimits(LimitCondition):
    """SUCCESS while every joint is at least `margin` (rad) inside both its limits.

    Args:
        name: behaviour name.
        limits: per-joint limits; None loads the repository's URDF.
        arm: the arm model (or a callable returning its current snapshot) whose per-joint position
            bounds replace the five arm joints' in `limits` (`with_positions_of`); None keeps `limits`.
        margin: rad.
        release: hysteresis band, rad.
        **kwargs: max_age, lookahead, cache, topic (see `LimitCondition`).
    """

    def __init__(
        self,
        name: str = "JointsWithinLimits",
        *,
        limits: Sequence[JointLimit] | None = None,
        arm: ArmSource | None = None,
        margin: float = 0.02,
        release: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, release=release, **kwargs)
        self.limits = tuple(limits) if limits is not None else load_urdf_limits()
        self._limits_now = _PositionsOf(self.limits, arm)
        self.margin = require_nonnegative("margin", margin)

    def evaluate(self, sample: JointSample) -> CheckResult:
        """`check_positions` with this margin."""
        return check_positions(self._limits_now(), sample, self.margin)


class JointNearLimit(LimitCondition):
    """SUCCESS while a watched joint is closer than `margin` to a limit (or unknown): use under an Inverter.

    The feedback names the joint, the side and the distance.

    Args:
        name: behaviour name.
        limits: per-joint limits; None loads the repository's URDF.
        margin: rad.
        joints: the joints to watch (default: all limited joints).
        release: hysteresis band, rad: "near" holds until the joint is ``margin + release`` away.
        **kwargs: max_age, lookahead, cache, topic (see `LimitCondition`).

    Raises:
        ValueError: `joints` names a joint without limits.
    """

    near_semantics = True

    def __init__(
        self,
        name: str = "JointNearLimit",
        *,
        limits: Sequence[JointLimit] | None = None,
        margin: float = 0.02,
        joints: Collection[str] | None = None,
        release: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, release=release, **kwargs)
        self.limits = tuple(limits) if limits is not None else load_urdf_limits()
        self.margin = require_nonnegative("margin", margin)
        known = {lim.name for lim in self.limits}
        if joints is not None and not set(joints) <= known:
            raise ValueError(f"{name}: no limits for {', '.join(sorted(set(joints) - known))}")
        self.joints = None if joints is None else frozenset(joints)

    def evaluate(self, sample: JointSample) -> CheckResult:
        """`check_positions` over the watched joints."""
        return check_positions(self.limits, sample, self.margin, self.joints)


class VelocityEffortWithinLimits(LimitCondition):
    """SUCCESS while |velocity| and |effort| stay within fractions of the URDF limits.

    Joints or fields the joint state does not carry are skipped; with nothing to check it succeeds and
    says so. No lookahead (a velocity is not extrapolated).

    Args:
        name: behaviour name.
        limits: per-joint limits; None loads the repository's URDF.
        velocity_fraction: allowed fraction of each velocity limit.
        effort_fraction: allowed fraction of each effort limit.
        release: hysteresis band, in fractions of the limit.
        **kwargs: max_age, cache, topic (see `LimitCondition`).
    """

    uses_lookahead = False

    def __init__(
        self,
        name: str = "VelocityEffortWithinLimits",
        *,
        limits: Sequence[JointLimit] | None = None,
        velocity_fraction: float = 1.0,
        effort_fraction: float = 1.0,
        release: float = 0.05,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, release=release, **kwargs)
        self.limits = tuple(limits) if limits is not None else load_urdf_limits()
        self.velocity_fraction = require_positive("velocity_fraction", velocity_fraction)
        self.effort_fraction = require_positive("effort_fraction", effort_fraction)

    def evaluate(self, sample: JointSample) -> CheckResult:
        """`check_velocity_effort` with these fractions."""
        return check_velocity_effort(self.limits, sample, self.velocity_fraction, self.effort_fraction)


class CoupledLimitsClear(LimitCondition):
    """SUCCESS while ``q2 - q1 <= alpha_max - margin`` and ``q1 - q2 <= beta_max - margin``.

    Note that the rest posture is only 0.025 rad inside alpha_max (1.375 of 1.40 rad): a guard that must
    let a motion start from rest needs ``margin + release`` below that.

    Args:
        name: behaviour name.
        arm: ArmParams, or a callable returning the current snapshot (read once per tick).
        margin: rad.
        release: hysteresis band, rad.
        **kwargs: max_age, lookahead, cache, topic (see `LimitCondition`).
    """

    def __init__(
        self,
        name: str = "CoupledLimitsClear",
        *,
        arm: ArmSource = ArmParams(),  # noqa: B008 (frozen, immutable)
        margin: float = 0.01,
        release: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, release=release, **kwargs)
        self.arm = arm
        self.margin = require_nonnegative("margin", margin)

    def evaluate(self, sample: JointSample) -> CheckResult:
        """`check_coupled` with the current alpha/beta."""
        return check_coupled(sample, _arm_of(self.arm), self.margin)


class AwayFromSingularity(LimitCondition):
    """SUCCESS while manipulability >= `min_manipulability` and condition number <= `max_condition`.

    With the default limits the feasible (q1, q2) polygon holds no singular posture (its worst point,
    the vertex q1 = -1.35, q2 = 0.05, has manipulability 0.00101 and condition number 11.8; rest has
    0.0016 and 10.3), so the defaults only fire when alpha/beta are widened towards |q1 - q2| = pi/2
    (links stretched or folded) or the geometry changes.

    Args:
        name: behaviour name.
        arm: ArmParams (geometry), or a callable returning the current snapshot.
        min_manipulability: m^3, or None to skip.
        max_condition: >= 1, or None to skip.
        release: hysteresis band, relative (0.1 = 10 % past the threshold).
        **kwargs: max_age, lookahead, cache, topic (see `LimitCondition`).
    """

    def __init__(
        self,
        name: str = "AwayFromSingularity",
        *,
        arm: ArmSource = ArmParams(),  # noqa: B008 (frozen, immutable)
        min_manipulability: float | None = 0.0008,
        max_condition: float | None = 15.0,
        release: float = 0.1,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, release=release, **kwargs)
        self.arm = arm
        check_singularity(_PROBE, ArmParams(), min_manipulability, max_condition)  # validate now
        self.min_manipulability = min_manipulability
        self.max_condition = max_condition

    def evaluate(self, sample: JointSample) -> CheckResult:
        """`check_singularity` with these thresholds."""
        return check_singularity(sample, _arm_of(self.arm), self.min_manipulability, self.max_condition)


class CombinedLimitIndexOk(LimitCondition):
    """SUCCESS while the combined limit index (see `limits.combined`) is at least `min_index`.

    Args:
        name: behaviour name.
        limits: per-joint limits; None loads the repository's URDF.
        arm: ArmParams (or a callable returning it) for the coupled factors and the five arm joints'
            position bounds (`with_positions_of`), or None to leave the coupled factors out and keep
            `limits`.
        min_index: in [0, 1].
        comfort: comfort distance of the per-joint factors, rad.
        coupled_comfort: comfort distance of the coupled factors, rad (None: `comfort`).
        release: hysteresis band, index units.
        **kwargs: max_age, lookahead, cache, topic (see `LimitCondition`).
    """

    def __init__(
        self,
        name: str = "CombinedLimitIndexOk",
        *,
        limits: Sequence[JointLimit] | None = None,
        arm: ArmSource | None = ArmParams(),  # noqa: B008 (frozen, immutable)
        min_index: float = 0.05,
        comfort: float = 0.15,
        coupled_comfort: float | None = None,
        release: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, release=release, **kwargs)
        self.limits = tuple(limits) if limits is not None else load_urdf_limits()
        self.arm = arm
        self._limits_now = _PositionsOf(self.limits, arm)
        self.min_index, self.comfort, self.coupled_comfort = min_index, comfort, coupled_comfort
        check_combined(self.limits, _mid_sample(self.limits), None, min_index, comfort, coupled_comfort)

    def evaluate(self, sample: JointSample) -> CheckResult:
        """`check_combined` with these parameters."""
        arm = None if self.arm is None else _arm_of(self.arm)
        limits = self._limits_now()
        return check_combined(limits, sample, arm, self.min_index, self.comfort, self.coupled_comfort)


def not_near_limit(name: str = "NotNearLimit", **kwargs: Any) -> py_trees.decorators.Inverter:
    """``Inverter(JointNearLimit(...))``: SUCCESS only while no watched joint is known to be near."""
    return py_trees.decorators.Inverter(name, JointNearLimit(f"{name}.near", **kwargs))
