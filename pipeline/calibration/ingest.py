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
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.calibration.pii import PIIConfig, PlaceholderMap, Scrubber
from pipeline.calibration.schema import Record

logger = logging.getLogger(__name__)

RejectReason = Literal[
    "bad_encoding", "bad_json", "not_an_object", "missing_field", "wrong_type",
    "empty_conversation", "empty_message", "line_too_long", "duplicate_id", "invalid_value",
]
REJECT_REASONS: tuple[str, ...] = get_args(RejectReason)
SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")
DEFAULT_MAX_LINE_BYTES = 65536  # the default of data.max_line_bytes in params.yaml
EXCERPT_CHARS = 120
_EXCERPT_WINDOW = 2000  # scrub this much, then cut: a value cut in half would escape detection
_JSON_COLUMNS = ("messages", "rubric", "tools")
# When a record has several problems the reason is the most structural one.
_REASON_PRIORITY = ("missing_field", "wrong_type", "empty_conversation", "empty_message",
                    "invalid_value")


class IngestError(ValueError):
    """A whole input is unusable (missing, unsupported, unreadable): nothing to reject."""


class Origin(BaseModel):
    """Where a record came from: 1-based line (row for Parquet), byte offset of its start
    (``None`` for Parquet, which has no line bytes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int
    offset: int | None


class Reject(BaseModel):
    """One input record that did not become a :class:`Record`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int
    offset: int | None
    sha256: str
    reason: RejectReason
    detail: str
    excerpt: str = Field(max_length=EXCERPT_CHARS)


class IngestedRecord(NamedTuple):
    record: Record
    origin: Origin


class FileStats(BaseModel):
    """Counts for one file; ``records_in == kept + rejected`` by construction."""

    model_config = ConfigDict(extra="forbid")

    records_in: int = 0
    kept: int = 0
    rejected_by_reason: dict[str, int] = Field(default_factory=dict)
    blank_lines: int = 0

    @property
    def rejected(self) -> int:
        return sum(self.rejected_by_reason.values())

    def _count(self, reason: str | None) -> None:
        self.records_in += 1
        if reason is None:
            self.kept += 1
        else:
            self.rejected_by_reason[reason] = self.rejected_by_reason.get(reason, 0) + 1


class IngestStats(FileStats):
    """Counts over all files, and per file (keyed by the file as reported in rejects)."""

    per_file: dict[str, FileStats] = Field(default_factory=dict)

    def count(self, file: str, reason: str | None) -> None:
        """Count one record of ``file``: kept when ``reason`` is None, else rejected."""
        self._count(reason)
        self.per_file.setdefault(file, FileStats())._count(reason)

    def count_blank(self, file: str) -> None:
        self.blank_lines += 1
        self.per_file.setdefault(file, FileStats()).blank_lines += 1


class _Problem(Exception):
    """Internal: a record-level failure on its way to becoming a Reject."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


# ------------------------------------------------------------------ discovering inputs

PathsLike = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zip", ".7z", ".tgz")


def discover_files(paths: PathsLike, skipped: dict[str, str] | None = None) -> list[tuple[Path, str]]:
    """(path, display name) of every input file; folders are walked in sorted order. Files of a
    folder that are not read are named in `skipped` with why (compressed logs among them: they
    are counted and reported, never dropped in silence)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[tuple[Path, str]] = []
    for given in paths:
        root = Path(given)
        if root.is_file():
            if root.suffix.lower() in COMPRESSED:
                raise IngestError(f"{root}: compressed logs are not read — fix: decompress it "
                                  f"(e.g. `gunzip -k {root.name}`) and point data.sources at the result")
            if root.suffix.lower() not in SUFFIXES:
                raise IngestError(
                    f"{root}: unsupported file type {root.suffix!r}; convert it to one of "
                    f"{', '.join(SUFFIXES)}"
                )
            found.append((root, root.as_posix()))
        elif root.is_dir():
            found.extend(_walk(root, skipped if skipped is not None else {}))
        else:
            raise IngestError(f"{root}: no such file or folder; check the sources path in params.yaml")
    return found


def _walk(root: Path, skipped: dict[str, str]) -> Iterator[tuple[Path, str]]:
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root)
        display = (root / relative).as_posix()
        if any(part.startswith(".") for part in relative.parts):
            logger.debug("skipping hidden file %s", path)
        elif path.suffix.lower() in SUFFIXES:
            yield path, display
        elif path.suffix.lower() in COMPRESSED:
            skipped[display] = "compressed: not read (decompress it to include its records)"
            logger.warning("NOT READ: %s is compressed — decompress it to include its records", path)
        else:
            skipped[display] = f"not one of {', '.join(SUFFIXES)}"
            logger.warning("ignoring %s: not one of %s", path, ", ".join(SUFFIXES))


