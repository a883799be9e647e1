"""A reference served only as far as its variants go (`evaluate.sequential`).

An engine's unquantized reference (`compare.engine_baselines`: the model's own weights on the
variants' engine) is there to be paired with its variants. Under a sequential design each variant
stops at its own look, so the reference is needed on exactly as many items as its longest-running
variant uses — no more. DVC runs the reference's stage before its variants (they stop against its
records), so it cannot know how far they will go: it serves its *opening look* — the first `look`
items of the seeded order every evaluation shares — and each variant's stage serves the reference's
items it needs beyond that, look by look, on the reference's own engine:

- the way the reference was served: the engine, settings and endpoint its `run.json` records, on its
  artifact verified against the content hash its metrics record (other bytes fail the stage);
- through the reference's own record cache (pipeline.evaluate.record_cache: the same identity as
  the reference's stage), under an exclusive serving lock, so an item one variant served is read,
  not served again, by every other variant of that reference — the reference serves each item once,
  and in all as many as its longest-running variant used;
- scored as the reference's stage scores, and written with the variant's results
  (REFERENCE_SAMPLES): compare pairs the variant with exactly the reference records its stopping
  rule read, and the reference's own comparison reads the items it served itself.

The engine is started at the first item the reference's results and cache do not hold, and stopped
with the variant's stage; it is not timed (its speed is the reference stage's and bench's). With the
record cache off (`QPIPE_RECORD_CACHE=off`) every variant serves the reference's items it needs
itself: the pairing stays exact, only the sharing is lost.
"""

from __future__ import annotations

import fcntl
import logging
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from pipeline.artifacts.manifest import require_verified
from pipeline.contracts import EvalRun, Metrics
from pipeline.contracts.files import METRICS, REFERENCE_ENGINE_LOG, RUN, SAMPLES
from pipeline.contracts.records import read_lines, SampleRecord
from pipeline.engines.base import get_engine
from pipeline.errors import QpipeError
from pipeline.evaluate.harness import run_prompts
from pipeline.evaluate.record_cache import Cached, RecordCache, folder as cache_folder
from pipeline.layout import Layout
from pipeline.stage_params import StageView

log = logging.getLogger(__name__)


class ReferenceServingError(QpipeError, ValueError):
    pass


def opening_only(results: Path, reference: str) -> bool:
    """Whether `reference`'s evaluation served its opening look only (its variants serve the rest)."""
    metrics = results / reference / METRICS
    if not metrics.is_file():
        return False
    seq = Metrics.load(metrics).sequential
    return bool(seq and seq.role == "reference")


def serving_record(eng, engine: str, url: str | None) -> dict[str, Any]:
    """What a reference's `run.json` records so its variants can serve it the same way."""
    return {"engine": engine, "settings": dict(eng.settings), "url": url, "module": type(eng).__module__}


