"""The gamepad controller core: modes, place jog, confirm edges, joint jog inside every limit, bad Joys.

Pure (no ROS). Joy samples use the DualShock 4 default layout of config/teleop.yaml (8 axes, 13 buttons).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control import params_file
from salamander_control.kinematics import ALPHA_BETA_RANGE, REST_POSTURE, ArmParams, within_limits
from salamander_teleop.controller.core import (
    JOY_BURST,
    Confirm,
    Controller,
    Jog,
    JointTarget,
    JoySample,
    Measured,
    Mode,
    ModeChange,
    NewBox,
    Rejected,
    RunCancel,
    RunStart,
    limit_step,
)
from salamander_teleop.controller.mapping import Control, JoyMapping, apply_deadzone
from salamander_testing import REPO as REPO_ROOT
from salamander_testing.config_files import node_config
from salamander_testing.kin_strategies import feasible_joints

M = JoyMapping()
ARM = ArmParams()
LX, LY, RX, RY, DPAD_X, DPAD_Y = 0, 1, 3, 4, 6, 7
CIRCLE, TRIANGLE, SQUARE, R1 = 1, 2, 3, 5
T0 = 1000.0
REPO = REPO_ROOT


def joy(stamp: float, axes: dict[int, float] | None = None, pressed: tuple[int, ...] = ()) -> JoySample:
    a = [0.0] * 8
    for i, v in (axes or {}).items():
        a[i] = v
    b = [1 if i in pressed else 0 for i in range(13)]
    return JoySample(tuple(a), tuple(b), stamp)


def of(actions, kind):
    return [a for a in actions if isinstance(a, kind)]


class Rig:
    """A controller plus a clock; `press` feeds a Joy stamped now, `wait` advances and ticks at 50 Hz."""

    def __init__(self, mapping=M, arm=ARM, measured=REST_POSTURE, follow=False, primed=True):
        self.c = Controller(mapping, arm)
        self.now = T0
        self.q = tuple(measured)
        self.follow = follow  # the measured arm follows every target exactly
        self.out: list = []
        if primed:  # a neutral Joy first: the first Joy of a stream is a baseline, never an edge
            self.feed()

    def measured(self) -> Measured:
        return Measured(self.q, self.now)

    def _take(self, actions):
        for a in actions:
            if isinstance(a, JointTarget) and self.follow:
                self.q = a.q
        self.out.extend(actions)
        return actions

    def feed(self, axes=None, pressed=(), dt=0.011):  # 11 ms: above the 10 ms Joy-output limit
        self.now += dt
        return self._take(self.c.feed(joy(self.now, axes, pressed), self.now, self.measured()))

    def wait(self, seconds, period=0.02):
        got = []
        for _ in range(round(seconds / period)):
            self.now += period
            got += self._take(self.c.tick(self.now, self.measured()))
        return got

    def hold(self, seconds, axes=None, pressed=(), joy_period=0.05):
        """Keep feeding the same Joy (like joy_node's autorepeat) and ticking the timer in between."""
        got = []
        for _ in range(round(seconds / joy_period)):
            got += self.feed(axes, pressed, dt=0.0001)
            got += self.wait(joy_period - 0.0001, period=(joy_period - 0.0001) / 2)
        return got

    def to_auto(self):
        got = self.feed({DPAD_Y: -1.0}) + self.feed()
        assert self.c.mode is Mode.AUTO
        return got


# ------------------------------------------------------------------------------------------- modes
def test_dpad_down_enters_auto_once_and_dpad_up_returns_to_manual() -> None:
    rig = Rig()
    assert rig.c.mode is Mode.MANUAL
    assert of(rig.feed({DPAD_Y: -1.0}), ModeChange) == [ModeChange(Mode.AUTO)]
    assert of(rig.feed({DPAD_Y: -1.0}) + rig.feed({DPAD_Y: -1.0}), ModeChange) == []  # held: no repeat
    assert of(rig.feed() + rig.feed({DPAD_Y: -1.0}), ModeChange) == []  # already auto
    assert of(rig.feed({DPAD_Y: 1.0}), ModeChange) == [ModeChange(Mode.MANUAL)]
    assert rig.c.mode is Mode.MANUAL


def test_mode_buttons_can_be_plain_buttons_for_the_game_controller_layout() -> None:
    mapping = JoyMapping(
        auto_mode=Control("button", 12), manual_mode=Control("button", 11), joint_axes=(0, 1, 3, -1, 2)
    )
    rig = Rig(mapping)
    assert of(rig.feed(pressed=(12,)), ModeChange) == [ModeChange(Mode.AUTO)]
    assert of(rig.feed() + rig.feed(pressed=(11,)), ModeChange) == [ModeChange(Mode.MANUAL)]


# --------------------------------------------------------------------------------------- place jog
def test_r1_turns_left_stick_into_place_jog_and_release_sends_one_zero() -> None:
    rig = Rig()
    rig.to_auto()
    assert of(rig.feed({LY: 1.0}, (R1,)), Jog) == [Jog(0.05, 0.0)]  # stick up = base_link +x
    assert of(rig.feed({LX: 1.0}, (R1,)), Jog) == [Jog(0.0, 0.05)]  # stick left = +y
    vx, vy = of(rig.feed({LX: 1.0, LY: 1.0}, (R1,)), Jog)[0].__dict__.values()
    assert math.hypot(vx, vy) == pytest.approx(0.05) and vx == pytest.approx(vy)  # diagonal not faster
    held = rig.hold(0.5, {LY: -1.0}, (R1,))
    assert of(held, Jog) and all(j == Jog(-0.05, 0.0) for j in of(held, Jog))
    assert len(of(held, Jog)) >= 0.5 * M.target_rate_hz  # the stream keeps up between Joys
    released = rig.feed({LY: -1.0})
    assert of(released, Jog) == [Jog(0.0, 0.0)]
    after = rig.hold(0.5, {LY: -1.0})  # stick still deflected, R1 up: nothing more
    assert of(after, Jog) == []


def test_place_jog_only_in_auto_mode_and_never_faster_than_the_speed() -> None:
    rig = Rig()
    assert of(rig.hold(0.2, {LY: 1.0}, (R1,)), Jog) == []  # manual: R1 is no deadman
    rig.feed()
    rig.to_auto()
    for x, y in ((1.0, 1.0), (-1.0, 0.7), (0.3, -1.0), (1.0, 0.0)):
        for jog in of(rig.feed({LX: x, LY: y}, (R1,), dt=0.02), Jog):
            assert math.hypot(jog.vx, jog.vy) <= 0.05 + 1e-12


def test_leaving_auto_while_jogging_stops_the_twist_first() -> None:
    rig = Rig()
    rig.to_auto()
    rig.feed({LY: 1.0}, (R1,))
    out = rig.feed({LY: 1.0, DPAD_Y: 1.0}, (R1,))
    assert out[:2] == [Jog(0.0, 0.0), ModeChange(Mode.MANUAL)]


def test_deadzone_is_removed_and_the_rest_rescaled() -> None:
    rig = Rig()
    rig.to_auto()
    assert of(rig.feed({LY: 0.09}, (R1,), dt=0.02), Jog) == [Jog(0.0, 0.0)]
    jog = of(rig.feed({LY: 0.55}, (R1,), dt=0.02), Jog)[0]
    assert jog.vx == pytest.approx((0.55 - 0.1) / 0.9 * 0.05)
    assert apply_deadzone(-0.1, 0.1) == 0.0 and apply_deadzone(-1.5, 0.1) == -1.0
    manual = Rig()
    assert of(manual.hold(0.3, {LY: 0.09, RY: -0.05, LX: 0.1}), JointTarget) == []


# ----------------------------------------------------------------------------------------- confirm
def test_square_held_confirms_once_per_press_in_either_mode() -> None:
    rig = Rig()
    rig.feed()
    held = rig.hold(1.0, pressed=(SQUARE,))
    assert of(held, Confirm) == [Confirm(True)]
    rig.feed()
    assert of(rig.feed(pressed=(SQUARE,)), Confirm) == [Confirm(True)]
    rig.feed()
    rig.to_auto()
    assert of(rig.hold(0.3, pressed=(SQUARE,)), Confirm) == [Confirm(True)]
    rig.feed()
    assert of(rig.hold(0.3, pressed=(CIRCLE,)), Confirm) == [Confirm(False)]  # abort


# -------------------------------------------------------------------------------------------- runs
OPTIONS, SHARE = 9, 8


def test_options_starts_a_run_in_auto_mode_once_per_press() -> None:
    rig = Rig()
    refused = rig.feed(pressed=(OPTIONS,))  # manual mode: no run, and the log says why
    assert of(refused, RunStart) == [] and [r.kind for r in of(refused, Rejected)] == ["mode"]
    assert "auto mode only" in of(refused, Rejected)[0].reason
    rig.feed()
    rig.to_auto()
    assert of(rig.hold(0.5, pressed=(OPTIONS,)), RunStart) == [RunStart()]  # held: one goal
    rig.feed()
    assert of(rig.feed(pressed=(OPTIONS,)), RunStart) == [RunStart()]


def test_share_cancels_the_run_in_either_mode() -> None:
    rig = Rig()
    assert of(rig.hold(0.3, pressed=(SHARE,)), RunCancel) == [RunCancel()]
    rig.feed()
    rig.to_auto()
    assert of(rig.feed(pressed=(SHARE,)), RunCancel) == [RunCancel()]
    assert of(rig.out, RunStart) == []


L1 = 4


def test_l1_says_a_new_box_is_in_once_per_press_in_either_mode() -> None:
    rig = Rig()
    assert of(rig.hold(0.3, pressed=(L1,)), NewBox) == [NewBox()]  # held: once
    rig.feed()
    rig.to_auto()
    assert of(rig.feed(pressed=(L1,)), NewBox) == [NewBox()]
    assert of(rig.out, RunStart) == [] and of(rig.out, RunCancel) == []
    unbound = Rig(JoyMapping.from_params({"new_box": "none"}))
    assert of(unbound.feed() + unbound.feed(pressed=(L1,)), NewBox) == []


def test_the_run_buttons_are_parameters_like_every_other_control() -> None:
    mapping = JoyMapping.from_params({"run_start": "button 10", "run_cancel": "none"})
    assert mapping.run_start == Control("button", 10) and mapping.run_cancel == Control()
    rig = Rig(mapping)
    rig.to_auto()
    assert of(rig.feed(pressed=(10,)), RunStart) == [RunStart()]
    assert of(rig.feed() + rig.feed(pressed=(SHARE,)), RunCancel) == []
    with pytest.raises(ValueError, match="both bound"):
        JoyMapping.from_params({"run_start": "button 3"})  # SQUARE confirms already


def test_a_button_already_held_at_start_or_after_a_gap_is_not_a_press() -> None:
    rig = Rig(primed=False)
    assert of(rig.feed(pressed=(SQUARE,)), Confirm) == []  # first Joy: baseline only
    assert of(rig.feed(pressed=(SQUARE,), dt=1.0), Confirm) == []  # the stream was gone for 1 s
    assert of(rig.feed() + rig.feed(pressed=(SQUARE,)), Confirm) == [Confirm(True)]


# -------------------------------------------------------------------------------------- joint jog
def test_stick_jogs_the_joint_at_its_rate_from_the_measured_posture() -> None:
    rig = Rig(follow=True)
    rig.hold(1.0, {LY: 1.0})
    targets = of(rig.out, JointTarget)
    assert len(targets) >= 50  # at least target_rate_hz while held
    assert targets[0].q[1] == pytest.approx(REST_POSTURE[1], abs=0.01)  # seeded from the measurement
    assert targets[-1].q[1] - REST_POSTURE[1] == pytest.approx(0.3, abs=0.02)  # 0.3 rad/s for 1 s
    assert targets[-1].q[0] == REST_POSTURE[0] and targets[-1].q[3:] == REST_POSTURE[3:]
    rig.out.clear()
    rig.hold(0.5)  # centred: the jog stops
    assert of(rig.out, JointTarget) == []


def test_target_never_leads_the_measured_arm_by_more_than_max_lead() -> None:
    rig = Rig(measured=REST_POSTURE, follow=False)  # the arm does not move (refused goals, say)
    rig.hold(3.0, {LX: 1.0})
    last = of(rig.out, JointTarget)[-1].q
    assert last[0] == pytest.approx(REST_POSTURE[0] + M.max_lead)


def test_joint_jog_stops_at_the_coupled_limit_without_dragging_the_shoulder() -> None:
    start = (0.0, -0.5, 0.85, 0.0, 0.0)  # q2 - q1 = 1.35, alpha_max 1.40
    rig = Rig(measured=start, follow=True)
    rig.hold(2.0, {RY: -1.0})  # right stick down = beam down (q2 up)
    last = of(rig.out, JointTarget)[-1].q
    assert last[2] - last[1] == pytest.approx(ARM.alpha_max, abs=1e-9)
    assert last[1] == pytest.approx(-0.5, abs=1e-12)  # the shoulder did not move
    assert within_limits(last, ARM)


def test_a_stick_held_when_the_controller_starts_jogs_nothing_until_it_centres() -> None:
    # A respawned controller, or one started with a thumb on the stick (or a drifting stick): before, its
    # first Joy jogged the arm at once; entering manual mode at start now latches as entering it later.
    rig = Rig(primed=False)
    assert of(rig.hold(0.3, {LY: 1.0}), JointTarget) == []
    rig.feed()  # centred
    assert of(rig.hold(0.2, {LY: 1.0}), JointTarget) != []


def test_jog_needs_fresh_joint_states() -> None:
    c = Controller(M, ARM)
    c.feed(joy(T0 - 0.02), T0 - 0.02, None)  # the sticks centred first (`Controller`: latched at start)
    out = c.feed(joy(T0, {LY: 1.0}), T0, None)
    assert of(out, JointTarget) == [] and of(out, Rejected)[0].kind == "joint_states"
    out = c.feed(joy(T0 + 0.1, {LY: 1.0}), T0 + 0.1, Measured(REST_POSTURE, T0 - 1.0))
    assert of(out, JointTarget) == [] and "old" in of(out, Rejected)[0].reason
    rig = Rig(follow=True)
    rig.feed({LY: 1.0})
    stopped_at = rig.now  # the measurement stops arriving while the stick stays up
    late = []
    for _ in range(50):
        rig.now += 0.02
        actions = rig.c.feed(joy(rig.now, {LY: 1.0}), rig.now, Measured(rig.q, stopped_at))
        actions += rig.c.tick(rig.now + 0.01, Measured(rig.q, stopped_at))
        if rig.now > stopped_at + M.joint_state_timeout_s + 0.02:
            late += actions
        rig.out += actions
    assert any(r.kind == "joint_states" for r in of(rig.out, Rejected))
    assert of(late, JointTarget) == []


def test_rest_preset_sends_rest_in_manual_only_and_sticks_must_recentre() -> None:
    rig = Rig(measured=(0.5, 0.2, 0.3, 0.1, 0.2))
    out = rig.feed({LY: 1.0}, (TRIANGLE,))
    assert out == [JointTarget(REST_POSTURE, "preset:rest")]
    assert of(rig.hold(0.3, {LY: 1.0}), JointTarget) == []  # stick still held from before: latched
    rig.feed()
    assert of(rig.feed({LY: 1.0}), JointTarget)  # centred once: jogs again
    narrowed = ARM.with_changes(alpha_max=1.0)
    preset = Rig(arm=narrowed).feed(pressed=(TRIANGLE,))[0]
    assert within_limits(preset.q, narrowed) and preset.q != REST_POSTURE
    auto = Rig()
    auto.to_auto()
    assert of(auto.feed(pressed=(TRIANGLE,)), JointTarget) == []


def test_entering_manual_with_a_deflected_stick_does_not_jog_until_it_centres() -> None:
    rig = Rig()
    rig.to_auto()
    rig.feed({LY: 1.0}, (R1,))
    rig.feed({LY: 1.0, DPAD_Y: 1.0}, (R1,))
    assert rig.c.mode is Mode.MANUAL
    assert of(rig.hold(0.3, {LY: 1.0}), JointTarget) == []
    rig.feed()
    assert of(rig.feed({LY: 1.0}), JointTarget)


def test_joy_driven_outputs_are_rate_limited_and_the_timer_fills_in() -> None:
    rig = Rig(follow=True)
    stream = []
    for i in range(200):
        stream += rig.feed({LY: 0.5 + 0.002 * i}, dt=0.001)  # a 1 kHz Joy stream for 0.2 s
    # joy_rate_limit_hz 100 Hz on average after a burst allowance of JOY_BURST.
    assert JOY_BURST + 0.2 * 100 - 2 <= len(of(stream, JointTarget)) <= JOY_BURST + 0.2 * 100 + 1
    assert len(of(rig.wait(0.2), JointTarget)) == pytest.approx(10, abs=1)  # target_rate_hz 50 Hz


def test_a_backlog_of_joys_still_gets_its_newest_one_answered() -> None:
    rig = Rig(follow=True)
    t = rig.now
    out = []
    # The executor was held up: three stick changes, 20 ms apart, are handled within a millisecond.
    for k, value in enumerate((1.0, 0.0, -1.0, 0.0, 1.0)):
        out.append(rig.c.feed(joy(t + 0.001 + 0.02 * k, {LY: value}), t + 0.1 + 0.0002 * k, rig.measured()))
    assert [bool(of(o, JointTarget)) for o in out] == [True, False, True, False, True]


# ----------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "sample, words",
    [
        (JoySample((0.0,) * 7, (0,) * 13, T0), "axes"),
        (JoySample((0.0,) * 8, (0,) * 5, T0), "buttons"),
        (JoySample((0.0, math.nan) + (0.0,) * 6, (0,) * 13, T0), "not finite"),
        (JoySample((math.inf,) + (0.0,) * 7, (0,) * 13, T0), "not finite"),
        (JoySample((0.0,) * 8, (0,) * 13, 0.0), "stamp"),
        (JoySample((0.0,) * 8, (0,) * 13, T0 - 0.6), "stale"),
        (JoySample((0.0,) * 8, (0,) * 13, T0 + 5.0), "ahead"),
    ],
)
def test_malformed_or_stale_joy_is_refused_with_a_reason(sample: JoySample, words: str) -> None:
    c = Controller(M, ARM)
    out = c.feed(sample, T0, Measured(REST_POSTURE, T0))
    assert len(out) == 1 and isinstance(out[0], Rejected) and words in out[0].reason


