"""The generator's loop pace (`trajectory.pace`): catch-up after a late call, and when the loop rests."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from salamander_control.trajectory.pace import MAX_CATCH_UP, REST_AFTER_S, LoopPace

RATE = 500.0
PERIOD = 1.0 / RATE


def test_calls_on_time_run_one_cycle_each() -> None:
    pace = LoopPace()
    assert [pace.cycles_due(k * PERIOD, RATE) for k in range(10)] == [1] * 10


def test_a_late_call_runs_the_cycles_it_missed_and_the_schedule_stays_on_real_time() -> None:
    pace = LoopPace()
    assert pace.cycles_due(0.0, RATE) == 1
    assert pace.cycles_due(3 * PERIOD, RATE) == 3  # two periods late: the missed two and its own
    assert pace.cycles_due(4 * PERIOD, RATE) == 1  # back on the schedule


def test_a_stall_longer_than_the_catch_up_is_dropped_not_replayed() -> None:
    pace = LoopPace()
    pace.cycles_due(0.0, RATE)
    assert pace.cycles_due(1.0, RATE) == MAX_CATCH_UP
    assert pace.cycles_due(1.0 + PERIOD, RATE) == 1  # the schedule restarted at the stall's end


@given(st.lists(st.floats(0.0, 0.05), min_size=1, max_size=200))
def test_cycles_run_never_exceed_the_elapsed_periods_plus_one_nor_the_catch_up(gaps: list[float]) -> None:
    pace, now, total = LoopPace(), 0.0, 0
    first = None
    for gap in gaps:
        now += gap
        due = pace.cycles_due(now, RATE)
        assert 1 <= due <= MAX_CATCH_UP
        first = now if first is None else first
        total += due
        assert total <= (now - first) / PERIOD + len(gaps) + 1


def test_restart_drops_the_catch_up() -> None:
    pace = LoopPace()
    pace.cycles_due(0.0, RATE)
    pace.restart()
    assert pace.cycles_due(3 * PERIOD, RATE) == 1


def test_the_loop_rests_after_standing_still_long_enough_and_wakes_on_the_first_move() -> None:
    pace = LoopPace()
    need = round(REST_AFTER_S * RATE)
    for _ in range(need - 1):
        assert pace.after([True], 10, RATE) is None
    assert pace.after([True], 10, RATE) is True
    pace.set_resting(True)
    assert pace.after([True] * 10, 10, RATE) is None
    assert pace.after([True, False], 10, RATE) is False


def test_a_move_restarts_the_count_and_a_keep_alive_of_one_cycle_never_rests() -> None:
    pace = LoopPace()
    need = round(REST_AFTER_S * RATE)
    for _ in range(need - 1):
        pace.after([True], 10, RATE)
    assert pace.after([False], 10, RATE) is None
    assert pace.after([True], 10, RATE) is None  # counting from zero again
    never = LoopPace()
    assert all(never.after([True], 1, RATE) is None for _ in range(10 * need))
