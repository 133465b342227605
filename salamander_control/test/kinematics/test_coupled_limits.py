"""The coupled limits' sharing rules without ROS: the owner, the followers, the loop guard.

The property test plays a whole stack (the owner and three followers) through any interleaving of
operators' sets on any node, forwards reaching the owner in any order and publications reaching each
follower in order, and checks that once everything is delivered every node holds the owner's pair,
which is the newest operator set the owner accepted; a refused value changes nothing anywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics.coupled_limits import (
    COUPLED_NAMES,
    Limits,
    LimitsFollower,
    LimitsOwner,
    coupled_subset,
)
from salamander_control.kinematics.params import arm_param_specs

SPECS = {s.name: s for s in arm_param_specs() if s.name in COUPLED_NAMES}
START = {"alpha_max": 1.40, "beta_max": 0.87}


def test_owner_publishes_only_changes_and_counts_revisions():
    owner = LimitsOwner(START, "/arm/trajectory_generator")
    assert owner.current == Limits(1.40, 0.87, 0, "/arm/trajectory_generator")
    assert owner.accepted({"alpha_max": 1.40}) is None  # no change: nothing to publish
    assert owner.accepted({"q1_max": 1.0}) is None  # not a coupled limit
    first = owner.accepted({"alpha_max": 1.30})
    assert first == Limits(1.30, 0.87, 1, "/arm/trajectory_generator")
    assert owner.accepted({"alpha_max": 1.30, "beta_max": 0.80}) == Limits(1.30, 0.80, 2, first.source)


def test_follower_forwards_operator_sets_but_never_an_adoption():
    follower = LimitsFollower()
    assert follower.to_forward({"alpha_max": 1.2, "max_rate_hz": 5.0}) == {"alpha_max": 1.2}
    assert follower.to_forward({"max_rate_hz": 5.0}) == {}
    assert follower.to_forward({"alpha_max": 1.4}) == {"alpha_max": 1.4}  # unchanged locally: still sent
    with follower.adopting():
        assert follower.to_forward({"alpha_max": 1.2}) == {}
    assert follower.to_forward({"beta_max": 0.5}) == {"beta_max": 0.5}  # the guard ends with the block


def test_follower_adopts_only_what_differs_and_restores_the_owners_pair():
    follower = LimitsFollower()
    assert follower.to_restore(START) == {}  # nothing known of the owner: keep the local value
    published = Limits(1.2, 0.87, 3, "/arm/trajectory_generator")
    assert follower.to_adopt(published, START) == {"alpha_max": 1.2}
    assert follower.owner == published
    assert follower.to_adopt(published, {"alpha_max": 1.2, "beta_max": 0.87}) == {}
    assert follower.to_restore({"alpha_max": 1.0, "beta_max": 0.87}) == {"alpha_max": 1.2}


def test_follower_says_alone_once_until_the_owner_is_heard_again():
    follower = LimitsFollower()
    assert follower.say_alone() and not follower.say_alone()
    follower.to_adopt(Limits(1.4, 0.87, 0, "/o"), START)
    assert follower.say_alone()


def test_follower_awaits_a_publication_until_any_arrives_and_the_earliest_due_time_stays():
    follower = LimitsFollower()
    assert follower.due is None and not follower.overdue(1e9)  # nothing awaited: never overdue
    follower.expect(10.0, 5.0)
    follower.expect(12.0, 5.0)  # a second reason does not push the first one's due time back
    assert follower.due == 15.0
    assert not follower.overdue(15.0) and follower.overdue(15.1)
    follower.to_adopt(Limits(1.4, 0.87, 0, "/o"), START)  # any publication ends the wait
    assert follower.due is None and not follower.overdue(100.0)


def test_a_forward_is_echoed_only_when_it_changes_the_owners_pair_as_last_heard():
    follower = LimitsFollower()
    assert follower.changes_owner({"alpha_max": 1.4})  # nothing heard yet: the owner's pair is unknown
    follower.to_adopt(Limits(1.4, 0.87, 2, "/o"), START)
    assert not follower.changes_owner({"alpha_max": 1.4})  # the owner has it: it publishes nothing
    assert follower.changes_owner({"alpha_max": 1.4, "beta_max": 0.8})


def test_coupled_subset_keeps_only_the_pair_as_floats():
    subset = coupled_subset({"alpha_max": 1, "beta_max": 0.5, "q1_min": -1.0})
    assert subset == {"alpha_max": 1.0, "beta_max": 0.5}


# --- the whole stack, any interleaving ----------------------------------------------------------------


@dataclass
class Forward:
    values: dict[str, float]
    by_operator: bool  # False: an adoption that leaked past the guard (must never happen)


@dataclass
class Stack:
    """The owner and followers as the ROS shell wires them; queues stand in for DDS."""

    followers: int
    owner: LimitsOwner = field(init=False)
    owner_values: dict[str, float] = field(init=False)
    nodes: list[dict[str, float]] = field(init=False)
    logic: list[LimitsFollower] = field(init=False)
    inbox: list[list[Limits]] = field(init=False)  # per follower, in publication order
    forwards: list[Forward] = field(default_factory=list)  # in flight; delivered in any order
    expected: dict[str, float] = field(default_factory=lambda: dict(START))

    def __post_init__(self) -> None:
        self.owner = LimitsOwner(START, "/arm/trajectory_generator")
        self.owner_values = dict(START)
        self.nodes = [dict(START) for _ in range(self.followers)]
        self.logic = [LimitsFollower() for _ in range(self.followers)]
        self.inbox = [[self.owner.current] for _ in range(self.followers)]  # the latched first pair

    @staticmethod
    def valid(values: dict[str, float]) -> bool:
        return all(SPECS[name].check(value) is None for name, value in values.items())

    def owner_set(self, values: dict[str, float], by_operator: bool) -> bool:
        if not self.valid(values):
            return False
        self.owner_values.update(values)
        if by_operator:
            self.expected.update(values)
        published = self.owner.accepted(values)
        if published is not None:
            for inbox in self.inbox:
                inbox.append(published)
        return True

    def follower_set(self, i: int, values: dict[str, float]) -> bool:
        if not self.valid(values):
            return False
        self.nodes[i].update(values)
        forward = self.logic[i].to_forward(values)
        if forward:
            self.forwards.append(Forward(forward, by_operator=True))
        return True

    def deliver_forward(self, k: int) -> None:
        forward = self.forwards.pop(k % len(self.forwards))
        self.owner_set(forward.values, forward.by_operator)

    def deliver_publication(self, i: int) -> None:
        published = self.inbox[i].pop(0)
        changes = self.logic[i].to_adopt(published, self.nodes[i])
        with self.logic[i].adopting():
            assert self.valid(changes)
            self.nodes[i].update(changes)
            leaked = self.logic[i].to_forward(changes)
        if leaked:
            self.forwards.append(Forward(leaked, by_operator=False))

    def pending(self) -> bool:
        return bool(self.forwards) or any(self.inbox)

    def drain(self) -> None:
        for _ in range(10_000):
            if not self.pending():
                return
            if self.forwards:
                self.deliver_forward(0)
            for i, inbox in enumerate(self.inbox):
                if inbox:
                    self.deliver_publication(i)
        pytest.fail("the stack never settles: forwards and publications loop")

    def snapshot(self) -> list[dict[str, float]]:
        return [dict(self.owner_values), *(dict(n) for n in self.nodes)]


FOLLOWERS = 3
values = st.one_of(
    st.floats(min_value=0.0, max_value=2.7, allow_nan=False),
    st.sampled_from([math.nan, math.inf, -0.1, 2.8, 9.0]),  # refused everywhere
)
set_action = st.tuples(
    st.just("set"), st.integers(0, FOLLOWERS), st.sampled_from(COUPLED_NAMES), values
)  # node 0 is the owner
deliver_forward = st.tuples(st.just("forward"), st.integers(0, 20))
deliver_publication = st.tuples(st.just("publication"), st.integers(0, FOLLOWERS - 1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(set_action, deliver_forward, deliver_publication), max_size=60))
def test_any_interleaving_ends_with_every_node_on_the_newest_accepted_pair(actions):
    stack = Stack(FOLLOWERS)
    for action in actions:
        if action[0] == "set":
            _, node, name, value = action
            before = stack.snapshot()
            accepted = (
                stack.owner_set({name: value}, by_operator=True) if node == 0
                else stack.follower_set(node - 1, {name: value})
            )
            if not accepted:  # a refused value changes nothing anywhere
                assert stack.snapshot() == before
                assert not (math.isfinite(value) and 0.0 <= value <= 2.7)
        elif action[0] == "forward" and stack.forwards:
            stack.deliver_forward(action[1])
        elif action[0] == "publication" and stack.inbox[action[1]]:
            stack.deliver_publication(action[1])
    stack.drain()
    assert all(f.by_operator for f in stack.forwards)  # nothing leaked past the guard
    final = stack.snapshot()
    assert all(node == final[0] for node in final), final  # never split
    assert final[0] == stack.expected  # the newest operator set the owner accepted


def test_two_operators_at_once_end_on_the_one_the_owner_took_last():
    stack = Stack(2)
    assert stack.follower_set(0, {"alpha_max": 1.1})  # operator A on one node
    assert stack.follower_set(1, {"alpha_max": 1.3})  # operator B on another, at the same time
    stack.deliver_forward(1)  # B's reaches the owner first
    stack.deliver_forward(0)  # then A's: the newest at the owner
    stack.drain()
    assert [n["alpha_max"] for n in stack.snapshot()] == [1.1, 1.1, 1.1]


def test_a_broken_loop_guard_would_be_caught():
    """The property above can fail: without the guard a stale adoption overwrites a newer set."""
    stack = Stack(2)
    stack.logic[0].adopting = lambda: _NoGuard()  # type: ignore[method-assign]
    stack.owner_set({"alpha_max": 1.2}, by_operator=True)
    stack.deliver_publication(0)  # the latched first pair (1.40): nothing to adopt, nothing to forward
    stack.deliver_publication(0)  # adopts 1.2 and, unguarded, forwards it back
    assert stack.forwards and not stack.forwards[-1].by_operator


class _NoGuard:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
