"""PII scrubbing with typed, per-record consistent placeholders.

Every detected value is replaced by ``<KIND_n>``; ``n`` counts per kind in order of first
appearance, and the same value (normalised: case-folded e-mails and names, E.164 phones,
digits-only cards and ids) gets the same placeholder everywhere in one record, so a
conversation stays coherent ("call <PHONE_1>" … "I called <PHONE_1>"). Text that already
holds placeholders is left alone: scrubbing scrubbed text changes nothing.

Detection favours not flagging ordinary business numbers (order ids, prices, dates,
versions): ids and cards need a valid checksum or format rule; phones must be valid
numbers for one of the configured regions (or merely possible ones written unmistakably
as phones: a ``+`` country code, or a trunk ``0`` and evenly separated groups); digit
runs glued to an identifier (``ORD-48213377``) are never phones. Person names are found
by context (a trigger such as "my name is", a title, a greeting or sign-off, a shipping
label next to an address) and then everywhere else in the same record, plus an optional
dictionary; a bare name with no such context anywhere in the record is not found.

Example:
    >>> scrubber = Scrubber(PIIConfig())
    >>> scrubber.scrub_text("Mail jane.doe@example.com or JANE.DOE@example.com, order ORD-48213377")
    'Mail <EMAIL_1> or <EMAIL_1>, order ORD-48213377'

Raw values are never logged: only kinds and counts.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import phonenumbers
from pydantic import BaseModel, ConfigDict, field_serializer, field_validator

from pipeline.calibration.schema import Record

try:
    from stdnum import iban as _iban
    from stdnum.cn import ric as _cn_ric
    from stdnum.es import dni as _es_dni
    from stdnum.es import nie as _es_nie
    from stdnum.fr import nir as _fr_nir
    from stdnum.in_ import aadhaar as _in_aadhaar
    from stdnum.us import ssn as _us_ssn
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "PII scrubbing needs python-stdnum for national-id checksums; "
        "install the calibration extra: pip install 'qpipe[calibration]' (or python-stdnum)"
    ) from err

logger = logging.getLogger(__name__)

PIIKind = Literal[
    "EMAIL", "PHONE", "NATIONAL_ID", "CARD", "IP", "SECRET", "URL_CREDENTIALS", "ADDRESS",
    "PERSON", "IBAN", "PASSPORT", "DOB",
]
#: Also the tie-break order when two detections cover exactly the same text.
ALL_KINDS: tuple[str, ...] = (
    "SECRET", "URL_CREDENTIALS", "EMAIL", "IBAN", "NATIONAL_ID", "PASSPORT", "CARD", "IP", "DOB",
    "PHONE", "ADDRESS", "PERSON",
)
_RANK = {kind: rank for rank, kind in enumerate(ALL_KINDS)}
DEFAULT_PHONE_REGIONS = ("US", "GB", "DE", "FR", "CN", "IN", "ES", "BR", "JP")

_DIGIT_RE = re.compile(r"\d")  # the same notion of a digit as the patterns' \d
_TEXT_CACHE_SIZE = 16384  # texts whose detections are remembered (per Scrubber)
PLACEHOLDER_RE = re.compile(r"<(" + "|".join(ALL_KINDS) + r")_(\d+)>")
_MASK = "\ue000"  # private-use char: not a word char, digit or space, so no pattern spans it


class PIIConfig(BaseModel):
    """What the scrubber looks for. Scrubbing is on unless ``enabled=False`` is written.

    ``dictionary_path`` names a UTF-8 file of terms always scrubbed (case-insensitive,
    whole words): one per line, ``#`` starts a comment, and a line ``KIND: term`` files
    the term under that kind instead of PERSON. Dictionary terms apply whatever ``kinds``
    says.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    kinds: frozenset[PIIKind] = frozenset(ALL_KINDS)
    dictionary_path: Path | None = None
    phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS

    @field_validator("phone_regions")
    @classmethod
    def _known_regions(cls, regions: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [r for r in regions if r not in phonenumbers.SUPPORTED_REGIONS]
        if unknown:
            raise ValueError(
                f"unknown phone regions {unknown}; use ISO 3166 alpha-2 codes such as 'US', 'GB'"
            )
        return regions

    @field_serializer("kinds")
    def _kinds_sorted(self, kinds: frozenset[str]) -> list[str]:
        return sorted(kinds)  # a set's order varies between runs; dumps must not


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    kind: str
    key: str


# ------------------------------------------------------------------------- prefilters

# Characters that an ASCII letter matches under re.IGNORECASE but that str.lower() does not
# turn into that letter ("ſ" matches "s", "K" matches "k", "ı" and "İ" match "i"): a text
# holding one is scanned by every pattern, whatever its prefilters say.
_FOLD_EXCEPTIONS = ("\u0130", "\u0131", "\u017f", "\u212a")


@dataclass(frozen=True, slots=True)
class _Needs:
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


def _lowered(text: str) -> str | None:
    """``text.lower()`` for :meth:`_Needs.met`; None when it would not be exact."""
    return None if any(ch in text for ch in _FOLD_EXCEPTIONS) else text.lower()


# --------------------------------------------------------------------------- patterns

# Internationalised addresses too: Unicode local parts and domains (bücher.de, 例え.jp) and
# punycode TLDs (xn--…).
_EMAIL_RE = re.compile(
    r"(?<![\w.+%-])\w[\w.+%'-]*@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+(?:[^\W\d_]{2,24}|xn--[a-z0-9-]{2,59})"
    r"(?![\w-])"
)
_URL_CRED_RE = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s:/@<>\"'`]+:[^\s/@<>\"'`]+@[^\s<>\"'`]+"
)
_TRAILING_PUNCT = ".,;:!?)]}'\"`"

