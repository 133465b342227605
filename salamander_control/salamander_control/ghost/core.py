"""The IK ghost's core: from the measured joints to what the ghost shows (no rclpy).

The ghost answers one question for the operator: could the autonomous IK reach the pose the arm is in
right now? It takes the TCP pose of the measured joints (library FK: tool pitch = wrist pitch, tool yaw
= base yaw + pad mount yaw + wrist yaw), solves it with `solve_ik_pitched` seeded with the measured
joints, and reports the IK's status and answer. Inside all limits the answer is the measured pose
itself (the IK is exact and keeps the arm's own elbow branch and yaw turns), so a green ghost sits on
the arm; a red one means the IK would refuse this pose, and why.

Encoder noise: a joint resting on a stop (or on a coupled bound) reads a little past it half of the
time. Within `noise_tolerance` (the node's parameter, default about 1 degree) a measured joint past a
limit counts as at the limit for the ghost's question: `settle_into_limits` puts it onto the limit
before the IK is asked. This widens nothing used for motion; it only changes which pose the ghost asks
about. Farther out the measured pose is asked as it is, and the ghost turns red.

The ghost's drawing is the chain base -> shoulder -> elbow -> wrist -> TCP (`arm_points`). When the IK
fails there is no IK answer to draw: the red ghost is drawn on the measured joints, labelled with the
reason, and no ghost joint state is claimed (`Ghost.joints` is None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from salamander_control.kinematics import (
    ArmParams,
    IkStatus,
    forward_kinematics,
    solve_ik_pitched,
    within_limits,
    wrist_position,
)

Vec3 = tuple[float, float, float]
Rgba = tuple[float, float, float, float]

GREEN: Rgba = (0.15, 0.85, 0.25, 0.6)
"""Colour of a solvable ghost (translucent, so the real arm shows through)."""
RED: Rgba = (0.95, 0.1, 0.1, 0.85)
"""Colour of an unsolvable ghost and its label."""
LABEL_LIFT = 0.08
"""Height of the reason label above the arm's highest drawn point, m."""
_NUDGE_STEPS = 8  # ulp steps that make a settled coupled bound pass the exact float check
_SLACK = 1e-12  # rad; rounding of the settling arithmetic, allowed beyond the tolerance


@dataclass(frozen=True)
class ArmPoints:
    """The arm's joint points in base_link, m: what a stick-figure drawing of the arm needs.

    Attributes:
        base: base_link origin.
        shoulder: shoulder axis (base_height above the base).
        elbow: elbow axis (end of the upper arm).
        wrist: wrist axis (end of the beam), as the library's `wrist_position`.
        tcp: suction pad tip, as the library's `forward_kinematics`.
    """

    base: Vec3
    shoulder: Vec3
    elbow: Vec3
    wrist: Vec3
    tcp: Vec3

    def chain(self) -> tuple[Vec3, ...]:
        """The points in link order, base first: the polyline of the links."""
        return (self.base, self.shoulder, self.elbow, self.wrist, self.tcp)


def arm_points(q: Sequence[float], params: ArmParams) -> ArmPoints:
    """Joint points of joints `q` (motor order) from the arm model (docs/arm_model.md).

    Each motor angle is its link's absolute attitude (parallelogram linkage): the upper arm leaves the
    shoulder at q1 from vertical, the beam leaves the elbow at q2 below horizontal, both in the vertical
    plane at base yaw q0. The wrist and TCP come from the library itself, so the drawing can never
    disagree with the FK the IK inverts.

    Raises:
        ValueError: `q` is not five finite numbers.
    """
    tcp = forward_kinematics(q, params).tcp
    wrist = wrist_position(q, params)
    q0, q1 = float(q[0]), float(q[1])
    h, l1 = params.base_height, params.upper_arm_length
    reach = l1 * math.sin(q1)
    elbow = (reach * math.cos(q0), reach * math.sin(q0), h + l1 * math.cos(q1))
    return ArmPoints((0.0, 0.0, 0.0), (0.0, 0.0, h), elbow, wrist, tcp)


@dataclass(frozen=True)
class Ghost:
    """What the ghost shows for one measured joint vector.

    Attributes:
        status: the IK's answer for the measured TCP pose.
        tcp: the measured TCP, base_link, m (of the joints settled onto a limit within the noise
            tolerance, where that applied: the pose the IK was asked for).
        tool_pitch: the measured tool pitch (= wrist pitch), rad.
        tool_yaw: the measured tool yaw, wrapped into [-pi, pi], rad.
        joints: the IK's joints (motor order) when solvable, else None (no fake answer).
        points: the drawn arm: the IK's joints when solvable, else the measured joints.
    """

    status: IkStatus
    tcp: Vec3
    tool_pitch: float
    tool_yaw: float
    joints: tuple[float, ...] | None
    points: ArmPoints

    @property
    def ok(self) -> bool:
        """Whether the IK can solve the measured pose."""
        return self.status is IkStatus.OK

    @property
    def reason(self) -> str:
        """The reason string of `status` (e.g. ``"coupled_limit"``)."""
        return self.status.reason

    @property
    def color(self) -> Rgba:
        """GREEN when solvable, RED when not."""
        return GREEN if self.ok else RED

    @property
    def label(self) -> str | None:
        """Text to show next to the ghost: the reason when unsolvable, None when solvable."""
        return None if self.ok else self.reason

    @property
    def label_position(self) -> Vec3:
        """Where the label goes: above the arm's highest point, over the TCP."""
        top = max(p[2] for p in self.points.chain())
        return (self.tcp[0], self.tcp[1], top + LABEL_LIFT)


