"""Parameters of /salamander/sim_operator, the simulated operator, and their `OperatorSettings` snapshot.

The convention of every node (see `salamander_control.ros.params`): `param_specs`, `build_config`. Pure.

The defaults describe a careful person with a good view of the box (the reasoning, per parameter, is in
docs/interfaces.md, "The simulated operator"): a look judges the can's offset from the compartment's
centre to 0.3 mm (one sigma per axis; the gap a person judges is 1.95 mm per side, so this is about a
sixth of it), a reaction takes 0.3-0.5 s, a stick stroke lasts about half a second and lands within 10 %
of its aim, and the person confirms when the can looks centred within 0.5 mm. The stick's limits are
the spec's (50 mm/s; twists at least every 0.3 s while jogging): `jog_speed` may not exceed 0.05 m/s and
`jog_rate_hz` not fall below 10 Hz.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salamander_control.param_spec import ParamSpec

MAX_JOG_SPEED = 0.050
"""m/s: the spec's cap of the place jog (ManualAdjust clips a faster twist to it)."""
SEED_MAX = 2**31 - 1


@dataclass(frozen=True)
class OperatorSettings:
    """The node's parameter snapshot (SI units; see `param_specs` for each one's meaning)."""

    seed: int = 0
    look_sigma_xy: float = 0.0003
    reaction_time_min_s: float = 0.3
    reaction_time_max_s: float = 0.5
    confirm_tolerance_xy: float = 0.0005
    stroke_time_s: float = 0.5
    stroke_error: float = 0.1
    jog_speed: float = MAX_JOG_SPEED
    jog_rate_hz: float = 20.0
    still_tolerance_xy: float = 0.0002
    settle_timeout_s: float = 2.0
    reconfirm_s: float = 2.0
    cell_config: str = ""


_SPECS: tuple[tuple[str, str, float | None, float | None, bool], ...] = (
    ("seed", "seed of the operator's random draws (reaction times, look noise, stroke errors)",
     0, SEED_MAX, True),
    ("look_sigma_xy", "noise of one look at the can over its compartment, m, one sigma per axis",
     0.0, 0.005, False),
    ("reaction_time_min_s", "shortest reaction (seeing the wait or the can at rest -> acting), s",
     0.0, 5.0, False),
    ("reaction_time_max_s", "longest reaction, s (each reaction is drawn uniformly between the two)",
     0.0, 5.0, False),
    ("confirm_tolerance_xy", "confirm when the can looks this close to the compartment's centre, m",
     0.0001, 0.01, False),
    ("stroke_time_s", "a stick stroke aims to take this long (slower for small corrections), s",
     0.05, 5.0, False),
    ("stroke_error", "relative error of a stroke's length, one sigma (0.1 = lands within ~10 % of its aim)",
     0.0, 0.5, False),
    ("jog_speed", "fastest stroke, m/s (the stick's full deflection; pinned cap 0.05)",
     0.001, MAX_JOG_SPEED, False),
    ("jog_rate_hz", "operator/jog twists per second while a stroke runs, Hz (the tree's staleness is 0.3 s)",
     10.0, 100.0, False),
    ("still_tolerance_xy", "the can counts as at rest when two cell states in a row differ by less, m",
     0.00001, 0.005, False),
    ("settle_timeout_s", "look anyway when the can has not come to rest this long after a stroke, s",
     0.1, 30.0, False),
    ("reconfirm_s", "press confirm again (after a new look) when the wait still shows this long after, s",
     0.5, 60.0, False),
    ("cell_config", "the cell config (compartments in the box); '' = salamander_control's config/cell.yaml",
     None, None, True),
)  # fmt: skip


def param_specs() -> list[ParamSpec]:
    """The node's ParamSpecs (defaults: `OperatorSettings()`)."""
    defaults = OperatorSettings()
    return [
        ParamSpec(name, getattr(defaults, name), description, lo, hi, read_only)
        for name, description, lo, hi, read_only in _SPECS
    ]


def build_config(values: dict[str, Any]) -> OperatorSettings:
    """The snapshot from parameter values.

    Raises:
        ValueError: reaction_time_min_s above reaction_time_max_s (the refusal reason).
    """
    settings = OperatorSettings(
        seed=int(values["seed"]),
        **{name: float(values[name]) for name, *_ in _SPECS if name not in ("seed", "cell_config")},
        cell_config=str(values["cell_config"]),
    )
    if settings.reaction_time_min_s > settings.reaction_time_max_s:
        raise ValueError(
            f"reaction_time_min_s ({settings.reaction_time_min_s}) must not exceed reaction_time_max_s "
            f"({settings.reaction_time_max_s})"
        )
    return settings