# -------------------------------------------------------------------------- validation

def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{str(part)[:40]}"
    return out.lstrip(".") or "record"


def _reason_of(error_type: str) -> str:
    if error_type in REJECT_REASONS:
        return error_type  # schema.py raises custom errors typed by reason code
    if error_type == "missing":
        return "missing_field"
    if error_type.endswith("_type"):
        return "wrong_type"
    return "invalid_value"


def _describe(error: dict[str, Any]) -> str:
    where = _format_loc(error["loc"])
    if error["type"] == "missing":
        return f"{where}: required field is missing"
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown field; remove it or fix its spelling"
    return f"{where}: {error['msg']}"  # pydantic and schema.py messages never quote the input


def _validate_object(obj: dict[str, Any]) -> Record:
    """``obj`` as a Record, or :class:`_Problem` with the reason code and a detail."""
    try:
        return Record.model_validate(obj)
    except ValidationError as err:
        errors = err.errors(include_input=False, include_url=False)
        reasons = [_reason_of(e["type"]) for e in errors]
        reason = min(reasons, key=lambda r: (_REASON_PRIORITY + (r,)).index(r))
        details = [_describe(e) for e in errors[:3]]
        if len(errors) > 3:
            details.append(f"(+{len(errors) - 3} more)")
        raise _Problem(reason, "; ".join(details)) from None


# ----------------------------------------------------------------------------- excerpts

_CAPITALISED_RUN_RE = re.compile(
    r"(?<![\w<])[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+(?:[ \t]+[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’-]+)+(?!\w)"
)
_JSON_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|[nrt\"\\/bf])")
_SIMPLE_ESCAPES = {"n": " ", "r": " ", "t": " ", '"': '"', "\\": "\\", "/": "/", "b": " ", "f": " "}


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    return chr(int(code[1:], 16)) if code[0] == "u" else _SIMPLE_ESCAPES[code]


def make_excerpt(raw: bytes, scrubber: Scrubber) -> str:
    """At most 120 characters of ``raw`` for a human, PII-scrubbed, on one line.

    Excerpts only help find a line, so they are scrubbed harder than records: on top of the
    scrubber, every run of two or more Capitalised words counts as a person's name.
    """
    text = raw[: _EXCERPT_WINDOW * 4].decode("utf-8", errors="replace")[:_EXCERPT_WINDOW]
    # JSON escapes would hide names and line structure from the scrubber.
    text = _JSON_ESCAPE_RE.sub(_unescape, text)
    # \uD83D\uDE00 escapes arrive as two surrogates: join pairs, replace strays.
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    text = " ".join(text.split())
    mapping = PlaceholderMap()
    text = scrubber.scrub_text(text, mapping)
    text = _CAPITALISED_RUN_RE.sub(lambda m: mapping.placeholder("PERSON", m.group().casefold()), text)
    return text[:EXCERPT_CHARS]


# ------------------------------------------------------------------------------ readers

