"""The `split` stage: validate → scrub PII → deduplicate → stable split into a calibration pool
and the business evaluation set.

A conversation's pool is decided by the conversation itself — a salted hash of its id, or its
first timestamp against a window — and the evaluation pool is deduplicated on its own, before
the calibration pool is deduplicated against it. So adding or editing a calibration-pool
conversation leaves `data/evalset/` byte-identical, and DVC re-evaluates nothing it does not
touch. Outputs (all under ``split.out_dir``):

- ``evalset/evalset.jsonl`` + ``evalset/card.json`` — prompts, gold references, rubrics, slices
- ``pools/calibration.jsonl`` — scrubbed, deduplicated calibration-pool conversations
- ``split/rejects.jsonl``, ``split/duplicates.jsonl``, ``split/report.json`` — every record
  accounted for: records in = kept + rejected; kept = eval + calibration + duplicates + unusable
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
import tempfile
from collections import Counter
from pathlib import Path
from typing import Iterator

from pipeline.calibration.dedup import Deduplicator
from pipeline.calibration.dedup_texts import dedup_text, prompt_text
from pipeline.calibration.eval_items import EvalEntry, EvalJob, length_bucket
from pipeline.calibration.ingest import Ingestor, Reject, discover_files
from pipeline.calibration.parallel import worker_count
from pipeline.calibration.pii import PIIConfig, Scrubber
from pipeline.calibration.pool_assignment import PoolAssigner
from pipeline.calibration.pseudonyms import id_key, pseudonym
from pipeline.calibration.scrub_jobs import SPECIALS_KEY, ScrubJob, complete_all, scrub_all
from pipeline.calibration.side_records import kept_records
from pipeline.stage_params import Declared, StageView
from pipeline.contracts import ITEM_SCHEMA, EvalsetCard
from pipeline.contracts.records import line as record_line
from pipeline.contracts.split_outputs import DuplicateLine, SplitReport
from pipeline.io import atomic_dirs, file_sha256
from pipeline.layout import Layout
from pipeline.models import special_strings
from pipeline.contracts.files import CALIBRATION_POOL, CARD, DUPLICATES, EVALSET_ITEMS, REJECTS

# Names other modules and the tests take from here.
__all__ = ["dedup_text", "id_key", "length_bucket", "prompt_text", "pseudonym", "run"]

log = logging.getLogger(__name__)

PARAMS = Declared("split", "data", "split", "model.path", "model.trust_remote_code",
                  "calibration.length_buckets")


def _scrubbed_records(params: StageView, root: Path, tmp: Path, report: dict, tokenizer,
                      evalpool: _EvalPool | None) -> tuple[Path, Path, dict]:
    """Pass 1: ingest + scrub into a temporary JSONL; rejects written as they come.

    Alongside every kept line, its dedup keys (computed by the workers from the scrubbed
    prompt) go to a binary side file, read back in step with the JSONL by later passes.
    With ``evalpool`` (split by conversation id: a record's pool is known as it streams
    past), evaluation-pool records go to it at once, their items built by the workers, and
    only calibration-pool records are kept for pass 3."""
    pii_cfg = pii_config(params, root)
    scrubber = Scrubber(pii_cfg)
    key, report["ids"] = id_key(params)
    # Reject excerpts are always scrubbed, with the same dictionary when scrubbing is on, and
    # show a rejected line's ids as the pseudonyms kept records carry.
    ingestor = Ingestor(max_line_bytes=params.data.max_line_bytes,
                        excerpt_scrubber=scrubber if scrubber.enabled else None,
                        pseudonym=None if key is None else functools.partial(pseudonym, key))
    pii_counts: Counter[str] = Counter()
    # First timestamp per conversation: only the date split needs it (the id split only
    # needs to know whether any record was kept).
    first_seen: dict[str, dt.datetime] = {}
    kept_path, keys_path = tmp / "kept.jsonl", tmp / "keys.bin"
    skipped: dict[str, str] = {}  # files of the source folders that were not read, and why
    files = [(path, _relative(path, root, display))
             for path, display in discover_files([root / s for s in params.data.sources], skipped)]
    job = _scrub_job(params, pii_cfg, key, tokenizer, inline=evalpool is not None)
    with kept_path.open("w", encoding="utf-8") as kept, keys_path.open("wb") as keys, \
            (tmp / "split" / REJECTS).open("w", encoding="utf-8") as rejects:
        records = _valid_records(ingestor, files, rejects, first_seen, by_date=params.split.by == "date")
        for scrubbed in scrub_all(records, job, worker_count(params.split.workers)):
            pii_counts.update(scrubbed.counts)
            if scrubbed.evaluation is not None:
                evalpool.add(scrubbed.evaluation)
                continue
            kept.write(scrubbed.line)
            keys.write(scrubbed.side)
    report["ingest"] = _ingest_report(ingestor.stats, skipped, root)
    report["special_tokens_escaped"] = pii_counts.pop(SPECIALS_KEY, 0)
    report["pii"] = {"enabled": scrubber.enabled, "replacements": dict(sorted(pii_counts.items()))}
    report["sources"] = {name: file_sha256(path) for path, name in files}
    return kept_path, keys_path, first_seen


def _relative(path, root: Path, fallback: str) -> str:
    """A file as every output names it: relative to the project root, so two checkouts of the
    same data give byte-identical outputs (and no local path leaks into artifacts)."""
    resolved = Path(path).resolve()
    return resolved.relative_to(root.resolve()).as_posix() if resolved.is_relative_to(root.resolve()) else fallback


def pii_config(params: StageView, root: Path) -> PIIConfig:
    """The scrubber's config from `split.pii`: the logs' split and the general corpus alike."""
    pii = params.split.pii
    return PIIConfig(enabled=pii.enabled, dictionary_path=root / pii.dictionary if pii.dictionary else None,
                     business_keys=pii.business_keys)


def _scrub_job(params: StageView, pii_cfg: PIIConfig, key: bytes | None, tokenizer, *, inline: bool) -> ScrubJob:
    """The scrub workers' job; with ``inline`` they also decide pools and build evaluation items."""
    dd = params.split.dedup
    return ScrubJob(pii_cfg, dd.near_threshold, dd.num_perm, special_strings(tokenizer), key,
                    assign=PoolAssigner(params.split, {}) if inline else None,
                    evals=EvalJob(tokenizer, tuple(params.calibration.length_buckets)) if inline else None)


