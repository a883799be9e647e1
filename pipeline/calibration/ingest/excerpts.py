"""Reject excerpts: at most :data:`~pipeline.calibration.ingest.rejects.EXCERPT_CHARS` characters
of a record's raw bytes for a human to find it by, PII-scrubbed harder than records are."""

from __future__ import annotations

import re

from pipeline.calibration.ingest.rejects import EXCERPT_CHARS
from pipeline.calibration.pii import PlaceholderMap, Scrubber

_EXCERPT_WINDOW = 2000  # scrub this much, then cut: a value cut in half would escape detection

_CAPITALISED_RUN_RE = re.compile(
    r"(?<![\w<])[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+(?:[ \t]+[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+)+(?!\w)"
)
_JSON_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|[nrt\"\\/bf])")
_SIMPLE_ESCAPES = {"n": " ", "r": " ", "t": " ", '"': '"', "\\": "\\", "/": "/", "b": " ", "f": " "}


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    return chr(int(code[1:], 16)) if code[0] == "u" else _SIMPLE_ESCAPES[code]


def make_excerpt(raw: bytes, scrubber: Scrubber) -> str:
    """At most 120 characters of ``raw`` for a human, PII-scrubbed, on one line.

    Excerpts only help find a line, so they are scrubbed harder than records: on top of the
    scrubber, every run of two or more Capitalised words counts as a person's name.
    """
    text = raw[: _EXCERPT_WINDOW * 4].decode("utf-8", errors="replace")[:_EXCERPT_WINDOW]
    # JSON escapes would hide names and line structure from the scrubber.
    text = _JSON_ESCAPE_RE.sub(_unescape, text)
    # \uD83D\uDE00 escapes arrive as two surrogates: join pairs, replace strays.
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    text = " ".join(text.split())
    mapping = PlaceholderMap()
    text = scrubber.scrub_text(text, mapping)
    text = _CAPITALISED_RUN_RE.sub(lambda m: mapping.placeholder("PERSON", m.group().casefold()), text)
    return text[:EXCERPT_CHARS]
