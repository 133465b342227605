"""How the simulated pad follows the arm: a critically damped filter of the measured TCP.

The physics cell moves its pad (a mocap body: moved, never pushed) toward the TCP of the measured joint
states, linear between two measurements (`target_at`), through `PadFilter`: a second-order filter of
`PAD_BANDWIDTH` whose acceleration is capped at what the arm can do and which brakes in time to stop on
a far target (`PAD_MAX_ACCEL`). So the timing noise of the joint states moves a held can gently instead
of jolting it off the pad (docs/design/cell_model.md). `pad_rotation` / `pad_quat`: the pad frame for a
tool pitch and yaw. Pure: numpy, no MuJoCo, no rclpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from salamander_control.kinematics import ToolPose

PAD_BANDWIDTH = 50.0
"""rad/s: the pad follows the measured TCP through a critically damped second-order filter of this
natural frequency (the arm's own dynamics: its motion is smooth, while the joint states' timing is
not). A timing error of the joint states then moves the pad by a fraction of a millimetre, gently,
instead of jolting a held can; the pad lags a moving TCP by 2 v / PAD_BANDWIDTH (15 mm at 0.37 m/s)
and settles on a still one within 0.3 s to a micrometre."""
PAD_MAX_ACCEL = 8.0
"""m/s^2: the filtered pad accelerates at most this much, and brakes in time to stop on its target at
this (it never overshoots a far one: `_brake`), twice the arm's Cartesian limit (4 m/s^2,
config/cartesian_motion.yaml): a held can hangs on the seal with a moment of at most 0.16 N m from it
(the peel limit is 0.25 N m), however unevenly the joint states came (a stalled node, a late sample)."""
PAD_MAX_ANGULAR_ACCEL = 20.0
"""rad/s^2: likewise for the tool pitch and yaw (the arm's limit: 6 rad/s^2)."""


def pad_rotation(pitch: float, yaw: float) -> np.ndarray:
    """The pad frame in base_link: Rz(yaw) Ry(pitch); the pad points along its -z (docs: kinematics)."""
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    return np.array([[cy * cp, -sy, cy * sp], [sy * cp, cy, sy * sp], [-sp, 0.0, cp]])


def pad_quat(pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """The pad frame's unit quaternion (w, x, y, z): qz(yaw) * qy(pitch)."""
    cz, sz, cp, sp = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(pitch / 2), math.sin(pitch / 2)
    return (cz * cp, -sz * sp, cz * sp, sz * cp)


@dataclass(frozen=True)
class PadPose:
    """The pad as the physics has it: TCP (m) and tool pitch, yaw (rad); plain floats (called per step)."""

    p: tuple[float, float, float]
    pitch: float
    yaw: float

    @staticmethod
    def of(pose: ToolPose) -> PadPose:
        """The pad pose of a `ToolPose` (the FK of the measured joints)."""
        x, y, z = pose.tcp
        return PadPose((float(x), float(y), float(z)), float(pose.tool_pitch), float(pose.tool_yaw))


@dataclass
class PadFilter:
    """The pad's state: pose and its rate; `advance` moves it toward a target pose (see PAD_BANDWIDTH)."""

    pose: PadPose
    v: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)  # x, y, z, pitch, yaw rates

    def advance(self, target: PadPose, h: float) -> PadPose:
        """One step of `h` s toward `target` (semi-implicit Euler; stable for h * PAD_BANDWIDTH < 1)."""
        w = PAD_BANDWIDTH
        here = (*self.pose.p, self.pose.pitch, self.pose.yaw)
        goal = (
            *target.p,
            target.pitch,
            self.pose.yaw + math.remainder(target.yaw - self.pose.yaw, 2 * math.pi),
        )
        acc = [w * w * (g - x) - 2.0 * w * vi for x, g, vi in zip(here, goal, self.v, strict=True)]
        linear = math.sqrt(acc[0] ** 2 + acc[1] ** 2 + acc[2] ** 2)
        if linear > PAD_MAX_ACCEL:  # the arm cannot do more: a gap in the joint states is no jolt
            acc[0:3] = [a * PAD_MAX_ACCEL / linear for a in acc[0:3]]
        acc[3:5] = [max(-PAD_MAX_ANGULAR_ACCEL, min(PAD_MAX_ANGULAR_ACCEL, a)) for a in acc[3:5]]
        v = [vi + h * ai for vi, ai in zip(self.v, acc, strict=True)]
        _brake(v, here, goal, range(3), PAD_MAX_ACCEL)
        _brake(v, here, goal, (3,), PAD_MAX_ANGULAR_ACCEL)
        _brake(v, here, goal, (4,), PAD_MAX_ANGULAR_ACCEL)
        x = [xi + h * vi for xi, vi in zip(here, v, strict=True)]
        self.v = tuple(v)  # type: ignore[assignment]
        self.pose = PadPose((x[0], x[1], x[2]), x[3], x[4])
        return self.pose


def _brake(v: list[float], here: tuple[float, ...], goal: tuple[float, ...], axes: Any, limit: float) -> None:
    """Cap the rate along `axes` toward `goal` at what still stops there at `limit` (sqrt(2 limit d)).

    An acceleration-limited filter would otherwise overshoot a far target (a held can driven into what
    is under it: docs/design/cell_model.md, "A paused cell"); within its linear range it never binds.
    """
    e = [goal[i] - here[i] for i in axes]
    d = math.sqrt(sum(x * x for x in e))
    if d <= 0.0:
        return
    toward = sum(v[i] * x for i, x in zip(axes, e, strict=True)) / d
    cap = math.sqrt(2.0 * limit * d)
    if toward > cap:
        for i, x in zip(axes, e, strict=True):
            v[i] -= (toward - cap) * x / d


def target_at(run: tuple[tuple[float, PadPose], tuple[float, PadPose]], t: float) -> PadPose:
    """Where a straight run (ta, a) -> (tb, b) stands at `t` (at its ends before and after it)."""
    (ta, a), (tb, b) = run
    return b if tb - ta <= 0.0 else _lerp_pose(a, b, min(1.0, max(0.0, (t - ta) / (tb - ta))))


def _lerp_pose(a: PadPose, b: PadPose, s: float) -> PadPose:
    """The pose a fraction `s` of the way from `a` to `b` (the yaw the short way round)."""
    dyaw = math.remainder(b.yaw - a.yaw, 2 * math.pi)
    p = (a.p[0] + s * (b.p[0] - a.p[0]), a.p[1] + s * (b.p[1] - a.p[1]), a.p[2] + s * (b.p[2] - a.p[2]))
    return PadPose(p, a.pitch + s * (b.pitch - a.pitch), a.yaw + s * dyaw)
