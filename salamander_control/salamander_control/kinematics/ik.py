"""Closed-form inverse kinematics with the coupled shoulder/beam limits.

Tolerances are explicit and tiny: `REACH_TOL` on the law-of-cosines term and `LIMIT_TOL` on every
joint and coupled limit. A solution within a tolerance outside a bound is *snapped onto* the bound,
never accepted outside it, so every Ok answer satisfies the exact limit checks (`within_limits`). This
is what lets a pose the arm is really in (a joint exactly at its stop, an FK round trip with rounding)
solve, without widening any limit.

Failure statuses follow one check order: reach, base yaw, q1, q2, wrist, coupled. The model, the
statuses and the failure modes this solver avoids: docs/arm_model.md.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any, NamedTuple

from salamander_control.kinematics.feasible import project_to_feasible
from salamander_control.kinematics.model import ArmParams
from salamander_control.kinematics.status import IkStatus

REACH_TOL = 1e-9
"""Tolerance on |c| - 1, the law-of-cosines term (dimensionless). Rounding of an FK round trip is ~1e-16."""
LIMIT_TOL = 1e-9
"""Tolerance on every joint and coupled limit, rad. Inside it a solution is snapped onto the bound."""

_TWO_PI = 2.0 * math.pi
_HALF_PI = 0.5 * math.pi
_DEFAULT = ArmParams()


class ElbowBranch(StrEnum):
    """The two planar solutions. UP: elbow above the shoulder-wrist line (cos(q1 - q2) >= 0).

    With the default coupled limits only UP is feasible; DOWN exists once alpha_max exceeds pi/2.
    """

    UP = "up"
    DOWN = "down"


class IkResult(NamedTuple):
    """Answer of `solve_ik_pitched`.

    Attributes:
        status: Ok or the failure; ``status.reason`` is its reason string.
        q: five joints in motor order, or None when not Ok.
        branch: the elbow branch of `q` (or of the failed preferred solution).
    """

    status: IkStatus
    q: tuple[float, float, float, float, float] | None
    branch: ElbowBranch | None

    @property
    def ok(self) -> bool:
        """Whether the pose was solved."""
        return self.status is IkStatus.OK

    @property
    def reason(self) -> str:
        """The status's reason string (e.g. ``"coupled_limit"``)."""
        return self.status.reason


_BOTH = ((ElbowBranch.UP, 1.0), (ElbowBranch.DOWN, -1.0))


def branch_of(q1: float, q2: float) -> ElbowBranch:
    """Which elbow branch joints (q1, q2) are on."""
    return ElbowBranch.UP if math.cos(q1 - q2) >= 0.0 else ElbowBranch.DOWN


def _pick_angle(a: float, lo: float, hi: float, ref: float) -> float | None:
    """The representation a + 2*pi*k inside [lo, hi] (snapped within LIMIT_TOL) nearest `ref`."""
    best = None
    for v in (a, a - _TWO_PI, a + _TWO_PI):
        if v < lo:
            if v < lo - LIMIT_TOL:
                continue
            v = lo
        elif v > hi:
            if v > hi + LIMIT_TOL:
                continue
            v = hi
        if best is None or abs(v - ref) < abs(best - ref):
            best = v
    return best


def _bad(name: str, value: Any, what: str) -> ValueError:
    return ValueError(f"{name} must be {what}, got {value!r}")


def _check_input(tcp: Any, tool_pitch: Any, tool_yaw: Any) -> tuple[float, float, float, float, float]:
    """Unpack and check the pose; one finiteness test on the hot path, details only on failure."""
    if isinstance(tcp, (str, bytes)):
        raise _bad("tcp", tcp, "three numbers (x, y, z) in metres")
    try:
        x, y, z = tcp
        x, y, z = float(x), float(y), float(z)
    except (TypeError, ValueError) as exc:
        raise _bad("tcp", tcp, "three numbers (x, y, z) in metres") from exc
    try:
        if isinstance(tool_pitch, (str, bytes)):
            raise TypeError
        tp = float(tool_pitch)
    except (TypeError, ValueError) as exc:
        raise _bad("tool_pitch", tool_pitch, "a number (rad)") from exc
    try:
        if isinstance(tool_yaw, (str, bytes)):
            raise TypeError
        ty = float(tool_yaw)
    except (TypeError, ValueError) as exc:
        raise _bad("tool_yaw", tool_yaw, "a number (rad)") from exc
    total = x + y + z + tp + ty  # NaN or inf anywhere makes this non-finite
    if total - total != 0.0:
        for name, v in (("tcp", x), ("tcp", y), ("tcp", z), ("tool_pitch", tp), ("tool_yaw", ty)):
            if not math.isfinite(v):
                raise ValueError(f"{name} must be finite, got {v} (tcp={tcp!r})")
    return x, y, z, tp, ty


