"""Contact details: e-mail addresses, credentials written into URLs, and IP addresses."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from pipeline.calibration.pii.prefilter import digits_at_least, either, holds
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span, strip_trailing

# Internationalised addresses too: Unicode local parts and domains (bücher.de, 例え.jp) and
# punycode TLDs (xn--…).
_EMAIL_RE = re.compile(
    r"(?<![\w.+%-])\w[\w.+%'-]*@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+(?:[^\W\d_]{2,24}|xn--[a-z0-9-]{2,59})"
    r"(?![\w-])"
)
_URL_CRED_RE = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s:/@<>\"'`]+:[^\s/@<>\"'`]+@[^\s<>\"'`]+"
)

_IPV4_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w)(?!\.\d)")
_VERSION_BEFORE_RE = re.compile(r"(?i)\b(?:v|version|ver\.?|release|build)\s*$")
_IPV6_RE = re.compile(r"(?<![\w:.])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*(?:%\w+)?(?![\w:])")


def _emails(text: str) -> Iterator[Span]:
    for m in _EMAIL_RE.finditer(text):
        yield Span(m.start(), m.end(), "EMAIL", m.group().casefold())


def _url_credentials(text: str) -> Iterator[Span]:
    for m in _URL_CRED_RE.finditer(text):
        end = strip_trailing(text, m.start(), m.end())
        yield Span(m.start(), end, "URL_CREDENTIALS", text[m.start():end])


def _ips(text: str) -> Iterator[Span]:
    for m in _IPV4_RE.finditer(text):
        if _VERSION_BEFORE_RE.search(text, max(0, m.start() - 12), m.start()):
            continue
        try:
            address = ipaddress.IPv4Address(m.group())
        except ValueError:
            continue
        yield Span(m.start(), m.end(), "IP", str(address))
    for m in _IPV6_RE.finditer(text):
        candidate = m.group().rstrip(".")
        hex_digits = sum(ch in "0123456789abcdefABCDEF" for ch in candidate.split("%")[0])
        if hex_digits < 4 or ("::" not in candidate and candidate.count(":") < 7):
            continue
        try:
            address = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        yield Span(m.start(), m.start() + len(candidate), "IP", address.compressed)


# An e-mail address and URL credentials hold an "@"; an IPv4 address 4 digits, an IPv6 one a colon.
register("email", "EMAIL", holds("@"), lambda scan: _emails(scan.text))
register("url_credentials", "URL_CREDENTIALS", holds("@"), lambda scan: _url_credentials(scan.text))
register("ip", "IP", either(digits_at_least(4), holds(":")), lambda scan: _ips(scan.text))
