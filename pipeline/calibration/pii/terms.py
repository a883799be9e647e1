"""Whole-word term lists: the configured dictionary and the names a record has taught."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator

from pipeline.calibration.pii.spans import Span


def term_spans(text: str, pattern: re.Pattern[str] | None, kinds: dict[str, str]) -> Iterator[Span]:
    if pattern is None:
        return
    for m in pattern.finditer(text):
        key = " ".join(m.group().split()).casefold()
        yield Span(m.start(), m.end(), kinds.get(key, "PERSON"), key)


@functools.lru_cache(maxsize=1024)  # the same people recur; compiling is the slow part
def names_terms_pattern(names: frozenset[str]) -> re.Pattern[str] | None:
    return terms_pattern(names, ignore_case=False)


def terms_pattern(terms: Iterable[str], *, ignore_case: bool) -> re.Pattern[str] | None:
    unique = sorted({t for t in terms if t.strip()}, key=lambda t: (-len(t), t))
    if not unique:
        return None
    body = "|".join(r"\s+".join(re.escape(part) for part in t.split()) for t in unique)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE if ignore_case else 0)
