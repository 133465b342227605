"""Fixtures of the behaviour tests: a hand-driven clock and a joint-state cache on it."""

from __future__ import annotations

import pytest

from salamander_behavior.limits import JointStateCache
from salamander_behavior.mock.ports import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    """Ages samples without sleeping."""
    return FakeClock()


@pytest.fixture
def cache(clock: FakeClock) -> JointStateCache:
    return JointStateCache(clock=clock)
