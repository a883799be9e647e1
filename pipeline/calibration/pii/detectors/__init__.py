"""The PII detectors, one module per concern; importing this package registers them all.

Each module registers its detectors with :func:`~pipeline.calibration.pii.registry.register`
next to their code: the kind a detector finds, its cheap prefilter, and how it reads a
:class:`~pipeline.calibration.pii.prefilter.Scan`. The scrubber runs what
:func:`registered` returns for its config's kinds.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.calibration.pii.config import DEFAULT_PHONE_REGIONS
# importing a detector module registers its detectors
from pipeline.calibration.pii.detectors import (  # noqa: F401
    addresses, contact, credentials, cued, identity, labelled, owned, persons, phones, shapes,
)
from pipeline.calibration.pii.detectors.identity import dobs, ibans, passports
from pipeline.calibration.pii.detectors.persons import persons_by_script
from pipeline.calibration.pii.detectors.phones import phones_by_context
from pipeline.calibration.pii.registry import registered
from pipeline.calibration.pii.spans import Span

__all__ = ["registered"]


def _contextual(text: str, kinds: frozenset[str],
                regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS) -> Iterator[Span]:
    """IBANs (mod-97 checked), passport numbers and dates of birth by their context words, phones
    written as bare digits after what says they are one, names in non-Latin scripts after "my
    name is" in their language: the context-word detectors of ``kinds``, in scan order."""
    if "IBAN" in kinds:
        yield from ibans(text)
    if "PASSPORT" in kinds:
        yield from passports(text)
    if "DOB" in kinds:
        yield from dobs(text)
    if "PHONE" in kinds:
        yield from phones_by_context(text, regions)
    if "PERSON" in kinds:
        yield from persons_by_script(text)
