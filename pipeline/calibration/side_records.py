"""The binary side file written beside the split's temporary JSONL of kept records.

Every kept line has one side record, read back in step with the JSONL by later passes: its
dedup keys (computed once, by the workers) and the ids the pools are decided on. It is a
temporary file, never an output.
"""

from __future__ import annotations

import functools
import struct
from pathlib import Path
from typing import Iterator

from pipeline.calibration.dedup import DedupKeys

# Side record per kept line: flag (1 = has LSH bands), 16-byte exact digest, the bands'
# 8-byte bucket keys, then the id and conversation id, each as 4-byte length + UTF-8.
_SIDE_HEAD = struct.Struct(">B16s")
_LEN = struct.Struct(">I")


def pack_side(rec_id: str, conversation_id: str, keys: DedupKeys) -> bytes:
    """The side record of one kept line."""
    parts = [_SIDE_HEAD.pack(keys.bands is not None, keys.digest)]
    if keys.bands is not None:
        parts.append(b"".join((band & (2**64 - 1)).to_bytes(8, "big") for band in keys.bands))
    for text in (rec_id, conversation_id):
        raw = text.encode("utf-8")
        parts += [_LEN.pack(len(raw)), raw]
    return b"".join(parts)


@functools.lru_cache(maxsize=8)
def _bands_format(n_bands: int) -> tuple[struct.Struct, tuple[int, ...]]:
    return struct.Struct(f">{n_bands}Q"), tuple(i << 64 for i in range(n_bands))


def _read_side(fh, n_bands: int) -> tuple[str, str, DedupKeys]:
    has_bands, digest = _SIDE_HEAD.unpack(fh.read(_SIDE_HEAD.size))
    bands = None
    if has_bands:
        fmt, tags = _bands_format(n_bands)
        bands = tuple(value | tag for value, tag in zip(fmt.unpack(fh.read(fmt.size)), tags))
    texts = []
    for _ in range(2):
        (size,) = _LEN.unpack(fh.read(_LEN.size))
        texts.append(fh.read(size).decode("utf-8"))
    return texts[0], texts[1], DedupKeys(digest, bands)


def kept_records(kept_path: Path, keys_path: Path, n_bands: int) -> Iterator[tuple[str, str, str, DedupKeys]]:
    """(line, id, conversation id, dedup keys) of every kept record, in order."""
    with kept_path.open(encoding="utf-8") as lines, keys_path.open("rb") as side:
        for line in lines:
            yield (line, *_read_side(side, n_bands))
