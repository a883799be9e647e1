"""Detections (a stretch of text, its kind and its normalised value) and how overlaps resolve."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pipeline.calibration.pii.config import RANK

_TRAILING_PUNCT = ".,;:!?)]}'\"`"


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    kind: str
    key: str


def strip_trailing(text: str, start: int, end: int) -> int:
    """``end`` moved back past punctuation that ends the sentence rather than the value."""
    while end > start and text[end - 1] in _TRAILING_PUNCT:
        end -= 1
    return end


def merge_spans(spans: Iterable[Span], text: str) -> list[Span]:
    """Resolve overlaps: overlapping detections become one span (their union), typed by
    the longest of them, so no raw character of any detection survives."""
    ordered = sorted(spans, key=lambda s: (s.start, -s.end))
    clusters: list[list[Span]] = []
    cluster_end = -1
    for span in ordered:
        if clusters and span.start < cluster_end:
            clusters[-1].append(span)
            cluster_end = max(cluster_end, span.end)
        else:
            clusters.append([span])
            cluster_end = span.end
    merged = []
    for cluster in clusters:
        best = min(cluster, key=lambda s: (-(s.end - s.start), RANK[s.kind], s.start))
        start, end = cluster[0].start, max(s.end for s in cluster)
        if (start, end) == (best.start, best.end):
            merged.append(best)
        else:
            merged.append(Span(start, end, best.kind, " ".join(text[start:end].split()).casefold()))
    return merged
