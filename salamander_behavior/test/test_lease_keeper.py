"""The arm lease as the behaviour server keeps it (lease_keeper.py): acquire, heartbeat, loss, give-up."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from salamander_behavior.lease_keeper import LAPSED, LeaseKeeper, LeaseOp


def test_lease_is_acquired_then_heartbeated_every_quarter_timeout() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    assert keeper.next_request(0.0) is LeaseOp.ACQUIRE
    assert keeper.next_request(0.1) is None  # one request in flight at a time
    assert "acquired" in keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt")
    assert keeper.held(0.5) and not keeper.held(1.0)  # valid until sent + timeout, conservatively
    assert keeper.next_request(0.2) is None
    assert keeper.next_request(0.26) is LeaseOp.HEARTBEAT
    assert keeper.on_reply(LeaseOp.HEARTBEAT, True, "ok", "bt") is None
    assert keeper.held(1.2) and not keeper.held(1.27)


def test_a_refused_heartbeat_means_lost_and_acquire_again() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    keeper.next_request(0.0)
    keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt")
    keeper.next_request(0.3)
    line = keeper.on_reply(LeaseOp.HEARTBEAT, False, "'bt' does not hold the lease", "")
    assert line.startswith("arm lease lost") and not keeper.held(0.31)
    assert keeper.next_request(0.6) is LeaseOp.ACQUIRE


def test_a_lease_that_lapsed_unkept_is_granted_anew_and_the_line_says_it_lapsed() -> None:
    """This process stalled past the timeout (no heartbeat went out): the generator dropped the lease and
    stopped the arm. The keeper acquires again; the grant's line says what happened (a warning), and
    `loss` keeps it for the goals still carrying the old token (refused by the generator)."""
    keeper = LeaseKeeper("bt", timeout=1.0)
    keeper.next_request(0.0)
    keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt", token="old")
    assert keeper.next_request(0.25) is LeaseOp.HEARTBEAT
    keeper.on_reply(LeaseOp.HEARTBEAT, True, "ok", "bt")
    assert keeper.loss == "" and keeper.held(1.2)
    assert keeper.next_request(2.8) is LeaseOp.ACQUIRE  # the stall ends at 2.8 s: lapsed at 1.25 s
    line = keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt", token="new")
    assert line.startswith(LAPSED) and "2.55 s" in line, line
    assert keeper.token == "new" and keeper.held(3.0) and "lapsed" in keeper.loss
    # A refusal is a loss too (and says so in its own words).
    keeper.next_request(3.1)
    keeper.on_reply(LeaseOp.HEARTBEAT, False, "expired", "")
    assert keeper.loss.startswith("heartbeat refused: expired")


def test_a_lease_held_by_someone_else_is_retried_and_explained() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0, retry=0.5)
    keeper.next_request(0.0)
    assert keeper.on_reply(LeaseOp.ACQUIRE, False, "lease held by 'gamepad'", "gamepad") is None
    assert "held by 'gamepad'" in keeper.problem
    assert keeper.next_request(0.3) is None and keeper.next_request(0.5) is LeaseOp.ACQUIRE


def test_a_lost_answer_is_given_up_after_the_timeout_and_late_answers_are_ignored() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    keeper.next_request(0.0)
    assert keeper.next_request(0.9) is None
    assert keeper.next_request(1.1) is LeaseOp.ACQUIRE
    assert "no answer" in keeper.problem
    assert keeper.on_reply(LeaseOp.HEARTBEAT, True, "late", "bt") is None and not keeper.held(1.2)


def test_a_late_grant_of_an_acquire_given_up_on_does_not_pass_for_the_next_acquires_answer() -> None:
    """Seen on a loaded machine: the first ACQUIRE's answer came after the keeper had given up and sent a
    second one; taken for the second's, its token (of a lease that expired unkept) made every heartbeat
    refused and the whole run was skipped."""
    keeper = LeaseKeeper("bt", timeout=1.0)
    assert keeper.next_request(0.0) is LeaseOp.ACQUIRE
    first = keeper.request_id
    assert keeper.next_request(1.1) is LeaseOp.ACQUIRE  # the first given up
    second = keeper.request_id
    assert second != first
    assert keeper.on_reply(LeaseOp.ACQUIRE, True, "granted late", "bt", "stale", first) is None
    assert not keeper.held(1.2) and keeper.token == "" and keeper.in_flight is LeaseOp.ACQUIRE
    keeper.on_error(LeaseOp.ACQUIRE, "late failure of the first", first)
    assert keeper.in_flight is LeaseOp.ACQUIRE  # still waiting for the second
    line = keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt", "fresh", second)
    assert line is not None and keeper.held(1.2) and keeper.token == "fresh"


def test_stop_releases_only_a_held_lease() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    assert keeper.stop() is False
    keeper = LeaseKeeper("bt", timeout=1.0)
    keeper.next_request(0.0)
    keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt")
    assert keeper.stop() is True and not keeper.held(0.1) and keeper.next_request(5.0) is None


class LeaseServer:
    """The generator's side, as it keeps the lease: a grant runs `timeout` from the request's arrival."""

    def __init__(self, timeout: float) -> None:
        self.timeout, self.holder, self.deadline = timeout, "", -math.inf

    def answer(self, op: LeaseOp, client: str, at: float) -> bool:
        if at >= self.deadline:
            self.holder = ""  # expired
        if op is LeaseOp.ACQUIRE and self.holder in ("", client):
            self.holder = client
        elif op is not LeaseOp.HEARTBEAT or self.holder != client:
            return False
        self.deadline = at + self.timeout
        return True


# One step: time to the next look (s); the request's way to the server and its answer's way back (s, up
# to past the timeout); whether the answer is lost; whether another client asks for the lease meanwhile.
step = st.tuples(
    st.floats(0.0, 0.6), st.floats(0.0, 0.7), st.floats(0.0, 0.7), st.booleans(), st.booleans()
)


@given(st.lists(step, max_size=60))
def test_the_keeper_never_believes_in_a_lease_the_generator_has_dropped(steps) -> None:
    """Whatever the delays, losses and rivals, `held` is true only while the generator's lease is ours."""
    keeper, server = LeaseKeeper("bt", timeout=1.0), LeaseServer(1.0)
    now, events = 0.0, []  # (when, order, what): a request reaching the server, or its answer coming back
    for dt, way_in, way_back, lost, rival in steps:
        now += dt
        while events and min(events)[0] <= now:
            when, _, (kind, op, granted, request, back) = events.pop(events.index(min(events)))
            if kind == "request":
                granted = server.answer(op, "bt", when)
                if back is not None:
                    answer = ("answer", op, granted, request, None)
                    events.append((when + back, 1000 * request + 1, answer))
            else:
                keeper.on_reply(op, granted, "x", "bt" if granted else server.holder, "tok", request)
        if rival:
            server.answer(LeaseOp.ACQUIRE, "rival", now)
        op = keeper.next_request(now)
        if op is not None:
            request = keeper.request_id
            sent = ("request", op, False, request, None if lost else way_back)
            events.append((now + way_in, 1000 * request, sent))
        if keeper.held(now):
            assert server.holder == "bt" and now < server.deadline, (now, server.holder, server.deadline)


def test_the_token_from_acquire_is_kept_for_heartbeats_and_release_and_dropped_on_a_refusal() -> None:
    keeper = LeaseKeeper("bt", timeout=1.0)
    assert keeper.token == ""
    assert keeper.next_request(0.0) is LeaseOp.ACQUIRE
    keeper.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt", token="tok")
    assert keeper.token == "tok"
    assert keeper.next_request(0.3) is LeaseOp.HEARTBEAT
    keeper.on_reply(LeaseOp.HEARTBEAT, True, "ok", "bt")  # a heartbeat's answer carries no token
    assert keeper.token == "tok"
    assert keeper.stop() is True and keeper.token == "tok"  # the RELEASE still needs it
    refused = LeaseKeeper("bt", timeout=1.0)
    refused.next_request(0.0)
    refused.on_reply(LeaseOp.ACQUIRE, True, "granted", "bt", token="tok")
    refused.next_request(0.3)
    refused.on_reply(LeaseOp.HEARTBEAT, False, "expired", "")
    assert refused.token == "" and refused.next_request(0.9) is LeaseOp.ACQUIRE  # a new lease, a new token
