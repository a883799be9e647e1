"""Small I/O helpers shared by the stages: atomic outputs, hashing, canonical JSON lines."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

CHUNK = 1 << 20


def file_sha256(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def jsonl_line(obj: Any) -> str:
    """One canonical JSON line (sorted keys, UTF-8, no spaces): same object → same bytes."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                    encoding="utf-8")


@contextlib.contextmanager
def atomic_dirs(parent: Path, names: list[str]) -> Iterator[dict[str, Path]]:
    """Stage output directories in a temporary folder; swap them in only if the block succeeds.

    A crash or an exception leaves the previous outputs (or none) — never a half-written one
    that looks complete.
    """
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".staging-", dir=parent))
    staged = {n: tmp / n for n in names}
    for d in staged.values():
        d.mkdir(parents=True)
    try:
        yield staged
        for name, path in staged.items():
            final = parent / name
            old = None
            if final.exists():
                old = parent / f".old-{name}-{tmp.name}"
                final.rename(old)
            path.rename(final)
            if old is not None:
                shutil.rmtree(old)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