_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA")
_SECRET_RES: tuple[tuple[re.Pattern[str], int, _Needs], ...] = (  # (pattern, group, prefilter)
    (re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*"
                r"PRIVATE KEY-----|[\s\S]*\Z)"), 0, _Needs(("-----BEGIN ",))),
    (re.compile(rf"\b(?:{'|'.join(_AWS_PREFIXES)})[A-Z0-9]{{16}}\b"), 0, _Needs(_AWS_PREFIXES)),
    (re.compile(r"(?<![\w-])sk-[A-Za-z0-9_-]*(?=[A-Za-z0-9]{16})"
                r"(?:[A-Za-z0-9]*\d|[A-Za-z0-9]*[a-z][A-Za-z0-9]*[A-Z]|[A-Za-z0-9]*[A-Z][A-Za-z0-9]*[a-z])"
                r"[A-Za-z0-9_-]*"), 0, _Needs(("sk-",))),
    (re.compile(r"\b[spr]k_(?:live|test)_[A-Za-z0-9]{16,}"), 0, _Needs(("k_live_", "k_test_"))),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), 0,
     _Needs(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"))),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), 0, _Needs(("xox",))),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0, _Needs(("AIza",))),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, _Needs(("eyJ",))),
    # a bearer token has a digit or is long: "bearer instrument" is not one
    (re.compile(r"(?i)\bbearer\s+((?=[A-Za-z0-9._~+/-]*\d|[A-Za-z0-9._~+/-]{20})"
                r"[A-Za-z0-9._~+/-]{8,}=*)"), 1, _Needs(("bearer",), ignore_case=True)),
)
_SECRET_KEYWORD_RE = re.compile(
    r"(?i)\b(password|passwd|pwd|passphrase|passcode|pin|secret|client[_ -]?secret|"
    r"api[_ -]?key|apikey|access[_ -]?key|secret[_ -]?key|access[_ -]?token|auth[_ -]?token|"
    r"refresh[_ -]?token|token|aws_secret_access_key)[\"']?\s*(?P<sep>[:=]|\bis\b)\s*[\"']?"
    r"(?P<value>[^\s\"',;]+)"
)
_SECRET_KEYWORD_NEEDS = _Needs(("pass", "pwd", "pin", "secret", "api", "access", "token"), ignore_case=True)

_SSN_RE = re.compile(r"(?<![\w-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w-])")
_SSN_CONTEXT_RE = re.compile(
    r"(?i)\b(?:ssn|social security(?: number| no\.?)?)\s*(?:#|no\.?|number)?\s*[:=]?\s*"
    r"(\d{9})(?!\w)"
)
_NINO_RE = re.compile(r"(?<!\w)([A-Z]{2}) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?!\w)")
_NINO_BAD_PREFIX = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}
_CN_RIC_RE = re.compile(r"(?<![\w-])(\d{17}[\dXx])(?![\w-])")
_DNI_RE = re.compile(r"(?<![\w-])(\d{8})-?([A-Za-z])(?![\w-])")
_NIE_RE = re.compile(r"(?<![\w-])([XYZxyz])-?(\d{7})-?([A-Za-z])(?![\w-])")
_AADHAAR_RE = re.compile(r"(?<![\w-])([2-9]\d{3})([ -])(\d{4})\2(\d{4})(?![\w-])")
_AADHAAR_CONTEXT_RE = re.compile(r"(?i)\b(?:aadhaa?r|uidai|uid)\b\D{0,20}?(\d{12})(?!\w)")
_NIR_RE = re.compile(
    r"(?<![\w-])([12]) ?(\d{2}) ?(\d{2}) ?(\d{2}|2[ABab]) ?(\d{3}) ?(\d{3}) ?(\d{2})(?![\w-])"
)

_CARD_RE = re.compile(
    r"(?<![\w-])(?:\d{4}([ -]?)\d{4}\1\d{4}\1\d{1,4}(?:\1\d{1,3})?|\d{4}([ -]?)\d{6}\2\d{4,5}"
    r"|\d{13,19})(?![\w-])"
)
# Four-digit groups with any of space, dot, dash, slash or NBSP between them, even mixed
# ("4111 1111-1111.1111"): the Luhn checksum and the issuer prefix keep order numbers out.
_CARD_MIXED_RE = re.compile(r"(?<![\w-])\d{4}(?:[ .\-/\u00a0]{1,3}\d{4}){2}[ .\-/\u00a0]{1,3}\d{1,7}(?![\w-])")
_IBAN_RE = re.compile(r"(?<![\w-])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?(?![\w-])")
_PASSPORT_RE = re.compile(
    r"(?i:passport|pasaporte|passeport|reisepass|passaporto|paspoort|паспорт|护照|護照|パスポート|여권)"
    r"(?:\s*(?:no\.?|number|nr\.?|n°|#|número|numéro|nummer|номер|号码|番号|번호))?(?:\s+is)?\W{0,4}"
    r"([A-Z0-9]{6,10})(?![\w-])", re.I)
_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
           r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|enero|febrero|marzo|abril|"
           r"mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|janvier|février|mars|"
           r"avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|januar|februar|märz|"
           r"juni|juli|oktober|dezember)")
_DATE = (rf"(?:\d{{1,4}}[./-]\d{{1,2}}[./-]\d{{1,4}}|\d{{1,2}}\.?\s+{_MONTHS}\.?\s+\d{{4}}|"
         rf"{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{4}}\s*年\s*\d{{1,2}}\s*月\s*\d{{1,2}}\s*日?)")
