"""Ghost."""
