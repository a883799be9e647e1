"""Placeholders: their shape, masking the ones a text already holds, and the per-record map
that hands them out."""

from __future__ import annotations

import re
from collections import Counter

from pipeline.calibration.pii.config import ALL_KINDS
from pipeline.calibration.pii.vocabulary import NOT_NAMES

PLACEHOLDER_RE = re.compile(r"<(" + "|".join(ALL_KINDS) + r")_(\d+)>")
MASK = "\ue000"  # private-use char: not a word char, digit or space, so no pattern spans it


def mask_placeholders(text: str) -> str:
    """Same-length text in which existing placeholders cannot be matched by any pattern."""
    if "<" not in text:  # every placeholder starts with "<"
        return text
    return PLACEHOLDER_RE.sub(lambda m: MASK * len(m.group()), text)


class PlaceholderMap:
    """Per-record memory: which value got which placeholder, and names seen so far.

    Use one map for all fields of one record so placeholders stay consistent.
    """

    def __init__(self) -> None:
        self._assigned: dict[tuple[str, str], str] = {}
        self._next: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self.names: set[str] = set()  # person names as written, matched case-sensitively

    def reserve(self, text: str) -> None:
        """Never hand out a placeholder that ``text`` already uses for something else."""
        if "<" not in text:  # every placeholder starts with "<"
            return
        for m in PLACEHOLDER_RE.finditer(text):
            self._next[m.group(1)] = max(self._next[m.group(1)], int(m.group(2)))

    def learn_name(self, name: str) -> None:
        """Scrub the person ``name`` and its parts wherever they appear in this record.

        Matching is case-sensitive (as written, Title Case, UPPER CASE) so that a name
        such as "Will" does not take every "will" with it.
        """
        parts = [name] + [p for p in name.split() if len(p) >= 3 and p.casefold() not in NOT_NAMES]
        for part in parts:
            self.names.update({part, part.title(), part.upper()})

    def placeholder(self, kind: str, key: str) -> str:
        """The placeholder for the normalised value ``key`` of ``kind``; counts one use."""
        self.counts[kind] += 1
        found = self._assigned.get((kind, key))
        if found is None and kind == "PERSON":
            # "John" after "John Smith" (or the reverse): same person, same placeholder.
            words = set(key.split())
            found = next((value for (k, other), value in self._assigned.items()
                          if k == kind and words & set(other.split())), None)
        if found is None:
            self._next[kind] += 1
            found = f"<{kind}_{self._next[kind]}>"
        self._assigned[(kind, key)] = found
        return found
