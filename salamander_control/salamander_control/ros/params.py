"""Declare, validate and atomically apply a node's parameters as one frozen snapshot.

One convention for every node of the three packages: its parameters live in a pure `params.py` in its
concept folder (e.g. `salamander_control.trajectory.params`, `salamander_behavior.params`,
`salamander_teleop.controller.params`) that exposes

- `param_specs() -> list[ParamSpec]` (`salamander_control.param_spec`, no rclpy),
- `build_config(values) -> <frozen snapshot>`, raising ValueError when the combination is invalid,
- optionally `config_warnings(snapshot) -> list[str]` (accepted, but worth saying),

and the node only does ``ParamBinding(self, params.param_specs(), params.build_config,
warn=params.config_warnings, on_change=...)``. Names carry their unit: rates end in `_hz`, durations in
`_s`. Shared groups (the arm model: `kinematics.params.arm_param_specs`; the per-joint motion limits:
`trajectory.params.motion_limit_specs`) are added to a node's list by its `param_specs`; their values
are written once, in config/arm.yaml and config/motion_limits.yaml.

`ParamBinding` declares the parameters with descriptors (description, FloatingPointRange),
refuses a change that is not finite, out of range or rejected by `build` (the reason is what
`ros2 param set` prints; the old value stays), and otherwise swaps the snapshot in one assignment, so
the control loop, which reads `binding.snapshot` once per cycle, never sees half an update.

An accepted change can carry warnings (e.g. "no longer admits the rest posture"). rclpy (Kilted) drops
the reason of a *successful* on-set callback, so the binding wraps the node's `set_parameters_atomically`
(which both parameter services call) to put the warnings back into the result that `ros2 param set`
prints as "Set parameter successful: <reason>" and `salamanderctl param set` likewise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from salamander_control.param_spec import ParamSpec

T = TypeVar("T")


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""The ends of an integer range with only one bound (IntegerRange holds int64)."""


def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """The ParameterDescriptor `ros2 param describe` shows for `spec`.

    A range with one bound (half-open) is described with the other end at -inf/+inf (a double) or at
    the int64 limit (an integer), which rclpy's own range check accepts.
    """
    desc = ParameterDescriptor(name=spec.name, description=spec.description, read_only=spec.read_only)
    lo, hi = spec.min_value, spec.max_value
    if (lo is None and hi is None) or isinstance(spec.default, bool):
        return desc
    if isinstance(spec.default, int):
        desc.integer_range = [
            IntegerRange(
                from_value=INT64_MIN if lo is None else int(lo),
                to_value=INT64_MAX if hi is None else int(hi),
                step=0,
            )
        ]
    elif isinstance(spec.default, float):
        desc.floating_point_range = [
            FloatingPointRange(
                from_value=-math.inf if lo is None else float(lo),
                to_value=math.inf if hi is None else float(hi),
                step=0.0,
            )
        ]
    return desc


class ParamBinding(Generic[T]):
    """Parameters of one node bound to a frozen snapshot that changes atomically.

    Args:
        node: the node to declare the parameters on.
        specs: the parameters.
        build: turns {name: value} into the snapshot; raises ValueError to refuse a combination.
        warn: optional; returns warnings (accepted, but worth saying) for a new snapshot, e.g. that a
            narrowed alpha_max no longer admits the rest posture. They are logged and returned as the
            reason of the successful set, which `ros2 param set` prints.
        on_change: optional; called with (old, new) after a change is applied.
    """

    def __init__(
        self,
        node: Node,
        specs: Sequence[ParamSpec],
        build: Callable[[dict[str, Any]], T],
        warn: Callable[[T], list[str]] | None = None,
        on_change: Callable[[T, T], None] | None = None,
    ) -> None:
        self._node = node
        self._specs = {s.name: s for s in specs}
        self._build = build
        self._warn = warn
        self._on_change = on_change
        for spec in specs:
            node.declare_parameter(spec.name, spec.default, descriptor(spec))
        values = {name: node.get_parameter(name).value for name in self._specs}
        for name, value in values.items():
            problem = self._specs[name].check(value)
            if problem:
                raise ValueError(f"{node.get_fully_qualified_name()}: {problem}")
        self._values = values
        self._snapshot: T = build(dict(values))
        for text in self._warnings(self._snapshot):
            node.get_logger().warning(text)
        node.add_on_set_parameters_callback(self._on_set)
        self._accepted_reason = ""
        self._node_set_atomically = node.set_parameters_atomically
        node.set_parameters_atomically = self._set_atomically_with_reason  # type: ignore[method-assign]

    @property
    def snapshot(self) -> T:
        """The current frozen snapshot; read it once per cycle."""
        return self._snapshot

    @property
    def values(self) -> dict[str, Any]:
        """A copy of the current parameter values."""
        return dict(self._values)

    def _warnings(self, snapshot: T) -> list[str]:
        return list(self._warn(snapshot)) if self._warn else []

    def _set_atomically_with_reason(self, parameter_list: list[Parameter]) -> SetParametersResult:
        self._accepted_reason = ""
        result = self._node_set_atomically(parameter_list)
        if result.successful and self._accepted_reason:
            result.reason = self._accepted_reason
        return result

    def _on_set(self, params: list[Parameter]) -> SetParametersResult:
        candidate = dict(self._values)
        for param in params:
            spec = self._specs.get(param.name)
            if spec is None:
                continue  # not ours (e.g. use_sim_time); rclpy handles it
            problem = spec.check(param.value)
            if problem:
                return SetParametersResult(successful=False, reason=problem)
            candidate[param.name] = param.value
        try:
            snapshot = self._build(dict(candidate))
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        old = self._snapshot
        self._values, self._snapshot = candidate, snapshot
        warnings = self._warnings(snapshot)
        for text in warnings:
            self._node.get_logger().warning(text)
        changed = ", ".join(f"{p.name}={p.value}" for p in params if p.name in self._specs)
        if changed:
            self._node.get_logger().info(f"parameters applied: {changed}")
        if self._on_change is not None:
            self._on_change(old, snapshot)
        self._accepted_reason = "; ".join(warnings)
        return SetParametersResult(successful=True, reason=self._accepted_reason)