def test_bad_joys_change_nothing_while_jogging() -> None:
    rig = Rig()
    rig.to_auto()
    rig.feed({LY: 1.0}, (R1,))
    t = rig.now
    bad = [
        JoySample((0.0,) * 7, (0,) * 13, t + 0.001),  # too short
        JoySample((math.nan,) * 8, (0,) * 13, t + 0.002),
        joy(t - 0.001, {DPAD_Y: 1.0}),  # out of order, would switch to manual and release R1
        joy(t, {DPAD_Y: 1.0}),  # same stamp again: a duplicate
        joy(t + 0.003 - 0.6, {DPAD_Y: 1.0}),  # stale
    ]
    for sample in bad:
        rig.now = t + 0.004
        assert all(isinstance(a, Rejected) for a in rig.c.feed(sample, rig.now, rig.measured()))
    assert rig.c.mode is Mode.AUTO
    rig.now = t + 0.03
    assert rig.c.tick(rig.now, rig.measured()) == [Jog(0.05, 0.0)]  # still jogging as before


def test_a_stale_stream_while_r1_is_held_ends_in_one_zero_twist() -> None:
    rig = Rig()
    rig.to_auto()
    rig.feed({LY: 1.0}, (R1,))
    out = []
    for _ in range(60):  # Joys keep coming but stamped 0.7 s late: every one refused
        rig.now += 0.02
        out += rig.c.feed(joy(rig.now - 0.7, {LY: 1.0}, (R1,)), rig.now, rig.measured())
        out += rig.c.tick(rig.now, rig.measured())
    jogs = of(out, Jog)
    assert jogs[-1] == Jog(0.0, 0.0) and jogs.count(Jog(0.0, 0.0)) == 1
    assert all(isinstance(a, Rejected) for a in out[: out.index(Jog(0.0, 0.0))] if not isinstance(a, Jog))
    assert any(r.kind == "watchdog" for r in of(out, Rejected))
    silent = Rig()
    silent.to_auto()
    silent.feed({LY: 1.0}, (R1,))
    ticks = silent.wait(1.0)
    assert of(ticks, Jog)[-1] == Jog(0.0, 0.0)
    assert len([j for j in of(ticks, Jog) if j != Jog(0.0, 0.0)]) <= M.joy_timeout_s * M.target_rate_hz + 1