class _Hasher:
    """SHA256 of bytes fed in pieces, minus the final line terminator (held back)."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()
        self._held = b""

    def update(self, data: bytes) -> None:
        data = self._held + data
        self._sha.update(data[:-2])
        self._held = data[-2:]

    def hexdigest(self) -> str:
        self._sha.update(_strip_eol(self._held))
        self._held = b""
        return self._sha.hexdigest()


def _strip_eol(data: bytes) -> bytes:
    if data.endswith(b"\r\n"):
        return data[:-2]
    return data[:-1] if data.endswith(b"\n") else data


class _Line(NamedTuple):
    number: int  # 1-based
    offset: int  # byte offset of the line's first byte
    body: bytes  # without terminator; only a prefix when too_long
    eol: bytes
    too_long: bool


class _LineReader:
    """Physical lines of a binary file. Every byte read is also fed to ``sink`` (when set),
    so a line longer than the limit is hashed while it streams past, never held whole."""

    def __init__(self, fh: IO[bytes], max_line_bytes: int) -> None:
        self._fh = fh
        self._max = max_line_bytes
        self.sink: _Hasher | None = None
        self.number = 0
        self.offset = 0

    def __iter__(self) -> Iterator[_Line]:
        limit = self._max + 2  # room for "\r\n" after a line of exactly the limit
        while chunk := self._fh.readline(limit):
            self.number += 1
            start = self.offset
            self._feed(chunk)
            if chunk.endswith(b"\n") or len(chunk) < limit:
                body = _strip_eol(chunk)
                yield _Line(self.number, start, body, chunk[len(body):], len(body) > self._max)
                continue
            last = chunk
            while not last.endswith(b"\n"):
                more = self._fh.readline(1 << 20)
                if not more:
                    break
                self._feed(more)
                last = last[-2:] + more
            eol = last[len(_strip_eol(last)):]
            yield _Line(self.number, start, chunk[: _EXCERPT_WINDOW * 4], eol, True)

    def _feed(self, data: bytes) -> None:
        self.offset += len(data)
        if self.sink is not None:
            self.sink.update(data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise _Problem("bad_json", f"{what} is not valid JSON: {err.msg} at column {err.colno}") from None
    except (ValueError, RecursionError) as err:
        raise _Problem("bad_json", f"{what} is not valid JSON: {type(err).__name__}") from None


def _jsonl_object(line: _Line) -> dict[str, Any]:
    body = line.body[3:] if line.number == 1 and line.body.startswith(b"\xef\xbb\xbf") else line.body
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _Problem(
            "bad_encoding",
            f"line is not valid UTF-8 (byte {err.start} of the line); re-export the file as UTF-8",
        ) from None
    obj = _parse_json(text, "line")
    if not isinstance(obj, dict):
        raise _Problem("not_an_object", f"line holds a JSON {type(obj).__name__}, expected an object")
    return obj


class _Item(NamedTuple):
    """What a reader hands to :class:`Ingestor`: an object to validate, or a problem."""

    line: int
    offset: int | None
    sha256: str
    raw: bytes  # for the excerpt only (a prefix)
    obj: dict[str, Any] | None
    problem: _Problem | None


def _too_long(max_line_bytes: int) -> _Problem:
    return _Problem("line_too_long", f"line is longer than max_line_bytes={max_line_bytes}; "
                    "not parsed (raise max_line_bytes if such records are expected)")


def _refuse_json_document(path: Path, fh: IO[bytes]) -> None:
    """A .json file must be JSON Lines too; a JSON array or a pretty-printed document
    would otherwise come out as one bad_json reject per line."""
    first = b""
    while not first and (line := fh.readline(1 << 16)):
        first = line.lstrip(b"\xef\xbb\xbf").strip()
    if first.startswith(b"[") or first == b"{":
        raise IngestError(
            f"{path}: holds one JSON document (an array or a pretty-printed object), not one "
            f"object per line; convert it (e.g. jq -c '.[]' {path.name} > {path.stem}.jsonl) "
            "or move it out of the sources folder"
        )


def _jsonl_items(path: Path, max_line_bytes: int) -> Iterator[_Item | None]:
    """One item per non-blank line; None for a blank line (not a record)."""
    with path.open("rb") as fh:
        if path.suffix.lower() == ".json":
            _refuse_json_document(path, fh)
            fh.seek(0)
        reader = _LineReader(fh, max_line_bytes)
        reader.sink = hasher = _Hasher()
        for line in reader:
            sha = hasher.hexdigest()
            reader.sink = hasher = _Hasher()
            if not line.too_long and not line.body.strip():
                yield None
                continue
            obj, problem = None, None
            try:
                if line.too_long:
                    raise _too_long(max_line_bytes)
                obj = _jsonl_object(line)
            except _Problem as err:
                problem = err
            yield _Item(line.number, line.offset, sha, line.body, obj, problem)


class _CsvFeed:
    """Feeds decoded physical lines to ``csv.reader`` while tracking, per CSV record, its
    first line, byte offset, raw-byte SHA256, a prefix for the excerpt, and whether a line
    was too long or not UTF-8."""

    def __init__(self, fh: IO[bytes], max_line_bytes: int) -> None:
        self._reader = _LineReader(fh, max_line_bytes)
        self._lines = iter(self._reader)
        self.start_record()

    def start_record(self) -> None:
        self.line = self._reader.number + 1
        self.offset = self._reader.offset
        self._reader.sink = self.hasher = _Hasher()
        self.prefix = b""
        self.too_long = False
        self.bad_encoding = False

    def __iter__(self) -> _CsvFeed:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        if len(self.prefix) < _EXCERPT_WINDOW * 4:
            self.prefix += line.body[: _EXCERPT_WINDOW * 4] + line.eol
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
        raise _Problem("invalid_value", f"row has {len(row)} cells but the header has {len(header)}")
    obj: dict[str, Any] = {}
    for name, cell in zip(header, row):
        if cell == "":
            continue  # an empty cell is an absent field
        obj[name] = _parse_json(cell, f"column {name!r}") if name in _JSON_COLUMNS else cell
    return obj


def _csv_items(path: Path, max_line_bytes: int) -> Iterator[_Item | None]:
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
                problem = _Problem("bad_json", f"CSV row cannot be parsed: {err}")
            sha = feed.hasher.hexdigest()
            if row == [] and not feed.too_long:
                yield None
                continue
            obj = None
            try:
                if feed.too_long:
                    raise _too_long(max_line_bytes)
                if feed.bad_encoding:
                    raise _Problem("bad_encoding", "row is not valid UTF-8; re-export the file as UTF-8")
                if problem is not None:
                    raise problem
                obj = _csv_object(header, row or [])
            except _Problem as err:
                problem = err
            yield _Item(feed.line, feed.offset, sha, feed.prefix, obj, problem)


def _drop_nulls(value: Any) -> Any:
    """Arrow has no 'absent': a struct field missing from a row reads as None."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _parquet_items(path: Path, max_line_bytes: int) -> Iterator[_Item | None]:
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
                yield _Item(number, None, hashlib.sha256(note).hexdigest(), note, None,
                            _too_long(max_line_bytes))
                continue
            row = next(rows)
            raw = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode()
            sha = hashlib.sha256(raw).hexdigest()
            obj, problem = None, None
            try:
                if len(raw) > max_line_bytes:
                    raise _too_long(max_line_bytes)
                obj = _drop_nulls(row)
                for column in _JSON_COLUMNS:
                    if isinstance(obj.get(column), str):
                        obj[column] = _parse_json(obj[column], f"column {column!r}")
            except _Problem as err:
                problem, obj = err, None
            yield _Item(number, None, sha, raw[: _EXCERPT_WINDOW * 4], obj, problem)


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


