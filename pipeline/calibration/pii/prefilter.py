"""Cheap necessary conditions that decide whether a detector's expensive patterns run.

A text that fails a prefilter cannot match the patterns it guards, so skipping them
changes nothing that is found: addresses need a digit, an IPv4 address 4, phones 7, cards
13, each national-id pattern its own number; e-mails and URL credentials an "@", an IPv6
address a colon; secrets and person names one of their patterns' trigger words
(:class:`Needs`). A :class:`Scan` works out the facts these conditions read once per text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_DIGIT_RE = re.compile(r"\d")  # the same notion of a digit as the patterns' \d
_LETTERS_RE = re.compile(r"[^\W\d_]+")
_ANY_LETTERS = r"[^\W\d_]*"
_LITERAL_RE = re.compile(r"[^\\()\[\]?*+{}|.^$]*")  # a pattern's leading literal text
# scripts written with spaces between words (Latin, Greek, Cyrillic, Armenian): a cue's letters
# there are a word; elsewhere (Han, kana, Hangul, Arabic, Hebrew, Indic, Thai) a substring
_SPACED_RE = re.compile(r"[\u0000-\u058f\u1e00-\u1fff]+$")

# Characters that an ASCII letter matches under re.IGNORECASE but that str.lower() does not
# turn into that letter ("ſ" matches "s", "K" matches "k", "ı" and "İ" match "i"): a text
# holding one is scanned by every pattern, whatever its prefilters say.
_FOLD_EXCEPTIONS = ("\u0130", "\u0131", "\u017f", "\u212a")


@dataclass(frozen=True, slots=True)
class Needs:
    """A necessary condition for a pattern to match: one of ``literals`` occurs in the text
    (lower-cased, for a pattern that ignores case). A substring search costs a fraction of
    a regex scan, and most texts hold none of a pattern's trigger words, so each pattern
    is scanned only where it can match; what is found is exactly what a full scan finds."""

    literals: tuple[str, ...]
    ignore_case: bool = False

    def met(self, text: str, lowered: str | None) -> bool:
        if self.ignore_case:
            if lowered is None:  # a case-folding exception in the text: scan it
                return True
            text = lowered
        for literal in self.literals:  # a loop: cheaper than any() over a generator
            if literal in text:
                return True
        return False


def lower_or_none(text: str) -> str | None:
    """``text.lower()`` for :meth:`Needs.met`; None when it would not be exact."""
    return None if any(ch in text for ch in _FOLD_EXCEPTIONS) else text.lower()


def count_digits(text: str) -> int:
    """Digits in ``text``, by the patterns' own notion of a digit (``\\d``)."""
    return len(_DIGIT_RE.findall(text))


class Scan:
    """One text about to be scanned, with the facts that prefilters and detectors share,
    each worked out at most once: the digit count at once (nearly every prefilter reads
    it), the lower-cased text when a detector first asks for it."""

    def __init__(self, text: str, regions: tuple[str, ...], business_keys: frozenset[str] = frozenset()) -> None:
        self.text = text
        self.regions = regions  # the phone regions of the scrubber's config
        self.business_keys = business_keys  # and its business's own key prefixes
        self.digits = count_digits(text)

    @functools.cached_property
    def lowered(self) -> str | None:
        """The text lower-cased for :meth:`Needs.met` (None: a case-folding exception)."""
        return lower_or_none(self.text)

    @functools.cached_property
    def folded(self) -> str:
        """The text case-folded (the words' case), for :func:`word_affixes` patterns."""
        return self.text.casefold()

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """The text's words (runs of letters), case-folded: for detectors gated by cue words."""
        return frozenset(_LETTERS_RE.findall(self.folded))


Prefilter = Callable[[Scan], bool]