def _valid_records(ingestor: Ingestor, files: list, rejects, first_seen: dict, *, by_date: bool) -> Iterator[str]:
    """Every valid record of ``files`` as JSON, in order; rejects are written as they stream
    past, and ``first_seen`` collects each conversation's first timestamp (by date) or notes
    that something was kept (by id)."""
    for item in (it for path, name in files for it in ingestor.read_file(path, name)):
        if isinstance(item, Reject):
            rejects.write(item.model_dump_json() + "\n")
            continue
        rec = item.record
        if not by_date:
            first_seen.setdefault("", rec.timestamp)  # non-empty: something was kept
        elif rec.conversation_id not in first_seen or rec.timestamp < first_seen[rec.conversation_id]:
            first_seen[rec.conversation_id] = rec.timestamp
        yield rec.model_dump_json(exclude_none=True)


def _ingest_report(stats, skipped: dict[str, str], root: Path) -> dict:
    """What the ingestor read, kept and rejected, per reason and per file."""
    return {"records_in": stats.records_in, "kept": stats.kept, "rejected": stats.rejected,
            "rejected_by_reason": dict(sorted(stats.rejected_by_reason.items())),
            "blank_lines": stats.blank_lines,
            "files_not_read": {_relative(k, root, k): v for k, v in sorted(skipped.items())},
            "per_file": {f: s.model_dump() for f, s in sorted(stats.per_file.items())}}


def _pools_known_while_streaming(split_params) -> bool:
    """Split by conversation id: a record's pool is known as it streams past, so pass 2 runs
    inside pass 1 (the workers build the evaluation items). Split by date: the cut-off is
    known only once every record has been read, so pass 2 reads the kept records back."""
    return split_params.by != "date"


class _EvalPool:
    """Pass 2: the evaluation pool alone (never influenced by calibration-pool records),
    deduplicated within itself; kept records become evaluation items, duplicates are logged."""

    def __init__(self, dedup: Deduplicator, out, dups, counts: Counter, composition: Counter):
        self.dedup, self.out, self.dups = dedup, out, dups
        self.counts, self.composition = counts, composition

    def add(self, entry: EvalEntry) -> None:
        res = self.dedup.add_keys(entry.rec_id, entry.keys)
        if not res.kept:
            self.counts["eval_duplicates"] += 1
            self.dups.write(_dup(entry.rec_id, "eval", res))
        elif entry.item_line is None:
            self.counts["eval_unscorable"] += 1
        else:
            self.counts["eval"] += 1
            self.composition.update(entry.slices)
            self.out.write(entry.item_line)