def test_manual_jog_stops_when_the_joy_stream_dies() -> None:
    rig = Rig(follow=True)
    rig.feed({LY: 1.0})
    out = rig.wait(2.0)
    targets = of(out, JointTarget)
    assert len(targets) <= M.joy_timeout_s * M.target_rate_hz + 1
    assert any(r.kind == "watchdog" for r in of(out, Rejected))


# ------------------------------------------------------------------------- limits (property test)
samples = st.floats(-1.5, 1.5, allow_nan=False)
event = st.tuples(
    st.sampled_from(["joy", "tick"]),
    st.floats(0.0, 0.15, allow_nan=False),  # time step, s
    # LX, LY, RX, RY, DPAD_X, DPAD_Y (the mode switches)
    st.tuples(samples, samples, samples, samples, *[st.sampled_from([-1.0, 0.0, 1.0])] * 2),
    st.sampled_from([(), (TRIANGLE,), (R1,)]),
)
limits = st.floats(*ALPHA_BETA_RANGE, allow_nan=False)


@st.composite
def start_and_arm(draw):
    arm = ArmParams(alpha_max=draw(limits), beta_max=draw(limits))
    q = draw(feasible_joints(arm))
    if draw(st.booleans()):  # a measurement a little outside the limits (sensor noise at a stop)
        q = tuple(v + draw(st.floats(-0.05, 0.05)) for v in q)
    return arm, q


