"""ParamMirror (param_mirror.py): an event is never overwritten by a poll answered before it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from salamander_view.param_mirror import ParamMirror


def test_a_poll_answered_before_an_event_but_delivered_after_it_is_dropped() -> None:
    """The order a suite run saw: poll sent (server still True), the operator unticks (event False), the
    poll's answer True arrives last. Before ParamMirror the view showed True again."""
    mirror: ParamMirror[bool] = ParamMirror()
    ticket = mirror.ask()
    mirror.on_event(False)
    assert not mirror.on_answer(ticket, True)
    assert mirror.value is False


def test_an_answer_with_no_event_since_its_request_is_taken() -> None:
    mirror: ParamMirror[bool] = ParamMirror()
    assert mirror.value is None  # nothing known yet
    assert mirror.on_answer(mirror.ask(), True) and mirror.value is True
    mirror.on_event(False)
    assert mirror.on_answer(mirror.ask(), False) and mirror.value is False


EVENT = st.tuples(st.just("event"), st.booleans())
POLL = st.tuples(st.just("poll"), st.booleans(), st.integers(0, 5))


@given(st.lists(st.one_of(EVENT, POLL)))
def test_the_value_is_the_newest_event_or_a_reading_taken_after_it(steps) -> None:
    """Any interleaving of events and polls (a poll's answer delivered 0-5 steps after its request): the
    mirror shows the newest event's value, or an answer to a request sent after that event."""
    mirror: ParamMirror[bool] = ParamMirror()
    in_flight: list[tuple[int, bool, int]] = []  # (ticket, value read, steps until delivered)
    newest_event: bool | None = None
    taken_since_event: list[bool] = []
    for step in steps:
        if step[0] == "event":
            mirror.on_event(step[1])
            newest_event, taken_since_event = step[1], []
        else:
            in_flight.append((mirror.ask(), step[1], step[2]))
        due = [f for f in in_flight if f[2] == 0]
        in_flight = [(t, v, n - 1) for t, v, n in in_flight if n > 0]
        for ticket, value, _ in due:
            if mirror.on_answer(ticket, value):
                taken_since_event.append(value)
        assert mirror.value in ([*taken_since_event[-1:]] or [newest_event])
