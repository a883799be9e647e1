"""Physical lines of a binary file, for the JSONL and CSV readers: each with its number, byte
offset and terminator, and a SHA256 of the raw bytes fed while they stream past, so a line over
the limit is hashed without ever being held whole."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import IO, NamedTuple

from pipeline.calibration.ingest.excerpts import EXCERPT_WINDOW


class Hasher:
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


class Line(NamedTuple):
    number: int  # 1-based
    offset: int  # byte offset of the line's first byte
    body: bytes  # without terminator; only a prefix when too_long
    eol: bytes
    too_long: bool


class LineReader:
    """Physical lines of a binary file. Every byte read is also fed to ``sink`` (when set),
    so a line longer than the limit is hashed while it streams past, never held whole."""

    def __init__(self, fh: IO[bytes], max_line_bytes: int) -> None:
        self._fh = fh
        self._max = max_line_bytes
        self.sink: Hasher | None = None
        self.number = 0
        self.offset = 0

    def __iter__(self) -> Iterator[Line]:
        limit = self._max + 2  # room for "\r\n" after a line of exactly the limit
        while chunk := self._fh.readline(limit):
            self.number += 1
            start = self.offset
            self._feed(chunk)
            if chunk.endswith(b"\n") or len(chunk) < limit:
                body = _strip_eol(chunk)
                yield Line(self.number, start, body, chunk[len(body):], len(body) > self._max)
                continue
            last = chunk
            while not last.endswith(b"\n"):
                more = self._fh.readline(1 << 20)
                if not more:
                    break
                self._feed(more)
                last = last[-2:] + more
            eol = last[len(_strip_eol(last)):]
            yield Line(self.number, start, chunk[: EXCERPT_WINDOW * 4], eol, True)

    def _feed(self, data: bytes) -> None:
        self.offset += len(data)
        if self.sink is not None:
            self.sink.update(data)
