"""Manual adjust."""
