"""Street addresses: English, French, German, Spanish/Italian/Portuguese, Chinese and
Japanese forms, each anchored on a house number."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from pipeline.calibration.pii.prefilter import lower_or_none, Needs, Scan, digits_at_least
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span

_STREET_EN = (r"(?i:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|place|"
              r"pl|square|sq|terrace|way|parkway|pkwy|highway|hwy|close|crescent|gardens|grove|"
              r"row|mews|circle|cir|trail|plaza)")
_WORD = r"(?:[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿ'’.-]*|\d{1,3}(?:st|nd|rd|th))"
_CITY = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+(?:[ -][A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+){0,2}"
_UNIT = r"(?:,?[ \t]*(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|Room|Rm|#)\.?[ \t]*#?[\w-]{1,6})"
_POSTCODE = (r"(?:[A-Z]{2}[ \t]+\d{5}(?:-\d{4})?|[A-Z]{1,2}\d[A-Z\d]?[ \t]*\d[A-Z]{2}|"
             r"[A-Z]\d[A-Z][ \t]?\d[A-Z]\d|\d{4,5})")
_PARTICLE = r"(?:(?:de|del|du|des|la|le|las|los|el|di|della|do|da|dos|das|l'|d')[ \t]*)"
_ADDRESS_RES: tuple[tuple[re.Pattern[str], Needs | None], ...] = tuple(
    (re.compile(pattern), needs) for pattern, needs in (
        # English: [Flat 2,] 221B Baker Street[, Apt 4][, London][, NW1 6XE | , NY 10001]
        (rf"(?:(?:Flat|Apt|Unit|Suite)[ \t]*\w{{1,5}},?[ \t]*)?\b\d{{1,6}}[A-Za-z]?(?:-\d{{1,4}})?"
         rf"[ \t]+(?:{_WORD}[ \t]+){{1,3}}{_STREET_EN}\b\.?(?:[ \t]+(?:N|S|E|W|NE|NW|SE|SW)\b)?"
         rf"{_UNIT}?(?:(?:,[ \t]*|[ \t]*\n[ \t]*){_CITY})?(?:,?[ \t]*{_POSTCODE}\b)?",
         None),  # street words such as "st" or "dr" are in too many words to prefilter on
        # French: 12 bis rue de la Paix, 75002 Paris
        (rf"\b\d{{1,4}}(?:[ \t]?(?:bis|ter))?,?[ \t]+(?i:rue|avenue|boulevard|bd|place|chemin|allée|"
         rf"allee|impasse|quai|route|cours)[ \t]+{_PARTICLE}*{_WORD}(?:[ -]{_PARTICLE}*{_WORD}){{0,3}}"
         rf"(?:,?[ \t]*\d{{5}}[ \t]+{_CITY})?",
         Needs(("rue", "avenue", "boulevard", "bd", "place", "chemin", "allée", "allee", "impasse",
                 "quai", "route", "cours"), ignore_case=True)),
        # German: Hauptstraße 12a, 10115 Berlin / Berliner Str. 5
        (rf"\b(?:[A-ZÄÖÜ][a-zäöüß]+[ \t-](?:Straße|Strasse|Str\.|Weg|Allee|Platz|Gasse)|[A-ZÄÖÜ]"
         rf"[a-zäöüß]*(?:straße|strasse|str\.|weg|allee|platz|gasse))[ \t]*\d{{1,4}}[a-zA-Z]?(?!\d)"
         rf"(?:,?[ \t]*\d{{4,5}}[ \t]+{_CITY})?",
         Needs(("straße", "strasse", "str.", "weg", "allee", "platz", "gasse"), ignore_case=True)),
        # Spanish / Italian / Portuguese: Calle Mayor 5, 28013 Madrid / Via Roma 10
        (rf"\b(?:Calle|C/|Avenida|Avda\.|Paseo|Plaza|Carrer|Camino|Via|Viale|Piazza|Corso|Rua)"
         rf"[ \t]+{_PARTICLE}*{_WORD}(?:[ \t]+{_PARTICLE}*{_WORD}){{0,3}},?[ \t]*(?:n[º°o]\.?[ \t]*)?"
         rf"\d{{1,4}}[A-Za-z]?(?!\d)(?:,?[ \t]*\d{{5}}[ \t]+{_CITY})?",
         Needs(("Calle", "C/", "Avenida", "Avda.", "Paseo", "Plaza", "Carrer", "Camino", "Via",
                 "Piazza", "Corso", "Rua"))),
        # Chinese: 北京市朝阳区建国路88号
        (r"(?:[\u4e00-\u9fff]{2,6}(?:省|市|自治区))?(?:[\u4e00-\u9fff]{1,6}(?:市|区|县))*"
         r"[\u4e00-\u9fff]{1,10}(?:路|街|大道|巷|胡同)\d{1,5}号"
         r"(?:[\u4e00-\u9fff\d]{0,6}(?:栋|楼|单元|室|层))*",
         Needs(("号",))),
        # Japanese: 東京都千代田区丸の内1-1-1
        (r"[\u4e00-\u9fff]{1,4}[都道府県][\u3040-\u30ff\u4e00-\u9fff]{1,10}[市区町村]"
         r"[\u3040-\u30ff\u4e00-\u9fff]{0,10}\d{1,4}(?:[-−]\d{1,4}){1,2}",
         Needs(("都", "道", "府", "県"))),
    )
)


def _addresses(text: str, lowered: str | None = None) -> Iterator[Span]:
    lowered = lower_or_none(text) if lowered is None else lowered
    for pattern, needs in _ADDRESS_RES:
        if needs is not None and not needs.met(text, lowered):
            continue
        for m in pattern.finditer(text):
            end = m.end()
            while end > m.start() and text[end - 1] in " \t,.":
                end -= 1
            yield Span(m.start(), end, "ADDRESS", " ".join(text[m.start():end].split()).casefold())


@functools.lru_cache(maxsize=32)
def _address_spans(text: str, lowered: str | None) -> tuple[Span, ...]:
    # Cached: the address and person detectors, and learning names and replacing, all need
    # the addresses of the same text.
    return tuple(_addresses(text, lowered))


def scan_addresses(scan: Scan) -> tuple[Span, ...]:
    """The addresses of a scanned text: every address holds a digit, so none without one."""
    return _address_spans(scan.text, scan.lowered) if scan.digits else ()


register("address", "ADDRESS", digits_at_least(1), scan_addresses)