_DOB_RE = re.compile(
    r"(?i:date\s+of\s+birth|birth\s*date|birthday|\bborn(?:\s+on)?|\bd\.?o\.?b\.?|"
    r"fecha\s+de\s+nacimiento|nacid[oa]\s+el|né(?:e)?\s+le|date\s+de\s+naissance|geboren\s+am|"
    r"geburtsdatum|data\s+di\s+nascita|nato\s+il|дата\s+рождения|出生日期|生日|生年月日|생년월일)"
    rf"\W{{0,5}}({_DATE})", re.I)
# A phone written as bare digits right after what says it is one ("tel 4155550123", "mobile
# No. 07911123456", "手机 13812345678").
_PHONE_CONTEXT_RE = re.compile(
    r"(?i:\b(?:tel|telephone|phone|mobile|cell|cellphone|whatsapp|handy|telefon|teléfono|telefono|"
    r"téléphone|portable|móvil|celular)\b|电话|手机|電話|携帯|전화)"
    r"(?:\s*(?:no\.?|number|nr\.?|n°|#|num\.?))?(?:\s+is)?\W{0,4}(\+?\d[\d \-.()]{6,18}\d)", re.I)
# Names in other scripts, by their context words ("my name is" in several languages).
_HAN = "\u4e00-\u9fff"
_PERSON_SCRIPT_RES: tuple[re.Pattern[str], ...] = (
    re.compile(rf"(?:我叫|我的名字是|我的名字叫|本人姓名[:：]?|姓名[:：]\s*)([{_HAN}]{{2,4}})"),
    re.compile(rf"(?:私は|わたしは)([{_HAN}\u30a0-\u30ff]{{2,6}})(?:です|と申します)"),
    re.compile(rf"([{_HAN}]{{2,4}})と申します"),
    re.compile(r"(?:меня\s+зовут|моё\s+имя|мое\s+имя|я\s+—?\s*)\s*([А-ЯЁ][а-яё]+(?:\s+[А-ЯЁ][а-яё]+){0,2})"),
    re.compile(r"(?:اسمي|انا\s+اسمي)\s+([\u0621-\u064a]{2,}(?:\s+[\u0621-\u064a]{2,}){0,2})"),
    re.compile(r"(?:제\s*이름은|저는)\s*([가-힣]{2,4})(?:입니다|이에요|예요|라고)"),
    re.compile(r"(?:मेरा\s+नाम)\s+([\u0900-\u097f]+(?:\s+[\u0900-\u097f]+)?)"),
    re.compile(r"(?:με\s+λένε|το\s+όνομά\s+μου\s+είναι)\s+([Α-Ω][α-ωάέήίόύώ]+(?:\s+[Α-Ω][α-ωάέήίόύώ]+)?)"),
)
_CARD_PREFIX_RE = re.compile(r"^(?:3[0-8]|4|5[1-5]|2[2-7]|6(?:011|2|4[4-9]|5))")

_IPV4_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w)(?!\.\d)")
_VERSION_BEFORE_RE = re.compile(r"(?i)\b(?:v|version|ver\.?|release|build)\s*$")
_IPV6_RE = re.compile(r"(?<![\w:.])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*(?:%\w+)?(?![\w:])")

_PHONE_GATE_RE = re.compile(r"\+?\(?\d[\d \t().\-/]{5,24}\d")
# dotted quads, dates, and the SSN shape (nobody writes phones 3-2-4)
_NOT_PHONE_RE = re.compile(
    r"\d{1,3}(?:\.\d{1,3}){3}|\d{1,4}([./-])\d{1,2}\1\d{1,4}|\d{3}-\d{2}-\d{4}"
)
_NATIONAL_PHONE_SHAPE_RE = re.compile(r"\(?0[1-9]\d{0,3}\)?([ .-])\d{2,4}(?:\1\d{2,4}){2,}")
_DECIMAL_RE = re.compile(r"\d{1,3}[.,]\d{1,2}")
_STRONG_PHONE_HINT_RE = re.compile(r"\+\d|(?<![\w.,/-])\(?0[1-9]")
_PHONE_ID_CONTEXT_RE = re.compile(
    r"(?i)\b(?:order|invoice|ticket|ref|reference|tracking|account|acct|sku|case|id|no\.)"
    r"\W{0,3}$"
)

