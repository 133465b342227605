"""The access token: loopback open, every other address gated per client."""

from __future__ import annotations

import pytest

from salamander_view.access import AccessGuard, is_loopback


@pytest.mark.parametrize(("host", "loop"), [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                            ("localhost", True), ("0.0.0.0", False), ("192.168.1.5", False),
                                            ("robot.local", False)])
def test_loopback(host, loop):
    assert is_loopback(host) is loop


def test_loopback_needs_no_token():
    guard = AccessGuard("127.0.0.1", "")
    assert not guard.required and guard.allowed(1) and guard.token == ""


def test_open_address_needs_the_token_per_client():
    guard = AccessGuard("0.0.0.0", "")
    assert guard.required and len(guard.token) >= 20  # generated
    assert not guard.allowed(1)
    assert not guard.offer(1, "wrong") and not guard.allowed(1)
    assert guard.offer(1, f" {guard.token} ") and guard.allowed(1)
    assert not guard.allowed(2)  # another client still needs it
    guard.forget(1)
    assert not guard.allowed(1)


def test_configured_token_is_used_and_a_wrong_offer_revokes():
    guard = AccessGuard("0.0.0.0", "s3cret")
    assert guard.token == "s3cret"
    assert guard.offer(7, "s3cret") and guard.allowed(7)
    assert not guard.offer(7, "nope") and not guard.allowed(7)