@settings(max_examples=1000, deadline=None)
@given(start_and_arm(), st.lists(event, min_size=1, max_size=40), st.booleans())
def test_every_joint_target_is_inside_every_limit(start, events, follow) -> None:
    arm, q = start
    mapping = JoyMapping(joint_speeds=(2.0, -2.0, 2.0, -2.0, 2.0), max_lead=0.3)  # the fastest, the longest
    rig = Rig(mapping, arm, measured=q, follow=follow)
    for kind, dt, (lx, ly, rx, ry, dx, dy), pressed in events:
        if kind == "joy":
            rig.feed({LX: lx, LY: ly, RX: rx, RY: ry, DPAD_X: dx, DPAD_Y: dy}, pressed, dt=max(dt, 1e-4))
        else:
            rig.now += dt
            rig._take(rig.c.tick(rig.now, rig.measured()))
    for target in of(rig.out, JointTarget):
        assert all(math.isfinite(v) for v in target.q)
        assert within_limits(target.q, arm), (target, arm)
    for jog in of(rig.out, Jog):
        assert math.hypot(jog.vx, jog.vy) <= mapping.place_jog_speed + 1e-12


@settings(max_examples=1000, deadline=None)
@given(start_and_arm(), st.lists(st.floats(-0.3, 0.3, allow_nan=False), min_size=5, max_size=5))
def test_limit_step_never_leaves_the_limits_and_stops_at_them(start, step) -> None:
    arm, q = start
    out = limit_step(q, [a + b for a, b in zip(q, step, strict=True)], arm)
    assert within_limits(out, arm)
    if within_limits(q, arm):  # from inside, the step only shortens: never moves against the request
        for a, b, d in zip(q, out, step, strict=True):
            assert (b - a) * d >= -1e-12


