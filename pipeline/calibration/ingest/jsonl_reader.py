"""The JSON Lines reader (``.jsonl``, and ``.json`` holding one object per line): one item per
non-blank line, read line by line in binary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pipeline.calibration.ingest.items import Item, parse_json
from pipeline.calibration.ingest.lines import Hasher, Line, LineReader
from pipeline.calibration.ingest.rejects import IngestError, Problem, too_long


def _jsonl_object(line: Line) -> dict[str, Any]:
    body = line.body[3:] if line.number == 1 and line.body.startswith(b"\xef\xbb\xbf") else line.body
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Problem(
            "bad_encoding",
            f"line is not valid UTF-8 (byte {err.start} of the line); re-export the file as UTF-8",
        ) from None
    obj = parse_json(text, "line")
    if not isinstance(obj, dict):
        raise Problem("not_an_object", f"line holds a JSON {type(obj).__name__}, expected an object")
    return obj


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


def jsonl_items(path: Path, max_line_bytes: int) -> Iterator[Item | None]:
    """One item per non-blank line; None for a blank line (not a record)."""
    with path.open("rb") as fh:
        if path.suffix.lower() == ".json":
            _refuse_json_document(path, fh)
            fh.seek(0)
        reader = LineReader(fh, max_line_bytes)
        reader.sink = hasher = Hasher()
        for line in reader:
            sha = hasher.hexdigest()
            reader.sink = hasher = Hasher()
            if not line.too_long and not line.body.strip():
                yield None
                continue
            obj, problem = None, None
            try:
                if line.too_long:
                    raise too_long(max_line_bytes)
                obj = _jsonl_object(line)
            except Problem as err:
                problem = err
            yield Item(line.number, line.offset, sha, line.body, obj, problem)
