"""`data/calibration/<set>/card.json`: a calibration set's identity (content hash, the hashes of
the files quantizers read) and how it was made (composition, quotas, PII, dedup, overlap)."""

from __future__ import annotations

from typing import Any, ClassVar

from pipeline.contracts.contract import Contract, Num, OpenPart, Part
from pipeline.contracts.files import CALIBRATION_CARD_SCHEMA, CARD


class TokenLengths(Part):
    min: Num
    median: Num
    max: Num
    total: int
    histogram: dict[str, int] = {}


class PiiSummary(Part):
    enabled: bool | None = None  # None: no business samples, nothing to scrub
    replacements: dict[str, int] = {}


class Overlap(Part):
    by_id: int
    near_duplicates: int
    evalset_sha256: str | None = None


class CalibrationCard(Contract):
    """The empty set (`none`) has a name, 0 samples, no content hash and a note; a built set the
    rest. Provenance blocks whose keys follow the params (quotas, rotation) stay open."""

    SCHEMA: ClassVar[str] = CALIBRATION_CARD_SCHEMA
    FILE: ClassVar[str] = CARD  # its name in its stage's folder
    WRITER: ClassVar[str] = "calibration@{name}"

    name: str
    samples: int
    content_sha256: str | None
    note: str | None = None
    files_sha256: dict[str, str] | None = None  # every file a quantizer reads, by hash
    params: dict[str, Any] | None = None
    inputs_sha256: dict[str, str] | None = None
    sources_sha256: dict[str, str] | None = None
    composition: dict[str, int] | None = None
    by_scenario: dict[str, int] | None = None
    by_difficulty: dict[str, int] | None = None
    hard_share: Num | None = None
    token_lengths: TokenLengths | None = None
    quotas: dict[str, Any] | None = None
    shortfalls: dict[str, list[str]] | None = None
    filled_from_neighbours: dict[str, Any] | None = None
    rotation: OpenPart | None = None
    length_filter: dict[str, int] | None = None
    pii: PiiSummary | None = None
    general_pii: PiiSummary | None = None
    rejects_by_reason: dict[str, int] | None = None
    dedup: dict[str, int] | None = None
    overlap_with_evalset: Overlap | None = None

    @classmethod
    def fix(cls, where=None) -> str:
        base = super().fix(where)
        return base.replace("calibration@none", "calibration_none")
