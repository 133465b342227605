"""RosPeer's resendable call (ros_helpers.py): an answer a new server dropped is asked for again."""

from __future__ import annotations

import pytest
from rclpy.task import Future

from salamander_testing.ros_helpers import RosPeer, next_domain_id


@pytest.fixture
def peer():
    p = RosPeer(next_domain_id(), "ros_helpers_test", "/nobody", lambda: "(no processes)", timeout=2.0)
    yield p
    p.close()


def test_a_call_without_an_answer_is_sent_again_and_its_second_answer_returned(peer) -> None:
    sent: list[Future] = []

    def call() -> Future:
        future = Future()
        sent.append(future)
        if len(sent) == 2:  # the first answer was dropped; the second comes
            future.set_result("answer")
        return future

    assert peer.answer_resent(call, "the answer", every=0.1) == "answer"
    assert len(sent) == 2


def test_a_call_never_answered_fails_saying_what_it_waited_for(peer) -> None:
    sent: list[Future] = []

    def call() -> Future:
        sent.append(Future())
        return sent[-1]

    with pytest.raises(AssertionError, match="timed out waiting for the answer"):
        peer.answer_resent(call, "the answer", every=0.5)
    assert 3 <= len(sent) <= 5  # every 0.5 s for the peer's 2 s
