"""Salamander teleop package."""
