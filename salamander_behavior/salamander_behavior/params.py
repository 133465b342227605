"""The behaviour server's parameters (`/salamander/behavior_server_node`) and their one frozen snapshot.

The convention of every node (see `salamander_control.ros.params`): `param_specs` lists the parameters
(config/behavior.yaml repeats them with their defaults), `build_config` turns their values into a
`BehaviorSettings` or raises ValueError (the refusal `ros2 param set` prints). The arm model the limit
guard judges with (alpha_max, beta_max, geometry, per-joint limits) is declared here too, from
config/arm.yaml, loaded before config/behavior.yaml, so the guard and the arm nodes start with the same
values. Pure: no rclpy.

The tree's leaves read the snapshot through a callable when they start (a motion its speed, a wait its
duration, ManualAdjust its timeout, the rim pass its guard and search) and `ManualPlaceOff` reads
`manual_place` when a can reaches place_above, so a `ros2 param set` takes effect at the next such point
and never half-way through one.
The read-only ones shape the node at start-up (which cell, which lease identity, which rates).

`OPERATOR_PARAMS` are the ones an operator sets live (docs/interfaces.md, "Parameters operators rely
on"): the node keeps each live set with the run's progress (progress.py) and applies it over its launch
value when it starts again; `kept_value` checks a kept value, `sources_text` says in the start line where
each value came from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from salamander_behavior.box_estimate import EstimateNoise
from salamander_behavior.manual_adjust.core import AdjustLimits
from salamander_control.kinematics import ArmParams
from salamander_control.kinematics.params import arm_param_specs, build_arm_params
from salamander_control.param_spec import ParamSpec

MAX_PAD_TILT = 0.1
"""rad; the largest tool pitch offset an IK retry variant may use (`ik_retry_pitch_offsets`). The suction
pad seals on a can top tilted by up to about 0.1 rad (5.7 deg): its bellows takes up the rim gap of
2 * 20 mm * sin(0.1) = 4 mm across a 40 mm pad, and the simulated cell grips up to `attach_max_tilt`
0.1 rad. More would leave the pad unsealed on one side (docs/tree.md, "IK retry variants")."""
MIN_PITCH_OFFSET = 0.01
"""rad; a smaller tool pitch offset would be the planned goal again."""
SEARCH_FALLBACKS = ("stop", "manual")
"""What follows a rim search in which no probe passed (`search_fallback`)."""


@dataclass(frozen=True)
class BehaviorSettings:
    """Every parameter of /salamander/behavior_server_node (descriptions in `param_specs`).

    `arm` holds the arm-model parameters (one field each in ArmParams); every other field is the
    parameter of the same name.
    """

    manual_place: bool = False
    manual_place_known_m: float = 0.0
    manual_timeout_s: float = 120.0
    allow_z: bool = False
    max_offset_z: float = 0.030
    transit_speed: float = 0.5
    approach_speed: float = 0.3
    release_speed: float = 0.5
    nudge_speed: float = 0.5
    blend_m: float = 0.15
    low_carry: bool = True
    vacuum_early_m: float = 0.002
    release_early_m: float = 0.03
    attach_timeout_s: float = 2.0
    grip_confirm_s: float = 0.0
    removal_confirm_s: float = 0.5
    clear_confirm_s: float = 0.1
    release_timeout_s: float = 2.0
    settle_s: float = 0.0
    vacuum_timeout_s: float = 2.0
    part_present_timeout_s: float = 0.5
    motion_timeout_s: float = 30.0
    ready_timeout_s: float = 60.0
    pad_wait_timeout_s: float = 300.0
    ik_retry: bool = True
    ik_retry_pitch_offsets: tuple[float, ...] = (0.05, -0.05, 0.1, -0.1)
    guarded_pass: bool = True
    guard_speed: float = 0.01
    guard_force_n: float = 5.0
    guard_band_above_m: float = 0.004
    guard_band_below_m: float = 0.006
    search_step_m: float = 0.002
    search_reach_m: float = 0.006
    search_probes: int = 12
    search_follow_push: bool = True
    search_fallback: str = "stop"
    box_estimate: bool = True
    box_sigma_xy: float = 0.003
    box_sigma_yaw: float = 0.006
    box_noise_manual: float = 0.0008
    box_noise_search: float = 0.0013
    arm: ArmParams = field(default_factory=ArmParams)
    # Read-only (start-up) parameters.
    run_on_start: bool = False
    cell_config: str = ""
    progress_file: str = ""
    client_id: str = "behavior_server"
    lease_timeout_s: float = 1.0
    tick_rate_hz: float = 20.0
    snapshot_rate_hz: float = 2.0

    def __post_init__(self) -> None:
        """Refuse combinations no single ParamSpec range can express."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{f.name} must be a finite number, got {value}")
        for name in ("transit_speed", "approach_speed", "release_speed", "nudge_speed", "guard_speed"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in (0, 1], got {getattr(self, name)}")
        if self.manual_timeout_s > AdjustLimits.timeout:
            raise ValueError(
                f"manual_timeout_s must not exceed the spec's {AdjustLimits.timeout:.0f} s, "
                f"got {self.manual_timeout_s}"
            )
        if self.search_fallback not in SEARCH_FALLBACKS:
            raise ValueError(
                f"search_fallback must be one of {', '.join(SEARCH_FALLBACKS)}, got {self.search_fallback!r}"
            )
        if self.search_step_m > self.search_reach_m:
            raise ValueError(
                f"search_step_m ({self.search_step_m} m) must not exceed search_reach_m "
                f"({self.search_reach_m} m)"
            )
        if not self.client_id:
            raise ValueError("client_id must not be empty (it is the lease identity)")
        offsets = self.ik_retry_pitch_offsets
        if not all(isinstance(v, float) and math.isfinite(v) for v in offsets):
            raise ValueError(f"ik_retry_pitch_offsets must hold finite numbers, got {list(offsets)}")
        if any(not MIN_PITCH_OFFSET <= abs(v) <= MAX_PAD_TILT for v in offsets):
            raise ValueError(
                f"ik_retry_pitch_offsets must lie within +-[{MIN_PITCH_OFFSET}, {MAX_PAD_TILT}] rad (a "
                f"different pitch, within the pad's tilt tolerance on a can top), got {list(offsets)}"
            )
        if len(set(offsets)) != len(offsets):
            raise ValueError(f"ik_retry_pitch_offsets must not repeat a value, got {list(offsets)}")

    @property
    def adjust_limits(self) -> AdjustLimits:
        """ManualAdjust's bounds: the spec's, with the configured timeout and z."""
        return AdjustLimits(
            timeout=self.manual_timeout_s, allow_z=self.allow_z, max_offset_z=self.max_offset_z
        )

    @property
    def estimate_noise(self) -> EstimateNoise:
        """The box estimate's prior and measurement noise (box_estimate.py)."""
        return EstimateNoise(
            self.box_sigma_xy, self.box_sigma_yaw, self.box_noise_manual, self.box_noise_search
        )

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> BehaviorSettings:
        """The snapshot from parameter values (extra names ignored); raises ValueError to refuse them.

        The arm model's names build `arm` (ValueError when they make no valid arm).
        """
        own = {f.name for f in fields(cls)} - {"arm"}
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            if key not in own:
                continue
            default = getattr(cls, key)
            if isinstance(default, tuple):  # a list parameter (an rclpy array counts)
                value = tuple(float(v) for v in value)
            kwargs[key] = float(value) if isinstance(default, float) else value
        return cls(arm=build_arm_params(values), **kwargs)


_D = BehaviorSettings()


def param_specs() -> list[ParamSpec]:
    """Every parameter of the node, with its description and range: its own, then the arm model's."""
    return [
        ParamSpec(
            "manual_place",
            _D.manual_place,
            "true: stop at place_above and let the operator nudge (<= 30 mm) and confirm each placement; "
            "read when the next can reaches place_above",
        ),
        ParamSpec(
            "manual_place_known_m",
            _D.manual_place_known_m,
            "m; with manual_place true, a can whose compartment the box estimate already knows within this "
            "(1 sigma, each axis) is placed as with manual_place false (guarded pass, search; the operator "
            "after a search that found nothing); 0: the operator places every can",
            0.0,
            0.01,
        ),
        ParamSpec(
            "manual_timeout_s",
            _D.manual_timeout_s,
            "longest wait for the operator's confirmation before the placement fails (s; pinned max 120)",
            0.5,
            120.0,
        ),
        ParamSpec(
            "allow_z",
            _D.allow_z,
            "true: ManualAdjust integrates the jog twist's z too (up to max_offset_z up; down at most to the "
            "planned place_release height; the release and the rise use an upward z only)",
        ),
        ParamSpec(
            "max_offset_z",
            _D.max_offset_z,
            "m; with allow_z, how far ManualAdjust may move the can up (and at most down, never below the "
            "planned place_release)",
            0.001,
            0.030,
        ),
        ParamSpec(
            "transit_speed",
            _D.transit_speed,
            "speed_scale of a carry along a line (a can found on the pad, or a cell whose joint-space carry "
            "would sink); the joint paths (above-can, the carry) run at the trajectory generator's limits",
            0.01,
            1.0,
        ),
        ParamSpec(
            "approach_speed",
            _D.approach_speed,
            "speed_scale of the descent to a can, lift and rise",
            0.01,
            1.0,
        ),
        ParamSpec(
            "release_speed",
            _D.release_speed,
            "speed_scale of the linear release descent (outside the rim band)",
            0.01,
            1.0,
        ),
        ParamSpec("nudge_speed", _D.nudge_speed, "speed_scale of ManualAdjust's nudges", 0.01, 1.0),
        ParamSpec(
            "blend_m",
            _D.blend_m,
            "m; the most the rise after a release and the lift bend into the joint path after them before "
            "their end (no stop between them), each no earlier than its clearance allows: the rise's empty "
            "pad approach_dz above the placed cans, the lift's can 10 mm above the standing cans (or above "
            "the rim, where the carry from there keeps clear of them); 0: both end at rest",
            0.0,
            0.3,
        ),
        ParamSpec(
            "low_carry",
            _D.low_carry,
            "true: the carry ends 10 mm above the rim, straight above the compartment, where its joint path "
            "keeps clear of the rim and of every can that may stand around it (a run in order), and the "
            "release descent starts there; false, or manual_place true: at place_above",
        ),
        ParamSpec(
            "vacuum_early_m",
            _D.vacuum_early_m,
            "m; the vacuum comes on when the empty pad's descent onto a can is this close to the can top "
            "(measured), the descent finishing meanwhile, so the seal forms as the pad arrives; 0: once "
            "the descent has ended",
            0.0,
            0.01,
        ),
        ParamSpec(
            "release_early_m",
            _D.release_early_m,
            "m; on a guarded release descent the vacuum goes off when the can is this close to its release "
            "height (measured), past the rim band (never higher than its bottom), the descent finishing "
            "meanwhile, so the can lets go as the pad arrives; 0: once the descent has ended",
            0.0,
            0.03,
        ),
        ParamSpec(
            "attach_timeout_s",
            _D.attach_timeout_s,
            "vacuum on to 'can gripped' (part-present true for grip_confirm_s) at most this long (s)",
            0.1,
            30.0,
        ),
        ParamSpec(
            "grip_confirm_s",
            _D.grip_confirm_s,
            "part-present must stay true without a break this long before the lift (s; 0: the first true)",
            0.0,
            5.0,
        ),
        ParamSpec(
            "removal_confirm_s",
            _D.removal_confirm_s,
            "a can found on the pad counts as removed by the operator once part-present stays false this "
            "long (s)",
            0.05,
            5.0,
        ),
        ParamSpec(
            "clear_confirm_s",
            _D.clear_confirm_s,
            "before a pick the pad counts as clear once part-present has been false this long (s; 0: the "
            "first false; one reading of a switch chattering at its threshold must not let the arm pick "
            "over a can on the pad)",
            0.0,
            1.0,
        ),
        ParamSpec(
            "release_timeout_s",
            _D.release_timeout_s,
            "vacuum off to 'can let go' (part-present false) at most this long (s)",
            0.1,
            30.0,
        ),
        ParamSpec(
            "settle_s", _D.settle_s, "pause after the switch saw the can go, before the rise (s)", 0.0, 10.0
        ),
        ParamSpec(
            "vacuum_timeout_s", _D.vacuum_timeout_s, "vacuum service answer at most this late (s)", 0.1, 30.0
        ),
        ParamSpec(
            "part_present_timeout_s",
            _D.part_present_timeout_s,
            "freshness bound of the part-present signal: an older one tells nothing and fails the step (s)",
            0.05,
            10.0,
        ),
        ParamSpec(
            "motion_timeout_s",
            _D.motion_timeout_s,
            "a Cartesian goal without result this long fails (s)",
            1.0,
            600.0,
        ),
        ParamSpec(
            "ik_retry",
            _D.ik_retry,
            "true: a pick or place target the IK refuses (early fail) is retried with the other elbow branch "
            "and, on the pick side, tool pitches near the planned one before the can is skipped",
        ),
        ParamSpec(
            "ik_retry_pitch_offsets",
            list(_D.ik_retry_pitch_offsets),
            f"tool pitch offsets (rad) the pick-side IK retries try, in order; |offset| in "
            f"[{MIN_PITCH_OFFSET}, {MAX_PAD_TILT}] (the pad's tilt tolerance on a can top)",
        ),
        ParamSpec(
            "guarded_pass",
            _D.guarded_pass,
            "true: the release descent crosses the rim band slowly and guarded, without stopping (a contact "
            "stops it, the can is lifted clear, vacuum on, and a search follows); false, or no joint efforts "
            "in the joint states: one unguarded descent at release_speed",
        ),
        ParamSpec(
            "guard_speed",
            _D.guard_speed,
            "speed_scale of the guarded pass through the rim band and of the search's probes",
            0.01,
            1.0,
        ),
        ParamSpec(
            "guard_force_n",
            _D.guard_force_n,
            "N; the guarded pass stops at an external force on the tool above this (the held can's weight "
            "is not counted: the Cartesian node measures from the load as the can enters the band)",
            0.5,
            50.0,
        ),
        ParamSpec(
            "guard_band_above_m",
            _D.guard_band_above_m,
            "m; the guarded band starts with the can's bottom this far above the rim and divider tops",
            0.0,
            0.05,
        ),
        ParamSpec(
            "guard_band_below_m",
            _D.guard_band_below_m,
            "m; the guarded band ends with the can's bottom this far below the rim (then release_speed on to "
            "place_release)",
            0.001,
            0.05,
        ),
        ParamSpec(
            "search_step_m",
            _D.search_step_m,
            "m; spacing of the search's probe offsets (a square spiral around the offset that met the rim)",
            0.0002,
            0.01,
        ),
        ParamSpec(
            "search_reach_m",
            _D.search_reach_m,
            "m; no probe lies farther than this from the offset that met the rim (XY radius)",
            0.0005,
            0.03,
        ),
        ParamSpec(
            "search_probes",
            _D.search_probes,
            "most probes of one search (each: above the band at the probe offset, guarded descent)",
            1,
            100,
        ),
        ParamSpec(
            "search_follow_push",
            _D.search_follow_push,
            "true: after a contact, probe first where the rim pushed the can (the contact force's sideways "
            "part points toward the compartment); false: the fixed square spiral",
        ),
        ParamSpec(
            "search_fallback",
            _D.search_fallback,
            "no probe passed: 'stop' holds the can above its compartment (vacuum on) and stops the run; "
            "'manual' asks the operator (ManualAdjust), then one guarded pass at the confirmed offset. "
            "With manual_place true the operator is there: 'manual' applies",
        ),
        ParamSpec(
            "box_estimate",
            _D.box_estimate,
            "true: place each can at the box estimate's offset (from earlier cans placed by ManualAdjust or "
            "the search) and start ManualAdjust from it; false: the planned target (the estimate is still "
            "kept and shown)",
        ),
        ParamSpec(
            "box_sigma_xy",
            _D.box_sigma_xy,
            "m; the box estimate's prior: how far (1 sigma, per axis) the box may stand off its planned "
            "place",
            0.0001,
            0.03,
        ),
        ParamSpec(
            "box_sigma_yaw",
            _D.box_sigma_yaw,
            "rad; the box estimate's prior: how far (1 sigma) the box may be turned about its centre",
            0.0001,
            0.2,
        ),
        ParamSpec(
            "box_noise_manual",
            _D.box_noise_manual,
            "m; how precisely (1 sigma, per axis) a confirmed ManualAdjust offset tells where the box stands "
            "(the can's own scatter on its spot and the pad and the operator's aim included)",
            0.00001,
            0.03,
        ),
        ParamSpec(
            "box_noise_search",
            _D.box_noise_search,
            "m; how precisely (1 sigma, per axis) a search offset that passed the rim tells where the box "
            "stands (anywhere within the clearance, and the can's own scatter)",
            0.00001,
            0.03,
        ),
        ParamSpec(
            "ready_timeout_s",
            _D.ready_timeout_s,
            "start-up wait for the lease, the motion node, joint states and the gripper contract (s)",
            1.0,
            3600.0,
        ),
        ParamSpec(
            "pad_wait_timeout_s",
            _D.pad_wait_timeout_s,
            "a can found on the pad before a pick: wait this long for the operator to confirm its placement "
            "or remove it, then stop the run (s; the can stays on the pad, vacuum on)",
            1.0,
            3600.0,
        ),
        ParamSpec(
            "run_on_start",
            _D.run_on_start,
            "true: start one run of every can once the stack is ready (the simulated demo); false: "
            "runs are started by the operator (RunPickPlace action, gamepad, salamanderctl run start)",
            read_only=True,
        ),
        ParamSpec(
            "cell_config",
            _D.cell_config,
            "cell params file (config/cell.yaml) with the cans and the box; '' = salamander_control's",
            read_only=True,
        ),
        ParamSpec(
            "progress_file",
            _D.progress_file,
            "the run's progress (cans done, the can carried) and the operator's live sets of manual_place, "
            "allow_z and max_offset_z, kept across restarts; '' = "
            "$ROS_HOME/salamander/<node>/progress.json (~/.ros without ROS_HOME; under "
            "$SALAMANDER_PROGRESS_DIR if set: scripts/run.sh sets a fresh one per start in simulation)",
            read_only=True,
        ),
        ParamSpec("client_id", _D.client_id, "arm lease identity of the tree", read_only=True),
        ParamSpec(
            "lease_timeout_s",
            _D.lease_timeout_s,
            "arm lease heartbeat timeout (s)",
            0.1,
            10.0,
            read_only=True,
        ),
        ParamSpec(
            "tick_rate_hz",
            _D.tick_rate_hz,
            "tree ticks per second (and a tick at once when a motion's result, its hand-off point or a "
            "change of the part-present switch arrives, and when a hold ends)",
            1.0,
            200.0,
            read_only=True,
        ),
        ParamSpec(
            "snapshot_rate_hz",
            _D.snapshot_rate_hz,
            "tree snapshots per second on /salamander/behavior/tree (and one at once on every change of the "
            "running step)",
            0.1,
            20.0,
            read_only=True,
        ),
    ] + arm_param_specs()


def build_config(values: dict[str, Any]) -> BehaviorSettings:
    """The snapshot (ValueError refuses the set, with the reason `ros2 param set` prints)."""
    return BehaviorSettings.from_values(values)


OPERATOR_PARAMS = ("manual_place", "allow_z", "max_offset_z")
"""Parameters an operator sets live whose last set a restart of the node keeps (progress.py,
``operator_params``): the placement mode and ManualAdjust's z. The coupled limits alpha_max/beta_max are
kept by their owner, the trajectory generator, which every node adopts them from; the other parameters
are tuning that the launch file owns."""


def kept_value(name: str, value: Any) -> Any:
    """`value`, checked as the parameter `name` checks a set (the node's set then decides).

    Raises:
        ValueError: `name` is not one of `OPERATOR_PARAMS`, or `value` is of the wrong type or range.
    """
    if name not in OPERATOR_PARAMS:
        raise ValueError(f"{name!r} is not a parameter a restart keeps ({', '.join(OPERATOR_PARAMS)})")
    spec = next(s for s in param_specs() if s.name == name)
    if isinstance(spec.default, bool) is not isinstance(value, bool):
        raise ValueError(f"{name} must be {'a bool' if isinstance(spec.default, bool) else 'a number'}")
    problem = spec.check(value)
    if problem:
        raise ValueError(problem)
    return value


def _word(value: Any) -> str:
    """A value as ``ros2 param get`` users write it: true/false, 0.03."""
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def sources_text(launch: Mapping[str, Any], kept: Mapping[str, Any]) -> str:
    """Each of `OPERATOR_PARAMS` with its value and where it came from, for the start line.

    E.g. ``manual_place true (kept from before the restart; launch file said false), allow_z false
    (launch file), max_offset_z 0.03 (launch file)``.

    Args:
        launch: the values the node started with (launch file, params files, defaults).
        kept: the operator's sets applied over them (progress.py's ``operator_params``, as accepted).
    """
    parts = []
    for name in OPERATOR_PARAMS:
        if name in kept:
            same = kept[name] == launch[name]
            said = "the launch file says the same" if same else f"launch file said {_word(launch[name])}"
            parts.append(f"{name} {_word(kept[name])} (kept from before the restart; {said})")
        else:
            parts.append(f"{name} {_word(launch[name])} (launch file)")
    return ", ".join(parts)