_CAP = r"[A-ZÀ-ÖØ-Þ]"
_LOW = r"[a-zß-öø-ÿ]"
_NAME = rf"{_CAP}{_LOW}+(?:{_CAP}{_LOW}+)?(?:[-'’]{_CAP}?{_LOW}+)*"
_NAMES = rf"{_NAME}(?:[ \t]+{_NAME}){{0,2}}"
_LOOSE_NAME = r"[A-Za-zÀ-ÖØ-öø-ÿ][a-zß-öø-ÿ'’-]+"
_LOOSE_NAMES = rf"{_LOOSE_NAME}(?:[ \t]+{_LOOSE_NAME}){{0,2}}"
_TITLE = r"(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof)\.?"
_NAME_END = r"(?=[ \t]*(?:$|[\r\n.!,;:)]))"
_PERSON_RES: tuple[tuple[re.Pattern[str], bool, _Needs], ...] = (
    # (pattern, names may be lower case, prefilter: the pattern's trigger words)
    (re.compile(rf"(?i:\bmy name is|\bmy name's)[ \t]+({_LOOSE_NAMES})"), True,
     _Needs(("my name",), ignore_case=True)),
    (re.compile(rf"(?i:\bname)[ \t]*:[ \t]*({_NAMES})"), False, _Needs(("name",), ignore_case=True)),
    (re.compile(rf"(?i:(?:^|[,;][ \t]*)name|\brecipient is|\baddressee is|\battn\.?:?|\battention:|"
                rf"\bc/o|\bcontact person is)[ \t]+({_NAMES})", re.M), False,
     _Needs(("name", "recipient is", "addressee is", "attn", "attention:", "c/o", "contact person is"),
            ignore_case=True)),
    (re.compile(rf"(?:^|(?<=[.!?,:;])[ \t]+)({_NAMES})[ \t]+here\b", re.M), False, _Needs(("here",))),
    (re.compile(rf"\b(?:I'm|I’m|I am)[ \t]+({_NAMES})"), False, _Needs(("I'm", "I’m", "I am"))),
    (re.compile(rf"(?i:\bthis is)[ \t]+({_NAMES})"), False, _Needs(("this is",), ignore_case=True)),
    (re.compile(rf"(?i:\bdear)[ \t]+(?:{_TITLE}[ \t]+)?({_NAMES})"), False, _Needs(("dear",), ignore_case=True)),
    (re.compile(rf"\b{_TITLE}[ \t]+({_NAMES})"), False, _Needs(("Mr", "Ms", "Mx", "Miss", "Dr", "Prof"))),
    (re.compile(rf"(?im:\b(?:hi|hello|hey|good (?:morning|afternoon|evening)))[ \t]+({_NAMES})"
                rf"(?=[ \t]*[,!])"), False, _Needs(("hi", "hello", "hey", "good "), ignore_case=True)),
    (re.compile(rf"(?im:\b(?:(?:best|kind|warm)[ \t]+)?regards|\bthanks|\bthank you|\bcheers|"
                rf"\bsincerely|\byours(?: truly| sincerely)?)[ \t]*[,!.-]?\s*({_NAMES}){_NAME_END}",
                re.M), False, _Needs(("regards", "thank", "cheers", "sincerely", "yours"), ignore_case=True)),
    (re.compile(rf"(?im:\bbest)[ \t]*(?:,|\n)\s*({_NAMES}){_NAME_END}", re.M), False,
     _Needs(("best",), ignore_case=True)),
)
# Capitalised words that follow a trigger but are not names ("I'm Sorry", "Hello World").
_NOT_NAMES = frozenset("""
a able about account admin afraid afternoon again all already also am an and any anyone april
are as at august back be best billing but by bye calling can care concerned confused contacting
correct currently customer customers day dear december done enterprise evening everyone
february feeling fine folks following for friday friend friends from frustrated getting glad
going good goodbye great guys happy having hello help helpdesk here hey hi how i if in
incorrect interested is it january july june just listed looking madam manager march may
missing misspelled monday morning my new no not november now october of ok okay on or order our
please premium reaching ready really regards sales saturday september service so sorry spelled
still sunday support sure team thank thanks that the there these this those thursday to today
tomorrow trying tuesday unable very we wednesday well what when where why with wondering
working world writing wrong yes yesterday you your
""".split())

_STREET_EN = (r"(?i:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|place|"
              r"pl|square|sq|terrace|way|parkway|pkwy|highway|hwy|close|crescent|gardens|grove|"
              r"row|mews|circle|cir|trail|plaza)")
_WORD = r"(?:[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿ'’.-]*|\d{1,3}(?:st|nd|rd|th))"
_CITY = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+(?:[ -][A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+){0,2}"
_UNIT = r"(?:,?[ \t]*(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|Room|Rm|#)\.?[ \t]*#?[\w-]{1,6})"
_POSTCODE = (r"(?:[A-Z]{2}[ \t]+\d{5}(?:-\d{4})?|[A-Z]{1,2}\d[A-Z\d]?[ \t]*\d[A-Z]{2}|"
             r"[A-Z]\d[A-Z][ \t]?\d[A-Z]\d|\d{4,5})")
_PARTICLE = r"(?:(?:de|del|du|des|la|le|las|los|el|di|della|do|da|dos|das|l'|d')[ \t]*)"
_ADDRESS_RES: tuple[tuple[re.Pattern[str], _Needs | None], ...] = tuple(
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
         _Needs(("rue", "avenue", "boulevard", "bd", "place", "chemin", "allée", "allee", "impasse",
                 "quai", "route", "cours"), ignore_case=True)),
        # German: Hauptstraße 12a, 10115 Berlin / Berliner Str. 5
        (rf"\b(?:[A-ZÄÖÜ][a-zäöüß]+[ \t-](?:Straße|Strasse|Str\.|Weg|Allee|Platz|Gasse)|[A-ZÄÖÜ]"
         rf"[a-zäöüß]*(?:straße|strasse|str\.|weg|allee|platz|gasse))[ \t]*\d{{1,4}}[a-zA-Z]?(?!\d)"
         rf"(?:,?[ \t]*\d{{4,5}}[ \t]+{_CITY})?",
         _Needs(("straße", "strasse", "str.", "weg", "allee", "platz", "gasse"), ignore_case=True)),
        # Spanish / Italian / Portuguese: Calle Mayor 5, 28013 Madrid / Via Roma 10
        (rf"\b(?:Calle|C/|Avenida|Avda\.|Paseo|Plaza|Carrer|Camino|Via|Viale|Piazza|Corso|Rua)"
         rf"[ \t]+{_PARTICLE}*{_WORD}(?:[ \t]+{_PARTICLE}*{_WORD}){{0,3}},?[ \t]*(?:n[º°o]\.?[ \t]*)?"
         rf"\d{{1,4}}[A-Za-z]?(?!\d)(?:,?[ \t]*\d{{5}}[ \t]+{_CITY})?",
         _Needs(("Calle", "C/", "Avenida", "Avda.", "Paseo", "Plaza", "Carrer", "Camino", "Via",
                 "Piazza", "Corso", "Rua"))),
        # Chinese: 北京市朝阳区建国路88号
        (r"(?:[\u4e00-\u9fff]{2,6}(?:省|市|自治区))?(?:[\u4e00-\u9fff]{1,6}(?:市|区|县))*"
         r"[\u4e00-\u9fff]{1,10}(?:路|街|大道|巷|胡同)\d{1,5}号"
         r"(?:[\u4e00-\u9fff\d]{0,6}(?:栋|楼|单元|室|层))*",
         _Needs(("号",))),
        # Japanese: 東京都千代田区丸の内1-1-1
        (r"[\u4e00-\u9fff]{1,4}[都道府県][\u3040-\u30ff\u4e00-\u9fff]{1,10}[市区町村]"
         r"[\u3040-\u30ff\u4e00-\u9fff]{0,10}\d{1,4}(?:[-−]\d{1,4}){1,2}",
         _Needs(("都", "道", "府", "県"))),
    )
)


