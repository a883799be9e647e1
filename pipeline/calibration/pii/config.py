"""The PII kinds, their precedence, and what a scrubber is configured to look for."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import phonenumbers
from pydantic import BaseModel, ConfigDict, field_serializer, field_validator

PIIKind = Literal[
    "EMAIL", "PHONE", "NATIONAL_ID", "CARD", "IP", "SECRET", "URL_CREDENTIALS", "ADDRESS",
    "PERSON", "IBAN", "PASSPORT", "DOB", "ID", "DEVICE_ID", "WALLET", "LOCATION",
]
#: Also the tie-break order when two detections cover exactly the same text.
ALL_KINDS: tuple[str, ...] = (
    "SECRET", "URL_CREDENTIALS", "EMAIL", "IBAN", "NATIONAL_ID", "PASSPORT", "CARD", "IP", "DOB",
    "PHONE", "ADDRESS", "PERSON", "WALLET", "DEVICE_ID", "ID", "LOCATION",
)
RANK = {kind: rank for rank, kind in enumerate(ALL_KINDS)}
DEFAULT_PHONE_REGIONS = ("US", "GB", "DE", "FR", "CN", "IN", "ES", "BR", "JP")


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
    #: type prefixes of the business's own system keys ("ACC" of "ACC-101747"), kept as written
    business_keys: tuple[str, ...] = ()

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
