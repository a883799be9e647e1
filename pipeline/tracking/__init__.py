"""tracking stage."""
