"""Values a person calls theirs: a first-person possessive is a label too.

"my library card is …", "Our dog's microchip is …", "mon pseudo c'est …", "meines Widerspruchs …
ist …", "… của em là …", "GWF071559342 is my visa application reference": the first
identifier-shaped value after the words that name the thing (at most five, in the same
sentence), or the value right before "is my …", is the person's — unless a business noun names
the thing ("my order 44120087", "mein Paket …"): business keys stay as written. The shapes taken
without a label noun are narrower than the label detector's (labelled.py): five digits, or a run
of four that is not a year among letters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipeline.calibration.pii.detectors.labelled import (
    BUILTIN_KEYS, COPULAS, DATE_RE, FILLER_WORDS, INSIDE, PATH_RE,
    REACH_TO_COPULA, SENTENCE_END_RE, TOKEN_RE, VALUE_RE,
)
from pipeline.calibration.pii.detectors.phones import NATIONAL_PHONE_SHAPE_RE, STRONG_PHONE_HINT_RE
from pipeline.calibration.pii.nouns import business_in, is_business_word
from pipeline.calibration.pii.prefilter import Scan
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span, strip_trailing

_POSSESSIVES = frozenset({w.casefold() for w in """
my our mon ma mes notre nos mein meine meinen meinem meiner meines unser unsere unseren unserem unserer
mijn onze mi mis nuestro nuestra nuestros nuestras meu minha meus minhas nosso nossa mio mia miei mie
nostro nostra mój moja moje mojego mojej mojemu moim мой моя моё мое мои моего моей моему моим мого моєї
мій моє мої мою наш наша нашего benim bizim min mitt mina vår vårt minun můj mé mého mou मेरा मेरी मेरे
हमारा আমার
""".split()})
_POSTPOSED = frozenset({"saya", "aku", "μου", "שלי"})  # after the thing they own ("kartu saya")
_SCRIPT_POSSESSIVE_RE = re.compile(r"我的|私の|僕の|俺の|저의|나의|(?P<post>ของฉัน|ของผม|ของดิฉัน|"
                                   r"của (?:tôi|em|mình|anh|chị))")
_OWNED_WORDS = 5
_VALUE_FIRST_RE = re.compile(r"([^\s:：,，(（]+)\s*(?:is|ist|est|c'est|es|é|è|är|er|jest|to|je|là|adalah|это|"
                             r"—|是|は|が|는|은)?\s*$", re.I)
_UNIT_RE = re.compile(r"\d+(?:[.,]\d+)?(?:mah|gb|tb|mb|kb|mm|cm|km|kg|g|w|kw|kwh|v|hz|mhz|ghz|ml|l|px|dpi|fps|"
                      r"rpm|mp|k|x|p)$", re.I)
_AMOUNT_RE = re.compile(r"\d{1,3}(?:[ .,\u00a0]\d{3})*[.,]\d{2}$")


def _owned_value(value: str) -> bool:
    """Identifier-shaped enough to be someone's without a label noun: five digits or more, or
    letters with a run of four digits that is not a year — a product's model ("SMV4HVX31E",
    "KJ-55X90") has shorter runs — and not a date, an amount, a quantity with its unit or a
    phone, which its own detector reads."""
    compact = re.sub(r"[\s.\-/:]", "", value)
    if DATE_RE.match(value) or _AMOUNT_RE.match(value) or _UNIT_RE.match(compact):
        return False
    if STRONG_PHONE_HINT_RE.match(value) or NATIONAL_PHONE_SHAPE_RE.fullmatch(value):
        return False
    if compact.isdigit():
        return len(compact) >= 5
    return any(len(run) > 4 or (len(run) == 4 and not 1900 <= int(run) <= 2099)
               for run in re.findall(r"\d{4,}", compact))


def _is_business(word: str) -> bool:
    return is_business_word(word)


def _business_near(text: str, start: int, end: int) -> bool:
    return any(_is_business(w) for w in text[start:end].split()) or business_in(text[start:end])


def _possessives(text: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, postposed) of each first-person possessive, in order."""
    found = [(m.start(), m.end(), m.group().casefold() in _POSTPOSED) for m in TOKEN_RE.finditer(text)
             if m.group().casefold() in _POSSESSIVES or m.group().casefold() in _POSTPOSED]
    if not text.isascii():
        found += [(m.start(), m.end(), m.group("post") is not None) for m in _SCRIPT_POSSESSIVE_RE.finditer(text)]
        found.sort()
    return iter(found)


def _owned_span(text: str, start: int, end: int) -> Span:
    """An ID: a value whose shape another detector reads (a card, a national id written as its
    own) keeps that detector's kind, which outranks ID on the same text."""
    return Span(start, end, "ID", re.sub(r"[\s.\-/:]", "", text[start:end]).upper())


def _owned(text: str, business_keys: frozenset[str] = frozenset()) -> Iterator[Span]:
    for p_start, p_end, postposed in _possessives(text):
        stop = SENTENCE_END_RE.search(text, p_end)
        clause_end = min(stop.start() if stop else len(text), p_end + REACH_TO_COPULA)
        before = _VALUE_FIRST_RE.search(text, max(0, p_start - 64), p_start)
        if before and _owned_value(before.group(1)) and not _business_near(text, p_end, clause_end):
            end = strip_trailing(text, before.start(1), before.end(1))
            if before.group(1).split("-")[0] not in business_keys:
                yield _owned_span(text, before.start(1), end)  # "GWF071559342 is my visa reference"
            continue
        if postposed and _business_near(text, max(0, p_start - 32), p_start):
            continue  # "nomor pesanan saya", "คำสั่งซื้อของฉัน": the business's key
        words = 0
        for m in VALUE_RE.finditer(text, p_end, clause_end):
            end = strip_trailing(text, m.start(), m.end())
            value = text[m.start():end]
            if not any(c.isdigit() for c in value):
                folded = value.casefold()
                if _is_business(value) or folded in _POSSESSIVES or business_in(value):
                    break  # the business's key, or another possessive (its own turn)
                words += folded not in FILLER_WORDS and folded not in COPULAS
                if words > _OWNED_WORDS:
                    break
                continue
            start = m.start() - (text[m.start() - 2:m.start()].lstrip() == "@")  # a handle: "@lucie_brt92"
            if (words == 0 and not postposed) or text[start - 1:start] in INSIDE or PATH_RE.search(value):
                break  # "my RTX4090": the thing itself; a part of a path or a longer token
            if start == m.start() and not _owned_value(value):
                continue  # "my 2 kids", "my card from 2019 is …" (a handle, "@lucie_brt92", is one)
            after = text[end:end + 24].split()[:1]
            if value.split("-")[0].split("/")[0] in business_keys or (after and _is_business(after[0])):
                break
            yield _owned_span(text, start, end)
            break


def _may_own(scan: Scan) -> bool:
    """Two digits, and a first-person possessive among the text's words (or in a script without
    spaces)."""
    if scan.digits < 2:
        return False
    if not _POSSESSIVES.isdisjoint(scan.words) or not _POSTPOSED.isdisjoint(scan.words):
        return True
    return not scan.text.isascii() and _SCRIPT_POSSESSIVE_RE.search(scan.text) is not None


register("owned_id", "ID", _may_own, lambda scan: _owned(scan.text, BUILTIN_KEYS | scan.business_keys))
