"""Fixtures of these tests: the shared ones from salamander_testing.fixtures."""

from salamander_testing.fixtures import *  # noqa: F403
