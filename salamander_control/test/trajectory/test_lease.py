"""The arm lease state machine (trajectory/lease.py); goal parsing is tested in test_joint_state.py."""

from __future__ import annotations

import math

import pytest

from salamander_control.trajectory.lease import ArmLease


def test_lease_acquire_heartbeat_expire_release() -> None:
    lease = ArmLease()
    assert lease.allows("", now=0.0)  # free: the gamepad may jog
    assert lease.acquire("bt", 0.5, now=0.0).success
    assert not lease.allows("", now=0.1) and lease.allows("bt", now=0.1)
    reply = lease.acquire("gamepad", 0.5, now=0.2)
    assert not reply.success and "held by 'bt'" in reply.message
    assert lease.heartbeat("bt", now=0.4).success
    assert lease.seconds_left(0.5) == pytest.approx(0.4)
    assert lease.expire(now=0.95) == "bt"  # missed heartbeat: 0.4 + 0.5 < 0.95
    assert lease.holder == "" and lease.allows("", now=0.95)
    assert not lease.heartbeat("bt", now=1.0).success
    assert lease.acquire("gamepad", 1.0, now=1.0).success
    assert not lease.release("bt", now=1.1).success
    assert lease.release("gamepad", now=1.1).success and lease.holder == ""


@pytest.mark.parametrize("timeout", [0.0, -1.0, math.nan, math.inf, 1e3])
def test_lease_refuses_bad_timeouts(timeout: float) -> None:
    reply = ArmLease().acquire("bt", timeout, now=0.0)
    assert not reply.success and "timeout" in reply.message
