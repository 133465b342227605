"""Which goals may move the arm: lease holder only, in stamp order, well-formed; expiry is reported once."""

from __future__ import annotations

import math

import pytest

from salamander_control.trajectory.goal_gate import GoalGate, Verdict
from salamander_control.trajectory.lease import fingerprint, new_token

CURRENT = (0.0, -0.785, 0.59, 0.0, 0.0)
S = 1_000_000_000  # ns per s


def check(gate: GoalGate, sender: str = "", stamp_s: float = 0.0, now: float = 10.0, **joints: float):
    names = list(joints) or ["wrist_yaw"]
    positions = list(joints.values()) or [0.5]
    return gate.check(names, positions, int(stamp_s * S), sender, CURRENT, now, int(now * S))


def test_a_free_lease_accepts_anyone_and_merges_subsets() -> None:
    decision = check(GoalGate(), base_yaw=0.3)
    assert decision.verdict is Verdict.ACCEPTED and decision.goal == (0.3, -0.785, 0.59, 0.0, 0.0)
    assert check(GoalGate(), sender="bt").verdict is Verdict.ACCEPTED


@pytest.mark.parametrize(
    ("joints", "match"),
    [
        ({"elbow": 0.1}, "unknown joint"),
        ({"wrist_yaw": math.nan}, "nan"),
        ({"wrist_yaw": -math.inf}, "inf"),
        ({"base_yaw": 1e200}, "beyond"),  # huge but finite: once an OverflowError that killed the node
        ({"beam_pitch": -1001.0}, "beyond"),
    ],
)
def test_malformed_goals_are_refused_whole(joints: dict, match: str) -> None:
    decision = check(GoalGate(), **joints)
    assert decision.verdict is Verdict.MALFORMED and match in decision.reason and decision.goal is None


def test_mismatched_lengths_are_refused() -> None:
    decision = GoalGate().check(["wrist_yaw", "base_yaw"], [1.0], 0, "", CURRENT, 1.0, S)
    assert decision.verdict is Verdict.MALFORMED and "2 names but 1 positions" in decision.reason


def test_a_joint_named_twice_is_refused_not_taken_from_its_last_entry() -> None:
    gate = GoalGate()
    names = ["shoulder_pitch", "wrist_yaw", "shoulder_pitch"]
    decision = gate.check(names, [-0.5, 0.2, -0.6], 0, "", CURRENT, 10.0, 10 * S, [0.0, 0.1, 0.0])
    assert decision.verdict is Verdict.MALFORMED and decision.goal is None
    assert "'shoulder_pitch' named twice" in decision.reason
    assert check(gate, wrist_yaw=0.2).verdict is Verdict.ACCEPTED  # refused whole, the gate unchanged


def test_only_the_holder_moves_the_arm_while_the_lease_is_held() -> None:
    gate = GoalGate()
    granted = gate.acquire("bt", 0.5, now=10.0)
    assert granted.success and granted.token
    anonymous = check(gate, now=10.1)
    assert anonymous.verdict is Verdict.LEASE and "lease held by 'bt'" in anonymous.reason
    assert check(gate, sender="gamepad", now=10.1).verdict is Verdict.LEASE
    assert check(gate, sender=granted.token, now=10.1).verdict is Verdict.ACCEPTED
    assert not gate.acquire("other", 0.5, now=10.2).success and gate.holder == "bt"


def test_the_holders_client_id_in_frame_id_is_refused_and_the_token_never_in_a_reason() -> None:
    """Issue 13.5: a goal with frame_id='behavior_server' moved the arm during that client's lease."""
    gate = GoalGate()
    token = gate.acquire("behavior_server", 0.5, now=10.0).token
    spoofed = check(gate, sender="behavior_server", now=10.1)
    assert spoofed.verdict is Verdict.LEASE and spoofed.goal is None
    assert "lease held by 'behavior_server'" in spoofed.reason and "not its lease token" in spoofed.reason
    assert check(gate, sender=token[:-1], now=10.1).verdict is Verdict.LEASE
    assert check(gate, sender=token, stamp_s=1.0, now=10.1).verdict is Verdict.ACCEPTED  # the holder's goal
    older = check(gate, sender=token, stamp_s=0.5, now=10.1)
    assert older.verdict is Verdict.STALE and token not in older.reason
    assert "'behavior_server'" in older.reason
    bad = check(gate, sender=token, now=10.1, elbow=1.0)
    assert bad.verdict is Verdict.MALFORMED and token not in bad.reason


