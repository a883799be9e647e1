"""The :class:`Ingestor`: every record of every source through its format's reader, validated,
checked for a unique id, and out as an :class:`IngestedRecord` or a counted
:class:`~pipeline.calibration.ingest.rejects.Reject`."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from pipeline.calibration.ingest.discovery import PathsLike, discover_files
from pipeline.calibration.ingest.excerpts import make_excerpt
from pipeline.calibration.ingest.items import ID_FIELDS, Item
from pipeline.calibration.ingest.readers import READERS, SUFFIXES
from pipeline.calibration.ingest.rejects import FileStats, IngestError, IngestStats, Reject, Problem
from pipeline.calibration.ingest.validation import validate_object
from pipeline.calibration.pii import PIIConfig, Scrubber
from pipeline.contracts.business_record import Record

logger = logging.getLogger(__package__)  # one logger for all of ingest, as log filters name it

DEFAULT_MAX_LINE_BYTES = 65536  # the default of data.max_line_bytes in params.yaml


class Origin(BaseModel):
    """Where a record came from: 1-based line (row for Parquet), byte offset of its start
    (``None`` for Parquet, which has no line bytes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int
    offset: int | None


class IngestedRecord(NamedTuple):
    record: Record
    origin: Origin


class Ingestor:
    """Reads sources into records and rejects, counting both in :attr:`stats`.

    Record ids must be unique across everything one Ingestor reads: a later record that
    reuses an id is rejected as ``duplicate_id`` (the first one is kept).

    Args:
        max_line_bytes: a JSONL/CSV line (Parquet row as JSON) longer than this is rejected
            as ``line_too_long`` without being parsed.
        excerpt_scrubber: scrubs reject excerpts; defaults to every PII kind. A disabled
            scrubber is refused: excerpts are never raw text.
        pseudonym: maps an id to what it becomes when the record leaves the split; a reject's
            excerpt shows its ids so (a rejected line's ids never leave as they came in).
    """

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 excerpt_scrubber: Scrubber | None = None,
                 pseudonym: Callable[[str], str] | None = None) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be positive, got {max_line_bytes}")
        if excerpt_scrubber is not None and not excerpt_scrubber.enabled:
            raise ValueError("reject excerpts must be PII-scrubbed; pass an enabled Scrubber or None")
        self.max_line_bytes = max_line_bytes
        self.stats = IngestStats()
        self._scrubber = excerpt_scrubber or Scrubber(PIIConfig())
        self._pseudonym = pseudonym
        self._first_seen: dict[bytes, tuple[str, int]] = {}

    def read(self, paths: PathsLike) -> Iterator[IngestedRecord | Reject]:
        """Records and rejects of every file under ``paths``, in sorted file order."""
        for path, display in discover_files(paths):
            yield from self.read_file(path, display)

    def read_file(self, path: Path, display: str | None = None) -> Iterator[IngestedRecord | Reject]:
        """Records and rejects of one file; ``display`` is the name used in rejects."""
        display = display or Path(path).as_posix()
        reader = READERS.get(Path(path).suffix.lower())
        if reader is None:
            raise IngestError(f"{display}: unsupported file type; use one of {', '.join(SUFFIXES)}")
        for item in reader(Path(path), self.max_line_bytes):
            if item is None:
                self.stats.count_blank(display)
                continue
            result = self._resolve(item, display)
            self.stats.count(display, result.reason if isinstance(result, Reject) else None)
            yield result
        file_stats = self.stats.per_file.get(display, FileStats())
        logger.info("%s: %d records, %d kept, rejected %s", display, file_stats.records_in,
                    file_stats.kept, dict(sorted(file_stats.rejected_by_reason.items())) or 0)

    def _resolve(self, item: Item, display: str) -> IngestedRecord | Reject:
        try:
            if item.problem is not None:
                raise item.problem
            assert item.obj is not None
            record = validate_object(item.obj)
            self._check_unique(record.id, display, item.line)
        except Problem as problem:
            return Reject(file=display, line=item.line, offset=item.offset, sha256=item.sha256,
                          reason=problem.reason,
                          # a detail may quote what it is about (a duplicate id, a bad value):
                          # scrubbed like the excerpt
                          detail=self._scrubber.scrub_text(problem.detail),
                          excerpt=make_excerpt(item.raw, self._scrubber, pseudonym=self._pseudonym,
                                               ids=_ids_of(item.obj)))
        return IngestedRecord(record, Origin(file=display, line=item.line, offset=item.offset))

    def _check_unique(self, record_id: str, display: str, line: int) -> None:
        # A 16-byte digest instead of the id string keeps 1M ids in ~100 MB.
        key = hashlib.blake2b(record_id.encode(), digest_size=16).digest()
        first = self._first_seen.setdefault(key, (display, line))
        if first != (display, line):
            raise Problem("duplicate_id", f"id already used by the record at {first[0]}:{first[1]}; "
                           "ids must be unique across all sources")


def _ids_of(obj: object) -> list[str]:
    """The id values of a row that parsed (any format: a CSV row has no JSON text to find them in)."""
    if not isinstance(obj, dict):
        return []
    return [v for k in ID_FIELDS if isinstance(v := obj.get(k), str)]


def iter_records(paths: PathsLike, *,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 stats: IngestStats | None = None,
                 excerpt_scrubber: Scrubber | None = None) -> Iterator[IngestedRecord | Reject]:
    """Shortcut for ``Ingestor(...).read(paths)``; counts go into ``stats`` when given."""
    ingestor = Ingestor(max_line_bytes=max_line_bytes, excerpt_scrubber=excerpt_scrubber)
    if stats is not None:
        ingestor.stats = stats
    yield from ingestor.read(paths)
