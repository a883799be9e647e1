"""The Parquet reader: one item per row, read batch by batch. A row's raw bytes are the row as
canonical JSON (what ``sha256`` covers and ``max_line_bytes`` measures); a null is an absent
field; rows have no byte offset."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.calibration.ingest.excerpts import EXCERPT_WINDOW
from pipeline.calibration.ingest.items import JSON_COLUMNS, Item, parse_json
from pipeline.calibration.ingest.rejects import IngestError, Problem, too_long


def _drop_nulls(value: Any) -> Any:
    """Arrow has no 'absent': a struct field missing from a row reads as None."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def parquet_items(path: Path, max_line_bytes: int) -> Iterator[Item | None]:
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise IngestError(
            f"{path}: reading Parquet needs pyarrow; pip install 'qpipe[calibration]'"
        ) from err
    try:
        parquet = pq.ParquetFile(path)
    except Exception as err:  # pyarrow raises several unrelated types for a bad file
        raise IngestError(f"{path}: not a readable Parquet file ({type(err).__name__}: {err})") from err
    number = 0
    for batch in parquet.iter_batches(batch_size=_parquet_batch_rows(parquet, max_line_bytes)):
        # A row's size is read from its Arrow buffers first: an over-long row is rejected
        # without ever becoming Python objects (a 2 GB cell would otherwise be copied twice).
        sizes = _row_sizes(batch)
        import pyarrow as pa

        keep = pa.array([i for i, n in enumerate(sizes) if n <= max_line_bytes], type=pa.int64())
        rows = iter(batch.take(keep).to_pylist())
        for size in sizes:
            number += 1
            if size > max_line_bytes:
                note = f"row {number}: about {size} bytes, not read".encode()
                yield Item(number, None, hashlib.sha256(note).hexdigest(), note, None,
                            too_long(max_line_bytes))
                continue
            row = next(rows)
            raw = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode()
            sha = hashlib.sha256(raw).hexdigest()
            obj, problem = None, None
            try:
                if len(raw) > max_line_bytes:
                    raise too_long(max_line_bytes)
                obj = _drop_nulls(row)
                for column in JSON_COLUMNS:
                    if isinstance(obj.get(column), str):
                        obj[column] = parse_json(obj[column], f"column {column!r}")
            except Problem as err:
                problem, obj = err, None
            yield Item(number, None, sha, raw[: EXCERPT_WINDOW * 4], obj, problem)


def _parquet_batch_rows(parquet, max_line_bytes: int) -> int:
    """Rows per batch so that a batch stays near 64 MiB (from the row groups' own sizes)."""
    meta = parquet.metadata
    rows = sum(meta.row_group(i).num_rows for i in range(meta.num_row_groups)) or 1
    total = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return max(1, min(1024, (64 << 20) // max(1, total // rows)))


def _row_sizes(batch) -> list[int]:
    """Bytes of each row's strings and binaries (nested columns by their flattened values), read
    from the Arrow buffers: a lower bound of the row's JSON size, enough to refuse a huge one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sizes = [0] * batch.num_rows
    for column in batch.columns:
        t = column.type
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
                or pa.types.is_large_binary(t):
            lengths = pc.fill_null(pc.binary_length(column), 0).to_pylist()
        elif pa.types.is_nested(t):
            # nested (messages as a list of structs): the bytes its slice references, per row
            lengths = [column.slice(i, 1).nbytes for i in range(len(column))]
        else:
            continue
        sizes = [a + b for a, b in zip(sizes, lengths)]
    return sizes