def test_a_refused_frame_id_is_named_by_its_fingerprint_only_on_every_path() -> None:
    """Issue 23.6: "goal from frame_id 'SXVL2tqc...' refused" quoted an expired lease's token."""
    gate = GoalGate()
    expired = gate.acquire("bt", 0.5, now=10.0).token
    gate.poll_expired(11.0)
    unknown = new_token()
    free = [
        (check(gate, sender=expired, now=11.0), expired),  # the expired lease's token, locked out
        (check(gate, sender=unknown, stamp_s=20.0, now=11.0), unknown),  # from the future
        (check(gate, sender=unknown, now=11.0, elbow=1.0), unknown),  # malformed
    ]
    assert check(gate, stamp_s=10.5, now=11.0).verdict is Verdict.ACCEPTED
    free.append((check(gate, sender=unknown, stamp_s=10.0, now=11.0), unknown))  # older
    held = gate.acquire("tree", 5.0, now=11.0).token
    wrong = held[:-1] + ("A" if held[-1] != "A" else "B")
    refused = [*free, *((check(gate, sender=s, now=11.1), s) for s in (expired, wrong, unknown, "tree"))]
    assert [d.verdict for d, _ in refused] == [Verdict.LEASE, Verdict.STALE, Verdict.MALFORMED, Verdict.STALE,
                                               *[Verdict.LEASE] * 4]  # fmt: skip
    for decision, sender in refused:
        assert fingerprint(sender) in decision.reason, decision.reason
        assert held[:6] not in decision.reason, decision.reason
        if sender != "tree":  # a token: not even its start ("tree" is the holder's name, quoted as such)
            assert sender[:6] not in decision.reason, decision.reason


def test_stale_and_out_of_order_goals_are_dropped_zero_stamp_means_now() -> None:
    gate = GoalGate()
    assert check(gate, stamp_s=9.0, now=10.0).verdict is Verdict.ACCEPTED
    stale = check(gate, stamp_s=8.5, now=10.0)
    assert stale.verdict is Verdict.STALE and "0.500 s older" in stale.reason
    assert check(gate, stamp_s=9.0, now=10.0).verdict is Verdict.ACCEPTED  # same stamp: not older
    assert check(gate, stamp_s=0.0, now=10.0).verdict is Verdict.ACCEPTED  # zero stamp: "now" (10 s)
    assert check(gate, stamp_s=9.5, now=10.1).verdict is Verdict.STALE  # older than that "now"
    future = check(gate, stamp_s=12.0, now=10.1)
    assert future.verdict is Verdict.STALE and "in the future" in future.reason
    assert check(gate, stamp_s=10.5, now=10.1).verdict is Verdict.ACCEPTED  # within 1 s of clock skew


def test_refused_goals_do_not_advance_the_stamp_order() -> None:
    gate = GoalGate()
    check(gate, stamp_s=5.0)
    assert check(gate, stamp_s=9.0, elbow=1.0).verdict is Verdict.MALFORMED
    assert check(gate, stamp_s=6.0).verdict is Verdict.ACCEPTED


def test_expiry_is_reported_once_and_locks_the_expired_holder_out_until_it_reacquires() -> None:
    gate = GoalGate()
    old = gate.acquire("bt", 0.5, now=10.0).token
    assert gate.poll_expired(10.4) == ""
    # The expiry is noticed inside a goal check; the control loop still hears about it, exactly once.
    assert check(gate, now=10.6).verdict is Verdict.ACCEPTED  # anonymous: the lease is free again
    assert gate.holder == ""
    assert gate.poll_expired(10.6) == "bt" and gate.poll_expired(10.7) == ""
    locked = check(gate, sender=old, now=10.7)
    assert locked.verdict is Verdict.LEASE and "expired" in locked.reason and old not in locked.reason
    new = gate.acquire("bt", 0.5, now=10.8).token
    assert new != old
    assert check(gate, sender=new, now=10.9).verdict is Verdict.ACCEPTED
    assert check(gate, sender=old, now=10.9).verdict is Verdict.LEASE


def test_heartbeats_keep_the_lease_and_release_frees_it() -> None:
    gate = GoalGate()
    token = gate.acquire("bt", 0.5, now=0.0).token
    for t in (0.4, 0.8, 1.2):
        assert gate.heartbeat("bt", token, now=t).success
    assert gate.holder == "bt" and gate.seconds_left(1.3) == pytest.approx(0.4)
    assert not gate.heartbeat("bt", "bt", now=1.25).success and gate.seconds_left(1.3) == pytest.approx(0.4)
    assert not gate.release("bt", "", now=1.3).success and gate.holder == "bt"
    assert gate.release("bt", token, now=1.3).success and gate.holder == ""
    assert gate.poll_expired(5.0) == ""  # a release is not an expiry: the arm is not stopped


def _running(gate: GoalGate, start: float, end: float, period: float = 0.002) -> None:
    """The owner's control timer runs every `period` s from `start` to `end` (without a stall)."""
    for i in range(round((end - start) / period) + 1):
        gate.ran(start + i * period, period)


