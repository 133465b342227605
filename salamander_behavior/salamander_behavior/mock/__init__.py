"""Mock."""
