"""Which control applies when, and the nudge train's twists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from salamander_view.controls import AXES, CONTROLS, Facts, NudgeTrain, availability
from salamander_view.params import MAX_NUDGE_SPEED


def test_idle_stack_allows_start_and_manual_place_only():
    why = availability(Facts(run_server=True, param_server=True))
    assert set(why) == set(CONTROLS)
    assert why["start_run"] == "" and why["manual_place"] == ""
    assert why["cancel_run"] == "no run is active"
    assert why["nudge"] == why["confirm"] == why["abort"] == "not waiting for the operator"


def test_active_run_disables_start_and_allows_cancel():
    why = availability(Facts(run_server=True, param_server=True, run_active=True))
    assert why["start_run"] == "a run is active" and why["cancel_run"] == ""


def test_manual_wait_enables_nudge_confirm_abort():
    why = availability(Facts(run_server=True, param_server=True, run_active=True, manual_waiting=True))
    assert why["nudge"] == why["confirm"] == why["abort"] == ""


def test_new_box_needs_the_service_and_no_run():
    assert availability(Facts())["new_box"] == "the behaviour server is not running"
    assert availability(Facts(box_server=True))["new_box"] == ""
    assert availability(Facts(box_server=True, run_active=True))["new_box"] == "a run is active"


def test_no_server_and_no_token():
    assert availability(Facts())["start_run"] == "the behaviour server is not running"
    locked = availability(Facts(True, True, True, True, authorized=False))
    assert all(reason == "enter the access token first" for reason in locked.values())


def test_one_click_is_one_step_at_the_speed_then_one_zero_twist():
    train = NudgeTrain(step=0.005, speed=0.025)
    train.press("+x", now=10.0)
    sent = [(t, train.twist(10.0 + t)) for t in (0.0, 0.1, 0.19)]
    assert all(v == (0.025, 0.0, 0.0) for _, v in sent)
    assert train.twist(10.21) == (0.0, 0.0, 0.0)
    assert train.twist(10.25) is None and not train.active


def test_same_direction_extends_other_direction_replaces_stop_zeroes():
    train = NudgeTrain(step=0.005, speed=0.025)
    train.press("+y", now=0.0)
    train.press("+y", now=0.1)
    assert train.twist(0.35) == (0.0, 0.025, 0.0)  # extended to 0.4 s
    train.press("-x", now=0.36)
    assert train.twist(0.37) == (-0.025, 0.0, 0.0)
    train.stop()
    assert train.twist(0.38) == (0.0, 0.0, 0.0) and train.twist(0.39) is None
    with pytest.raises(KeyError):
        train.press("up", now=1.0)


def test_clicks_queue_at_most_manual_adjusts_bound_ahead():
    train = NudgeTrain(step=0.005, speed=0.025)
    for _ in range(20):  # 100 mm of clicks at once: 4 s of twists before
        train.press("+x", now=0.0)
    assert train.twist(1.19) == (0.025, 0.0, 0.0)  # 30 mm at 25 mm/s: 1.2 s
    assert train.twist(1.21) == (0.0, 0.0, 0.0) and not train.active


def test_a_held_key_jogs_while_repeated_and_stops_one_step_after_the_last_repeat():
    train = NudgeTrain(step=0.005, speed=0.025)
    for i in range(30):  # auto-repeat at 30 Hz for 1 s: never queued beyond one step (0.2 s) ahead
        train.hold("+x", now=i / 30.0)
    last = 29 / 30.0
    assert train.twist(last + 0.19) == (0.025, 0.0, 0.0)
    assert train.twist(last + 0.21) == (0.0, 0.0, 0.0) and not train.active
    train.press("-y", now=5.0)
    train.press("-y", now=5.0)  # a click queues: 0.4 s
    train.hold("-y", now=5.1)  # a key does not shorten it
    assert train.twist(5.35) == (0.0, -0.025, 0.0)
    train.hold("+y", now=5.36)  # another direction replaces
    assert train.twist(5.37) == (0.0, 0.025, 0.0) and train.twist(5.57) == (0.0, 0.0, 0.0)


@given(
    st.lists(st.tuples(st.sampled_from(sorted(AXES)), st.floats(0.0, 5.0), st.booleans()), max_size=20),
    st.floats(0.0005, 0.03),
    st.floats(0.001, MAX_NUDGE_SPEED),
)
def test_twists_never_exceed_the_speed_and_the_train_always_ends_with_zero(presses, step, speed):
    train = NudgeTrain(step, speed)
    for direction, t, key in sorted(presses, key=lambda p: p[1]):
        (train.hold if key else train.press)(direction, t)
    last = None
    t = 0.0
    while train.active:
        v = train.twist(t)
        assert v is not None and sum(c * c for c in v) ** 0.5 <= speed + 1e-12
        last = v
        t += 0.04
        assert t < 1000.0
    assert last in (None, (0.0, 0.0, 0.0))
