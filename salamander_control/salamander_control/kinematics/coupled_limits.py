"""One pair of coupled limits for the whole arm: who decides, who follows, and the loop guard.

`alpha_max`/`beta_max` are parameters of every node that uses the arm model, but they are one pair of
values (docs/arm_model.md): the IK, the Cartesian early fail, the ghost and the clamp must never
disagree. The trajectory generator owns the pair (`LimitsOwner`); every other node follows it
(`LimitsFollower`):

- An operator's set on a follower is validated there exactly as before (same ParamSpec, same build):
  a refused value changes nothing anywhere. An accepted one applies locally at once and is *forwarded*
  to the owner (only the names that were set, so two operators setting alpha_max and beta_max at once
  both count).
- The owner accepts it (or an operator's set on the owner itself) and publishes the pair, latched, with
  a revision that grows by one per change. It publishes only when a value changed.
- Every follower *adopts* what the owner publishes, by setting its own parameters (so `ros2 param get`
  shows them) inside `LimitsFollower.adopting()`: a set made while adopting is never forwarded (the
  loop guard). A late starter gets the latched pair and adopts it instead of its file's values.
- A follower knows when a publication must come (`LimitsFollower.expect`): once the owner is in the
  graph and its latched pair has not arrived, and after the owner accepted a forward that changes its
  pair. One that does not come in time means this follower's subscription hears nothing (seen once in
  a few whole-suite runs, cause unknown): the shell subscribes again and says so.

Invariant (tested as a hypothesis property in test/kinematics/test_coupled_limits.py): once every
forward and publication is delivered, each follower holds the owner's pair, and the owner's pair is
the last value it accepted, whatever the interleaving of sets on any nodes. Proof sketch: a follower's
last event is either the owner's last publication (delivered in order) or an operator set that was
forwarded after it; that forward, accepted, made the owner's value equal to it (published only if it
changed, so no later publication contradicts it).

Pure: no rclpy. The ROS shell is `salamander_control.ros.coupled_limits_sync`; why this design:
docs/design/coupled_limits.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

COUPLED_NAMES: tuple[str, str] = ("alpha_max", "beta_max")
"""The parameters that are one value for the whole arm."""


def coupled_subset(values: Mapping[str, object]) -> dict[str, float]:
    """The coupled-limit entries of `values` (a set's {name: value}), as floats; others dropped."""
    return {name: float(value) for name, value in values.items() if name in COUPLED_NAMES}  # type: ignore[arg-type]


@dataclass(frozen=True)
class Limits:
    """The arm's coupled limits as the owner publishes them (salamander_msgs/msg/CoupledLimits)."""

    alpha_max: float
    beta_max: float
    revision: int
    source: str

    def values(self) -> dict[str, float]:
        """{"alpha_max": ..., "beta_max": ...}."""
        return {"alpha_max": self.alpha_max, "beta_max": self.beta_max}

    def describe(self) -> str:
        """One line for the logs."""
        return (
            f"alpha_max={self.alpha_max:.4f}, beta_max={self.beta_max:.4f} "
            f"(revision {self.revision} of {self.source})"
        )


def differing(target: Mapping[str, float], local: Mapping[str, object]) -> dict[str, float]:
    """The entries of `target` whose value differs from `local`'s (what a node must set to match)."""
    return {name: value for name, value in target.items() if local.get(name) != value}


class LimitsOwner:
    """The owner's side: the current pair and its revision.

    Args:
        values: the owner's coupled limits at start-up ({"alpha_max": ..., "beta_max": ...}).
        source: the owner's fully qualified node name.
    """

    def __init__(self, values: Mapping[str, float], source: str) -> None:
        self._limits = Limits(float(values["alpha_max"]), float(values["beta_max"]), 0, source)

    @property
    def current(self) -> Limits:
        """The pair in force (revision 0 = as loaded at start-up)."""
        return self._limits

    def accepted(self, changed: Mapping[str, object]) -> Limits | None:
        """After the owner accepted a set of `changed` ({name: value}, any names): the pair to publish.

        None when no coupled value changed (nothing to publish: every follower already has it).
        """
        new = {**self._limits.values(), **coupled_subset(changed)}
        if new == self._limits.values():
            return None
        revision, source = self._limits.revision + 1, self._limits.source
        self._limits = Limits(new["alpha_max"], new["beta_max"], revision, source)
        return self._limits


class LimitsFollower:
    """A follower's side: the loop guard, the owner's last pair, and "alone" said once.

    The shell calls `to_forward` from its post-set hook, `to_adopt` when the owner publishes (and sets
    the result inside `adopting()`), `to_restore` when the owner refused a forward.
    """

    def __init__(self) -> None:
        self._adopting = False
        self.owner: Limits | None = None
        """The owner's last published pair (None before the first one arrived)."""
        self._alone_said = False
        self.due: float | None = None
        """When a publication of the owner is due at the latest (None: none is awaited; see `expect`)."""

    @contextmanager
    def adopting(self) -> Iterator[None]:
        """Sets made inside are adoptions: `to_forward` returns nothing for them (no loop)."""
        self._adopting = True
        try:
            yield
        finally:
            self._adopting = False

    def to_forward(self, changed: Mapping[str, object]) -> dict[str, float]:
        """After this node accepted a set of `changed`: the coupled values to send to the owner.

        Empty for an adoption (the guard) or a set without coupled names. A set that changes nothing
        locally is still forwarded: it is an operator's newest word and must win over an older one
        still on its way to the owner.
        """
        if self._adopting:
            return {}
        return coupled_subset(changed)

    def to_adopt(self, published: Limits, local: Mapping[str, object]) -> dict[str, float]:
        """The owner published `published`: the values this node (now at `local`) must set to match.

        Any publication ends the wait for one (`due`).
        """
        self.owner = published
        self._alone_said = False
        self.due = None
        return differing(published.values(), local)

    def expect(self, now: float, within: float) -> None:
        """A publication of the owner is due within `within` s of `now` (an earlier due time stays).

        The shell calls it when one must come: the owner is in the graph and its latched pair has not
        arrived yet, or the owner accepted a forward that `changes_owner`.
        """
        due = now + within
        self.due = due if self.due is None else min(self.due, due)

    def overdue(self, now: float) -> bool:
        """A publication was due (`expect`) before `now` and none has arrived."""
        return self.due is not None and now > self.due

    def changes_owner(self, forwarded: Mapping[str, float]) -> bool:
        """The owner's accepting `forwarded` changes its pair as last heard here (so it publishes)."""
        return self.owner is None or bool(differing(forwarded, self.owner.values()))

    def to_restore(self, local: Mapping[str, object]) -> dict[str, float]:
        """The owner refused a forward: the owner's last pair, where it differs from `local`.

        Empty when no pair has arrived yet (the node keeps its value; nothing better is known).
        """
        return differing(self.owner.values(), local) if self.owner is not None else {}

    def say_alone(self) -> bool:
        """The owner cannot be reached for a forward: True the first time (log it), then False.

        It is True again once the owner has been heard from since.
        """
        first = not self._alone_said
        self._alone_said = True
        return first