_READERS = {".jsonl": _jsonl_items, ".json": _jsonl_items, ".csv": _csv_items,
            ".parquet": _parquet_items}


class Ingestor:
    """Reads sources into records and rejects, counting both in :attr:`stats`.

    Record ids must be unique across everything one Ingestor reads: a later record that
    reuses an id is rejected as ``duplicate_id`` (the first one is kept).

    Args:
        max_line_bytes: a JSONL/CSV line (Parquet row as JSON) longer than this is rejected
            as ``line_too_long`` without being parsed.
        excerpt_scrubber: scrubs reject excerpts; defaults to every PII kind. A disabled
            scrubber is refused: excerpts are never raw text.
    """

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 excerpt_scrubber: Scrubber | None = None) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be positive, got {max_line_bytes}")
        if excerpt_scrubber is not None and not excerpt_scrubber.enabled:
            raise ValueError("reject excerpts must be PII-scrubbed; pass an enabled Scrubber or None")
        self.max_line_bytes = max_line_bytes
        self.stats = IngestStats()
        self._scrubber = excerpt_scrubber or Scrubber(PIIConfig())
        self._first_seen: dict[bytes, tuple[str, int]] = {}

    def read(self, paths: PathsLike) -> Iterator[IngestedRecord | Reject]:
        """Records and rejects of every file under ``paths``, in sorted file order."""
        for path, display in discover_files(paths):
            yield from self.read_file(path, display)

    def read_file(self, path: Path, display: str | None = None) -> Iterator[IngestedRecord | Reject]:
        """Records and rejects of one file; ``display`` is the name used in rejects."""
        display = display or Path(path).as_posix()
        reader = _READERS.get(Path(path).suffix.lower())
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

    def _resolve(self, item: _Item, display: str) -> IngestedRecord | Reject:
        try:
            if item.problem is not None:
                raise item.problem
            assert item.obj is not None
            record = _validate_object(item.obj)
            self._check_unique(record.id, display, item.line)
        except _Problem as problem:
            return Reject(file=display, line=item.line, offset=item.offset, sha256=item.sha256,
                          reason=problem.reason,
                          # a detail may quote what it is about (a duplicate id, a bad value):
                          # scrubbed like the excerpt
                          detail=self._scrubber.scrub_text(problem.detail),
                          excerpt=make_excerpt(item.raw, self._scrubber))
        return IngestedRecord(record, Origin(file=display, line=item.line, offset=item.offset))

    def _check_unique(self, record_id: str, display: str, line: int) -> None:
        # A 16-byte digest instead of the id string keeps 1M ids in ~100 MB.
        key = hashlib.blake2b(record_id.encode(), digest_size=16).digest()
        first = self._first_seen.setdefault(key, (display, line))
        if first != (display, line):
            raise _Problem("duplicate_id", f"id already used by the record at {first[0]}:{first[1]}; "
                           "ids must be unique across all sources")


def iter_records(paths: PathsLike, *,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 stats: IngestStats | None = None,
                 excerpt_scrubber: Scrubber | None = None) -> Iterator[IngestedRecord | Reject]:
    """Shortcut for ``Ingestor(...).read(paths)``; counts go into ``stats`` when given."""
    ingestor = Ingestor(max_line_bytes=max_line_bytes, excerpt_scrubber=excerpt_scrubber)
    if stats is not None:
        ingestor.stats = stats
    yield from ingestor.read(paths)
