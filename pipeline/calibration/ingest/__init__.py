"""Streaming readers for business logs: JSONL, Parquet and CSV, one record at a time.

Every input record comes out either as a valid :class:`IngestedRecord` (the record and
its :class:`Origin`) or as a :class:`Reject` that says where it was (file, line, byte
offset, SHA256 of the raw bytes), why (one reason code of :data:`REJECT_REASONS`), a
human detail naming the field (never its value) and a PII-scrubbed excerpt of at most
120 characters. Files are never read whole: JSONL and CSV go line by line in binary (an
over-long line is hashed while it streams past, never held), Parquet goes batch by batch.

Conventions: lines are 1-based, offsets are the byte offset of the record's first byte.
``sha256`` covers the record's raw bytes without the final line terminator (for CSV, all
physical lines of the record; for Parquet, the row as canonical JSON, which is also what
``max_line_bytes`` measures there). Blank lines are not records (counted apart). CSV
syntax errors are reported as ``bad_json`` (the record could not be parsed), as are
invalid JSON cells of the ``messages``/``rubric``/``tools`` columns. An empty CSV cell
or a Parquet null is an absent field.

Example:
    >>> ingestor = Ingestor(max_line_bytes=65536)
    >>> items = list(ingestor.read(["calibration/sources"]))  # doctest: +SKIP
    >>> rejects = [item for item in items if isinstance(item, Reject)]  # doctest: +SKIP
    >>> ingestor.stats.records_in == ingestor.stats.kept + ingestor.stats.rejected
    True

Layout: :mod:`.discovery` (which files are read), :mod:`.readers` (the table from a suffix to its
reader) over :mod:`.jsonl_reader`, :mod:`.csv_reader` and :mod:`.parquet_reader`, which share
:mod:`.lines` (physical lines, hashed as they stream) and :mod:`.items` (what a reader yields);
:mod:`.validation` (an object as a Record, errors as a reason code), :mod:`.rejects` (reason
codes, :class:`Reject`, the counts), :mod:`.excerpts` (scrubbed excerpts), :mod:`.ingestor`.
"""

from __future__ import annotations

from pipeline.calibration.ingest.discovery import COMPRESSED, PathsLike, discover_files
from pipeline.calibration.ingest.excerpts import make_excerpt
from pipeline.calibration.ingest.ingestor import (
    DEFAULT_MAX_LINE_BYTES, IngestedRecord, Ingestor, Origin, iter_records,
)
from pipeline.calibration.ingest.readers import SUFFIXES
from pipeline.calibration.ingest.rejects import (
    EXCERPT_CHARS, REJECT_REASONS, FileStats, IngestError, IngestStats, Reject, RejectReason,
)

__all__ = [
    "COMPRESSED", "DEFAULT_MAX_LINE_BYTES", "EXCERPT_CHARS", "REJECT_REASONS", "SUFFIXES", "FileStats",
    "IngestError", "IngestStats", "IngestedRecord", "Ingestor", "Origin", "PathsLike", "Reject",
    "RejectReason", "discover_files", "iter_records", "make_excerpt",
]
