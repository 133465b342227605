"""Salamander behavior package."""
