"""Fixtures of these tests: the shared ones from salamander_control.testing.fixtures."""

from salamander_control.testing.fixtures import *  # noqa: F403
