"""The CSV reader: one item per CSV record (which may span several physical lines), read line by
line in binary. A CSV syntax error is a ``bad_json`` reject (the record could not be parsed), as
is an invalid JSON cell of a ``messages``/``rubric``/``tools`` column; an empty cell is an absent
field."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pipeline.calibration.ingest.excerpts import EXCERPT_WINDOW
from pipeline.calibration.ingest.items import JSON_COLUMNS, ID_FIELDS, Item, parse_json
from pipeline.calibration.ingest.lines import Hasher, LineReader
from pipeline.calibration.ingest.rejects import IngestError, Problem, too_long


class _CsvFeed:
    """Feeds decoded physical lines to ``csv.reader`` while tracking, per CSV record, its
    first line, byte offset, raw-byte SHA256, a prefix for the excerpt, and whether a line
    was too long or not UTF-8."""

    def __init__(self, fh: IO[bytes], max_line_bytes: int) -> None:
        self._reader = LineReader(fh, max_line_bytes)
        self._lines = iter(self._reader)
        self.start_record()

    def start_record(self) -> None:
        self.line = self._reader.number + 1
        self.offset = self._reader.offset
        self._reader.sink = self.hasher = Hasher()
        self.prefix = b""
        self.too_long = False
        self.bad_encoding = False

    def __iter__(self) -> _CsvFeed:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        if len(self.prefix) < EXCERPT_WINDOW * 4:
            self.prefix += line.body[: EXCERPT_WINDOW * 4] + line.eol
        if line.too_long:
            self.too_long = True
            return "\n"  # csv sees a blank line; the record is rejected as too long anyway
        raw = line.body + line.eol
        try:
            return raw.decode("utf-8-sig" if line.number == 1 else "utf-8")
        except UnicodeDecodeError:
            self.bad_encoding = True
            return raw.decode("utf-8", errors="replace")


def _csv_object(header: list[str], row: list[str]) -> dict[str, Any]:
    if len(row) > len(header):
        raise Problem("invalid_value", f"row has {len(row)} cells but the header has {len(header)}")
    obj: dict[str, Any] = {}
    for name, cell in zip(header, row):
        if cell == "":
            continue  # an empty cell is an absent field
        obj[name] = parse_json(cell, f"column {name!r}") if name in JSON_COLUMNS else cell
    return obj


def csv_items(path: Path, max_line_bytes: int) -> Iterator[Item | None]:
    # The csv module refuses fields over 128 KiB by default; the line limit is ours to set.
    # (The limit is process-wide; it is only ever raised here.)
    csv.field_size_limit(max(csv.field_size_limit(), max_line_bytes))
    with path.open("rb") as fh:
        feed = _CsvFeed(fh, max_line_bytes)
        reader = csv.reader(feed, strict=True)
        header = next(reader, None)
        if header is None:
            return
        if feed.too_long or feed.bad_encoding or not all(h.strip() for h in header) \
                or len(set(header)) != len(header):
            raise IngestError(
                f"{path}:1: the CSV header must be UTF-8, non-empty and unique column names "
                "(id, conversation_id, timestamp, scenario, messages, …)"
            )
        header = [h.strip() for h in header]
        while True:
            feed.start_record()
            problem, row = None, None
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                problem = Problem("bad_json", f"CSV row cannot be parsed: {err}")
            sha = feed.hasher.hexdigest()
            if row == [] and not feed.too_long:
                yield None
                continue
            obj = None
            try:
                if feed.too_long:
                    raise too_long(max_line_bytes)
                if feed.bad_encoding:
                    raise Problem("bad_encoding", "row is not valid UTF-8; re-export the file as UTF-8")
                if problem is not None:
                    raise problem
                obj = _csv_object(header, row or [])
            except Problem as err:
                problem = err
                # a row's ids, for its reject's excerpt to show as pseudonyms (CSV text has no
                # JSON keys to find them by)
                obj = {n: c for n, c in zip(header, row or []) if n in ID_FIELDS and not feed.too_long}
            yield Item(feed.line, feed.offset, sha, feed.prefix, obj, problem)
