"""Bringup."""
