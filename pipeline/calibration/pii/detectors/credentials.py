"""Secrets: private keys, vendor API keys and tokens, bearer tokens, and values written after a
keyword such as "password:" or "api_key=". Each pattern runs only where its trigger words occur."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipeline.calibration.pii.placeholders import MASK
from pipeline.calibration.pii.prefilter import lower_or_none, Needs, always
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span, strip_trailing

_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA")
_SECRET_RES: tuple[tuple[re.Pattern[str], int, Needs], ...] = (  # (pattern, group, prefilter)
    (re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*"
                r"PRIVATE KEY-----|[\s\S]*\Z)"), 0, Needs(("-----BEGIN ",))),
    (re.compile(rf"\b(?:{'|'.join(_AWS_PREFIXES)})[A-Z0-9]{{16}}\b"), 0, Needs(_AWS_PREFIXES)),
    # the 40-character secret access key written right after its key id ("AKIA… / <key>")
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b(?:[ \t]*[/:,;|=][ \t]*|[ \t]+)([A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])"),
     1, Needs(("AKIA", "ASIA"))),
    (re.compile(r"(?<![\w-])sk-[A-Za-z0-9_-]*(?=[A-Za-z0-9]{16})"
                r"(?:[A-Za-z0-9]*\d|[A-Za-z0-9]*[a-z][A-Za-z0-9]*[A-Z]|[A-Za-z0-9]*[A-Z][A-Za-z0-9]*[a-z])"
                r"[A-Za-z0-9_-]*"), 0, Needs(("sk-",))),
    (re.compile(r"\b[spr]k_(?:live|test)_[A-Za-z0-9]{16,}"), 0, Needs(("k_live_", "k_test_"))),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), 0,
     Needs(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"))),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), 0, Needs(("xox",))),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0, Needs(("AIza",))),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, Needs(("eyJ",))),
    # a bearer token has a digit or is long: "bearer instrument" is not one
    (re.compile(r"(?i)\bbearer\s+((?=[A-Za-z0-9._~+/-]*\d|[A-Za-z0-9._~+/-]{20})"
                r"[A-Za-z0-9._~+/-]{8,}=*)"), 1, Needs(("bearer",), ignore_case=True)),
)
_SECRET_KEYWORD_RE = re.compile(
    r"(?i)\b(password|passwd|pwd|passphrase|passcode|pin|secret|client[_ -]?secret|"
    r"api[_ -]?key|apikey|access[_ -]?key|secret[_ -]?key|access[_ -]?token|auth[_ -]?token|"
    r"refresh[_ -]?token|token|aws_secret_access_key)[\"']?\s*(?P<sep>[:=]|\bis\b)\s*[\"']?"
    r"(?P<value>[^\s\"',;]+)"
)
_SECRET_KEYWORD_NEEDS = Needs(("pass", "pwd", "pin", "secret", "api", "access", "token"), ignore_case=True)


def _secrets(text: str, lowered: str | None = None) -> Iterator[Span]:
    lowered = lower_or_none(text) if lowered is None else lowered
    for pattern, group, needs in _SECRET_RES:
        if not needs.met(text, lowered):
            continue
        for m in pattern.finditer(text):
            yield Span(m.start(group), m.end(group), "SECRET", m.group(group))
    if not _SECRET_KEYWORD_NEEDS.met(text, lowered):
        return
    for m in _SECRET_KEYWORD_RE.finditer(text):
        start = m.start("value")
        end = strip_trailing(text, start, m.end("value"))
        value = text[start:end]
        keyword = m.group(1).lower()
        min_len = 12 if keyword == "token" else 3
        if len(value) < min_len or MASK in value:
            continue
        # "the password is wrong" is prose; "my password is hunter2" is a secret.
        if m.group("sep").lower() == "is" and value.isalpha():
            continue
        yield Span(start, end, "SECRET", value)


# Every pattern has its own trigger words (Needs), checked inside: no gate on the whole text.
register("secret", "SECRET", always, lambda scan: _secrets(scan.text, scan.lowered))
