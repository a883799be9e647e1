"""Small I/O helpers shared by the stages: atomic outputs, hashing, canonical JSON lines."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Iterator

CHUNK = 1 << 20
# A staging folder's name says who owns it: .staging-<host>-<pid>-<random> (and the previous
# output it replaces, while it is swapped out: .old-<name>-.staging-<host>-<pid>-<random>).
# .dvcignore hides both from DVC, so a run killed mid-write changes no stage's dependencies; the
# next atomic_dirs on the same folder (and `qpipe repro` at its start) removes those whose owner
# on this host is gone.
_OWNED = re.compile(r"^(?:\.old-.+-)?\.staging-(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-[^/]+$")
_LEGACY = re.compile(r"^(?:\.old-.+-)?\.staging-[a-z0-9_]{8}$")  # before owners were named


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:40] or "host"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_staging(parent: Path) -> list[Path]:
    """Staging folders in `parent` whose owner is gone: a process of this host that no longer
    runs (a folder of another host's process, on a shared file system, is never touched), or
    one named before owners were (no process writes those any more)."""
    if not parent.is_dir():
        return []
    out = []
    for entry in parent.iterdir():
        m = _OWNED.match(entry.name)
        if m and m["host"] == _host() and not _alive(int(m["pid"])) or _LEGACY.match(entry.name):
            out.append(entry)
    return sorted(out)


def remove_stale_staging(parent: Path) -> list[Path]:
    """Remove what stale_staging finds; returns it."""
    gone = stale_staging(parent)
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone


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
    that looks complete. A kill (SIGKILL: no `finally` runs) leaves the staging folder, named
    for its owner and ignored by DVC: the next call on `parent` removes it.
    """
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".staging-{_host()}-{os.getpid()}-", dir=parent))
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
