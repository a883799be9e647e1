"""Reject excerpts: at most :data:`~pipeline.calibration.ingest.rejects.EXCERPT_CHARS` characters
of a record's raw bytes for a human to find it by, PII-scrubbed harder than records are."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from pipeline.calibration.ingest.items import ID_FIELDS
from pipeline.calibration.ingest.rejects import EXCERPT_CHARS
from pipeline.calibration.pii import PlaceholderMap, Scrubber

EXCERPT_WINDOW = 2000  # scrub this much, then cut: a value cut in half would escape detection

_CAPITALISED_RUN_RE = re.compile(
    r"(?<![\w<])[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+(?:[ \t]+[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+)+(?!\w)"
)
_JSON_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|[nrt\"\\/bf])")
_SIMPLE_ESCAPES = {"n": " ", "r": " ", "t": " ", '"': '"', "\\": "\\", "/": "/", "b": " ", "f": " "}
# the record's ids as JSON writes them (a JSONL line, a Parquet row as JSON), found in lines that
# do not parse; a row that parsed has its id values named exactly
_ID_FIELD_RE = re.compile(rf'("(?:{"|".join(ID_FIELDS)})"\s*:\s*")([^"\\]{{1,512}})(?=")')
_ID_MARK = "\u27e6id{}\u27e7"  # ⟦id0⟧: a token no scrubber pattern touches


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    return chr(int(code[1:], 16)) if code[0] == "u" else _SIMPLE_ESCAPES[code]


def make_excerpt(raw: bytes, scrubber: Scrubber, *, pseudonym: Callable[[str], str] | None = None,
                 ids: Iterable[str] = ()) -> str:
    """At most 120 characters of ``raw`` for a human, PII-scrubbed, on one line.

    Excerpts only help find a line, so they are scrubbed harder than records: on top of the
    scrubber, every run of two or more Capitalised words counts as a person's name. With
    ``pseudonym``, the record's ids (``ids``, those of a row that parsed, and the values of
    ``"id"``/``"conversation_id"`` in JSON text) appear as the pseudonyms kept records carry.
    """
    text = raw[: EXCERPT_WINDOW * 4].decode("utf-8", errors="replace")[:EXCERPT_WINDOW]
    # JSON escapes would hide names and line structure from the scrubber.
    text = _JSON_ESCAPE_RE.sub(_unescape, text)
    # \uD83D\uDE00 escapes arrive as two surrogates: join pairs, replace strays.
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    text = " ".join(text.split())
    marked: list[str] = []
    if pseudonym is not None:
        text, marked = _mark_ids(text, ids)
    mapping = PlaceholderMap()
    text = scrubber.scrub_text(text, mapping)
    text = _CAPITALISED_RUN_RE.sub(lambda m: mapping.placeholder("PERSON", m.group().casefold()), text)
    for k, value in enumerate(marked):
        text = text.replace(_ID_MARK.format(k), pseudonym(value))
    return text[:EXCERPT_CHARS]


def _mark_ids(text: str, ids: Iterable[str]) -> tuple[str, list[str]]:
    """Every id value in ``text`` replaced by a numbered mark, and the values in mark order."""
    marked: list[str] = []

    def mark(value: str) -> str:
        marked.append(value)
        return _ID_MARK.format(len(marked) - 1)

    text = _ID_FIELD_RE.sub(lambda m: m.group(1) + mark(m.group(2)), text)
    for value in sorted({i for i in ids if i and i.strip()}, key=len, reverse=True):
        flat = " ".join(value.split())  # as the excerpt's whitespace was folded
        pattern = re.compile(rf"(?<![\w-]){re.escape(flat)}(?![\w-])")
        if pattern.search(text):
            text = pattern.sub(lambda _, v=value: mark(v), text)
    return text, marked
