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

Layout: :mod:`.config` (kinds, their rank, :class:`PIIConfig`), :mod:`.prefilter` (the cheap
gates), :mod:`.registry` (detectors by kind and prefilter, in scan order), :mod:`.detectors`
(one module per concern), :mod:`.spans` (overlap resolution), :mod:`.placeholders`
(:class:`PlaceholderMap`), :mod:`.terms` (dictionary and learned names), :mod:`.scrubber`.
"""

from __future__ import annotations

from pipeline.calibration.pii.config import ALL_KINDS, DEFAULT_PHONE_REGIONS, PIIConfig, PIIKind
from pipeline.calibration.pii.placeholders import PLACEHOLDER_RE, PlaceholderMap
from pipeline.calibration.pii.scrubber import Scrubber

__all__ = [
    "ALL_KINDS", "DEFAULT_PHONE_REGIONS", "PLACEHOLDER_RE", "PIIConfig", "PIIKind", "PlaceholderMap",
    "Scrubber",
]
