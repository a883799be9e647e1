"""Identifiers introduced by a label, whatever they identify: coverage by construction.

A personal value in a conversation is nearly always introduced by a label noun of its language —
"number", "code", "key", "ID", "reference", "Nummer", "numéro", "número", "numer", "номер", "код",
"号", "番号", "번호", "رقم", "नंबर" — or by an acronym ("MPAN", "CUPS", "BRP"). This detector does
not list the kinds (library cards, frequent-flyer numbers, meter points, court cases, door codes,
…): it takes the first identifier-shaped token (a digit in it, 4 characters at least) within a
short reach after any label, and scrubs it as an ID.

What it leaves alone are business keys, which the calibration set needs as they are written: a
label qualified by a business noun ("order number", "tracking code", "promo code", "error code",
"invoice no.", "SKU") and a value written as a system's typed key ("ORD-48213377", "ACC-101747").
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from pipeline.calibration.pii.detectors.phones import NATIONAL_PHONE_SHAPE_RE, STRONG_PHONE_HINT_RE
from pipeline.calibration.pii.nouns import (
    ABBREVIATED, BUSINESS_ACRONYMS, BUSINESS_PREFIXES, COPULAS, FILLER_WORDS, LABEL_BEFORE, LABEL_ENDINGS,
    LABEL_INFIXES, LABEL_STEMS, LABEL_WORDS, LINKS, SCRIPT_LABEL_RE, business_in, is_business_word,
    named_by_business, word_of,
)
from pipeline.calibration.pii.prefilter import Scan, word_affixes
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span, strip_trailing

TOKEN_RE = re.compile(r"[^\W\d_]+|[#№]")
_KEY_EDGE = ("_", '"')  # "order_id", a JSON key: the name of a field, not a label in prose
_CYRILLIC_OR_GREEK_RE = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]+")
_ADJECTIVE_RE = re.compile(r"-[^\W\d_]{4}")  # "SSN-looking", "NINO-like": not labels


@dataclass(frozen=True, slots=True)
class _Label:
    """Where a label is, with the match-like accessors the rest of the detector reads."""

    begin: int
    stop: int
    word: str

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.stop

    def group(self) -> str:
        return self.word


def _is_label(word: str, text: str, end: int) -> bool:
    if _ADJECTIVE_RE.match(text, end) or text[end:end + 1].isdigit():
        return False  # "SSN-looking"; "id0", "code2": names, not labels
    if word.isupper() and 3 <= len(word) <= 6 and (word.isascii() or _CYRILLIC_OR_GREEK_RE.fullmatch(word)):
        return True  # an acronym ("MPAN", "CUPS", "УИН")
    folded = word.casefold()
    if folded in LABEL_BEFORE:
        return text[end:end + 1] in LABEL_BEFORE[folded] and text[end:end + 1] != ""
    return (folded in LABEL_WORDS or folded.startswith(LABEL_STEMS) or folded.endswith(LABEL_ENDINGS)
            or any(infix in folded for infix in LABEL_INFIXES))


def _label_end(word: str, text: str, end: int) -> int:
    """Where a label ends: past the dot of an abbreviation ("Nr.", "No.", "núm.") or the sign of
    "n°", which end the label, not the sentence."""
    folded = word.casefold()
    if folded in LABEL_BEFORE or (folded in ABBREVIATED and text[end:end + 1] == "."):
        return end + 1
    return end


def _labels(text: str) -> list[_Label]:
    """The labels of ``text`` in order: words (a token scan, cheaper than one pattern of all of
    them at every position) and, in a text outside ASCII, labels of scripts written without spaces."""
    found = [_Label(m.start(), _label_end(m.group(), text, m.end()), m.group())  # with its "."
             for m in TOKEN_RE.finditer(text)
             if text[m.start() - 1:m.start()] not in _KEY_EDGE and text[m.end():m.end() + 1] not in _KEY_EDGE
             and _is_label(m.group(), text, m.end())]
    if not text.isascii():
        found += [_Label(m.start(), m.end(), m.group()) for m in SCRIPT_LABEL_RE.finditer(text)]
        found.sort(key=lambda label: label.begin)
    return found


_TYPED_KEY_RE = re.compile(r"[A-Z]{2,5}(?:[-/][A-Z0-9]+)*[-/][A-Z0-9]*\d{3,}[A-Z0-9]*")
_KEY_HEAD_RE = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z0-9]{1,6}-)+$")
_INSIDE_KEY_RE = re.compile(r"(?:/|\d-)$")
BUILTIN_KEYS = frozenset("ORD INV SKU PO RMA TKT SUP CASE REQ INC CHG TASK BUG PR".split())
_FILLER_RE = re.compile(r"(?:[\s:=,–—-]|\b(?:is|are|was|it's|it is|which is|es|est|ist|é|è|är|er|on|to|jest|"
                        r"lautet|die|de|del|da|di|van|for|of|my|our|the|mi|mio|meu|minha|mon|ma|mein|meine|"
                        r"mijn|mój|moja)\b)*")
_MAX_WORDS_BETWEEN = 3
# "<label> … is <value>": a copula after the label carries its reach to the value past a longer
# phrase ("Numer mojego konta u operatora komórkowego to …", "Mã số sinh viên của em là …"), when
# no business noun is among the words in between
_MAX_WORDS_TO_COPULA = 7
REACH_TO_COPULA = 96
DATE_RE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?(?:T[\d:.]+Z?)?$|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$|\d{1,2}:\d{2}")
HEX_RE = re.compile(r"0x[0-9a-f]{1,16}", re.I)  # 0x and 40 hex digits is an Ethereum address (shapes.py)
SERIES_RE = re.compile(r"[^\W\d_a-zа-яё]{1,3}(?:-[^\W\d_a-zа-яё]{1,3})?")  # capitals only, short
INSIDE = frozenset("/\\.@:-")  # a value starts a token, never inside one ("2026-08-19T…")
PATH_RE = re.compile(r"/[a-z]{3,}|[a-z]{3,}/")
_REACH = 48
_NATIONAL = ("br.cpf", "pl.pesel", "nl.bsn", "it.codicefiscale", "se.personnummer", "fi.hetu",
             "no.fodselsnummer", "dk.cpr", "tr.tckimlik", "za.idnr", "mx.curp", "cl.rut", "ca.sin",
             "de.idnr", "gb.nhs", "il.idnr", "ro.cnp", "jp.in_", "ru.inn", "kr.rrn", "be.nn",
             "bg.egn", "ee.ik", "lt.asmens", "cz.rc", "ie.pps", "is_.kennitala", "pt.cc", "th.pin",
             "id.nik", "ch.ssn", "gr.amka", "us.ssn", "es.dni", "in_.aadhaar", "fr.nir", "cn.ric")
_VALIDATORS = tuple(importlib.import_module(f"stdnum.{m}") for m in _NATIONAL)


def national(value: str) -> bool:
    """Some python-stdnum national-id validator accepts ``value`` (checksum and format), and it
    has 9 characters at least (shorter numbers pass some mod-11 check by chance too often)."""
    if len(re.sub(r"[\s.\-/]", "", value)) < 9:
        return False
    for module in _VALIDATORS:
        try:
            if module.is_valid(value):
                return True
        except Exception:  # noqa: BLE001 — a validator that cannot parse the value says no
            continue
    return False


_CASED = "A-Za-z0-9À-ÖØ-öø-ÿА-Яа-яЁё"  # a value may touch letters of scripts written without spaces
VALUE_RE = re.compile(rf"(?<![{_CASED}])[#*]?(?:\d{{2,}}(?:[ .\-/]\d{{2,}})+|[^\W_](?:[\w.\-/:#*&+]*[^\W_*#]|)[*#]?)"
                       rf"(?![{_CASED}])")
SENTENCE_END_RE = re.compile(r"[.!?。！？]\s|\n|[.!?。！？]$")




def _qualifiers(text: str, label: _Label) -> list[str]:
    """The words that can qualify the label: the one right before it ("order number") and the
    one right after it, past a preposition ("numéro de commande", "رقم الطلب"), case-folded."""
    before = re.split(r"[.!?;,:。！？\n]", text[max(0, label.start() - 40):label.start()])[-1].split()
    after = re.split(r"[.!?;,:。！？\n]", text[label.end():label.end() + 30])[0].split()
    if after and after[0].casefold() in LINKS:
        after = after[1:]
    words = before[-1:] + after[:1]
    return [word_of(w) for w in words]


def _business_label(text: str, label: _Label) -> bool:
    """A label that introduces a business key: qualified by a business noun before or after it
    ("order number", "numéro de commande", "رقم الطلب"), itself one ("Bestellnummer"), or a
    business acronym ("SKU", "USD")."""
    word = label.group()
    if word in BUSINESS_ACRONYMS:
        return True
    if word.casefold().startswith(BUSINESS_PREFIXES):
        return True
    qualifiers = _qualifiers(text, label)
    if any(is_business_word(w) or business_in(w) for w in qualifiers):
        return True
    return named_by_business(text, label.start(), label.end())


def _acronym_only(label: _Label) -> bool:
    """An acronym that is not itself a label word ("MPAN", not "ID" or "PIN"): it names the first
    long number after it, or nothing."""
    word = label.group()
    return word.isupper() and word.isalpha() and len(word) >= 2 and word.casefold() not in LABEL_WORDS


def _labelled(text: str, business_keys: frozenset[str] = frozenset()) -> Iterator[Span]:
    for label in _labels(text):
        if _business_label(text, label) or _INSIDE_KEY_RE.search(text, max(0, label.start() - 2), label.start()):
            continue  # a business key's label, or a part inside a key ("INV/20261203/MPL/…")
        key = _TYPED_KEY_RE.match(text, label.start())
        if key:  # "ADP-2023-0451": the acronym is the key's type; the whole key is the value
            head = _KEY_HEAD_RE.search(text, max(0, label.start() - 24), label.start())
            start = head.start() if head else label.start()  # "HA-" of "HA-FIT-66120"
            if label.group() not in business_keys and not named_by_business(text, start):
                end = strip_trailing(text, start, VALUE_RE.match(text, label.start()).end())
                yield Span(start, end, "ID", text[start:end].upper())
            continue
        acronym = _acronym_only(label)
        start = _FILLER_RE.match(text, label.end()).end()
        stop = SENTENCE_END_RE.search(text, label.end())
        end_of_sentence = stop.start() if stop else len(text)
        limit = min(label.end() + _REACH, end_of_sentence)
        far = min(label.end() + REACH_TO_COPULA, end_of_sentence)
        words = 0  # words between the label and its value that say something ("vivienda")
        copula = business = False  # a copula, a business noun among them
        between: list[str] = []
        for m in VALUE_RE.finditer(text, start, far + 24):
            if m.start() > far or words > _MAX_WORDS_TO_COPULA:
                break
            end = strip_trailing(text, m.start(), m.end())
            value = text[m.start():end]
            digits = sum(c.isdigit() for c in value)
            if digits and not (copula and not business) and (m.start() > limit or words > _MAX_WORDS_BETWEEN):
                break  # past the label's own reach, with no copula to carry it
            if digits and (text[m.start() - 1:m.start()] in INSIDE or PATH_RE.search(value)):
                break  # part of a path, a URL, an address or a longer token, not a value of its own
            compact = re.sub(r"[\s.\-/:]", "", value)
            if not digits:
                if SERIES_RE.fullmatch(value):
                    continue  # "І-БК 482917", "AB 123456": a document's series, part of its number
                folded = value.casefold()
                copula = copula or folded in COPULAS
                between.append(value)
                if len(between) <= 2 and (is_business_word(value) or business_in(" ".join(between))):
                    if not copula:
                        break  # "mã sản phẩm SP-2210", "номер заказа …": right after it, the noun the label
                        # belongs to (not "MTCN on my receipt is …", whose noun is further on)
                    business = True
                words += folded not in FILLER_WORDS
                continue
            if acronym and (len(compact) < 4 or digits < 6):
                break  # an acronym names the first number after it, or nothing
            if len(compact) < 4 or DATE_RE.match(value):
                continue  # too short, or a date or time (dates of birth are the DOB detector's)
            if HEX_RE.fullmatch(value):
                break  # "code 0x80070005": a program's value (a status, an address), no person's
            if value.split("-")[0].split("/")[0] in business_keys:
                break  # this business's own typed key ("ACC-101747"), kept as written
            # a phone's shape leaves it to the phone detector (PHONE outranks ID on the same text)
            phone = STRONG_PHONE_HINT_RE.match(value) or NATIONAL_PHONE_SHAPE_RE.fullmatch(value)
            kind = "NATIONAL_ID" if not phone and national(value) else "ID"
            yield Span(m.start(), end, kind, compact.upper())
            break


_ACRONYM_RE = re.compile(r"(?<![^\W\d_])[A-ZА-ЯЁΑ-Ω]{3,6}(?![^\W\d_])")
_MARKS = ("#", "№", "n°", "nº", "no.", "no:")
_LABEL_AFFIXES = word_affixes(LABEL_STEMS, LABEL_ENDINGS, LABEL_INFIXES)


def _may_label(scan: Scan) -> bool:
    """A digit, and a label: one of its words, stems or endings among the text's words, an
    acronym that is not a business one, a mark ("#", "No."), or a label of a script without spaces."""
    if scan.digits == 0:
        return False
    words = scan.words
    if not LABEL_WORDS.isdisjoint(words):
        return True
    if _LABEL_AFFIXES(scan.folded):
        return True
    text = scan.text
    if any(mark in text for mark in _MARKS) or (scan.lowered is not None and "no." in scan.lowered):
        return True
    if not BUSINESS_ACRONYMS.issuperset(_ACRONYM_RE.findall(text)):
        return True
    return not text.isascii() and SCRIPT_LABEL_RE.search(text) is not None


register("labelled_id", "ID", _may_label,
         lambda scan: _labelled(scan.text, BUILTIN_KEYS | scan.business_keys))