# -------------------------------------------------------------------------- detectors

def _mask_placeholders(text: str) -> str:
    """Same-length text in which existing placeholders cannot be matched by any pattern."""
    if "<" not in text:  # every placeholder starts with "<"
        return text
    return PLACEHOLDER_RE.sub(lambda m: _MASK * len(m.group()), text)


def _strip_trailing(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in _TRAILING_PUNCT:
        end -= 1
    return end


def _emails(text: str) -> Iterator[_Span]:
    for m in _EMAIL_RE.finditer(text):
        yield _Span(m.start(), m.end(), "EMAIL", m.group().casefold())


def _url_credentials(text: str) -> Iterator[_Span]:
    for m in _URL_CRED_RE.finditer(text):
        end = _strip_trailing(text, m.start(), m.end())
        yield _Span(m.start(), end, "URL_CREDENTIALS", text[m.start():end])


def _secrets(text: str, lowered: str | None = None) -> Iterator[_Span]:
    lowered = _lowered(text) if lowered is None else lowered
    for pattern, group, needs in _SECRET_RES:
        if not needs.met(text, lowered):
            continue
        for m in pattern.finditer(text):
            yield _Span(m.start(group), m.end(group), "SECRET", m.group(group))
    if not _SECRET_KEYWORD_NEEDS.met(text, lowered):
        return
    for m in _SECRET_KEYWORD_RE.finditer(text):
        start = m.start("value")
        end = _strip_trailing(text, start, m.end("value"))
        value = text[start:end]
        keyword = m.group(1).lower()
        min_len = 12 if keyword == "token" else 3
        if len(value) < min_len or _MASK in value:
            continue
        # "the password is wrong" is prose; "my password is hunter2" is a secret.
        if m.group("sep").lower() == "is" and value.isalpha():
            continue
        yield _Span(start, end, "SECRET", value)


def _ssn_ok(digits: str) -> bool:
    return _us_ssn.is_valid(digits)


def _nino_ok(prefix: str) -> bool:
    prefix = prefix.upper()
    return (prefix[0] not in "DFIQUV" and prefix[1] not in "DFIOQUV"
            and prefix not in _NINO_BAD_PREFIX)


def _cn_ric_ok(number: str) -> bool:
    number = number.upper()
    if _cn_ric.calc_check_digit(number) != number[-1]:
        return False
    try:  # the birth date must exist; the region table is not consulted (it ages)
        _cn_ric.get_birth_date(number)
    except Exception:  # stdnum raises its own ValidationError subclasses
        return False
    return True


def _nir_ok(number: str) -> bool:
    month = number[3:5]
    return (month.isdigit() and (1 <= int(month) <= 12 or int(month) >= 20)
            and _fr_nir.is_valid(number))


def _count_digits(text: str) -> int:
    """Digits in ``text``, by the patterns' own notion of a digit (``\\d``)."""
    return len(_DIGIT_RE.findall(text))


def _national_ids(text: str, digits: int | None = None) -> Iterator[_Span]:
    digits = _count_digits(text) if digits is None else digits
    # (pattern, checksum, digits the pattern needs at the least: a cheap prefilter)
    checks: tuple[tuple[re.Pattern[str], Callable[[str], bool], int], ...] = (
        (_SSN_RE, _ssn_ok, 9), (_SSN_CONTEXT_RE, _ssn_ok, 9), (_CN_RIC_RE, _cn_ric_ok, 17),
        (_DNI_RE, _es_dni.is_valid, 8), (_NIE_RE, _es_nie.is_valid, 7),
        (_AADHAAR_RE, _in_aadhaar.is_valid, 12), (_AADHAAR_CONTEXT_RE, _in_aadhaar.is_valid, 12),
        (_NIR_RE, _nir_ok, 13),
    )
    for pattern, valid, min_digits in checks:
        if digits < min_digits:
            continue
        for m in pattern.finditer(text):
            start, end = (m.start(1), m.end(1)) if pattern.groups == 1 else m.span()
            compact = re.sub(r"[\s-]", "", text[start:end]).upper()
            if valid(compact):
                yield _Span(start, end, "NATIONAL_ID", compact)
    for m in _NINO_RE.finditer(text) if digits >= 6 else ():
        if _nino_ok(m.group(1)):
            yield _Span(m.start(), m.end(), "NATIONAL_ID", re.sub(r"\s", "", m.group()).upper())


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cards(text: str) -> Iterator[_Span]:
    for m in _CARD_RE.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIX_RE.match(digits) and _luhn_ok(digits):
            yield _Span(m.start(), m.end(), "CARD", digits)


def _cards_mixed(text: str) -> Iterator[_Span]:
    for m in _CARD_MIXED_RE.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIX_RE.match(digits) and _luhn_ok(digits):
            yield _Span(m.start(), m.end(), "CARD", digits)


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


def _contextual(text: str, kinds: frozenset[str],
                regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS) -> Iterator[_Span]:
    """IBANs (mod-97 checked), passport numbers and dates of birth by their context words, phones
    written as bare digits after what says they are one, names in non-Latin scripts after "my
    name is" in their language."""
    if "IBAN" in kinds:
        for m in _IBAN_RE.finditer(text):
            compact = m.group().replace(" ", "")
            if _iban.is_valid(compact):
                yield _Span(m.start(), m.end(), "IBAN", compact)
    if "PASSPORT" in kinds:
        for m in _PASSPORT_RE.finditer(text):
            if any(c.isdigit() for c in m.group(1)):
                yield _Span(m.start(1), m.end(1), "PASSPORT", m.group(1).upper())
    if "DOB" in kinds:
        for m in _DOB_RE.finditer(text):
            yield _Span(m.start(1), m.end(1), "DOB", " ".join(m.group(1).casefold().split()))
    if "PHONE" in kinds:
        for m in _PHONE_CONTEXT_RE.finditer(text):
            digits = re.sub(r"\D", "", m.group(1))
            if 7 <= len(digits) <= 15:
                yield _Span(m.start(1), m.end(1), "PHONE", _phone_key(m.group(1), regions))
    if "PERSON" in kinds:
        for pattern in _PERSON_SCRIPT_RES:
            for m in pattern.finditer(text):
                yield _Span(m.start(1), m.end(1), "PERSON", " ".join(m.group(1).casefold().split()))


def _ips(text: str) -> Iterator[_Span]:
    for m in _IPV4_RE.finditer(text):
        if _VERSION_BEFORE_RE.search(text, max(0, m.start() - 12), m.start()):
            continue
        try:
            address = ipaddress.IPv4Address(m.group())
        except ValueError:
            continue
        yield _Span(m.start(), m.end(), "IP", str(address))
    for m in _IPV6_RE.finditer(text):
        candidate = m.group().rstrip(".")
        hex_digits = sum(ch in "0123456789abcdefABCDEF" for ch in candidate.split("%")[0])
        if hex_digits < 4 or ("::" not in candidate and candidate.count(":") < 7):
            continue
        try:
            address = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        yield _Span(m.start(), m.start() + len(candidate), "IP", address.compressed)


def _phone_windows(text: str) -> list[tuple[int, int]]:
    """Stretches of text worth handing to libphonenumber (it is slow on long texts)."""
    windows: list[tuple[int, int]] = []
    for m in _PHONE_GATE_RE.finditer(text):
        if sum(ch.isdigit() for ch in m.group()) < 7 or _glued_to_identifier(text, *m.span()):
            continue  # any phone inside a glued run would be glued too: skip the slow parse
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
    return raw.startswith("+") or _NATIONAL_PHONE_SHAPE_RE.fullmatch(raw) is not None


@functools.lru_cache(maxsize=4096)  # log templates repeat the same numbers; parsing is slow
def _phone_matches(window: str, regions: tuple[str, ...]) -> dict[tuple[int, int], tuple[str, bool]]:
    """(start, end) in ``window`` -> (E.164, valid); the first region that matches decides."""
    found: dict[tuple[int, int], tuple[str, bool]] = {}
    # Valid numbers (libphonenumber's VALID leniency) anywhere; merely possible ones
    # (unallocated ranges) only when written unmistakably as phones, see below.
    passes = [(phonenumbers.Leniency.VALID, True)]
    if _STRONG_PHONE_HINT_RE.search(window):
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


def _phones(text: str, regions: tuple[str, ...]) -> Iterator[_Span]:
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
            yield _Span(start, end, "PHONE", e164)


def _addresses(text: str, lowered: str | None = None) -> Iterator[_Span]:
    lowered = _lowered(text) if lowered is None else lowered
    for pattern, needs in _ADDRESS_RES:
        if needs is not None and not needs.met(text, lowered):
            continue
        for m in pattern.finditer(text):
            end = m.end()
            while end > m.start() and text[end - 1] in " \t,.":
                end -= 1
            yield _Span(m.start(), end, "ADDRESS", " ".join(text[m.start():end].split()).casefold())


@functools.lru_cache(maxsize=32)
def _address_spans(text: str, lowered: str | None) -> tuple[_Span, ...]:
    # Cached: learning names and replacing both need the addresses of the same text.
    return tuple(_addresses(text, lowered))


def _name_length(raw: str, loose: bool) -> int:
    """Length of the leading name words of ``raw``, cut at the first word that is not a name."""
    end = 0
    for word in re.finditer(r"\S+", raw):
        text = word.group()
        if text.casefold() in _NOT_NAMES or len(text) < 2 or (not loose and not text[0].isupper()):
            break
        end = word.end()
    return end


_FULL_NAME = rf"{_NAME}(?:[ \t]+{_NAME}){{1,2}}"
_NAME_BEFORE_ADDRESS_RE = re.compile(
    rf"\b(?:to|for|attn\.?|c/o)[ \t]+({_FULL_NAME})[ \t]*(?:,|at)?[ \t]*$")
_NAME_AFTER_ADDRESS_RE = re.compile(rf"[ \t]*,?[ \t]*(?:for|attn\.?|c/o|to)[ \t]+({_FULL_NAME})\b")


def _names_by_addresses(text: str, addresses: Iterable[_Span]) -> Iterator[tuple[int, int]]:
    """Full names right next to a street address ("to Jo Bloggs at <address>",
    "<address> for Jo Bloggs"): the shipping-label context names are written in."""
    for address in addresses:
        before = _NAME_BEFORE_ADDRESS_RE.search(text, max(0, address.start - 80), address.start)
        after = _NAME_AFTER_ADDRESS_RE.match(text, address.end, address.end + 80)
        for m in (before, after):
            if m:
                yield m.start(1), m.end(1)


def _persons(text: str, addresses: Iterable[_Span] = (), lowered: str | None = None) -> Iterator[_Span]:
    """Names after a trigger ("my name is", "Dear", "Regards,", titles, …) or by an address."""
    lowered = _lowered(text) if lowered is None else lowered
    candidates: list[tuple[int, int, bool]] = [
        (m.start(1), m.end(1), loose) for pattern, loose, needs in _PERSON_RES
        if needs.met(text, lowered) for m in pattern.finditer(text)
    ]
    candidates.extend((start, end, False) for start, end in _names_by_addresses(text, addresses))
    for start, end, loose in candidates:
        length = _name_length(text[start:end], loose)
        if length:
            name = " ".join(text[start:start + length].split())
            yield _Span(start, start + length, "PERSON", name.casefold())


def _terms(text: str, pattern: re.Pattern[str] | None, kinds: dict[str, str]) -> Iterator[_Span]:
    if pattern is None:
        return
    for m in pattern.finditer(text):
        key = " ".join(m.group().split()).casefold()
        yield _Span(m.start(), m.end(), kinds.get(key, "PERSON"), key)


@functools.lru_cache(maxsize=1024)  # the same people recur; compiling is the slow part
def _names_terms_pattern(names: frozenset[str]) -> re.Pattern[str] | None:
    return _terms_pattern(names, ignore_case=False)


def _terms_pattern(terms: Iterable[str], *, ignore_case: bool) -> re.Pattern[str] | None:
    unique = sorted({t for t in terms if t.strip()}, key=lambda t: (-len(t), t))
    if not unique:
        return None
    body = "|".join(r"\s+".join(re.escape(part) for part in t.split()) for t in unique)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE if ignore_case else 0)


