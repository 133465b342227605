"""evdev events -> Joy in joy_node's layout and signs, from synthetic DualShock 4 event recordings.

No device needed: a device is its absolute-axis ranges and key codes, events are (type, code, value).
The codes and ranges are those hid-sony/hid-playstation report for a DualShock 4.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import REST_POSTURE, ArmParams
from salamander_teleop.controller.core import Controller, Jog, JoySample, Measured, Mode
from salamander_teleop.controller.mapping import JoyMapping
from salamander_teleop.gamepad.evdev_mapping import (
    EV_ABS,
    EV_KEY,
    EV_SYN,
    SYN_DROPPED,
    SYN_REPORT,
    AbsRange,
    Frame,
    JoyLayout,
    JoyState,
    is_gamepad,
    normalise_axis,
)

ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ, ABS_HAT0X, ABS_HAT0Y, ABS_MISC = 0, 1, 2, 3, 4, 5, 16, 17, 40
BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR = 304, 305, 307, 308, 310, 311
BTN_TL2, BTN_TR2, BTN_SELECT, BTN_START, BTN_MODE, BTN_THUMBL, BTN_THUMBR = 312, 313, 314, 315, 316, 317, 318
BTN_LEFT, BTN_TOUCH, BTN_0 = 272, 330, 256

STICK = AbsRange(0, 255)
DS4_ABS = {ABS_X: STICK, ABS_Y: STICK, ABS_Z: STICK, ABS_RX: STICK, ABS_RY: STICK, ABS_RZ: STICK,
           ABS_HAT0X: AbsRange(-1, 1), ABS_HAT0Y: AbsRange(-1, 1)}
DS4_KEYS = [BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR, BTN_TL2, BTN_TR2, BTN_SELECT, BTN_START,
            BTN_MODE, BTN_THUMBL, BTN_THUMBR]
REST_VALUES = {ABS_X: 128, ABS_Y: 128, ABS_Z: 0, ABS_RX: 128, ABS_RY: 128, ABS_RZ: 0,
               ABS_HAT0X: 0, ABS_HAT0Y: 0}


def ds4() -> JoyState:
    state = JoyState(JoyLayout.from_capabilities(DS4_ABS, DS4_KEYS), deadzone=0.05)
    state.reset(REST_VALUES, [])
    return state


def play(state: JoyState, events) -> list[Frame]:
    return [state.apply(*e) for e in events]


def frame(*events):
    return [*events, (EV_SYN, SYN_REPORT, 0)]


def test_dualshock4_layout_is_the_documented_table() -> None:
    layout = JoyLayout.from_capabilities(DS4_ABS, DS4_KEYS)
    assert layout.num_axes == 8 and len(layout.button_codes) == 13
    names = ["CROSS", "CIRCLE", "TRIANGLE", "SQUARE", "L1", "R1", "L2", "R2", "SHARE", "OPTIONS", "PS",
             "L3", "R3"]
    found = {n: layout.button_codes.index(c) for n, c in zip(names, DS4_KEYS, strict=True)}
    assert found == {n: i for i, n in enumerate(names)}
    index = layout.axis_index()
    order = (ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ, ABS_HAT0X, ABS_HAT0Y)
    assert [index[c] for c in order] == list(range(8))
    # The controller's defaults read SQUARE, R1, TRIANGLE and the DPAD hat at these indices.
    m = JoyMapping()
    assert m.confirm.index == 3 and m.place_jog_enable.index == 5 and m.rest_preset.index == 2
    assert m.auto_mode.index == index[ABS_HAT0Y] and m.needs() <= (layout.num_axes, 13)


def test_rest_state_reads_centred_sticks_and_released_triggers() -> None:
    axes, buttons = ds4().joy()
    assert axes == (0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    assert buttons == (0,) * 13


def test_signs_follow_joy_node_left_up_and_released_are_positive() -> None:
    state = ds4()
    assert play(state, frame((EV_ABS, ABS_X, 0), (EV_ABS, ABS_Y, 0))) == [Frame.NONE] * 2 + [Frame.CHANGED]
    axes, _ = state.joy()
    assert axes[0] == 1.0 and axes[1] == 1.0  # stick left and up
    play(state, frame((EV_ABS, ABS_X, 255), (EV_ABS, ABS_Y, 255), (EV_ABS, ABS_RZ, 255)))
    axes, _ = state.joy()
    assert axes[0] == -1.0 and axes[1] == -1.0 and axes[5] == -1.0  # right, down, R2 fully pressed
    play(state, frame((EV_ABS, ABS_HAT0X, -1), (EV_ABS, ABS_HAT0Y, 1)))
    axes, _ = state.joy()
    assert axes[6] == 1.0 and axes[7] == -1.0  # DPAD left, DPAD down
    play(state, frame((EV_ABS, ABS_HAT0X, 0), (EV_ABS, ABS_HAT0Y, -1)))
    axes, _ = state.joy()
    assert axes[6] == 0.0 and axes[7] == 1.0  # DPAD up
    play(state, frame((EV_ABS, ABS_RX, 130)))  # 2/255 off centre: inside joy_node's deadzone
    assert state.joy()[0][3] == 0.0
    assert normalise_axis(-32768, AbsRange(-32768, 32767)) == 1.0  # an xpad-style signed range
    assert normalise_axis(32767, AbsRange(-32768, 32767)) == -1.0


def test_a_frame_is_published_whole_at_syn_report_and_only_when_something_changed() -> None:
    state = ds4()
    before = state.joy()
    assert play(state, [(EV_KEY, BTN_WEST, 1), (EV_ABS, ABS_Y, 0)]) == [Frame.NONE, Frame.NONE]
    assert state.joy() == before  # nothing visible until the frame closes
    assert state.apply(EV_SYN, SYN_REPORT, 0) is Frame.CHANGED
    axes, buttons = state.joy()
    assert buttons[3] == 1 and axes[1] == 1.0
    assert play(state, frame((EV_KEY, BTN_WEST, 1))) == [Frame.NONE, Frame.NONE]  # same value again
    assert state.apply(EV_SYN, SYN_REPORT, 0) is Frame.NONE  # empty frame
    play(state, frame((EV_KEY, BTN_WEST, 2)))  # kernel autorepeat value: still pressed
    assert state.joy()[1][3] == 1
    assert play(state, frame((EV_KEY, BTN_WEST, 0)))[-1] is Frame.CHANGED
    assert state.joy()[1][3] == 0


def test_unknown_codes_are_ignored() -> None:
    state = ds4()
    assert play(state, frame((EV_KEY, 999, 1), (EV_ABS, ABS_MISC, 7), (4, 4, 589825))) == [Frame.NONE] * 4


def test_syn_dropped_discards_the_partial_frame_and_asks_for_a_resync() -> None:
    state = ds4()
    events = [(EV_ABS, ABS_X, 0), (EV_SYN, SYN_DROPPED, 0), (EV_KEY, BTN_TR, 1), (EV_SYN, SYN_REPORT, 0)]
    assert play(state, events)[-1] is Frame.RESYNC
    assert state.joy() == ds4().joy()  # nothing of the broken frame was applied
    assert play(state, frame((EV_KEY, BTN_SOUTH, 1)))[-1] is Frame.RESYNC  # asks again until reset
    state.reset({**REST_VALUES, ABS_Y: 0}, [BTN_TR])
    axes, buttons = state.joy()
    assert axes[1] == 1.0 and buttons[5] == 1 and buttons[0] == 0
    assert play(state, frame((EV_KEY, BTN_SOUTH, 1)))[-1] is Frame.CHANGED


def test_gamepad_detection_skips_the_ds4_motion_sensor_and_touchpad_devices() -> None:
    assert is_gamepad(DS4_ABS, DS4_KEYS)
    assert not is_gamepad([ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ], [])  # motion sensors
    assert not is_gamepad([ABS_X, ABS_Y, 0x2F, 0x35, 0x36], [BTN_LEFT, BTN_TOUCH, 0x145])  # touchpad
    assert not is_gamepad([ABS_Z], DS4_KEYS)


def test_hats_come_after_every_other_axis_and_misc_buttons_after_joystick_ones() -> None:
    ranges = {ABS_X: STICK, ABS_Y: STICK, ABS_HAT0X: AbsRange(-1, 1), ABS_HAT0Y: AbsRange(-1, 1),
              ABS_MISC: STICK}
    layout = JoyLayout.from_capabilities(ranges, [BTN_0, BTN_SOUTH, BTN_EAST])
    index = layout.axis_index()
    order = (ABS_X, ABS_Y, ABS_MISC, ABS_HAT0X, ABS_HAT0Y)
    assert [index[c] for c in order] == [0, 1, 2, 3, 4]
    assert layout.button_codes == (BTN_SOUTH, BTN_EAST, BTN_0)


def test_recorded_ds4_session_drives_the_controller() -> None:
    """DPAD down, then R1 with the left stick pushed up: the controller jogs the placement along +x."""
    state = ds4()
    controller = Controller(JoyMapping(), ArmParams())
    measured = Measured(REST_POSTURE, 0.0)
    recording = [
        [],
        [(EV_ABS, ABS_HAT0Y, 1)],  # DPAD down
        [(EV_ABS, ABS_HAT0Y, 0)],
        [(EV_KEY, BTN_TR, 1), (EV_ABS, ABS_Y, 0)],  # R1 + left stick fully up
        [(EV_KEY, BTN_TR, 0)],  # R1 released
    ]
    outputs = []
    t = 10.0
    for events in recording:
        play(state, frame(*events))
        axes, buttons = state.joy()
        t += 0.05
        outputs.append(controller.feed(JoySample(axes, buttons, t), t, measured))
    assert controller.mode is Mode.AUTO
    assert outputs[3] == [Jog(0.05, 0.0)] and outputs[4] == [Jog(0.0, 0.0)]


codes = st.sampled_from(list(DS4_ABS) + DS4_KEYS + [999])
raw_event = st.one_of(
    st.tuples(st.just(EV_ABS), codes, st.integers(-70000, 70000)),
    st.tuples(st.just(EV_KEY), codes, st.integers(0, 2)),
    st.tuples(st.just(EV_SYN), st.sampled_from([SYN_REPORT, SYN_DROPPED]), st.just(0)),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(raw_event, max_size=80))
def test_any_event_stream_keeps_axes_in_range_and_buttons_binary(events) -> None:
    state = ds4()
    for event in events:
        if state.apply(*event) is Frame.RESYNC:
            state.reset(REST_VALUES, [])
        axes, buttons = state.joy()
        assert len(axes) == 8 and len(buttons) == 13
        assert all(-1.0 <= a <= 1.0 for a in axes) and set(buttons) <= {0, 1}


def test_deadzone_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError):
        JoyState(JoyLayout.from_capabilities(DS4_ABS, DS4_KEYS), deadzone=1.0)