def run(params: StageView, layout: Layout) -> dict:
    """The `split` stage; `params`: its own (PARAMS)."""
    from pipeline.models import load_tokenizer

    root, out = layout.root, layout.data
    tokenizer = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    edges = list(params.calibration.length_buckets)
    report: dict = {"params": {"data": params.data.model_dump(mode="json"),
                               "split": params.split.model_dump(mode="json", exclude={"workers"})}}
    inline = _pools_known_while_streaming(params.split)
    with tempfile.TemporaryDirectory(dir=root) as tmp_s, \
            atomic_dirs(out, ["evalset", "pools", "split"]) as staged, \
            (staged["split"] / DUPLICATES).open("w", encoding="utf-8") as dups, \
            (staged["evalset"] / EVALSET_ITEMS).open("w", encoding="utf-8") as ev:
        tmp = Path(tmp_s)
        (tmp / "split").mkdir()
        dd = params.split.dedup
        dedup = Deduplicator(dd.near_threshold, dd.num_perm)
        counts: Counter[str] = Counter()
        composition: Counter[str] = Counter()
        evalpool = _EvalPool(dedup, ev, dups, counts, composition)
        kept_path, keys_path, first_seen = _scrubbed_records(params, root, tmp, report, tokenizer,
                                                             evalpool if inline else None)
        (tmp / "split" / REJECTS).replace(staged["split"] / REJECTS)
        kept = functools.partial(kept_records, kept_path, keys_path, dedup.n_bands)
        if inline:  # only calibration-pool records were kept for pass 3
            assign = lambda conversation_id: "calibration"  # noqa: E731
        else:
            assign = PoolAssigner(params.split, first_seen) if first_seen else None
            pending = ((line, EvalEntry(rec_id, keys)) for line, rec_id, conversation_id, keys in kept()
                       if assign(conversation_id) == "eval")
            for entry in complete_all(pending, EvalJob(tokenizer, tuple(edges))):
                evalpool.add(entry)
        ev.close()
        # Pass 3: the calibration pool, deduplicated within itself and against eval.
        with (staged["pools"] / CALIBRATION_POOL).open("w", encoding="utf-8") as cal:
            for line in _unique(kept(), assign, "calibration", dedup, dups, counts):
                counts["calibration"] += 1
                cal.write(line)  # kept lines are canonical already (jsonl_line)
        dups.close()
        _write_summary(params, staged, report, counts, composition, edges)
    log.info("split: %s", report["split"])
    return report


def _write_summary(params: StageView, staged: dict[str, Path], report: dict, counts: Counter,
                   composition: Counter, edges: list[int]) -> None:
    """The evaluation set's card and the split report, once every kept record is accounted for."""
    report["split"] = dict(sorted(counts.items()))
    if sum(counts.values()) != report["ingest"]["kept"]:  # every kept record is accounted for
        raise RuntimeError(f"split lost records: kept {report['ingest']['kept']}, accounted {dict(counts)}")
    eval_card = EvalsetCard(content_sha256=file_sha256(staged["evalset"] / EVALSET_ITEMS),
                            samples=counts["eval"], slices=dict(sorted(composition.items())),
                            length_buckets=edges, tokenizer=str(params.model.path),
                            items=ITEM_SCHEMA).dump()
    (staged["evalset"] / CARD).write_text(json.dumps(eval_card, indent=2) + "\n")
    report["evalset_sha256"] = eval_card["content_sha256"]
    report["calibration_pool_sha256"] = file_sha256(staged["pools"] / CALIBRATION_POOL)
    written = SplitReport.model_validate(report).dump()  # the contract, with its schema id
    (staged["split"] / SplitReport.FILE).write_text(json.dumps(written, indent=2) + "\n")
    report.clear()
    report.update(written)  # what the stage returns is what it wrote


def _unique(kept, assign, pool: str, dedup: Deduplicator, dups, counts: Counter) -> Iterator[str]:
    """The pool's kept lines that are not duplicates of one kept before; duplicates are logged."""
    for line, rec_id, conversation_id, keys in kept:
        if assign(conversation_id) != pool:
            continue
        res = dedup.add_keys(rec_id, keys)
        if res.kept:
            yield line
            continue
        counts[f"{pool}_duplicates"] += 1
        dups.write(_dup(rec_id, pool, res))


def _dup(rec_id: str, pool: str, res) -> str:
    """A duplicate's line in ``duplicates.jsonl``: exact or near, and of which record."""
    if res.exact_duplicate_of:
        return record_line(DuplicateLine(id=rec_id, pool=pool, kind="exact", duplicate_of=res.exact_duplicate_of))
    return record_line(DuplicateLine(id=rec_id, pool=pool, kind="near", duplicate_of=res.near_duplicate_of))
