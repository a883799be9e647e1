"""The one base of every error a user can act on.

Each stage raises its own subclass (EngineError, VerificationError, GateError, …) whose message
says what failed, where, and how to fix it; the CLI prints that message and exits 1 instead of a
traceback. This module imports nothing, so the CLI can catch the base without importing the
stages (and their heavy libraries) up front."""


class QpipeError(Exception):
    """A failure with a message meant for the user (what, where, how to fix)."""
