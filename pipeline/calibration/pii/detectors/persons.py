"""Person names, found by context: a trigger such as "my name is", a title, a greeting or
sign-off, a shipping label next to an address, or "my name is" in another script.

A name found so is then scrubbed everywhere else in the same record (see
:meth:`PlaceholderMap.learn_name`); a bare name with no such context anywhere in the record
is not found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from pipeline.calibration.pii.detectors.addresses import scan_addresses
from pipeline.calibration.pii.prefilter import lower_or_none, Needs, always, not_ascii
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span
from pipeline.calibration.pii.vocabulary import NOT_NAMES

# Names in other scripts, by their context words ("my name is" in several languages).
_HAN = "\u4e00-\u9fff"
_PERSON_SCRIPT_RES: tuple[re.Pattern[str], ...] = (
    re.compile(rf"(?:我叫|我的名字是|我的名字叫|本人姓名[:：]?|姓名[:：]\s*)([{_HAN}]{{2,4}})"),
    re.compile(rf"(?:私は|わたしは)([{_HAN}\u30a0-\u30ff]{{2,6}})(?:です|と申します)"),
    re.compile(rf"([{_HAN}]{{2,4}})と申します"),
    re.compile(r"(?:저는)\s*([가-힣]{2,4})(?:입니다|이에요|예요|라고)"),
)  # "my name is" in Cyrillic, Arabic, Devanagari, Greek, Hangul and other scripts: cued.py

_CAP = r"[A-ZÀ-ÖØ-Þ]"
_LOW = r"[a-zß-öø-ÿ]"
_NAME = rf"{_CAP}{_LOW}+(?:{_CAP}{_LOW}+)?(?:[-'’]{_CAP}?{_LOW}+)*"
_NAMES = rf"{_NAME}(?:[ \t]+{_NAME}){{0,2}}"
_LOOSE_NAME = r"[A-Za-zÀ-ÖØ-öø-ÿ][a-zß-öø-ÿ'’-]+"
_LOOSE_NAMES = rf"{_LOOSE_NAME}(?:[ \t]+{_LOOSE_NAME}){{0,2}}"
_TITLE = r"(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof)\.?"
_NAME_END = r"(?=[ \t]*(?:$|[\r\n.!,;:)]))"
_PERSON_RES: tuple[tuple[re.Pattern[str], bool, Needs], ...] = (
    # (pattern, names may be lower case, prefilter: the pattern's trigger words)
    (re.compile(rf"(?i:\bmy name is|\bmy name's)[ \t]+({_LOOSE_NAMES})"), True,
     Needs(("my name",), ignore_case=True)),
    (re.compile(rf"(?i:\bname)[ \t]*:[ \t]*({_NAMES})"), False, Needs(("name",), ignore_case=True)),
    (re.compile(rf"(?i:(?:^|[,;][ \t]*)name|\brecipient is|\baddressee is|\battn\.?:?|\battention:|"
                rf"\bc/o|\bcontact person is)[ \t]+({_NAMES})", re.M), False,
     Needs(("name", "recipient is", "addressee is", "attn", "attention:", "c/o", "contact person is"),
            ignore_case=True)),
    (re.compile(rf"(?:^|(?<=[.!?,:;])[ \t]+)({_NAMES})[ \t]+here\b", re.M), False, Needs(("here",))),
    (re.compile(rf"\b(?:I'm|I’m|I am)[ \t]+({_NAMES})"), False, Needs(("I'm", "I’m", "I am"))),
    (re.compile(rf"(?i:\bthis is)[ \t]+({_NAMES})"), False, Needs(("this is",), ignore_case=True)),
    (re.compile(rf"(?i:\bdear)[ \t]+(?:{_TITLE}[ \t]+)?({_NAMES})"), False,
     Needs(("dear",), ignore_case=True)),
    (re.compile(rf"\b{_TITLE}[ \t]+({_NAMES})"), False, Needs(("Mr", "Ms", "Mx", "Miss", "Dr", "Prof"))),
    (re.compile(rf"(?im:\b(?:hi|hello|hey|good (?:morning|afternoon|evening)))[ \t]+({_NAMES})"
                rf"(?=[ \t]*[,!])"), False, Needs(("hi", "hello", "hey", "good "), ignore_case=True)),
    (re.compile(rf"(?im:\b(?:(?:best|kind|warm)[ \t]+)?regards|\bthanks|\bthank you|\bcheers|"
                rf"\bsincerely|\byours(?: truly| sincerely)?)[ \t]*[,!.-]?\s*({_NAMES}){_NAME_END}",
                re.M), False, Needs(("regards", "thank", "cheers", "sincerely", "yours"), ignore_case=True)),
    (re.compile(rf"(?im:\bbest)[ \t]*(?:,|\n)\s*({_NAMES}){_NAME_END}", re.M), False,
     Needs(("best",), ignore_case=True)),
)


def _name_length(raw: str, loose: bool) -> int:
    """Length of the leading name words of ``raw``, cut at the first word that is not a name."""
    end = 0
    for word in re.finditer(r"\S+", raw):
        text = word.group()
        if text.casefold() in NOT_NAMES or len(text) < 2 or (not loose and not text[0].isupper()):
            break
        end = word.end()
    return end


_FULL_NAME = rf"{_NAME}(?:[ \t]+{_NAME}){{1,2}}"
_NAME_BEFORE_ADDRESS_RE = re.compile(
    rf"\b(?:to|for|attn\.?|c/o)[ \t]+({_FULL_NAME})[ \t]*(?:,|at)?[ \t]*$")
_NAME_AFTER_ADDRESS_RE = re.compile(rf"[ \t]*,?[ \t]*(?:for|attn\.?|c/o|to)[ \t]+({_FULL_NAME})\b")


def _names_by_addresses(text: str, addresses: Iterable[Span]) -> Iterator[tuple[int, int]]:
    """Full names right next to a street address ("to Jo Bloggs at <address>",
    "<address> for Jo Bloggs"): the shipping-label context names are written in."""
    for address in addresses:
        before = _NAME_BEFORE_ADDRESS_RE.search(text, max(0, address.start - 80), address.start)
        after = _NAME_AFTER_ADDRESS_RE.match(text, address.end, address.end + 80)
        for m in (before, after):
            if m:
                yield m.start(1), m.end(1)


def _persons(text: str, addresses: Iterable[Span] = (), lowered: str | None = None) -> Iterator[Span]:
    """Names after a trigger ("my name is", "Dear", "Regards,", titles, …) or by an address."""
    lowered = lower_or_none(text) if lowered is None else lowered
    candidates: list[tuple[int, int, bool]] = [
        (m.start(1), m.end(1), loose) for pattern, loose, needs in _PERSON_RES
        if needs.met(text, lowered) for m in pattern.finditer(text)
    ]
    candidates.extend((start, end, False) for start, end in _names_by_addresses(text, addresses))
    for start, end, loose in candidates:
        length = _name_length(text[start:end], loose)
        if length:
            name = " ".join(text[start:start + length].split())
            yield Span(start, start + length, "PERSON", name.casefold())


def persons_by_script(text: str) -> Iterator[Span]:
    """Names in non-Latin scripts after "my name is" in their language."""
    for pattern in _PERSON_SCRIPT_RES:
        for m in pattern.finditer(text):
            yield Span(m.start(1), m.end(1), "PERSON", " ".join(m.group(1).casefold().split()))


# A name in another script is found by a context-word pattern: it needs a character outside
# ASCII. The other name patterns have their own trigger words (Needs), checked inside;
# the names they find are learned and scrubbed everywhere else in the record.
register("person_by_script", "PERSON", not_ascii, lambda scan: persons_by_script(scan.text))
register("person", "PERSON", always,
         lambda scan: _persons(scan.text, scan_addresses(scan), scan.lowered), teaches_names=True)
