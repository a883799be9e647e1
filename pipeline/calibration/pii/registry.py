"""The detectors a scrubber runs: each registered under its kind with its prefilter.

A detector module calls :func:`register` once per detector, next to the detector's code;
the scrubber asks :func:`registered` for the detectors of the kinds its config wants and
runs each one whose prefilter the text passes. Detections are collected in
:data:`SCAN_ORDER`: when two detections tie on length, kind and start, the earlier one is
kept, so the order is part of what the scrubber outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pipeline.calibration.pii.config import RANK, ALL_KINDS
from pipeline.calibration.pii.prefilter import Prefilter, Scan
from pipeline.calibration.pii.spans import Span

#: Every detector by name, in the order the scrubber runs them.
SCAN_ORDER: tuple[str, ...] = (
    "email", "url_credentials", "secret", "national_id", "card", "card_mixed",
    "iban", "passport", "dob", "phone_by_context", "person_by_script",
    "ip", "address", "person", "phone",
    "formatted_id", "mac", "wallet", "coordinates", "cued_id", "labelled_id", "owned_id",
    "cued_name", "name_by_script",
)


@dataclass(frozen=True, slots=True)
class Detector:
    """``find`` yields the spans of ``kind`` in a scan's text. It runs where the config asks
    for ``kind`` and ``prefilter`` holds (a cheap necessary condition for any of its patterns
    to match). With ``teaches_names``, the spans it finds are person names that the record
    then scrubs wherever else they appear."""

    name: str
    kind: str
    prefilter: Prefilter
    find: Callable[[Scan], Iterable[Span]]
    teaches_names: bool = False


_REGISTRY: dict[str, Detector] = {}


def register(name: str, kind: str, prefilter: Prefilter, find: Callable[[Scan], Iterable[Span]],
             *, teaches_names: bool = False) -> Detector:
    """Add the detector ``name`` of ``kind``, guarded by ``prefilter``, to the registry."""
    if name not in SCAN_ORDER:
        raise ValueError(f"PII detector {name!r} has no place in SCAN_ORDER "
                         f"({__name__}); add its name where it should run")
    if kind not in RANK:
        raise ValueError(f"PII detector {name!r} finds unknown kind {kind!r}; use one of "
                         f"{', '.join(ALL_KINDS)}, or add the kind to ALL_KINDS and PIIKind")
    if name in _REGISTRY:
        raise ValueError(f"PII detector {name!r} is registered twice; give each detector its own name")
    detector = Detector(name, kind, prefilter, find, teaches_names)
    _REGISTRY[name] = detector
    return detector


def registered(kinds: Iterable[str]) -> tuple[Detector, ...]:
    """The detectors of ``kinds``, in :data:`SCAN_ORDER`."""
    missing = [name for name in SCAN_ORDER if name not in _REGISTRY]
    if missing:
        raise RuntimeError(f"PII detectors {missing} are in SCAN_ORDER but not registered; import "
                           "pipeline.calibration.pii.detectors (it registers every detector) first")
    wanted = frozenset(kinds)
    return tuple(_REGISTRY[name] for name in SCAN_ORDER if _REGISTRY[name].kind in wanted)