def test_limit_step_in_a_polygon_thinner_than_rounding() -> None:
    """Found by the property test above: alpha_max = 0 and a subnormal beta_max made the shared
    projection's rounding nudge oscillate and raise (kinematics/feasible.py `_nudge_inside`)."""
    arm = ArmParams(alpha_max=0.0, beta_max=5.568595998467062e-44)
    q = (-math.pi, 0.0, 0.0, -1.5708, -math.pi)
    out = limit_step(q, [q[0], 0.25, 0.1875, q[3], q[4]], arm)
    assert within_limits(out, arm) and out[1] < 1e-40


# ------------------------------------------------------------------------------------ the mapping
def test_control_strings_parse_and_print_back() -> None:
    for text in ("button 3", "axis 7-", "axis 12+", "none"):
        assert str(Control.parse(text)) == text
    assert Control.parse(" Axis7- ") == Control("axis", 7, -1)
    for bad in ("button", "axis 7", "button -1", "btn 3", "axis 99+", ""):
        with pytest.raises(ValueError):
            Control.parse(bad)


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"confirm": Control("button", 5)}, "both bound"),
        ({"auto_mode": Control("axis", 1, -1)}, "also jogs"),
        ({"joint_axes": (0, 0, 4, 6, 3)}, "both use axis 0"),
        ({"place_jog_speed": 0.2}, "place_jog.speed"),
        ({"deadzone": math.nan}, "finite"),
        ({"joint_speeds": (0.5, 0.3, -0.3, 0.5, 9.0)}, "wrist_yaw.speed"),
        ({"joint_axes": (0, 1, 4, 6)}, "5 entries"),
        # A dead pad's watchdog and the travel after the stick is let go are bounded (10 s and 1 rad were
        # accepted: a twist re-published for 10 s, a joint running on for 1 rad).
        ({"joy_timeout_s": 1.0}, "joy_timeout_s"),
        ({"max_lead": 0.5}, "max_lead"),
    ],
)
def test_mapping_refuses_inconsistent_bindings(changes, words) -> None:
    with pytest.raises(ValueError, match=words):
        JoyMapping(**changes)


