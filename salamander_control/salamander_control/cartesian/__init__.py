"""Cartesian."""