def settle_into_limits(measured: Sequence[float], params: ArmParams, tolerance: float) -> tuple[float, ...]:
    """The joints nearest `measured` inside every limit, if no joint has to move more than `tolerance`.

    Encoder noise: each joint of an arm resting on a limit reads within `tolerance` (rad) of its true
    angle, so a reading that moving every joint by at most `tolerance` brings inside all limits is taken
    as the arm on them. Each joint past its own bound is set onto it; a coupled bound still crossed is
    met by moving the beam (q2) first and the shoulder (q1) for the rest, each within its own
    `tolerance`. Where no such point exists (a limit crossed by more), `measured` comes back unchanged,
    as it does inside every limit. `params` is only read: no limit is widened.

    Raises:
        ValueError: `measured` is not five finite numbers, or `tolerance` is negative or not finite.
    """
    if not (math.isfinite(tolerance) and tolerance >= 0.0):
        raise ValueError(f"tolerance must be a finite number >= 0 rad, got {tolerance}")
    raw = tuple(float(v) for v in measured)
    if len(raw) != 5 or not all(math.isfinite(v) for v in raw):
        raise ValueError(f"measured must be five finite joint positions, got {list(measured)}")
    if tolerance == 0.0 or within_limits(raw, params):
        return raw
    q = list(raw)
    for i, (lo, hi) in enumerate(zip(params.joint_lower, params.joint_upper, strict=True)):
        if lo - tolerance <= q[i] < lo:
            q[i] = lo
        elif hi < q[i] <= hi + tolerance:
            q[i] = hi
    p = params
    # How far each of q1, q2 may still move up / down: within `tolerance` of its reading, inside its box.
    up1, down1 = min(raw[1] + tolerance, p.q1_max) - q[1], q[1] - max(raw[1] - tolerance, p.q1_min)
    up2, down2 = min(raw[2] + tolerance, p.q2_max) - q[2], q[2] - max(raw[2] - tolerance, p.q2_min)
    if (over := q[2] - q[1] - p.alpha_max) > 0.0:  # beam down first, then shoulder up
        d2 = min(over, max(down2, 0.0))
        q[2], q[1] = q[2] - d2, q[1] + min(over - d2, max(up1, 0.0))
    elif (over := q[1] - q[2] - p.beta_max) > 0.0:  # beam up first, then shoulder down
        d2 = min(over, max(up2, 0.0))
        q[2], q[1] = q[2] + d2, q[1] - min(over - d2, max(down1, 0.0))
    for _ in range(_NUDGE_STEPS):  # rounding: step onto the feasible side by an ulp of the difference
        # (an ulp of q2 alone is far too small when q2 is near 0: 5e-324 against 1.1e-16 at 0.87)
        step = math.ulp(max(abs(q[1]), abs(q[2])))
        if q[2] - q[1] > p.alpha_max:  # the beam down, or the shoulder up where the beam is on its stop
            if q[2] - step >= p.q2_min:
                q[2] -= step
            else:
                q[1] += step
        elif q[1] - q[2] > p.beta_max:  # the beam up, or the shoulder down where the beam is on its stop
            if q[2] + step <= p.q2_max:
                q[2] += step
            else:
                q[1] -= step
        else:
            break
    moved = max(abs(a - b) for a, b in zip(q, raw, strict=True))
    if not within_limits(q, params) or moved > tolerance + _SLACK:
        return raw
    return tuple(q)


def evaluate_ghost(measured: Sequence[float], params: ArmParams, noise_tolerance: float = 0.0) -> Ghost:
    """The ghost of the measured joints `measured` (motor order) under the arm model `params`.

    A measured pose beyond a limit gives the IK's reason for it (e.g. ``coupled_limit`` past
    alpha_max). Base or wrist yaw beyond their range by a whole turn are the same physical pose as an
    in-range yaw, so the IK solves them and the ghost shows the in-range representation. A limit
    crossed by at most `noise_tolerance` (rad) counts as met (`settle_into_limits`).

    Raises:
        ValueError: `measured` is not five finite numbers, or so large that the tool yaw overflows
            (the library refuses both; callers skip such a joint state); a negative `noise_tolerance`.
    """
    asked = measured
    if noise_tolerance != 0.0:
        forward_kinematics(measured, params)  # the library's own refusal first (lengths, NaN, overflow)
        asked = settle_into_limits(measured, params, noise_tolerance)
    pose = forward_kinematics(asked, params)
    result = solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw, params, seed=asked)
    shown = result.q if result.ok else measured
    return Ghost(
        status=result.status,
        tcp=pose.tcp,
        tool_pitch=pose.tool_pitch,
        tool_yaw=pose.tool_yaw,
        joints=result.q,
        points=arm_points(shown, params),
    )
