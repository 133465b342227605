"""Gamepad."""
