"""Phone numbers, found by libphonenumber in the configured regions, and phones written as
bare digits after a word that says they are one.

Phones must be valid numbers for one of the regions (or merely possible ones written
unmistakably as phones: a ``+`` country code, or a trunk ``0`` and evenly separated groups);
digit runs glued to an identifier (``ORD-48213377``) are never phones. Every phone is keyed
by its E.164 form, so one number gets one placeholder whichever detector found it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import phonenumbers

from pipeline.calibration.pii.detectors.identity import card_number
from pipeline.calibration.pii.nouns import named_by_business
from pipeline.calibration.pii.prefilter import both, digits_at_least, words_of
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span

# A phone written as bare digits right after what says it is one ("tel 4155550123", "mobile
# No. 07911123456", "手机 13812345678").
_PHONE_CONTEXT_RE = re.compile(
    r"(?i:\b(?:tel|telephone|phone|mobile|cell|cellphone|whatsapp|handy|telefon|teléfono|telefono|"
    r"téléphone|portable|móvil|celular)\b|电话|手机|電話|携帯|전화)"
    r"(?:\s*(?:no\.?|number|nr\.?|n°|#|num\.?))?(?:\s+is)?\W{0,4}(\+?\d[\d \-.()]{6,18}\d)", re.I)

_PHONE_GATE_RE = re.compile(r"\+?\(?\d[\d \t().\-/]{5,24}\d")
# dotted quads, dates, and the SSN shape (nobody writes phones 3-2-4)
_NOT_PHONE_RE = re.compile(
    r"\d{1,3}(?:\.\d{1,3}){3}|\d{1,4}([./-])\d{1,2}\1\d{1,4}|\d{3}-\d{2}-\d{4}"
)
NATIONAL_PHONE_SHAPE_RE = re.compile(r"\(?0[1-9]\d{0,3}\)?([ .-])\d{2,4}(?:\1\d{2,4}){2,}")
_DECIMAL_RE = re.compile(r"\d{1,3}[.,]\d{1,2}")
STRONG_PHONE_HINT_RE = re.compile(r"\+\d|(?<![\w.,/-])\(?0[1-9]")
_PHONE_ID_CONTEXT_RE = re.compile(
    r"(?i)\b(?:order|invoice|ticket|ref|reference|tracking|account|acct|sku|case|id|no\.)"
    r"\W{0,3}$"
)


def _phone_key(raw: str, regions: tuple[str, ...]) -> str:
    """A phone's identity as the main detector writes it (E.164 for the first region where the
    number is possible), so one number gets one placeholder whichever detector found it."""
    for (start, end), (e164, _) in _phone_matches(raw, regions).items():
        if start == 0 and end == len(raw):
            return e164
    for region in regions:
        try:
            number = phonenumbers.parse(raw, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_possible_number(number):
            return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return ("+" if raw.lstrip().startswith("+") else "") + re.sub(r"\D", "", raw)


def _phone_windows(text: str) -> list[tuple[int, int]]:
    """Stretches of text worth handing to libphonenumber (it is slow on long texts)."""
    windows: list[tuple[int, int]] = []
    for m in _PHONE_GATE_RE.finditer(text):
        if sum(ch.isdigit() for ch in m.group()) < 7 or _glued_to_identifier(text, *m.span()):
            continue  # any phone inside a glued run would be glued too: skip the slow parse
        if _NOT_PHONE_RE.fullmatch(m.group()) or card_number(m.group()):
            # a dotted quad, a date, the SSN shape or a card number as a whole holds no phone
            # (a match of the whole run is dropped below; an IP address or a card outranks a
            # phone inside it), and these are the slowest windows: every region is tried
            continue
        start, end = m.start(), m.end()
        while start > 0 and m.start() - start < 24 and not text[start - 1].isspace():
            start -= 1
        while end < len(text) and end - m.end() < 24 and not text[end].isspace():
            end += 1
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _glued_to_identifier(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    before2 = text[start - 2] if start > 1 else " "
    after = text[end] if end < len(text) else " "
    after2 = text[end + 1] if end + 1 < len(text) else " "
    if before.isalnum() or before in "_#" or after.isalnum() or after == "_":
        return True
    if before in "-/" and before2.isalnum():
        return True
    return after in "-/_" and after2.isalnum()


def _strongly_formatted(raw: str) -> bool:
    """A "+" country code, or a trunk 0 and evenly separated digit groups: a phone as written."""
    return raw.startswith("+") or NATIONAL_PHONE_SHAPE_RE.fullmatch(raw) is not None


@functools.lru_cache(maxsize=4096)  # log templates repeat the same numbers; parsing is slow
def _phone_matches(window: str, regions: tuple[str, ...]) -> dict[tuple[int, int], tuple[str, bool]]:
    """(start, end) in ``window`` -> (E.164, valid); the first region that matches decides."""
    found: dict[tuple[int, int], tuple[str, bool]] = {}
    # Valid numbers (libphonenumber's VALID leniency) anywhere; merely possible ones
    # (unallocated ranges) only when written unmistakably as phones, see below.
    passes = [(phonenumbers.Leniency.VALID, True)]
    if STRONG_PHONE_HINT_RE.search(window):
        passes.append((phonenumbers.Leniency.POSSIBLE, False))
    for leniency, valid in passes:
        for region in regions:
            for match in phonenumbers.PhoneNumberMatcher(window, region, leniency=leniency):
                span = (match.start, match.end)
                if span not in found and (valid or _strongly_formatted(match.raw_string)):
                    e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
                    found[span] = (e164, valid)
            if valid and _all_runs_found(window, found):
                return found  # the first region that matches decides: nothing is left to decide
    return found


def _all_runs_found(window: str, found: dict[tuple[int, int], tuple[str, bool]]) -> bool:
    """Whether every phone-shaped run of the window lies in a number already found valid:
    then the remaining regions (the slow part of a window's matching) could only find those
    spans again, which the first region to match has decided already."""
    if not found:
        return False
    return all(any(start <= m.start() and m.end() <= end for start, end in found)
               for m in _PHONE_GATE_RE.finditer(window))


def _phones(text: str, regions: tuple[str, ...]) -> Iterator[Span]:
    for w_start, w_end in _phone_windows(text):
        for (m_start, m_end), (e164, _) in _phone_matches(text[w_start:w_end], regions).items():
            start, end = w_start + m_start, w_start + m_end
            raw = text[start:end]
            if _glued_to_identifier(text, start, end) or _NOT_PHONE_RE.fullmatch(raw):
                continue
            if sum(_DECIMAL_RE.fullmatch(token) is not None for token in raw.split()) >= 2:
                continue  # "0.81 0.77 0.93": a list of decimals, whatever German numbering allows
            if raw.isdigit() and _PHONE_ID_CONTEXT_RE.search(text, max(0, start - 16), start):
                continue
            if not _strongly_formatted(raw) and named_by_business(text, start, strict=True):
                continue  # "ma commande 2024-118734", "bestelnummer 1029384756": the business's key
            yield Span(start, end, "PHONE", e164)


def phones_by_context(text: str, regions: tuple[str, ...]) -> Iterator[Span]:
    """Phones written as bare digits after what says they are one ("tel 4155550123")."""
    for m in _PHONE_CONTEXT_RE.finditer(text):
        digits = re.sub(r"\D", "", m.group(1))
        if 7 <= len(digits) <= 15:
            yield Span(m.start(1), m.end(1), "PHONE", _phone_key(m.group(1), regions))


# A phone after its context word needs that word and 7 digits (the pattern's own words, lower-cased);
# any other phone needs 7 digits.
register("phone_by_context", "PHONE", both(digits_at_least(7), words_of(
    "tel", "phone", "mobile", "cell", "whatsapp", "handy", "teléfono", "téléphone", "portable", "móvil",
    "celular", "电话", "手机", "電話", "携帯", "전화")),
         lambda scan: phones_by_context(scan.text, scan.regions))
register("phone", "PHONE", digits_at_least(7), lambda scan: _phones(scan.text, scan.regions))
