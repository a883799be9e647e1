"""The one table from a file's suffix to its reader, and so the suffixes that are read at all.

A reader takes ``(path, max_line_bytes)`` and yields one
:class:`~pipeline.calibration.ingest.items.Item` per record, or ``None`` for a blank line (not a
record); it raises :class:`~pipeline.calibration.ingest.rejects.IngestError` when the whole file is
unusable. A new format is one reader module and one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from pipeline.calibration.ingest.csv_reader import csv_items
from pipeline.calibration.ingest.items import Item
from pipeline.calibration.ingest.jsonl_reader import jsonl_items
from pipeline.calibration.ingest.parquet_reader import parquet_items

Reader = Callable[[Path, int], Iterator[Item | None]]

READERS: dict[str, Reader] = {".jsonl": jsonl_items, ".json": jsonl_items, ".parquet": parquet_items,
                               ".csv": csv_items}
SUFFIXES = tuple(READERS)  # in the order error messages list them