def _merge(spans: Iterable[_Span], text: str) -> list[_Span]:
    """Resolve overlaps: overlapping detections become one span (their union), typed by
    the longest of them, so no raw character of any detection survives."""
    ordered = sorted(spans, key=lambda s: (s.start, -s.end))
    clusters: list[list[_Span]] = []
    cluster_end = -1
    for span in ordered:
        if clusters and span.start < cluster_end:
            clusters[-1].append(span)
            cluster_end = max(cluster_end, span.end)
        else:
            clusters.append([span])
            cluster_end = span.end
    merged = []
    for cluster in clusters:
        best = min(cluster, key=lambda s: (-(s.end - s.start), _RANK[s.kind], s.start))
        start, end = cluster[0].start, max(s.end for s in cluster)
        if (start, end) == (best.start, best.end):
            merged.append(best)
        else:
            merged.append(_Span(start, end, best.kind, " ".join(text[start:end].split()).casefold()))
    return merged


# ------------------------------------------------------------------------ placeholders

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
        for m in PLACEHOLDER_RE.finditer(text):
            self._next[m.group(1)] = max(self._next[m.group(1)], int(m.group(2)))

    def learn_name(self, name: str) -> None:
        """Scrub the person ``name`` and its parts wherever they appear in this record.

        Matching is case-sensitive (as written, Title Case, UPPER CASE) so that a name
        such as "Will" does not take every "will" with it.
        """
        parts = [name] + [p for p in name.split() if len(p) >= 3 and p.casefold() not in _NOT_NAMES]
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


