"""Serving configurations compared as controlled changes: `qpipe upgrade` (docs/upgrades.md)."""
