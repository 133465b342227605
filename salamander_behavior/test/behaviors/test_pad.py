"""The pad check: with a can on the pad the tree never picks; confirm places it, removal lets it pick.

Over fakes (mock/ports.py `Rig`): a restarted server's run with `held` (the can recorded as carried)
and the fake gripper holding it, as after a kill during the carry.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from salamander_behavior.behaviors.pad import ClearPad
from salamander_behavior.mock.ports import Rig, release_descent
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import load_jobs
from salamander_behavior.ports import DoneCall, MotionPhase
from salamander_behavior.report import CanResult
from salamander_testing import REPO

JOBS = load_jobs(REPO / "config" / "cell.yaml")
CAN_0, CAN_1, CAN_2 = JOBS


def restarted(held=CAN_1, picks=(CAN_2,), on_pad: str | None = "can_1", **config) -> Rig:
    """A run after a restart: `held` recorded as carried, `on_pad` on the pad (vacuum state unknown)."""
    rig = Rig(picks, settings=BehaviorSettings(**config), held=held)
    rig.gripper.holding = on_pad
    return rig


def waiting(rig: Rig) -> bool:
    return any("a can is on the pad before" in m for _, m in rig.log.lines)


def test_a_can_on_the_pad_is_not_picked_and_the_vacuum_goes_on_before_any_motion() -> None:
    rig = restarted()
    rig.run(max_ticks=200)
    assert rig.root.status.value == "RUNNING"
    assert rig.motion.labels == [] and rig.gripper.commands == [True]
    line = next(m for _, m in rig.log.lines if "a can is on the pad before" in m)
    assert "before picking can_2: not picking" in line and "place it into can_1's compartment" in line


def test_confirm_places_the_held_can_into_its_own_compartment_then_the_run_goes_on() -> None:
    rig = restarted()
    rig.confirm(True)  # before the wait began: does not count
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    rig.tick()
    assert rig.motion.labels == []
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    assert [r.can for r in rig.gripper.releases] == ["can_1", "can_2"]
    first = rig.gripper.releases[0]
    assert math.dist(first.at.position, CAN_1.place_release.position) < 1e-9  # can_1's compartment
    assert rig.motion.labels[:3] == ["carry can_1", "over the rim can_1: through the rim", "rise"]
    assert "above can_1" not in rig.motion.labels  # never carried back to its spot
    assert {r.can: r.result for r in rig.report.records()} == {"can_1": CanResult.PLACED,
                                                               "can_2": CanResult.PLACED}  # fmt: skip
    done = MotionPhase.SUCCEEDED
    assert all(release_descent(label) and end is done for label, end in rig.gripper.off_after)


class LateAnswer:
    """A vacuum call whose answer the test releases (`answered`): the service is slow."""

    def __init__(self) -> None:
        self.answered = False

    def done(self) -> bool:
        return self.answered

    def result(self) -> tuple[bool, str]:
        return (True, "vacuum on")


def test_a_confirmation_while_the_vacuum_answer_is_pending_places_the_can_once_it_is_on() -> None:
    # It was consumed and dropped: the tree waited on at the pad check for a confirmation it had been
    # given, until the operator happened to confirm again after the vacuum's answer.
    rig = restarted()
    answer = LateAnswer()
    switch = rig.gripper.set_vacuum

    def slow(on: bool):
        switch(on)
        return answer if on else DoneCall(True, "vacuum off")

    rig.gripper.set_vacuum = slow
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    rig.confirm(True)
    for _ in range(5):
        rig.tick()
    assert rig.motion.labels == []  # not before the vacuum is known to be on
    answer.answered = True
    assert rig.run() == "SUCCESS"
    assert [r.can for r in rig.gripper.releases] == ["can_1", "can_2"]
    assert any("confirmed: placing can_1 into its compartment" in m for _, m in rig.log.lines)


def test_removal_lets_the_pick_go_on_and_counts_the_held_can_as_removed() -> None:
    rig = restarted()
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    rig.gripper.holding = None  # the operator took it off the pad
    assert rig.run() == "SUCCESS"
    assert [r.can for r in rig.gripper.releases] == ["can_2"]
    assert rig.motion.labels[0] == "above can_2"
    from salamander_behavior.runs import stage_of

    assert stage_of("can_1") == "removed"


def test_removal_is_decided_only_after_the_switch_stayed_false_for_removal_confirm_s() -> None:
    rig = restarted(removal_confirm_s=0.5, grip_confirm_s=0.1)
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    rig.gripper.holding = None  # gone for 0.4 s (8 ticks): a flicker, longer than grip_confirm_s
    for _ in range(8):
        rig.tick()
    assert rig.motion.labels == [] and waiting(rig)
    rig.gripper.holding = "can_1"  # back: the can is still on the pad
    rig.run(max_ticks=40)
    assert rig.motion.labels == [] and waiting(rig)
    rig.gripper.holding = None
    assert rig.run() == "SUCCESS" and rig.motion.labels[0] == "above can_2"


def test_with_the_carried_can_unknown_a_confirmation_is_ignored_and_only_removal_helps() -> None:
    rig = restarted(held=None, picks=(CAN_2,), on_pad="can_1")
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    rig.confirm(True)
    rig.run(max_ticks=100)
    assert rig.root.status.value == "RUNNING" and rig.motion.labels == []
    assert any("confirmation ignored" in m for _, m in rig.log.lines)
    rig.gripper.holding = None
    assert rig.run() == "SUCCESS" and rig.gripper.releases[0].can == "can_2"


def test_abort_or_timeout_stops_the_run_holding_the_can() -> None:
    for abort in (True, False):
        rig = restarted(pad_wait_timeout_s=2.0)
        rig.run(max_ticks=50, until=lambda rig=rig: waiting(rig))
        if abort:
            rig.confirm(False)
        assert rig.run() == "FAILURE"
        assert rig.gripper.commands == [True] and rig.gripper.holding == "can_1"
        assert rig.motion.labels == []


def asking(rig: Rig) -> bool:
    return any("(recorded as carried) is not on it" in m for _, m in rig.log.lines)


def test_a_clear_pad_with_a_can_recorded_as_carried_waits_for_the_cell_clear_then_picks_on() -> None:
    # Issue 23.8: the empty pad was taken for "removed by hand", but the can may have fallen off and
    # lie in the next can's way: the operator must say the cell is clear first.
    from salamander_behavior.runs import stage_of

    rig = restarted(on_pad=None)
    rig.confirm(True)  # before the wait began: does not count
    rig.run(max_ticks=50, until=lambda: asking(rig))
    rig.run(max_ticks=200)
    assert rig.root.status.value == "RUNNING" and rig.motion.labels == [] and rig.gripper.commands == []
    line = next(m for _, m in rig.log.lines if "(recorded as carried) is not on it" in m)
    assert "taken off by hand or fallen off" in line
    assert "not picking can_2 until the operator confirms the cell is clear" in line
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    assert [r.can for r in rig.gripper.releases] == ["can_2"] and rig.gripper.commands[0] is True
    assert stage_of("can_1") == "removed"


def test_without_the_cell_clear_confirmation_the_missing_carried_can_is_recorded_lost() -> None:
    from salamander_behavior.runs import stage_of

    for abort in (True, False):
        rig = restarted(on_pad=None, pad_wait_timeout_s=2.0)
        rig.run(max_ticks=50, until=lambda rig=rig: asking(rig))
        if abort:
            rig.confirm(False)
        assert rig.run() == "FAILURE" and rig.motion.labels == [] and rig.gripper.commands == []
        assert stage_of("can_1") == "lost"


def test_one_false_reading_of_a_chattering_switch_does_not_clear_a_pad_with_a_can_on_it() -> None:
    # Before, a single fresh false at the check was "pad clear": the arm went to pick with a can on the pad.
    rig = restarted(held=None)  # a can on the pad, which one not known (its record lost with a kill)
    rig.gripper.part_present()  # true, heard for a while
    rig.clock.advance(1.0)
    rig.gripper.holding = None  # the switch reads false for one message ...
    rig.tick(0.04)
    assert rig.leaf("pad clear before can_2?").feedback_message.startswith("part-present false for 0.00 s")
    rig.gripper.holding = "can_1"  # ... and true again
    rig.run(max_ticks=50, until=lambda: waiting(rig))
    assert waiting(rig) and rig.motion.labels == [] and rig.gripper.commands == [True]


def test_a_pad_false_for_clear_confirm_s_is_clear_and_picks_on() -> None:
    rig = restarted(held=None, on_pad=None, clear_confirm_s=0.3)
    rig.gripper.part_present()  # false from now on (the first reading is a change)
    rig.tick(0.1)
    assert rig.motion.labels == []
    rig.run(max_ticks=20, until=lambda: rig.motion.labels != [])
    assert rig.motion.labels == ["above can_2"] and rig.clock() >= 0.3


def test_a_stale_switch_at_the_pad_check_does_not_pick() -> None:
    rig = restarted(on_pad=None)
    rig.gripper.fall_silent()
    rig.clock.advance(1.0)
    assert rig.run() == "FAILURE" and rig.motion.labels == []


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from(["confirm", "abort", "remove", "put", "silent"])),
        max_size=6,
    ),
    held=st.booleans(),
    manual=st.booleans(),
)
def test_no_sequence_of_pad_and_operator_events_switches_the_vacuum_off_outside_the_release_descent(
    events, held, manual
) -> None:
    rig = restarted(held=CAN_1 if held else None, manual_place=manual, manual_timeout_s=1.0,
                    pad_wait_timeout_s=5.0)  # fmt: skip
    for gap, event in events:
        for _ in range(gap):
            if rig.finished:
                break
            rig.tick()
        if event == "confirm":
            rig.confirm(True)
        elif event == "abort":
            rig.confirm(False)
        elif event == "remove":
            rig.gripper.holding = None
        elif event == "put":
            rig.gripper.holding = rig.gripper.holding or "can_1"
        else:
            rig.gripper.fall_silent()
    rig.run(max_ticks=3000)
    done = MotionPhase.SUCCEEDED
    assert all(release_descent(label) and end is done for label, end in rig.gripper.off_after)
    # Over a compartment (the fake pad may hold a can put on it mid-run instead of the next one: what
    # matters here is where the vacuum went off, never outside the box).
    for release in rig.gripper.releases:
        assert release.at is not None
        gaps = [math.hypot(release.at.x - j.place_release.x, release.at.y - j.place_release.y) for j in JOBS]
        assert min(gaps) <= 0.030 + 1e-9


def test_a_pad_check_without_a_node_to_hear_the_operator_fails_at_setup_not_after_its_timeout() -> None:
    rig = Rig(JOBS[:1])
    with pytest.raises(KeyError, match="no operator input could reach this leaf"):
        ClearPad("pad clear before can_0?", "can_0", "picking can_0").setup(ports=rig.ports)