def word_affixes(starts: Iterable[str] = (), ends: Iterable[str] = (),
                 inside: Iterable[str] = ()) -> Callable[[str], bool]:
    """A test of a case-folded text: does a word of it (a run of letters, as in
    :attr:`Scan.words`) start with one of ``starts``, end with one of ``ends`` or hold one of
    ``inside``? Searches in C instead of a loop over the words. Every affix must be case-folded
    letters alone: then it lies inside one word wherever it occurs."""
    starts, ends, inside = (tuple(sorted(set(affixes))) for affixes in (starts, ends, inside))
    bad = [a for a in starts + ends + inside if not _LETTERS_RE.fullmatch(a) or a != a.casefold()]
    if bad:
        raise ValueError(f"word affixes must be case-folded letters alone, not {bad}")
    # the alternatives lead, so the engine skips ahead to their first letters; where a word
    # starts (or ends) is checked at each hit
    start_re = re.compile("|".join(map(re.escape, starts))) if starts else None
    end_re = re.compile(f"(?:{'|'.join(map(re.escape, ends))})(?![^\\W\\d_])") if ends else None

    def found(folded: str) -> bool:
        for part in inside:
            if part in folded:
                return True
        if end_re is not None and end_re.search(folded):
            return True
        at = 0
        while start_re is not None and (m := start_re.search(folded, at)):
            if m.start() == 0 or not _LETTERS_RE.match(folded, m.start() - 1):
                return True
            at = m.start() + 1
        return False
    return found


def always(scan: Scan) -> bool:
    """No condition: the detector gates each of its patterns itself (see :class:`Needs`)."""
    return True


def digits_at_least(count: int) -> Prefilter:
    """The text holds at least ``count`` digits."""
    return lambda scan: scan.digits >= count


def holds(substring: str) -> Prefilter:
    """The text holds ``substring``."""
    return lambda scan: substring in scan.text


def digit_or_not_ascii(scan: Scan) -> bool:
    """The text holds a digit or a character outside ASCII: what every context-word pattern
    (an IBAN, a passport number, a date of birth, a phone after "tel", a name in a non-Latin
    script) needs the one or the other of."""
    return scan.digits > 0 or not scan.text.isascii()


def cue_words(cues: tuple[str, ...]) -> Prefilter:
    """A necessary condition for one of ``cues`` (regular expressions, case-insensitive) to
    match: the text holds a word equal to a cue's leading letters (where the pattern goes on with
    a space or ends), a word starting with them (a stem: "licen" of ``licen[cs]e``), or, for a cue
    that starts with ``[^\\W\\d_]*`` (the ending of a compound: "nummer") or with no letter ("#",
    "№"), or in a script without spaces ("身份证", "رقم "), its literal text anywhere."""
    exact, stems, inside = set(), set(), set()
    for cue in cues:
        if cue.startswith(_ANY_LETTERS):
            cue = cue[len(_ANY_LETTERS):]
            inside.add(_LITERAL_RE.match(cue).group().lower())
            continue
        m = _LETTERS_RE.match(cue)
        if m is None or not m.group().isascii() and not _SPACED_RE.match(m.group()):
            inside.add(_LITERAL_RE.match(cue).group().lower())
            continue
        rest = cue[m.end():]
        whole = rest == "" or (rest[0] in " -" and rest[1:2] not in ("?", "*"))
        (exact if whole else stems).add(m.group().casefold())
    words, prefixes = frozenset(exact), word_affixes(starts=stems)
    parts = tuple(sorted(p for p in inside if p))
    ascii_parts = tuple(p for p in parts if p.isascii())  # all an ASCII text can hold

    def met(scan: Scan) -> bool:
        lowered = scan.lowered
        if lowered is None:
            return True
        for part in ascii_parts if scan.text.isascii() else parts:
            if part in lowered:
                return True
        if not words.isdisjoint(scan.words):
            return True
        return prefixes(scan.folded)
    return met


def not_ascii(scan: Scan) -> bool:
    """The text holds a character outside ASCII (a name in a script other than Latin's)."""
    return not scan.text.isascii()


def words_of(*literals: str) -> Prefilter:
    """One of ``literals`` occurs in the lower-cased text (the trigger words of a pattern that
    ignores case: :class:`Needs`)."""
    needs = Needs(literals, ignore_case=True)
    return lambda scan: needs.met(scan.text, scan.lowered)


def both(*prefilters: Prefilter) -> Prefilter:
    """Every one of ``prefilters`` holds."""
    return lambda scan: all(prefilter(scan) for prefilter in prefilters)


def either(*prefilters: Prefilter) -> Prefilter:
    """Any one of ``prefilters`` holds."""
    return lambda scan: any(prefilter(scan) for prefilter in prefilters)
