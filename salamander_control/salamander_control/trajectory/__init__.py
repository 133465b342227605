"""Trajectory."""
