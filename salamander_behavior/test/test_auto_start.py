"""run_on_start's wait (auto_start.py): what it awaits, when it sends its goal, when it stops."""

from __future__ import annotations

from salamander_behavior.auto_start import AUTO_GOAL_RETRY_S, AutoStart, waiting_for


def test_it_awaits_every_check_not_passed() -> None:
    assert waiting_for((True, "arm"), (True, "gripper")) == ""
    checks = ((False, "arm: no lease service"), (True, "x"), (False, "gripper: no part-present"))
    assert waiting_for(*checks) == "arm: no lease service; gripper: no part-present"


def test_the_goal_is_sent_again_only_after_the_retry_time() -> None:
    auto = AutoStart(True)
    assert auto.due(100.0)
    assert not auto.due(100.0 + AUTO_GOAL_RETRY_S - 0.01)
    assert auto.due(100.0 + AUTO_GOAL_RETRY_S)


def test_once_stopped_it_stays_stopped() -> None:
    assert not AutoStart(False).pending
    auto = AutoStart(True)
    auto.stop()
    assert not auto.pending


def test_the_start_line_says_what_the_server_does_first() -> None:
    assert AutoStart(True).start_text("/a") == "run_on_start: one run of every can once the stack is ready"
    assert AutoStart(False).start_text("/salamander/run_pick_place") == (
        "idle, holding no lease: start a run with the RunPickPlace action on /salamander/run_pick_place"
    )