class ReferenceServing:
    """The reference's records for the items a variant is served, from the reference's results, its
    record cache, or its engine (started here at first need). `score(positions, completions)` makes
    records exactly as the reference's stage does; `identity(eng, name, served_with)` is the record
    cache identity the reference's stage used."""

    def __init__(self, layout, reference: str, prompts: list[list[int]], items, ev, *, log_dir: Path,
                 tokenizer_dir: Path, score, identity) -> None:
        self.reference, self.prompts, self.items, self.ev = reference, prompts, items, ev
        self.layout, self.log_dir, self.tokenizer_dir = layout, log_dir, tokenizer_dir
        self._score, self._identity = score, identity
        folder = layout.results / reference
        self.metrics = Metrics.load(folder / METRICS)
        self.run = EvalRun.load(folder / RUN).dump()
        if not self.run.get("serving"):
            raise ReferenceServingError(
                f"{reference}'s run.json does not say how it was served, so its missing items cannot be served "
                f"the same way — fix: `dvc repro -f evaluate@{reference}`")
        by_id = {r.id: r.model_dump(exclude_unset=True) for r in read_lines(
            SampleRecord, folder / SAMPLES, writer=f"`dvc repro evaluate@{reference}`")}
        self.records: dict[int, dict] = {i: by_id[it.id] for i, it in enumerate(items) if it.id in by_id}
        self._own = set(self.records)
        self.served = self.from_cache = 0
        self._stack = ExitStack()
        self._server = None

    def __enter__(self) -> ReferenceServing:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if isinstance(self._server, Cached):
            self._server.cache.close()
        self._stack.close()

    def _open(self):
        """The reference's engine, verified and started, behind its record cache."""
        art = self.layout.artifact(self.reference)
        manifest = require_verified(art)
        if manifest.content_sha256 != self.metrics.artifact_sha256:
            raise ReferenceServingError(
                f"{self.reference}'s artifact is now {manifest.content_sha256[:12]}…, not the "
                f"{str(self.metrics.artifact_sha256)[:12]}… its evaluation served — fix: "
                f"`dvc repro evaluate@{self.reference}`")
        how = self.run["serving"]
        eng = get_engine(how["engine"])(art, how["settings"], log_path=self.log_dir / REFERENCE_ENGINE_LOG,
                                         tokenizer_dir=self.tokenizer_dir, url=how.get("url"))
        eng.verified_manifest = manifest
        if type(eng).__module__ != how.get("module", type(eng).__module__):
            raise ReferenceServingError(f"{self.reference} was served by {how['module']}, which is now "
                                        f"{type(eng).__module__} — fix: `dvc repro evaluate@{self.reference}`")
        log.info("serving %s's items beyond its opening look on %s (log: %s)", self.reference, eng.name,
                 eng.log_path)
        self._stack.enter_context(eng)
        identity = self._identity(eng, self.reference, (how["settings"], how["module"]))
        return Cached(eng, RecordCache(cache_folder(self.layout.root), identity)) if identity else eng

    @contextmanager
    def _serving_lock(self):
        """One serving of the reference at a time across its variants' stages (`dvc repro --jobs`):
        the second reads what the first served."""
        server = self._server
        if not isinstance(server, Cached):
            yield
            return
        lock = server.cache.path.with_suffix(".serving.lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                server.cache.reload()
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def records_for(self, positions: list[int]) -> list[dict]:
        """The reference's records for these evaluation-set positions (in that order)."""
        missing = [i for i in positions if i not in self.records]
        if missing:
            if self._server is None:
                self._server = self._open()
            with self._serving_lock():
                got, _ = run_prompts(self._server, [self.prompts[i] for i in missing], max_tokens=self.ev.max_tokens,
                                     concurrency=self.ev.concurrency * self.ev.replicas)
                if isinstance(self._server, Cached):
                    counts = self._server.take()[1]
                    self.served += counts["served"]
                    self.from_cache += counts["from_cache"]
                else:
                    self.served += len(missing)
            for i, rec in zip(missing, self._score(missing, dict(zip(missing, got, strict=True))), strict=True):
                self.records[i] = rec
        return [self.records[i] for i in positions]

    def summary(self, positions: list[int]) -> dict[str, Any]:
        """run.json's `reference_served`: whose records, verified how, and where those of
        `positions` (the items the variant used) came from."""
        return {"reference": self.reference, "artifact_sha256": self.metrics.artifact_sha256,
                "items": len(positions), "from_its_results": len(self._own.intersection(positions)),
                "from_cache": self.from_cache, "served": self.served, "engine": self.run["serving"]["engine"]}


def for_variant(params: StageView, layout: Layout, name: str, prompts: list[list[int]], items, *, log_dir: Path, score,
                identity) -> ReferenceServing | None:
    """The reference serving `name`'s evaluation needs: where its reference served only its opening
    look (whatever this evaluation's own design), else None. `params`: the evaluate stage's own."""
    ref = params.variants[name].reference
    if ref in (None, "none") or not opening_only(layout.results, ref):
        return None
    return ReferenceServing(layout, ref, prompts, items, params.evaluate, log_dir=log_dir,
                            tokenizer_dir=layout.model, score=score, identity=identity)
