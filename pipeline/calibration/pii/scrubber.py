"""The scrubber: runs the registered detectors over every text field of a record and replaces
what they find with placeholders from one per-record :class:`PlaceholderMap`."""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.calibration.pii.config import RANK, PIIConfig
from pipeline.calibration.pii.detectors import registered
from pipeline.calibration.pii.placeholders import PlaceholderMap, mask_placeholders
from pipeline.calibration.pii.prefilter import Scan
from pipeline.calibration.pii.spans import merge_spans, Span
from pipeline.calibration.pii.terms import names_terms_pattern, term_spans, terms_pattern
from pipeline.contracts.business_record import Record

logger = logging.getLogger(__package__)  # the package's name: pipeline.calibration.pii

_TEXT_CACHE_SIZE = 16384  # texts whose detections are remembered (per Scrubber)


class Scrubber:
    """Replaces PII in text and records; see the package docstring (:mod:`pipeline.calibration.pii`)
    for an example."""

    def __init__(self, config: PIIConfig | None = None) -> None:
        self.config = config or PIIConfig()
        self._dict_kinds = self._load_dictionary(self.config.dictionary_path)
        self._dict_re = terms_pattern(self._dict_kinds, ignore_case=True)
        self._names_cache: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)
        self._detectors = registered(self.config.kinds)  # in scan order
        self._analysis = functools.lru_cache(maxsize=_TEXT_CACHE_SIZE)(self._analyse)

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    @staticmethod
    def _load_dictionary(path: Path | None) -> dict[str, str]:
        if path is None:
            return {}
        if not path.is_file():
            raise FileNotFoundError(
                f"PII dictionary {path} does not exist; create it (one term per line) "
                "or unset dictionary_path"
            )
        terms: dict[str, str] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            kind, sep, rest = line.partition(":")
            if sep and kind.strip() in RANK and rest.strip():
                terms[" ".join(rest.split()).casefold()] = kind.strip()
            elif line:
                terms[" ".join(line.split()).casefold()] = "PERSON"
        logger.info("PII dictionary %s: %d terms", path, len(terms))
        return terms

    def _analyse(self, text: str) -> tuple[tuple[Span, ...], tuple[str, ...]]:
        """What depends on the (masked) text alone: every detection but the record's learned
        names, in detector order, and the person names the text teaches. Cached per text
        (system prompts, canned answers and references repeat across records)."""
        scan = Scan(text, self.config.phone_regions, frozenset(self.config.business_keys))
        spans: list[Span] = []
        names: list[str] = []
        for detector in self._detectors:
            if not detector.prefilter(scan):  # cheap, and a text that fails it cannot match
                continue
            found = tuple(detector.find(scan))
            spans.extend(found)
            if detector.teaches_names:
                names.extend(" ".join(text[span.start:span.end].split()) for span in found)
        spans.extend(term_spans(text, self._dict_re, self._dict_kinds))  # whatever the kinds say
        return tuple(spans), tuple(names)

    def _detect(self, text: str, mapping: PlaceholderMap) -> list[Span]:
        spans = list(self._analysis(text)[0])
        spans.extend(term_spans(text, self._names_pattern(mapping), {}))
        return spans

    def _names_pattern(self, mapping: PlaceholderMap) -> re.Pattern[str] | None:
        names = frozenset(mapping.names)
        if names != self._names_cache[0]:
            self._names_cache = (names, names_terms_pattern(names))
        return self._names_cache[1]

    def learn(self, text: str, mapping: PlaceholderMap) -> None:
        """First pass over a field: reserve the placeholders it holds and learn names."""
        mapping.reserve(text)
        if self.enabled and "PERSON" in self.config.kinds:
            for name in self._analysis(mask_placeholders(text))[1]:
                mapping.learn_name(name)

    def scrub_text(self, text: str, mapping: PlaceholderMap | None = None) -> str:
        """``text`` with PII replaced; pass the same ``mapping`` for every field of a record."""
        if not self.enabled or not text:
            return text
        mapping = PlaceholderMap() if mapping is None else mapping
        self.learn(text, mapping)
        return self._replace(text, mapping)

    def _replace(self, text: str, mapping: PlaceholderMap) -> str:
        masked = mask_placeholders(text)
        if not self._analysis(masked)[0]:  # most texts: nothing found but perhaps a learned name
            names = self._names_pattern(mapping)
            if names is None or names.search(masked) is None:
                return text
        pieces: list[str] = []
        last = 0
        for span in merge_spans(self._detect(masked, mapping), masked):
            pieces.append(text[last:span.start])
            pieces.append(mapping.placeholder(span.kind, span.key))
            last = span.end
        pieces.append(text[last:])
        return "".join(pieces)

    def scrub_record(self, record: Record) -> tuple[Record, Counter[str]]:
        """The record with every text field scrubbed, and replacements counted by kind."""
        if not self.enabled:
            return record, Counter()
        data = record.model_dump(mode="json")
        counts = self.scrub_data(data)
        return Record.model_validate(data), counts

    def scrub_data(self, data: dict[str, Any]) -> Counter[str]:
        """Scrub, in place, a record already validated and dumped to JSON types (the split
        stage's workers receive records so); the replacements counted by kind."""
        if not self.enabled:
            return Counter()
        mapping = PlaceholderMap()
        _map_text_fields(data, lambda text: (self.learn(text, mapping), text)[1])
        _map_text_fields(data, lambda text: self._replace(text, mapping) if text else text)
        if mapping.counts:
            logger.debug("record scrubbed: %s", dict(sorted(mapping.counts.items())))
        return Counter(mapping.counts)


def _map_text_fields(data: dict[str, Any], fn: Callable[[str], str]) -> None:
    """Apply ``fn`` in place, in a fixed order, to every string of a dumped record that can
    carry PII: messages, reference, the labels (scenario, segment), the rubric (key facts, the
    expected value and its keys) and tool schemas (every string and key). The ids are not
    here: they are pseudonymised whole (see pseudonym)."""
    for message in data["messages"]:
        message["content"] = fn(message["content"])
    if data.get("reference") is not None:
        data["reference"] = fn(data["reference"])
    for label in ("scenario", "segment"):
        if isinstance(data.get(label), str):
            data[label] = fn(data[label])
    rubric = data.get("rubric")
    if rubric is not None:
        if rubric.get("key_facts") is not None:
            rubric["key_facts"] = [fn(fact) for fact in rubric["key_facts"]]
        if "expected" in rubric:
            rubric["expected"] = _map_json(rubric["expected"], fn)
    if data.get("tools") is not None:
        data["tools"] = [_map_json(tool, fn) for tool in data["tools"]]


def _map_json(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_json(item, fn) for item in value]
    if isinstance(value, dict):
        return {fn(key) if isinstance(key, str) else key: _map_json(item, fn)
                for key, item in value.items()}
    return value
