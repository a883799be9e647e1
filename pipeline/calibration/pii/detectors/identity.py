"""Identity numbers: national ids (US SSN, UK NINO, Chinese RIC, Spanish DNI/NIE, Indian
Aadhaar, French NIR), payment cards, IBANs, passport numbers and dates of birth.

Ids, cards and IBANs need a valid checksum or format rule, so order numbers and other
business digits are left alone; passport numbers and dates of birth are found by the words
that introduce them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from pipeline.calibration.pii.nouns import named_by_business
from pipeline.calibration.pii.prefilter import both, count_digits, digit_or_not_ascii, digits_at_least, words_of
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span

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
_CARD_MIXED_RE = re.compile(r"(?<![\w-])\d{4}(?:[ .\-/\u00a0]{1,3}\d{4}){2}"
                            r"[ .\-/\u00a0]{1,3}\d{1,7}(?![\w-])")
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
_CARD_PREFIX_RE = re.compile(r"^(?:3[0-8]|4|5[1-5]|2[2-7]|6(?:011|2|4[4-9]|5))")


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


def _national_ids(text: str, digits: int | None = None) -> Iterator[Span]:
    digits = count_digits(text) if digits is None else digits
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
            if valid(compact) and not named_by_business(text, start, strict=True):  # "追跡番号は 4471-2290-8812"
                yield Span(start, end, "NATIONAL_ID", compact)
    for m in _NINO_RE.finditer(text) if digits >= 6 else ():
        if _nino_ok(m.group(1)):
            yield Span(m.start(), m.end(), "NATIONAL_ID", re.sub(r"\s", "", m.group()).upper())


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_number(run: str) -> bool:
    """Whether ``run`` as a whole is what the card detector takes: a card's shape, issuer
    prefix and Luhn checksum."""
    if _CARD_RE.fullmatch(run) is None:
        return False
    digits = re.sub(r"\D", "", run)
    return 13 <= len(digits) <= 19 and _CARD_PREFIX_RE.match(digits) is not None and _luhn_ok(digits)


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD_RE.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIX_RE.match(digits) and _luhn_ok(digits):
            yield Span(m.start(), m.end(), "CARD", digits)


def _cards_mixed(text: str) -> Iterator[Span]:
    for m in _CARD_MIXED_RE.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIX_RE.match(digits) and _luhn_ok(digits):
            yield Span(m.start(), m.end(), "CARD", digits)


def ibans(text: str) -> Iterator[Span]:
    """IBANs, mod-97 checked."""
    for m in _IBAN_RE.finditer(text):
        compact = m.group().replace(" ", "")
        if _iban.is_valid(compact):
            yield Span(m.start(), m.end(), "IBAN", compact)


def passports(text: str) -> Iterator[Span]:
    """Passport numbers (holding a digit) after a word for passport."""
    for m in _PASSPORT_RE.finditer(text):
        if any(c.isdigit() for c in m.group(1)):
            yield Span(m.start(1), m.end(1), "PASSPORT", m.group(1).upper())


def dobs(text: str) -> Iterator[Span]:
    """Dates after words that say they are a date of birth."""
    for m in _DOB_RE.finditer(text):
        yield Span(m.start(1), m.end(1), "DOB", " ".join(m.group(1).casefold().split()))


# National ids need 6 digits at the least (each pattern checks its own number, see
# _national_ids), cards 13; IBANs, passports and dates of birth are context-word patterns,
# each of which needs a digit or a character outside ASCII, the last two their words too.
register("national_id", "NATIONAL_ID", digits_at_least(6),
         lambda scan: _national_ids(scan.text, scan.digits))
register("card", "CARD", digits_at_least(13), lambda scan: _cards(scan.text))
register("card_mixed", "CARD", digits_at_least(13), lambda scan: _cards_mixed(scan.text))
register("iban", "IBAN", digit_or_not_ascii, lambda scan: ibans(scan.text))
# the words of the passport and date-of-birth patterns (their literal parts, lower-cased)
register("passport", "PASSPORT", both(digit_or_not_ascii, words_of(
    "passport", "pasaporte", "passeport", "reisepass", "passaporto", "paspoort", "паспорт", "护照", "護照",
    "パスポート", "여권")), lambda scan: passports(scan.text))
register("dob", "DOB", both(digit_or_not_ascii, words_of(
    "birth", "born", "dob", "d.o", "do.b", "nacimiento", "nacid", "né", "naissance", "geboren", "geburtsdatum",
    "nascita", "nato", "рождения", "出生日期", "生日", "生年月日", "생년월일")), lambda scan: dobs(scan.text))