def test_the_owners_own_stall_is_not_counted_against_the_holders_heartbeat() -> None:
    # Seen in a whole-suite run: the generator itself starved for ~2.5 s; on waking, its timer ran before
    # the heartbeats waiting in its queue and expired the lease of a client that had kept it.
    gate = GoalGate()
    token = gate.acquire("bt", 1.0, now=0.0).token
    _running(gate, 0.0, 0.5)
    assert gate.ran(3.0, 0.002) == pytest.approx(2.5 - 0.1)  # stalled 2.5 s: all but the 0.1 s allowed
    assert gate.poll_expired(3.0) == "" and gate.holder == "bt"
    assert gate.heartbeat("bt", token, now=3.001).success  # the queued heartbeat, taken after the timer
    assert gate.ran(3.002, 0.002) == 0.0


def test_a_heartbeat_taken_first_after_the_owners_stall_is_kept_too() -> None:
    gate = GoalGate()
    token = gate.acquire("bt", 1.0, now=0.0).token
    _running(gate, 0.0, 0.5)
    assert gate.heartbeat("bt", token, now=3.0).success  # before the timer's first run after the stall
    assert gate.ran(3.001, 0.002) == pytest.approx(2.4)  # given to the holder: reported once, for the log
    assert gate.ran(3.003, 0.002) == 0.0


def test_a_holder_that_stopped_is_still_dropped_after_its_timeout_of_the_owners_running_time() -> None:
    gate = GoalGate()
    gate.acquire("bt", 1.0, now=0.0)
    _running(gate, 0.0, 0.5)
    gate.ran(3.0, 0.002)  # the owner stalled 2.5 s: 2.4 s given; the deadline is now 3.4 s
    _running(gate, 3.0, 3.398)
    assert gate.holder == "bt"
    _running(gate, 3.398, 3.41)
    assert gate.poll_expired(3.41) == "bt"
    # A timer that keeps running never gives anything: the plain timeout.
    gate = GoalGate()
    gate.acquire("bt", 1.0, now=0.0)
    _running(gate, 0.0, 0.998)
    assert gate.holder == "bt"
    _running(gate, 0.998, 1.01)
    assert gate.poll_expired(1.01) == "bt"


def test_a_gap_within_the_timers_own_period_is_no_stall_and_nothing_counts_before_the_timer_reports() -> None:
    gate = GoalGate()
    gate.acquire("bt", 1.0, now=0.0)
    gate.ran(0.0, 0.5)  # at rest, a slow keep-alive timer: 1.5 s between two runs is allowed
    assert gate.ran(1.5, 0.5) == 0.0 and gate.poll_expired(1.5) == "bt"
    gate = GoalGate()
    gate.acquire("bt", 1.0, now=0.0)
    gate.ran(0.0, 0.002)  # at full rate ...
    gate.expect(0.2)  # ... the timer slowed to a 0.2 s keep-alive: its next run 0.5 s on is no stall
    assert gate.ran(0.5, 0.2) == 0.0
    assert gate.ran(1.2, 0.2) == pytest.approx(0.1)  # 0.7 s: 0.1 s past its three periods
    gate = GoalGate()  # a gate whose owner never reports its timer (the unit tests above): wall time
    gate.acquire("bt", 1.0, now=0.0)
    assert gate.poll_expired(3.0) == "bt"


def test_velocities_are_merged_by_name_and_absent_means_none() -> None:
    gate = GoalGate()
    plain = gate.check(["base_yaw"], [0.3], 0, "", CURRENT, 10.0, 10 * S)
    assert plain.verdict is Verdict.ACCEPTED and plain.velocity is None
    streamed = gate.check(["wrist_yaw", "base_yaw"], [0.1, 0.3], 0, "", CURRENT, 10.0, 10 * S, [0.5, -0.2])
    assert streamed.verdict is Verdict.ACCEPTED and streamed.velocity == (-0.2, 0.0, 0.0, 0.0, 0.5)


@pytest.mark.parametrize(
    ("velocities", "match"),
    [([0.1], "2 names but 1 velocities"), ([0.1, math.nan], "velocities not finite for base_yaw=nan"),
     ([math.inf, 0.0], "velocities not finite for wrist_yaw=inf")],
)
def test_malformed_velocities_refuse_the_whole_goal(velocities: list, match: str) -> None:
    gate = GoalGate()
    decision = gate.check(["wrist_yaw", "base_yaw"], [0.1, 0.3], 0, "", CURRENT, 10.0, 10 * S, velocities)
    assert decision.verdict is Verdict.MALFORMED and match in decision.reason and decision.goal is None