def _check_seed(seed: Any) -> tuple[float, float, float, float, float]:
    try:
        s0, s1, s2, s3, s4 = seed
        s = (float(s0), float(s1), float(s2), float(s3), float(s4))
    except (TypeError, ValueError) as exc:
        raise _bad("seed", seed, "five joint positions in motor order") from exc
    total = s[0] + s[1] + s[2] + s[3] + s[4]
    if total - total != 0.0 and not all(math.isfinite(v) for v in s):
        raise ValueError(f"seed must be finite, got {s}")
    return s


def solve_ik_pitched(
    tcp: Any,
    tool_pitch: float,
    tool_yaw: float,
    params: ArmParams = _DEFAULT,
    seed: Any = None,
    branch: ElbowBranch | str | None = None,
) -> IkResult:
    """Joints that put the TCP at `tcp` with the given tool pitch and yaw.

    Args:
        tcp: (x, y, z) of the suction pad tip in base_link, m.
        tool_pitch: rad; 0 = pad straight down. Equals the wrist pitch joint.
        tool_yaw: rad, any turn; base_yaw + pad_mount_yaw + wrist_yaw modulo 2*pi.
        params: the arm model snapshot.
        seed: the current joints. The solution nearest them is returned (elbow branch, base and wrist
            yaw representation), which keeps a monitor on the arm's own pose from jumping.
        branch: restrict to one elbow branch ("up" / "down"); None considers both.

    Returns:
        An `IkResult`. Never raises for an unreachable pose and never returns NaN.

    Raises:
        ValueError: NaN/inf or wrongly shaped `tcp`, `tool_pitch`, `tool_yaw`, `seed`, or an unknown
            `branch`; the message names the argument.
    """
    x, y, z, tp, ty = _check_input(tcp, tool_pitch, tool_yaw)
    s = None if seed is None else _check_seed(seed)
    if branch is not None:
        try:
            branch = ElbowBranch(branch)
        except ValueError as exc:
            raise ValueError(f"branch must be 'up', 'down' or None, got {branch!r}") from exc
    p = params
    l1, l2, d = p.upper_arm_length, p.beam_length, p.tool_drop

    # Wrist target: undo the tool drop along the pitched, yawed pad axis.
    sp = math.sin(tp)
    wx = x + d * math.cos(ty) * sp
    wy = y + d * math.sin(ty) * sp
    zr = z + d * math.cos(tp) - p.base_height
    rho = math.hypot(wx, wy)

    # Law of cosines: sin(q1 - q2) = c.
    c = (rho * rho + zr * zr - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    preferred = branch or (branch_of(s[1], s[2]) if s is not None else ElbowBranch.UP)
    if c > 1.0 or c < -1.0:
        if abs(c) - 1.0 > REACH_TOL:
            return IkResult(IkStatus.OUT_OF_REACH, None, preferred)
        c = 1.0 if c > 0.0 else -1.0
    cd = math.sqrt((1.0 - c) * (1.0 + c))  # |cos(q1 - q2)|

    signs = _BOTH if branch is None else ((branch, 1.0 if branch is ElbowBranch.UP else -1.0),)
    yaw_direct = math.atan2(wy, wx) if rho > 0.0 else (s[0] if s is not None else 0.0)
    ref0, ref4 = (s[0], s[4]) if s is not None else (0.0, 0.0)

    # Wrist pitch does not depend on the candidate; snap it once.
    q3 = tp
    wrist_ok = True
    if q3 < p.wrist_pitch_min or q3 > p.wrist_pitch_max:
        wrist_ok = p.wrist_pitch_min - LIMIT_TOL <= q3 <= p.wrist_pitch_max + LIMIT_TOL
        q3 = min(max(q3, p.wrist_pitch_min), p.wrist_pitch_max)

    # |q1 - q2| >= pi/2 on the DOWN branch; the margin dwarfs rounding and LIMIT_TOL.
    down_infeasible = max(p.alpha_max, p.beta_max) < _HALF_PI - 1e-6
    best_q = None
    best_cost = math.inf
    best_branch = preferred
    failure = IkStatus.OUT_OF_REACH
    # The natural representation (r = +rho) first; the flipped one (base turned by pi, r = -rho) only
    # matters where the arm reaches behind its own base axis, which needs alpha_max far above default.
    reps = [(yaw_direct, rho)]
    seed_behind = s is not None and l1 * math.sin(s[1]) + l2 * math.cos(s[2]) < 0.0
    if seed_behind:
        reps.append((yaw_direct + math.pi, -rho))
    for pass_no in (0, 1):
        for yaw, r in reps:
            natural = r == rho
            if p.yaw_min <= yaw <= p.yaw_max and -math.pi <= yaw - ref0 <= math.pi:
                q0 = yaw  # fast path: no other turn of yaw can be nearer the reference
            else:
                q0 = _pick_angle(yaw, p.yaw_min, p.yaw_max, ref0)
            if q0 is None:
                if natural:
                    failure = IkStatus.YAW_OUT_OF_RANGE
                continue
            q4 = math.remainder(ty - p.pad_mount_yaw - q0, _TWO_PI)
            if not (p.wrist_yaw_min <= q4 <= p.wrist_yaw_max and -math.pi <= q4 - ref4 <= math.pi):
                q4 = _pick_angle(q4, p.wrist_yaw_min, p.wrist_yaw_max, ref4)
            base = _HALF_PI - math.atan2(zr, r)
            for br, sign in signs:
                if sign < 0.0 and br is not preferred and down_infeasible:
                    continue  # the DOWN branch needs |q1 - q2| >= pi/2, which these limits forbid
                cds = sign * cd
                # Upper arm at (pi/2 - q1) from the r axis; the beam turns by (q1 - q2) - pi/2 from it.
                q1 = base + math.atan2(-l2 * cds, l1 + l2 * c)
                if q1 > math.pi or q1 < -math.pi:
                    q1 = math.remainder(q1, _TWO_PI)
                q2 = q1 - math.atan2(c, cds)
                if q2 > math.pi or q2 < -math.pi:
                    q2 = math.remainder(q2, _TWO_PI)
                status = IkStatus.OK
                if q1 < p.q1_min or q1 > p.q1_max:
                    if q1 < p.q1_min - LIMIT_TOL or q1 > p.q1_max + LIMIT_TOL:
                        status = IkStatus.Q1_OUT_OF_RANGE
                    q1 = min(max(q1, p.q1_min), p.q1_max)
                if status is IkStatus.OK and (q2 < p.q2_min or q2 > p.q2_max):
                    if q2 < p.q2_min - LIMIT_TOL or q2 > p.q2_max + LIMIT_TOL:
                        status = IkStatus.Q2_OUT_OF_RANGE
                    q2 = min(max(q2, p.q2_min), p.q2_max)
                if status is IkStatus.OK and (not wrist_ok or q4 is None):
                    status = IkStatus.WRIST_OUT_OF_RANGE
                if status is IkStatus.OK:
                    over = max(q2 - q1 - p.alpha_max, q1 - q2 - p.beta_max)
                    if over > 0.0:
                        if over > LIMIT_TOL:
                            status = IkStatus.COUPLED_LIMIT
                        else:
                            proj = project_to_feasible(q1, q2, p)
                            q1, q2 = proj.q1, proj.q2
                if status is not IkStatus.OK:
                    if natural and br is preferred:
                        failure = status
                    continue
                if s is not None:
                    # Products, not ** 2: a huge finite seed then costs inf instead of raising OverflowError.
                    d0, d1, d2, d4 = q0 - s[0], q1 - s[1], q2 - s[2], q4 - s[4]
                    cost = d0 * d0 + d1 * d1 + d2 * d2 + d4 * d4
                else:
                    cost = 0.0 if br is preferred else 1.0  # without a seed the preferred branch wins
                if cost < best_cost or best_q is None:  # None: even an inf cost beats no answer
                    best_cost, best_q, best_branch = cost, (q0, q1, q2, q3, q4), br
        # Try the flipped representation only when nothing else solved (and it was not tried already).
        if best_q is not None or seed_behind or rho == 0.0 or pass_no == 1:
            break
        reps = [(yaw_direct + math.pi, -rho)]
    if best_q is None:
        return IkResult(failure, None, preferred)
    return IkResult(IkStatus.OK, best_q, best_branch)
