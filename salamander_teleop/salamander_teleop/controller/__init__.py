"""Controller."""
