"""One measured joint state, validated: what every limit check reads.

A ``sensor_msgs/JointState`` names its joints, so the checks look joints up by name and ignore joints
they do not watch. Whatever is malformed (lengths that disagree, a name twice, NaN or inf anywhere but
a NaN effort, which means "not reported") is refused as a whole, by the stack's one joint state reader
(`salamander_control.joint_state`): a limit verdict computed from half-understood data is worse than
none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from salamander_control.joint_state import JointStateError, JointStateProblem, read_by_name


def _frozen(values: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class JointSample:
    """Positions and, where measured, velocities and efforts, by joint name.

    Build it with `from_arrays` (which validates); `velocities` / `efforts` are empty when the message
    carried none, and a check that needs them then has nothing to check.
    """

    positions: Mapping[str, float]
    velocities: Mapping[str, float] = field(default_factory=dict)
    efforts: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_arrays(
        cls,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float] = (),
        efforts: Sequence[float] = (),
    ) -> JointSample:
        """Validate the parallel arrays of a JointState message (`salamander_control.joint_state`).

        Raises:
            JointStateError: no joints, a name repeated, positions (or non-empty velocities/efforts) not
                one per name, or a value that is NaN/inf (a NaN effort: that joint's effort not reported).
        """
        read = read_by_name(names, positions, velocities, efforts)
        return cls(_frozen(read.positions), _frozen(read.velocities), _frozen(read.efforts))

    @classmethod
    def from_positions(cls, positions: Mapping[str, float]) -> JointSample:
        """A positions-only sample from a name -> position mapping (validated like `from_arrays`)."""
        return cls.from_arrays(list(positions), list(positions.values()))

    def position(self, name: str) -> float:
        """Position of joint `name`.

        Raises:
            JointStateError: the joint state does not report `name`.
        """
        try:
            return self.positions[name]
        except KeyError:
            raise JointStateError(JointStateProblem.MISSING_JOINT, f"joint state lacks {name}") from None

    def vector(self, names: Iterable[str]) -> tuple[float, ...]:
        """Positions of `names`, in that order.

        Raises:
            JointStateError: some are missing (all missing ones are named).
        """
        names = list(names)
        missing = [n for n in names if n not in self.positions]
        if missing:
            raise JointStateError(JointStateProblem.MISSING_JOINT, f"joint state lacks {', '.join(missing)}")
        return tuple(self.positions[n] for n in names)

    def extrapolated(self, horizon: float) -> JointSample:
        """Where the joints will be after `horizon` seconds at their current velocities.

        Joints without a velocity stay put. The guards check this predicted state too, so that a joint
        moving fast towards a limit is stopped a tick early rather than a tick late.
        """
        if horizon == 0.0 or not self.velocities:
            return self
        moved = {n: q + self.velocities.get(n, 0.0) * horizon for n, q in self.positions.items()}
        return JointSample(_frozen(moved), self.velocities, self.efforts)
