"""`guarded`: run a motion only while every limit condition holds, and stop it the tick one fails.

Usage (the pick-and-place tree)::

    from salamander_behavior.behaviors.guard import GuardSettings, guarded

    move = MoveTo("carry can_0", target, MotionPath.LINEAR, "transit_speed")  # RUNNING while it moves
    root = guarded(move, settings=GuardSettings(coupled_margin=0.01), arm=lambda: arm_snapshot)
    tree = py_trees.trees.BehaviourTree(root)
    tree.setup(node=node, timeout=5.0)                     # the conditions subscribe /joint_states here
    node.create_timer(0.1, tree.tick)                      # tick at 10 Hz

`guarded` returns ``Sequence(memory=False)[conditions..., move]``. Without memory the sequence re-ticks
every condition on every tick before the motion; on the first tick one fails, the sequence fails and
stops the still-RUNNING motion (its ``terminate(INVALID)``, where a motion cancels its goal) without
ticking it again. A ``Parallel`` would tick the motion once more in the very tick a condition fails;
hence the memoryless Sequence.

"Before a limit, not after": each margin must cover what the arm travels before it stands still, the
distance moved in one tick period plus the stopping distance. ``lookahead`` (s) additionally judges
where the joints will be after that time at their measured velocities, so a fast approach is stopped
early. A guard also blocks motions *away* from a limit once it is inside the margin: the recovery
(backing off) must run outside the guard, or with its own, narrower settings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import py_trees

from salamander_behavior.behaviors.conditions import (
    ArmSource,
    AwayFromSingularity,
    CombinedLimitIndexOk,
    CoupledLimitsClear,
    JointsWithinLimits,
    LimitCondition,
    VelocityEffortWithinLimits,
)
from salamander_behavior.limits.cache import JointStateCache
from salamander_behavior.limits.urdf_limits import JointLimit, load_urdf_limits
from salamander_control import names
from salamander_control.kinematics import ArmParams


@dataclass(frozen=True)
class GuardSettings:
    """Margins and thresholds of the conditions `guarded` builds (units as in each condition).

    The defaults admit the rest posture (it sits 0.025 rad inside alpha_max: coupled margin + release
    = 0.02) and stop the arm 0.02 rad before a per-joint stop. Set a threshold to None, or a
    ``*_enabled`` flag to False, to leave a condition out.

    `lookahead` is kept short on purpose: straight-line extrapolation ignores braking, so at the end of
    a jerk-limited stop it overshoots the target by up to ``jerk * lookahead**3 / 3`` (0.0025 rad for
    q2 - q1 at 60 rad/s^3 and 0.05 s, 0.02 rad at 0.1 s), and a motion that ends at rest, 0.025 rad
    from alpha_max, must not be stopped by its own prediction.
    """

    position_margin: float = 0.02
    position_release: float = 0.01
    coupled_margin: float = 0.01
    coupled_release: float = 0.01
    velocity_fraction: float = 1.0
    effort_fraction: float = 1.0
    velocity_release: float = 0.05
    min_manipulability: float | None = 0.0008
    max_condition: float | None = 15.0
    singularity_release: float = 0.1
    min_index: float | None = 0.05
    comfort: float = 0.15
    coupled_comfort: float | None = None
    index_release: float = 0.01
    velocity_enabled: bool = True
    max_age: float = 0.5
    lookahead: float = 0.05


def guard_conditions(
    settings: GuardSettings = GuardSettings(),  # noqa: B008 (frozen, immutable)
    *,
    limits: Sequence[JointLimit] | None = None,
    arm: ArmSource = ArmParams(),  # noqa: B008 (frozen, immutable)
    cache: JointStateCache | None = None,
    topic: str = names.JOINT_STATES,
    prefix: str = "",
) -> list[LimitCondition]:
    """The conditions of a guard, cheapest and most basic first (the first failure names the cause).

    Args:
        settings: margins and thresholds.
        limits: per-joint limits; None loads the repository's URDF once for all of them (its velocity
            and effort limits; the five arm joints' position bounds always come from `arm`).
        arm: ArmParams or a callable returning the current snapshot (per-joint position bounds,
            alpha/beta, geometry).
        cache: a shared cache to read (tests); None subscribes in setup.
        topic: joint state topic.
        prefix: prepended to each condition's name (e.g. the motion's name), so a tree with several
            guards shows whose condition failed.
    """
    limits = tuple(limits) if limits is not None else load_urdf_limits()
    s = settings
    common: dict[str, Any] = {"max_age": s.max_age, "cache": cache, "topic": topic}
    ahead = {**common, "lookahead": s.lookahead}
    out: list[LimitCondition] = [
        JointsWithinLimits(
            f"{prefix}JointsWithinLimits", limits=limits, arm=arm, margin=s.position_margin,
            release=s.position_release, **ahead,
        ),
        CoupledLimitsClear(
            f"{prefix}CoupledLimitsClear", arm=arm, margin=s.coupled_margin, release=s.coupled_release,
            **ahead,
        ),
    ]
    if s.velocity_enabled:
        out.append(VelocityEffortWithinLimits(
            f"{prefix}VelocityEffortWithinLimits", limits=limits, velocity_fraction=s.velocity_fraction,
            effort_fraction=s.effort_fraction, release=s.velocity_release, **common,
        ))
    if s.min_manipulability is not None or s.max_condition is not None:
        out.append(AwayFromSingularity(
            f"{prefix}AwayFromSingularity", arm=arm, min_manipulability=s.min_manipulability,
            max_condition=s.max_condition, release=s.singularity_release, **ahead,
        ))
    if s.min_index is not None:
        out.append(CombinedLimitIndexOk(
            f"{prefix}CombinedLimitIndexOk", limits=limits, arm=arm, min_index=s.min_index, comfort=s.comfort,
            coupled_comfort=s.coupled_comfort, release=s.index_release, **ahead,
        ))
    return out


def guarded(
    child: py_trees.behaviour.Behaviour,
    conditions: Sequence[py_trees.behaviour.Behaviour] | None = None,
    *,
    name: str | None = None,
    settings: GuardSettings = GuardSettings(),  # noqa: B008 (frozen, immutable)
    limits: Sequence[JointLimit] | None = None,
    arm: ArmSource = ArmParams(),  # noqa: B008 (frozen, immutable)
    cache: JointStateCache | None = None,
    topic: str = names.JOINT_STATES,
) -> py_trees.composites.Sequence:
    """Wrap a motion so that it is stopped (FAILURE) the first tick a limit condition goes bad.

    Returns ``Sequence(memory=False)[*conditions, child]`` (see the module docstring for why not a
    Parallel). The sequence succeeds when the child does, fails when a condition or the child fails,
    and is RUNNING while the child runs and every condition holds.

    Args:
        child: the motion subtree.
        conditions: the guard conditions; None builds `guard_conditions(settings, ...)`.
        name: the sequence's name (default ``Guarded[<child>]``).
        settings: margins and thresholds (used when `conditions` is None, like the next four).
        limits: per-joint limits; None loads the repository's URDF.
        arm: ArmParams or a callable returning the current snapshot.
        cache: a shared cache to read (tests); None subscribes in setup.
        topic: joint state topic.
    """
    if conditions is None:
        conditions = guard_conditions(
            settings, limits=limits, arm=arm, cache=cache, topic=topic, prefix=f"{child.name}."
        )
    return py_trees.composites.Sequence(
        name or f"Guarded[{child.name}]", memory=False, children=[*conditions, child]
    )



def can_guard(arm: ArmSource) -> Callable[[py_trees.behaviour.Behaviour, str], py_trees.composites.Sequence]:
    """The behaviour server's guard of a can's cycle (`tree.Guard`): ``Guarded[<can>]``.

    Default settings, judged with `arm` (the current parameters' model), on the monitors' joint states
    (`names.JOINT_STATES_MONITOR`); each can's conditions are named ``<can>.<condition>`` and share the
    node's one joint state cache in setup.
    """

    def guard(child: py_trees.behaviour.Behaviour, can: str) -> py_trees.composites.Sequence:
        conditions = guard_conditions(
            GuardSettings(), arm=arm, topic=names.JOINT_STATES_MONITOR, prefix=f"{can}."
        )
        return guarded(child, conditions, name=f"Guarded[{can}]")

    return guard