# ---------------------------------------------------------------------------- scrubber

class Scrubber:
    """Replaces PII in text and records; see the module docstring for an example."""

    def __init__(self, config: PIIConfig | None = None) -> None:
        self.config = config or PIIConfig()
        self._dict_kinds = self._load_dictionary(self.config.dictionary_path)
        self._dict_re = _terms_pattern(self._dict_kinds, ignore_case=True)
        self._names_cache: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)
        self._analysis = functools.lru_cache(maxsize=_TEXT_CACHE_SIZE)(self._analyse)

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    @staticmethod
    def _load_dictionary(path: Path | None) -> dict[str, str]:
        if path is None:
            return {}
        if not path.is_file():
            raise FileNotFoundError(
                f"PII dictionary {path} does not exist; create it (one term per line) "
                "or unset dictionary_path"
            )
        terms: dict[str, str] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            kind, sep, rest = line.partition(":")
            if sep and kind.strip() in _RANK and rest.strip():
                terms[" ".join(rest.split()).casefold()] = kind.strip()
            elif line:
                terms[" ".join(line.split()).casefold()] = "PERSON"
        logger.info("PII dictionary %s: %d terms", path, len(terms))
        return terms

    def _analyse(self, text: str) -> tuple[tuple[_Span, ...], tuple[str, ...]]:
        """What depends on the (masked) text alone: every detection but the record's learned
        names, in detector order, and the person names the text teaches. Cached per text
        (system prompts, canned answers and references repeat across records)."""
        kinds = self.config.kinds
        spans: list[_Span] = []
        # Cheap necessary conditions first; a text that fails one cannot match the patterns
        # it guards. Addresses need a digit, an IPv4 address 4, phones 7, cards 13, each
        # national-id pattern its own number (see _national_ids); e-mails and URL
        # credentials an "@", an IPv6 address a colon; secrets and person names one of
        # their patterns' trigger words (see _Needs).
        digits = _count_digits(text)
        has_digit = digits > 0
        has_at = "@" in text
        lowered = _lowered(text)
        if "EMAIL" in kinds and has_at:
            spans.extend(_emails(text))
        if "URL_CREDENTIALS" in kinds and has_at:
            spans.extend(_url_credentials(text))
        if "SECRET" in kinds:
            spans.extend(_secrets(text, lowered))
        if "NATIONAL_ID" in kinds and digits >= 6:
            spans.extend(_national_ids(text, digits))
        if "CARD" in kinds and digits >= 13:
            spans.extend(_cards(text))
            spans.extend(_cards_mixed(text))
        if has_digit or not text.isascii():  # every contextual pattern needs one or the other
            spans.extend(_contextual(text, kinds, self.config.phone_regions))
        if "IP" in kinds and (digits >= 4 or ":" in text):
            spans.extend(_ips(text))
        addresses = _address_spans(text, lowered) if has_digit else ()
        if "ADDRESS" in kinds:
            spans.extend(addresses)
        persons: tuple[_Span, ...] = ()
        if "PERSON" in kinds:
            persons = tuple(_persons(text, addresses, lowered))
            spans.extend(persons)
        if "PHONE" in kinds and digits >= 7:
            spans.extend(_phones(text, self.config.phone_regions))
        spans.extend(_terms(text, self._dict_re, self._dict_kinds))
        names = tuple(" ".join(text[span.start:span.end].split()) for span in persons)
        return tuple(spans), names

    def _detect(self, text: str, mapping: PlaceholderMap) -> list[_Span]:
        spans = list(self._analysis(text)[0])
        spans.extend(_terms(text, self._names_pattern(mapping), {}))
        return spans

    def _names_pattern(self, mapping: PlaceholderMap) -> re.Pattern[str] | None:
        names = frozenset(mapping.names)
        if names != self._names_cache[0]:
            self._names_cache = (names, _names_terms_pattern(names))
        return self._names_cache[1]

    def learn(self, text: str, mapping: PlaceholderMap) -> None:
        """First pass over a field: reserve the placeholders it holds and learn names."""
        mapping.reserve(text)
        if self.enabled and "PERSON" in self.config.kinds:
            for name in self._analysis(_mask_placeholders(text))[1]:
                mapping.learn_name(name)

    def scrub_text(self, text: str, mapping: PlaceholderMap | None = None) -> str:
        """``text`` with PII replaced; pass the same ``mapping`` for every field of a record."""
        if not self.enabled or not text:
            return text
        mapping = PlaceholderMap() if mapping is None else mapping
        self.learn(text, mapping)
        return self._replace(text, mapping)

    def _replace(self, text: str, mapping: PlaceholderMap) -> str:
        masked = _mask_placeholders(text)
        pieces: list[str] = []
        last = 0
        for span in _merge(self._detect(masked, mapping), masked):
            pieces.append(text[last:span.start])
            pieces.append(mapping.placeholder(span.kind, span.key))
            last = span.end
        pieces.append(text[last:])
        return "".join(pieces)

    def scrub_record(self, record: Record) -> tuple[Record, Counter[str]]:
        """The record with every text field scrubbed, and replacements counted by kind."""
        if not self.enabled:
            return record, Counter()
        data = record.model_dump(mode="json")
        counts = self.scrub_data(data)
        return Record.model_validate(data), counts

    def scrub_data(self, data: dict[str, Any]) -> Counter[str]:
        """Scrub, in place, a record already validated and dumped to JSON types (the split
        stage's workers receive records so); the replacements counted by kind."""
        if not self.enabled:
            return Counter()
        mapping = PlaceholderMap()
        _map_text_fields(data, lambda text: (self.learn(text, mapping), text)[1])
        _map_text_fields(data, lambda text: self._replace(text, mapping) if text else text)
        if mapping.counts:
            logger.debug("record scrubbed: %s", dict(sorted(mapping.counts.items())))
        return Counter(mapping.counts)


def _map_text_fields(data: dict[str, Any], fn: Callable[[str], str]) -> None:
    """Apply ``fn`` in place, in a fixed order, to every string of a dumped record that can
    carry PII: messages, reference, the labels (scenario, segment), the rubric (key facts, the
    expected value and its keys) and tool schemas (every string and key). The ids are not
    here: they are pseudonymised whole (see pseudonym)."""
    for message in data["messages"]:
        message["content"] = fn(message["content"])
    if data.get("reference") is not None:
        data["reference"] = fn(data["reference"])
    for label in ("scenario", "segment"):
        if isinstance(data.get(label), str):
            data[label] = fn(data[label])
    rubric = data.get("rubric")
    if rubric is not None:
        if rubric.get("key_facts") is not None:
            rubric["key_facts"] = [fn(fact) for fact in rubric["key_facts"]]
        if "expected" in rubric:
            rubric["expected"] = _map_json(rubric["expected"], fn)
    if data.get("tools") is not None:
        data["tools"] = [_map_json(tool, fn) for tool in data["tools"]]


def _map_json(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_json(item, fn) for item in value]
    if isinstance(value, dict):
        return {fn(key) if isinstance(key, str) else key: _map_json(item, fn)
                for key, item in value.items()}
    return value

