"""The one table from a file's suffix to its reader, and so the suffixes that are read at all.

A reader takes ``(path, max_line_bytes)`` and yields one
:class:`~pipeline.calibration.ingest.items._Item` per record, or ``None`` for a blank line (not a
record); it raises :class:`~pipeline.calibration.ingest.rejects.IngestError` when the whole file is
unusable. A new format is one reader module and one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from pipeline.calibration.ingest.csv_reader import _csv_items
from pipeline.calibration.ingest.items import _Item
from pipeline.calibration.ingest.jsonl_reader import _jsonl_items
from pipeline.calibration.ingest.parquet_reader import _parquet_items

Reader = Callable[[Path, int], Iterator[_Item | None]]

_READERS: dict[str, Reader] = {".jsonl": _jsonl_items, ".json": _jsonl_items, ".parquet": _parquet_items,
                               ".csv": _csv_items}
SUFFIXES = tuple(_READERS)  # in the order error messages list them
