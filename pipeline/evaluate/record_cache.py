"""Completions already served are not served again: the per-item record cache of `evaluate@`.

Each completion an evaluation gets from its engine is appended, as it arrives, to a file named by
everything that decides it: the variant, the verified artifact's content hash, the engine's name,
release and settings, the endpoint, max tokens, the concurrency and the code that talks to the
engine (a hash of the engine's module and all it imports). Within that file an answer is found by
the hash of its prompt's token ids, so the tokenizer and chat template are in the key; scoring is
not (records are scored anew from the answers). So an evaluation that runs again with the same
artifact, engine and code —

- after a kill or a failure (the items answered before it are kept, a torn last line is dropped);
- after a change that re-runs the stage without changing what is generated (the gate profile read
  by a sequential evaluation's stopping rule, `evaluate.sequential`, `compare.alpha`);
- from a sequential design to the fixed one (only the items not yet served are served)

— serves only what it has not served before, and its records are those the first serving gave.
Anything that could change an answer is in the file's identity: a requantized artifact, another
engine release or other settings start a new file. The variant's name is part of it so a noise-floor
re-run (the same artifact evaluated again to measure run-to-run variation) is always served.

The cache lives at `<project>/.cache/records/` (`QPIPE_RECORD_CACHE` names another folder, or
`off` turns it off), outside every stage's outputs, like DVC's own run-cache: what it holds is a
function of the stage's declared inputs. Its files hold model outputs on the (scrubbed) evaluation
set, nothing more; `rm -r .cache/records` empties it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pipeline.engines.wire import Completion
from pipeline.importgraph import closure

log = logging.getLogger(__name__)
ENV = "QPIPE_RECORD_CACHE"


def folder(root: Path) -> Path | None:
    """Where a project's record cache lives (None: turned off by QPIPE_RECORD_CACHE=off)."""
    where = os.environ.get(ENV, "").strip()
    if where.lower() in ("off", "0", "false", "no"):
        return None
    return Path(where) if where else Path(root) / ".cache" / "records"


PACKAGE = Path(__file__).resolve().parents[1]


def code_version(engine_module: str) -> str:
    """A hash of the code that turns a prompt into an answer: the engine's module, what it imports,
    and this cache's own format."""
    h = hashlib.sha256()
    for path in closure([engine_module, __name__], PACKAGE):
        h.update(path.relative_to(PACKAGE.parent).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def prompt_key(prompt_ids: list[int]) -> str:
    return hashlib.sha256(",".join(map(str, prompt_ids)).encode()).hexdigest()[:32]


class RecordCache:
    """One identity's served completions: read once at open, appended to as answers arrive.

    Appends are line-buffered and flushed per completion, under an exclusive lock on the file, so a
    kill loses at most the answer being written (a torn last line, dropped at the next open)."""

    def __init__(self, where: Path, identity: dict[str, Any]):
        self.identity = identity
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()
        self.path = Path(where) / f"{digest[:32]}.jsonl"
        self.entries: dict[str, Completion] = {}
        self.dropped = 0  # lines that could not be read back (a torn last line, a foreign line)
        self._lock = threading.Lock()
        self._fh = None
        self.trusted = True
        self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        lines = [x for x in self.path.read_bytes().split(b"\n") if x.strip()]
        try:
            header = json.loads(lines[0]) if lines else {}
        except ValueError:
            header = {}
        if lines and header.get("identity") != json.loads(json.dumps(self.identity, default=str)):
            # not this identity's file (edited, or damaged at its head): none of it is used, and
            # nothing is added to it
            log.warning("%s: not a record cache of this evaluation's identity — ignored; "
                        "remove it to cache again", self.path)
            self.trusted = False
            return
        for line in lines[1:]:
            try:
                entry = json.loads(line)
                self.entries[entry["prompt"]] = Completion(**entry["completion"])
            except (ValueError, TypeError, KeyError):
                self.dropped += 1

    def reload(self) -> None:
        """Read again what other writers (another stage's evaluation of this identity) appended."""
        with self._lock:
            self.dropped = 0
            self._load()

    def get(self, prompt_ids: list[int]) -> Completion | None:
        return self.entries.get(prompt_key(prompt_ids))

    def add(self, prompt_ids: list[int], completion: Completion) -> None:
        if not self.trusted:
            return
        key = prompt_key(prompt_ids)
        line = json.dumps({"prompt": key, "completion": asdict(completion)}, default=str) + "\n"
        with self._lock:
            if self._fh is None:
                self._fh = self._open()
            fcntl.flock(self._fh, fcntl.LOCK_EX)
            try:
                self._fh.write(line)
                self._fh.flush()
            finally:
                fcntl.flock(self._fh, fcntl.LOCK_UN)
            self.entries[key] = completion

    def _open(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            fh.seek(0, os.SEEK_END)
            end = fh.tell()
            if end == 0:
                fh.write(json.dumps({"identity": self.identity}, default=str) + "\n")
            else:
                fh.seek(end - 1)
                if fh.read(1) != "\n":  # a torn last line from a killed writer: cut it off
                    with open(self.path, "rb") as raw:
                        data = raw.read()
                    os.truncate(self.path, data.rfind(b"\n") + 1)
            fh.flush()
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
        return fh

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()
                self._fh = None


class Cached:
    """An engine seen through a record cache: `complete` answers from the cache where it can and
    serves (and records) the rest. `take()` says what was answered how since the last `take()`."""

    def __init__(self, engine, cache: RecordCache):
        self.engine, self.cache = engine, cache
        self.accepts_parallel = engine.accepts_parallel
        self._hits: set[str] = set()
        self._served = 0
        self._lock = threading.Lock()

    def complete(self, prompt_ids: list[int], max_tokens: int, *, ignore_eos: bool = False) -> Completion:
        usable = not ignore_eos and max_tokens == self.cache.identity.get("max_tokens")
        hit = self.cache.get(prompt_ids) if usable else None
        if hit is not None:
            with self._lock:
                self._hits.add(prompt_key(prompt_ids))
            return hit
        got = self.engine.complete(prompt_ids, max_tokens, ignore_eos=ignore_eos)
        if usable:
            self.cache.add(prompt_ids, got)
        with self._lock:
            self._served += 1
        return got

    def take(self) -> tuple[set[str], dict[str, Any]]:
        """The prompt keys answered from the cache and the counts, since the last call."""
        with self._lock:
            hits, served, self._hits, self._served = self._hits, self._served, set(), 0
        return hits, {"from_cache": len(hits), "served": served}

    def summary(self, counts: dict[str, Any]) -> dict[str, Any]:
        return {"file": self.cache.path.name, **counts, "unreadable_lines": self.cache.dropped}
