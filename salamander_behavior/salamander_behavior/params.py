"""The ParamSpecs of /salamander/behavior_server_node (they build a `settings.BehaviorSettings`).

Live parameters are read by the leaves when they start (see settings.py); `manual_place` when a can
reaches place_above. The read-only ones shape the node at start-up (which cell, which lease identity,
which rates) and are set with ``-p`` or a params file (config/behavior.yaml).
"""

from __future__ import annotations

from salamander_behavior.settings import BehaviorSettings
from salamander_control.kinematics import ALPHA_BETA_RANGE
from salamander_control.ros.params import ParamSpec

_D = BehaviorSettings()


def behavior_param_specs() -> list[ParamSpec]:
    """Every parameter of the node, with its description and range."""
    return [
        ParamSpec(
            "manual_place",
            _D.manual_place,
            "true: stop at place_above and let the operator nudge (<= 30 mm) and confirm each placement; "
            "read when the next can reaches place_above",
        ),
        ParamSpec(
            "manual_timeout_s",
            _D.manual_timeout_s,
            "longest wait for the operator's confirmation before the placement fails (s; spec max 120)",
            0.5,
            120.0,
        ),
        ParamSpec("transit_speed", _D.transit_speed, "speed_scale of above-can and carry moves", 0.01, 1.0),
        ParamSpec(
            "approach_speed",
            _D.approach_speed,
            "speed_scale of the descent to a can, lift and rise",
            0.01,
            1.0,
        ),
        ParamSpec(
            "release_speed", _D.release_speed, "speed_scale of the linear place_release descent", 0.01, 1.0
        ),
        ParamSpec("nudge_speed", _D.nudge_speed, "speed_scale of ManualAdjust's nudges", 0.01, 1.0),
        ParamSpec(
            "attach_timeout_s",
            _D.attach_timeout_s,
            "vacuum on to 'can gripped' at most this long (s; the cell grips after its attach_settle)",
            0.1,
            30.0,
        ),
        ParamSpec(
            "grip_confirm_s",
            _D.grip_confirm_s,
            "the cell must report the can gripped without interruption this long before the lift (s)",
            0.0,
            5.0,
        ),
        ParamSpec(
            "release_timeout_s",
            _D.release_timeout_s,
            "vacuum off to 'can let go' at most this long (s; the cell lets go after its release_settle)",
            0.1,
            30.0,
        ),
        ParamSpec("settle_s", _D.settle_s, "pause after the can let go, before the rise (s)", 0.0, 10.0),
        ParamSpec(
            "vacuum_timeout_s", _D.vacuum_timeout_s, "vacuum service answer at most this late (s)", 0.1, 30.0
        ),
        ParamSpec(
            "motion_timeout_s",
            _D.motion_timeout_s,
            "a Cartesian goal without result this long fails (s)",
            1.0,
            600.0,
        ),
        ParamSpec(
            "ready_timeout_s",
            _D.ready_timeout_s,
            "start-up wait for the lease, the motion node, joint states and the cell (s)",
            1.0,
            3600.0,
        ),
        ParamSpec(
            "alpha_max",
            _D.alpha_max,
            "coupled limit q2 - q1 <= alpha_max (rad) the limit guard watches; keep equal to the arm nodes'",
            *ALPHA_BETA_RANGE,
        ),
        ParamSpec(
            "beta_max",
            _D.beta_max,
            "coupled limit q1 - q2 <= beta_max (rad) the limit guard watches; keep equal to the arm nodes'",
            *ALPHA_BETA_RANGE,
        ),
        ParamSpec(
            "cell_config",
            _D.cell_config,
            "cell params file (config/cell.yaml) with the cans and the box; '' = salamander_control's",
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
        ParamSpec("tick_rate_hz", _D.tick_rate_hz, "tree ticks per second", 1.0, 200.0, read_only=True),
        ParamSpec(
            "snapshot_rate_hz",
            _D.snapshot_rate_hz,
            "tree snapshots per second on /salamander/behavior/tree",
            0.1,
            20.0,
            read_only=True,
        ),
    ]


def build_settings(values: dict) -> BehaviorSettings:
    """The snapshot (ValueError refuses the set, with the reason `ros2 param set` prints)."""
    return BehaviorSettings.from_values(values)
