"""The arm lease state machine (trajectory/lease.py); goal parsing is tested in test_joint_state.py."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.trajectory.lease import ArmLease, fingerprint, new_token, same_token


def counting_tokens() -> ArmLease:
    """A lease whose tokens are t1, t2, ... (readable tests; the real source is `new_token`)."""
    counter = itertools.count(1)
    return ArmLease(make_token=lambda: f"t{next(counter)}")


def test_lease_acquire_heartbeat_expire_release() -> None:
    lease = counting_tokens()
    assert lease.allows("", now=0.0)  # free: the gamepad may jog
    granted = lease.acquire("bt", 0.5, now=0.0)
    assert granted.success and granted.token == "t1" and "t1" not in granted.message
    assert not lease.allows("", now=0.1) and not lease.allows("bt", now=0.1) and lease.allows("t1", now=0.1)
    reply = lease.acquire("gamepad", 0.5, now=0.2)
    assert not reply.success and "held by 'bt'" in reply.message and reply.token == ""
    assert lease.heartbeat("bt", "t1", now=0.4).success
    assert lease.seconds_left(0.5) == pytest.approx(0.4)
    assert lease.expire(now=0.95) == "bt"  # missed heartbeat: 0.4 + 0.5 < 0.95
    assert lease.holder == "" and lease.token == "" and lease.allows("", now=0.95)
    assert not lease.heartbeat("bt", "t1", now=1.0).success
    assert lease.acquire("gamepad", 1.0, now=1.0).token == "t2"  # a new lease, a new token
    assert not lease.release("bt", "t1", now=1.1).success
    assert lease.release("gamepad", "t2", now=1.1).success and lease.holder == ""


def test_the_holders_name_without_its_token_changes_nothing() -> None:
    """Issue 13.5: `RELEASE client_id='behavior_server'` from outside freed the lease."""
    lease = counting_tokens()
    lease.acquire("behavior_server", 1.0, now=0.0)
    for token in ("", "behavior_server", "t2", "T1", "t1 ", fingerprint("t1")):
        released = lease.release("behavior_server", token, now=0.1)
        assert not released.success and "does not carry its token" in released.message
        beat = lease.heartbeat("behavior_server", token, now=0.1)
        assert not beat.success and lease.seconds_left(0.1) == pytest.approx(0.9)  # not refreshed
        again = lease.acquire("behavior_server", 1.0, now=0.1, token=token)
        assert not again.success and again.token == "" and "must carry the holder's token" in again.message
        assert not lease.allows(token, now=0.1)
    assert lease.holder == "behavior_server" and lease.token == "t1"
    refreshed = lease.acquire("behavior_server", 2.0, now=0.5, token="t1")  # with it: refreshed, same token
    assert refreshed.success and refreshed.token == "t1" and lease.seconds_left(0.5) == pytest.approx(2.0)
    assert not lease.release("someone", "t1", now=0.6).success  # the token under another name: refused too
    assert lease.release("behavior_server", "t1", now=0.6).success and lease.holder == ""


def test_tokens_are_unguessable_and_never_in_a_message() -> None:
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200 and all(len(t) >= 32 for t in tokens)  # 24 random bytes = 192 bits
    lease = ArmLease()
    reply = lease.acquire("bt", 1.0, now=0.0)
    assert reply.token == lease.token and reply.token not in reply.message
    assert fingerprint(reply.token) in reply.message and len(fingerprint(reply.token)) == 8
    assert same_token(reply.token, reply.token) and not same_token("", "") and not same_token("\udcff", "x")


@pytest.mark.parametrize("timeout", [0.0, -1.0, math.nan, math.inf, 1e3])
def test_lease_refuses_bad_timeouts(timeout: float) -> None:
    reply = ArmLease().acquire("bt", timeout, now=0.0)
    assert not reply.success and "timeout" in reply.message


def test_lease_refuses_an_empty_or_huge_client_id() -> None:
    assert not ArmLease().acquire("", 1.0, now=0.0).success
    assert not ArmLease().acquire("x" * 129, 1.0, now=0.0).success


_guesses = st.one_of(
    st.sampled_from(["", "bt", "intruder", "t1", "t0", "T2", "t2\x00", fingerprint("t2")]),
    st.text(max_size=40),
)
_operation = st.tuples(
    st.sampled_from(["acquire", "heartbeat", "release", "goal"]),
    st.sampled_from(["bt", "intruder", "", "BT"]),
    _guesses,
    st.floats(min_value=0.0, max_value=0.4),  # s after the holder's last heartbeat (timeout 0.5)
)


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(_operation, max_size=30))
def test_no_operation_without_the_token_changes_the_holder_or_moves_the_arm(ops: list) -> None:
    """Safety property: whatever anyone sends without the holder's token, the lease stays the holder's."""
    lease = counting_tokens()
    lease.acquire("other", 0.5, now=0.0)
    lease.release("other", "t1", now=0.0)  # "t1" is now an old token: it counts for nothing either
    token = lease.acquire("bt", 0.5, now=0.0).token
    assert token == "t2"
    now = 0.0
    for op, client, guess, dt in ops:
        if guess == token:
            continue  # the one thing an outsider cannot have
        at = now + dt
        if op == "acquire":
            reply = lease.acquire(client, 0.5, at, guess)
            assert not reply.success and reply.token == ""
        elif op == "heartbeat":
            assert not lease.heartbeat(client, guess, at).success
        elif op == "release":
            assert not lease.release(client, guess, at).success
        else:
            assert not lease.allows(guess, at)
        assert (lease.holder, lease.token) == ("bt", token)
        now = at
        assert lease.heartbeat("bt", token, now).success  # the holder keeps its lease alive
