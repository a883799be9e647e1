"""Values whose shape says what they are, with no word around them: MAC addresses, crypto-wallet
addresses (checksummed where the format has one), geographic coordinates, and national ids in a
written form of their own that a published checksum confirms (python-stdnum's validators).

Each shape is narrow enough that business text does not take it: a MAC needs six hex pairs with
one separator, coordinates four decimals on both numbers and a valid range, an id its
punctuation and its checksum.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import bitcoin as _bitcoin
from stdnum.br import cpf as _br_cpf
from stdnum.cl import rut as _cl_rut
from stdnum.fi import hetu as _fi_hetu
from stdnum.it import codicefiscale as _it_cf
from stdnum.kr import rrn as _kr_rrn
from stdnum.mx import curp as _mx_curp
from stdnum.se import personnummer as _se_pnr

from pipeline.calibration.pii.prefilter import Scan, digits_at_least, either, holds
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span

_MAC_RE = re.compile(r"(?<![\w:.-])(?:[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}"
                     r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:-]|\.\w)")


def _macs(text: str) -> Iterator[Span]:
    for m in _MAC_RE.finditer(text):
        hexes = re.sub(r"[^0-9a-f]", "", m.group().lower())
        if len(set(hexes)) > 1 and any(c.isdigit() for c in hexes):
            yield Span(m.start(), m.end(), "DEVICE_ID", ":".join(hexes[i:i + 2] for i in range(0, 12, 2)))


_BTC_RE = re.compile(r"(?<![A-Za-z0-9])(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|(?:bc|tb)1[02-9ac-hj-np-z]{11,71})"
                     r"(?![A-Za-z0-9])")
_ETH_RE = re.compile(r"(?<![A-Za-z0-9])0x[0-9a-fA-F]{40}(?![A-Za-z0-9])")


def _wallets(text: str) -> Iterator[Span]:
    for m in _BTC_RE.finditer(text):
        if _bitcoin.is_valid(m.group()):  # base58check or bech32 checksum
            yield Span(m.start(), m.end(), "WALLET", m.group())
    for m in _ETH_RE.finditer(text):
        yield Span(m.start(), m.end(), "WALLET", m.group().lower())


_DECIMAL_PAIR_RE = re.compile(r"(?<![\w.])(-?\d{1,2}\.\d{4,})\s?,\s?(-?\d{1,3}\.\d{4,})(?![\w.])")
_DMS = r"\d{1,3}\s?°\s?\d{1,2}\s?['′]\s?(?:\d{1,2}(?:\.\d+)?\s?[\"″])?\s?"
_DMS_PAIR_RE = re.compile(rf"(?<!\w){_DMS}[NS][ ,]*{_DMS}[EW](?!\w)")


def _coordinates(text: str) -> Iterator[Span]:
    for m in _DECIMAL_PAIR_RE.finditer(text):
        if abs(float(m.group(1))) <= 90 and abs(float(m.group(2))) <= 180:
            yield Span(m.start(), m.end(), "LOCATION", f"{float(m.group(1))},{float(m.group(2))}")
    for m in _DMS_PAIR_RE.finditer(text):
        yield Span(m.start(), m.end(), "LOCATION", re.sub(r"\s", "", m.group()))


# national ids whose written form is their own (punctuation, letters in fixed places) and whose
# checksum is published: found bare. Plain digit runs need a word that introduces them (cued.py).
_IDS: tuple[tuple[re.Pattern[str], object], ...] = (
    (re.compile(r"(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-])"), _br_cpf),
    (re.compile(r"(?<![\w-])\d{6}-[1-8]\d{6}(?![\w-])"), _kr_rrn),
    (re.compile(r"(?<![\w-])[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z](?![\w-])"), _it_cf),
    (re.compile(r"(?<![\w-])[A-Z]{4}\d{6}[HMX][A-Z]{5}[0-9A-Z]\d(?![\w-])"), _mx_curp),
    (re.compile(r"(?<![\w-])\d{6}[-+A]\d{3}[0-9A-Y](?![\w-])"), _fi_hetu),
    (re.compile(r"(?<![\w-])\d{6}[-+]\d{4}(?![\w-])"), _se_pnr),
    (re.compile(r"(?<![\w.-])\d{1,2}\.?\d{3}\.?\d{3}-[\dkK](?![\w-])"), _cl_rut),
)


def _formatted_ids(scan: Scan) -> Iterator[Span]:
    text = scan.text
    for pattern, module in _IDS:
        for m in pattern.finditer(text):
            if module.is_valid(m.group()):
                yield Span(m.start(), m.end(), "NATIONAL_ID", module.compact(m.group()))


register("mac", "DEVICE_ID", either(holds(":"), holds("-"), holds(".")), lambda scan: _macs(scan.text))
register("wallet", "WALLET", lambda scan: "1" in scan.text or "3" in scan.text or "0x" in scan.text,
         lambda scan: _wallets(scan.text))
register("coordinates", "LOCATION", digits_at_least(6), lambda scan: _coordinates(scan.text))
register("formatted_id", "NATIONAL_ID", digits_at_least(7), _formatted_ids)
