"""Ports of BehaviorTree.CPP conditions: the original design's limit checks, with their original interfaces.

For people porting trees from the original BehaviorTree.CPP design. Each maps one to one:

- ``<AreJointsWithinLimits joint_limits="n,min,max;..." margin="0.1"/>`` (a ConditionNode)
  -> ``AreJointsWithinLimits(joint_limits="n,min,max;...", margin=0.1)``
- ``<IsJointNearLimit joint_name="j" min_limit="lo" max_limit="hi" warning_margin="0.15"/>``
  -> ``IsJointNearLimit(joint_name="j", min_limit=lo, max_limit=hi, warning_margin=0.15)``
- ``<ReactiveSequence name="SafeTrajectoryExecution"><Inverter><IsJointNearLimit .../></Inverter>
  <motion/></ReactiveSequence>``
  -> ``safe_trajectory_execution(motion, joint_name="j", min_limit=lo, max_limit=hi)``, i.e.
  ``Sequence(memory=False)[Inverter(IsJointNearLimit), motion]``

Semantics (the original's, made stricter where it was unsafe):

- `AreJointsWithinLimits`: SUCCESS only when every listed joint lies in ``[min + margin, max - margin]``
  (bounds included). FAILURE before any joint state, when the newest message heard is empty or invalid
  (no joints, lengths that disagree, NaN/inf), when it is older than ``max_age`` (an addition: the
  original judged whatever message it last had), and, safer than the original, when a listed joint is
  missing from the message.
- `IsJointNearLimit`: SUCCESS when ``pos <= min_limit + warning_margin`` or
  ``pos >= max_limit - warning_margin``; FAILURE when the joint is safely inside, and, as in the original,
  when the joint cannot be judged (missing, no / invalid / stale message). Under an Inverter that last
  rule would let a motion run blind, so ``unknown_is_near=True`` (what `safe_trajectory_execution` uses
  by default) counts an unknown joint as near instead.
- ``ReactiveSequence`` is py_trees' ``Sequence(memory=False)``: every tick re-checks the condition before
  the motion, and the tick it fails the running motion is stopped (its ``terminate(INVALID)``).

The ``joint_limits`` string is parsed strictly at construction: ``name,min,max`` entries separated by
``;`` (whitespace around fields and one trailing ``;`` allowed); a wrong field count, a non-number,
NaN/inf, a duplicate joint or an empty interval (``min >= max - 2 * margin``) raises ValueError naming
the entry, so a typo in a ported tree fails when the tree is built, not on the robot.

py_trees_ros conventions, as in `salamander_behavior.behaviors.conditions`: the node arrives in
``setup(node=...)`` (a cache given to the constructor needs none), the /joint_states subscription is the
node's one shared cache (`limits.cache.shared_joint_state_cache`, whose callback only validates and
stores under a lock), ``update()`` never blocks and sets ``feedback_message`` on every path. The richer
conditions (hysteresis, lookahead, coupled limits, singularity) stay in `behaviors.conditions` and
`behaviors.guard`; the pick-and-place tree uses those.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import py_trees
from py_trees.common import Status

from salamander_behavior.behaviors.conditions import JointStateBehaviour
from salamander_behavior.limits.cache import JointStateCache
from salamander_control import names


@dataclass(frozen=True)
class JointBounds:
    """One entry of a ``joint_limits`` string: the joint and its limits (rad)."""

    name: str
    min: float
    max: float


def _number(text: str, what: str, entry: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"joint_limits entry {entry!r}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"joint_limits entry {entry!r}: {what} must be finite, got {text!r}")
    return value


def _check_margin(name: str, margin: float) -> float:
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not math.isfinite(margin):
        raise ValueError(f"{name} must be a finite number, got {margin!r}")
    if margin < 0.0:
        raise ValueError(f"{name} must be >= 0, got {margin}")
    return float(margin)


def parse_joint_limits(text: str, margin: float = 0.1) -> tuple[JointBounds, ...]:
    """Parse BehaviorTree.CPP's ``"name,min,max;name,min,max"`` port strictly.

    Raises:
        ValueError: not a string, no entry, an empty entry (other than one trailing ``;``), a wrong
            field count, an empty name, a non-number or NaN/inf, a duplicate joint, or an entry whose
            interval ``[min + margin, max - margin]`` is empty (``min >= max - 2 * margin``).
    """
    if not isinstance(text, str):
        raise ValueError(f"joint_limits must be a string 'name,min,max;...', got {text!r}")
    margin = _check_margin("margin", margin)
    entries = text.strip().split(";")
    if len(entries) > 1 and entries[-1].strip() == "":
        entries.pop()  # one trailing ';'
    if entries == [""]:
        raise ValueError("joint_limits names no joint (expected 'name,min,max;...')")
    out: list[JointBounds] = []
    seen: set[str] = set()
    for entry in entries:
        fields = [f.strip() for f in entry.split(",")]
        if len(fields) != 3:
            raise ValueError(
                f"joint_limits entry {entry.strip()!r}: expected 3 fields 'name,min,max', got {len(fields)}"
            )
        name, lo_text, hi_text = fields
        if not name or any(c.isspace() for c in name):
            raise ValueError(f"joint_limits entry {entry.strip()!r}: the joint name must be one word")
        lo = _number(lo_text, "min", entry.strip())
        hi = _number(hi_text, "max", entry.strip())
        if lo >= hi - 2.0 * margin:
            raise ValueError(
                f"joint_limits entry {entry.strip()!r}: min {lo:g} >= max {hi:g} - 2 * margin {margin:g}: "
                "no position would be within limits"
            )
        if name in seen:
            raise ValueError(f"joint_limits names {name!r} twice")
        seen.add(name)
        out.append(JointBounds(name, lo, hi))
    return tuple(out)


class _PortCondition(JointStateBehaviour):
    """The ports judge a malformed newest message as unknown, as the original did."""

    refuse_malformed_newest = True


class AreJointsWithinLimits(_PortCondition):
    """BehaviorTree.CPP's AreJointsWithinLimits: SUCCESS only when every listed joint is inside its margin.

    Args:
        name: behaviour name.
        joint_limits: ``"name,min,max;name,min,max"`` (rad), parsed strictly (see `parse_joint_limits`).
        margin: rad; each joint must lie in ``[min + margin, max - margin]``.
        max_age: a joint state older than this (s) cannot be judged.
        cache: a cache to read instead of subscribing in setup.
        topic: joint state topic subscribed in setup.

    Raises:
        ValueError: a bad ``joint_limits`` string or margin (at construction).
    """

    def __init__(
        self,
        name: str = "AreJointsWithinLimits",
        *,
        joint_limits: str,
        margin: float = 0.1,
        max_age: float = 0.5,
        cache: JointStateCache | None = None,
        topic: str = names.JOINT_STATES,
    ) -> None:
        super().__init__(name, max_age=max_age, cache=cache, topic=topic)
        self.margin = _check_margin("margin", margin)
        self.bounds = parse_joint_limits(joint_limits, self.margin)

    def update(self) -> Status:
        """SUCCESS when every listed joint is within [min + margin, max - margin]; FAILURE otherwise."""
        sample, why = self.newest()
        if sample is None:
            self.feedback_message = f"not within limits: {why}"
            return Status.FAILURE
        m = self.margin
        for b in self.bounds:
            pos = sample.positions.get(b.name)
            if pos is None:
                self.feedback_message = f"not within limits: joint state lacks {b.name}"
                return Status.FAILURE
            if not b.min + m <= pos <= b.max - m:
                self.feedback_message = (
                    f"not within limits: {b.name} = {pos:.3f} rad outside "
                    f"[{b.min + m:.3f}, {b.max - m:.3f}] (limits [{b.min:g}, {b.max:g}], margin {m:g})"
                )
                return Status.FAILURE
        self.feedback_message = f"within limits: {len(self.bounds)} joint(s) inside their margin {m:g} rad"
        return Status.SUCCESS


class IsJointNearLimit(_PortCondition):
    """BehaviorTree.CPP's IsJointNearLimit: SUCCESS when the joint is within `warning_margin` of a limit.

    Args:
        name: behaviour name.
        joint_name: the joint to watch.
        min_limit: rad.
        max_limit: rad.
        warning_margin: rad; near means ``pos <= min_limit + margin`` or ``pos >= max_limit - margin``.
        unknown_is_near: False (the original): a joint that cannot be judged is FAILURE ("not near");
            True: it is SUCCESS ("near"), so that an Inverter above it fails safe.
        max_age: a joint state older than this (s) cannot be judged.
        cache: a cache to read instead of subscribing in setup.
        topic: joint state topic subscribed in setup.

    Raises:
        ValueError: empty joint name, non-finite limits, ``min_limit + 2 * margin >= max_limit`` (every
            position would be near), or a negative / non-finite margin.
    """

    def __init__(
        self,
        name: str = "IsJointNearLimit",
        *,
        joint_name: str,
        min_limit: float,
        max_limit: float,
        warning_margin: float = 0.15,
        unknown_is_near: bool = False,
        max_age: float = 0.5,
        cache: JointStateCache | None = None,
        topic: str = names.JOINT_STATES,
    ) -> None:
        super().__init__(name, max_age=max_age, cache=cache, topic=topic)
        if not isinstance(joint_name, str) or not joint_name.strip():
            raise ValueError(f"joint_name must be a joint's name, got {joint_name!r}")
        self.warning_margin = _check_margin("warning_margin", warning_margin)
        for what, v in (("min_limit", min_limit), ("max_limit", max_limit)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{what} must be a finite number, got {v!r}")
        if min_limit >= max_limit - 2.0 * self.warning_margin:
            raise ValueError(
                f"min_limit {min_limit:g} >= max_limit {max_limit:g} - 2 * warning_margin "
                f"{self.warning_margin:g}: every position of {joint_name} would be near a limit"
            )
        self.joint_name = joint_name
        self.min_limit, self.max_limit = float(min_limit), float(max_limit)
        self.unknown_is_near = unknown_is_near

    def update(self) -> Status:
        """SUCCESS when near a limit; FAILURE when safely inside (and, by default, when unknown)."""
        sample, why = self.newest()
        if sample is not None and self.joint_name not in sample.positions:
            sample, why = None, f"joint state lacks {self.joint_name}"
        if sample is None:
            if self.unknown_is_near:
                self.feedback_message = f"counted as near: {why}"
                return Status.SUCCESS
            self.feedback_message = f"not judged near: {why}"
            return Status.FAILURE
        pos = sample.positions[self.joint_name]
        low, high = self.min_limit + self.warning_margin, self.max_limit - self.warning_margin
        if pos <= low:
            self.feedback_message = f"near: {self.joint_name} = {pos:.3f} rad <= {low:.3f} (min + margin)"
            return Status.SUCCESS
        if pos >= high:
            self.feedback_message = f"near: {self.joint_name} = {pos:.3f} rad >= {high:.3f} (max - margin)"
            return Status.SUCCESS
        self.feedback_message = f"safe: {self.joint_name} = {pos:.3f} rad inside ({low:.3f}, {high:.3f})"
        return Status.FAILURE


def safe_trajectory_execution(
    motion: py_trees.behaviour.Behaviour,
    *,
    joint_name: str,
    min_limit: float,
    max_limit: float,
    warning_margin: float = 0.15,
    name: str = "SafeTrajectoryExecution",
    fail_safe: bool = True,
    max_age: float = 0.5,
    cache: JointStateCache | None = None,
    topic: str = names.JOINT_STATES,
) -> py_trees.composites.Sequence:
    """The original SafeTrajectoryExecution subtree: ReactiveSequence[Inverter(IsJointNearLimit), motion].

    Returns ``Sequence(name, memory=False)[Inverter("<name>.not near", IsJointNearLimit), motion]``: the
    motion is ticked only while the joint is not near a limit, and stopped (``terminate(INVALID)``) the
    tick it gets near. With ``fail_safe`` (default) a joint that cannot be judged counts as near, so the
    motion neither starts nor goes on blind; ``fail_safe=False`` is the original's exact behaviour.

    Raises:
        ValueError: bad limits or margin (see `IsJointNearLimit`).
    """
    near = IsJointNearLimit(
        f"{name}.IsJointNearLimit",
        joint_name=joint_name,
        min_limit=min_limit,
        max_limit=max_limit,
        warning_margin=warning_margin,
        unknown_is_near=fail_safe,
        max_age=max_age,
        cache=cache,
        topic=topic,
    )
    guard = py_trees.decorators.Inverter(f"{name}.not near {joint_name}", near)
    return py_trees.composites.Sequence(name, memory=False, children=[guard, motion])
