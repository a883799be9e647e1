"""The command line's logging: one handler on the shared console, and every record masked.

Libraries log what they were given: lm-eval prints its model arguments — the engine's per-run
API key among them, in an `Authorization: Bearer …` header — and an HTTP client may print a URL
with a password. Every record passes through `pipeline.secrets.mask_text` before any handler
writes it, so a secret never reaches a terminal, DVC's log or CI's.
"""

from __future__ import annotations

import logging

from rich.console import Console
from rich.logging import RichHandler

from pipeline.secrets import mask_text


class MaskSecrets(logging.Filter):
    """Rewrites the record's message with its secrets masked (the message is formatted first, so
    a secret passed as an argument is caught too)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_text(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def configure(console: Console, verbose: bool = False) -> None:
    handler = RichHandler(console=console, show_path=False)
    handler.addFilter(MaskSecrets())
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(message)s",
                        handlers=[handler])
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