def test_config_file_declares_exactly_the_node_parameters_with_the_defaults() -> None:
    # teleop.yaml holds the bindings; the arm model comes from config/arm.yaml, loaded before it.
    fqn = "/salamander/controller_node"
    own = params_file.node_values([REPO / "config" / "teleop.yaml"], fqn, require_section=True)
    flat = node_config("controller_node", fqn)
    defaults = M.to_params()
    arm_keys = set(ArmParams.__dataclass_fields__)
    assert set(own) == set(defaults)
    assert set(flat) == set(defaults) | arm_keys
    assert JoyMapping.from_params(flat) == M
    assert flat["alpha_max"] == ARM.alpha_max and flat["beta_max"] == ARM.beta_max
    assert ArmParams(**{k: flat[k] for k in arm_keys}) == ARM
    assert M.needs() == (8, 10)  # OPTIONS (run_start) is button 9


# ---------------------------------------------------------------------- Joy fuzz (property test)
wild_floats = st.one_of(
    st.floats(-1.5, 1.5),  # a stick or a hat
    st.sampled_from([-1.0, 0.0, 1.0]),  # a hat, a trigger at rest
    st.floats(allow_nan=True, allow_infinity=True),  # NaN, inf, 1e308, -0.0, subnormals
)
wild_joy = st.tuples(
    st.floats(0.0, 0.3, allow_nan=False),  # time step before it, s
    # its stamp against the clock: in order, late, stale, a little or far ahead, or no time at all
    st.one_of(st.floats(-0.5, 0.5), st.sampled_from([-1e9, -T0, 1e9, math.nan, math.inf, -math.inf])),
    # axes and buttons: mostly the DS4's 8 and 13, sometimes too few or too many
    st.one_of(st.lists(wild_floats, min_size=8, max_size=8), st.lists(wild_floats, max_size=12)),
    st.one_of(
        st.lists(st.integers(0, 1), min_size=13, max_size=13),
        st.lists(st.integers(-(2**31), 2**31 - 1), max_size=16),
    ),
    st.booleans(),  # a timer tick too
)


@settings(max_examples=400, deadline=None)
@given(st.lists(wild_joy, max_size=30), st.floats(0.001, 0.5, allow_nan=False))
def test_after_any_joy_fuzz_a_clean_neutral_then_dpad_down_enters_auto(fuzz, pause) -> None:
    """A refused or weird Joy never leaves edge, order or rate state behind that hides a clean press."""
    rig = Rig()
    for dt, offset, axes, buttons, tick in fuzz:
        rig.now += dt
        sample = JoySample(tuple(axes), tuple(buttons), rig.now + offset)
        for action in rig.c.feed(sample, rig.now, rig.measured()):
            assert not isinstance(action, JointTarget) or within_limits(action.q, ARM)
        if tick:
            rig.c.tick(rig.now, rig.measured())
    rig.now += pause  # the operator lets go of everything (a new Joy: 1 ms later at least)...
    rig.feed(dt=0.0)
    rig.feed({DPAD_Y: -1.0}, dt=0.05)  # ... and presses DPAD_DOWN, 50 ms later
    assert rig.c.mode is Mode.AUTO
