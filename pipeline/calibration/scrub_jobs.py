"""The split's per-record work, run chunk by chunk in worker processes (or in this one): scrub
PII, escape special tokens, compute dedup keys, pseudonymise ids and — when the workers decide
pools — build the evaluation items of evaluation-pool records.

A worker gets its job once, as a frozen dataclass (picklable, for spawn-started workers), and
returns one :class:`Scrubbed` per record, in input order (:func:`ordered_map`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Iterable, Iterator

from pipeline.calibration.dedup import dedup_keys_of
from pipeline.calibration.dedup_texts import prompt_text
from pipeline.calibration.eval_items import EvalEntry, EvalJob, with_items
from pipeline.calibration.parallel import ordered_map
from pipeline.calibration.pii import PIIConfig, Scrubber
from pipeline.calibration.pool_assignment import PoolAssigner
from pipeline.calibration.pseudonyms import pseudonym
from pipeline.calibration.side_records import pack_side
from pipeline.io import jsonl_line
from pipeline.models import escape_messages

SPECIALS_KEY = "\x00special_tokens_escaped"  # counted beside the PII counts, reported apart


@dataclass(frozen=True)
class ScrubJob:
    """What a scrub worker needs (picklable, for spawn-started workers)."""

    pii: PIIConfig
    threshold: float
    num_perm: int
    specials: tuple[str, ...] = ()  # the tokenizer's special-token strings, escaped in content
    id_key: bytes | None = None     # ids leave as keyed-hash pseudonyms (None: kept)
    assign: PoolAssigner | None = None  # set when the workers decide pools (split by conversation id)
    evals: EvalJob | None = None        # builds evaluation items when assign is set


@dataclass(frozen=True)
class Scrubbed:
    """What a worker returns per record: the scrubbed JSONL line, PII counts and side record;
    for an evaluation-pool record (only when the workers decide pools) its evaluation entry,
    and then no side record (the record is not kept for later passes)."""

    line: str
    counts: dict
    side: bytes = b""
    evaluation: EvalEntry | None = None


_SCRUBBER: Scrubber | None = None
_JOB: ScrubJob | None = None
_EVALS: EvalJob | None = None


def init_worker(job: ScrubJob) -> None:
    """Set up a worker for :func:`scrub_chunk` (once per process)."""
    global _SCRUBBER, _JOB
    _SCRUBBER, _JOB = Scrubber(job.pii), job
    init_evals(job.evals)


def init_evals(job: EvalJob | None) -> None:
    """Set up a worker for building evaluation items (once per process)."""
    global _EVALS
    _EVALS = job


def scrub_all(recs: Iterable[str], job: ScrubJob, workers: int) -> Iterator[Scrubbed]:
    """Scrub records in worker processes (the costly step), results in input order."""
    return ordered_map(scrub_chunk, recs, workers=workers, initializer=init_worker, initargs=(job,))


def complete_all(pending: Iterable[tuple[str, EvalEntry]], job: EvalJob) -> Iterator[EvalEntry]:
    """Evaluation entries completed with their items, from (kept JSONL line, entry) pairs: the
    same chunked work as the scrub workers' own, run in this process."""
    return ordered_map(complete_chunk, pending, workers=1, initializer=init_evals, initargs=(job,))


def scrub_chunk(recs: list[str]) -> list[Scrubbed]:
    """A chunk of records scrubbed; its evaluation-pool records become items here, their
    prompts tokenized in one call."""
    done = [_scrub_one(rec) for rec in recs]
    at = [i for i, (_, out) in enumerate(done) if out.evaluation is not None]
    entries = with_items([done[i][1].evaluation for i in at], [done[i][0] for i in at], _EVALS)
    results = [out for _, out in done]
    for i, entry in zip(at, entries):
        results[i] = dataclasses.replace(results[i], evaluation=entry)
    return results


def complete_chunk(pending: list[tuple[str, EvalEntry]]) -> list[EvalEntry]:
    """A chunk of evaluation entries completed with the items of their kept JSONL lines."""
    return with_items([entry for _, entry in pending], [json.loads(line) for line, _ in pending], _EVALS)


def _scrub_one(rec_json: str) -> tuple[dict, Scrubbed]:
    """One record: validated, scrubbed, as its canonical JSONL line; PII counts; side record
    (an evaluation-pool record's item is completed by :func:`scrub_chunk`)."""
    assert _JOB is not None
    # Validated by the ingestor and dumped by pydantic (None fields left out): plain JSON here;
    # scrubbing replaces text inside strings only, so the record stays valid.
    data = json.loads(rec_json)
    counts = _SCRUBBER.scrub_data(data) if _SCRUBBER is not None else {}
    if _JOB.specials:  # customer text stays text: no turn markers smuggled in a message
        data["messages"], escaped = escape_messages(data["messages"], _JOB.specials)
        if escaped:
            counts = {**counts, SPECIALS_KEY: escaped}
    keys = dedup_keys_of(prompt_text(data["messages"]), _JOB.threshold, _JOB.num_perm)
    # The pool is decided on the id as it came in (the same split with or without pseudonyms);
    # from here on the ids are pseudonyms.
    raw_conversation = data["conversation_id"]
    to_eval = _JOB.assign is not None and _JOB.assign(raw_conversation) == "eval"
    if _JOB.id_key is not None:
        data["id"] = pseudonym(_JOB.id_key, data["id"])
        data["conversation_id"] = pseudonym(_JOB.id_key, raw_conversation)
    line = jsonl_line(data)
    if not to_eval:
        # the side record (a temporary file, never an output) keeps the conversation id the
        # pool is decided on, so reading kept records back assigns them as streaming did
        return data, Scrubbed(line, dict(counts), pack_side(data["id"], raw_conversation, keys))
    return data, Scrubbed(line, dict(counts), evaluation=EvalEntry(data["id"], keys))
