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
import hashlib
import itertools
import json
import logging
import struct
import tempfile
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

from pipeline.calibration.dedup import DedupKeys, Deduplicator, dedup_keys_of
from pipeline.calibration.ingest import Ingestor, Reject, discover_files
from pipeline.calibration.parallel import ordered_map, worker_count
from pipeline.calibration.pii import PIIConfig, Scrubber
from pipeline.io import atomic_dirs, file_sha256, jsonl_line
from pipeline.models import escape_messages, special_strings

SPECIALS_KEY = "\x00special_tokens_escaped"  # counted beside the PII counts, reported apart

log = logging.getLogger(__name__)


def dedup_text(messages: list[dict]) -> str:
    """Text compared for duplicates: the non-system turns (system prompts are deployment
    boilerplate shared by whole scenarios and would make every short chat look alike)."""
    return "\n".join(m["content"] for m in messages if m["role"] != "system")


def prompt_text(messages: list[dict]) -> str:
    """The turns an evaluation prompt holds: everything before the final answer. Duplicates
    are judged on it, so "calibration holds a copy of an evaluation prompt" is what is ruled out."""
    if messages and messages[-1]["role"] == "assistant":
        messages = messages[:-1]
    return dedup_text(messages)


def pseudonym(key: bytes, value: str) -> str:
    """An id as it leaves the split: a keyed hash (HMAC-SHA256, 80 bits), the same for the same
    id and key on every run, not reversible without the key."""
    import hmac

    return "p-" + hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()[:20]


def id_key(params) -> tuple[bytes | None, str]:
    """The pseudonymisation key and what it is (for the report): None when ids are kept."""
    import os

    pii = params.split.pii
    if not (pii.enabled and pii.pseudonymize_ids):
        return None, "ids kept as they are (split.pii)"
    secret = os.environ.get(pii.id_key_env)
    if secret:
        return secret.encode("utf-8"), f"keyed hash, key from ${pii.id_key_env}"
    return params.split.salt.encode("utf-8"), (f"keyed hash with the public split salt (set "
                                               f"${pii.id_key_env} for a secret key)")


def hash_unit(salt: str, key: str) -> float:
    """A uniform number in [0, 1) decided by `key` alone."""
    return int.from_bytes(hashlib.sha256(f"{salt}\x00{key}".encode()).digest()[:8], "big") / 2**64


def length_bucket(n_tokens: int, edges: list[int]) -> str:
    lo = 0
    for edge in edges:
        if n_tokens <= edge:
            return f"{lo + 1}-{edge}" if lo else f"<={edge}"
        lo = edge
    return f">{edges[-1]}"


class _Assigner:
    """Pool of a conversation: by salted id hash, or by its first timestamp (recent → eval)."""

    def __init__(self, split, first_seen: dict[str, dt.datetime]):
        self.split = split
        self.first_seen = first_seen
        if split.by == "date":
            newest = max(first_seen.values())
            self.cutoff = newest - dt.timedelta(days=split.eval_recent_days)

    def __call__(self, conversation_id: str) -> str:
        if self.split.by == "date":
            return "eval" if self.first_seen[conversation_id] > self.cutoff else "calibration"
        return "eval" if hash_unit(self.split.salt, conversation_id) < self.split.eval_share else "calibration"


def _scrubbed_records(params, root: Path, tmp: Path, report: dict, tokenizer,
                      evalpool: _EvalPool | None) -> tuple[Path, Path, dict]:
    """Pass 1: ingest + scrub into a temporary JSONL; rejects written as they come.

    Alongside every kept line, its dedup keys (computed by the workers from the scrubbed
    prompt) go to a binary side file, read back in step with the JSONL by later passes.
    With ``evalpool`` (split by conversation id: a record's pool is known as it streams
    past), evaluation-pool records go to it at once, their items built by the workers, and
    only calibration-pool records are kept for pass 3."""
    pii_cfg = PIIConfig(enabled=params.split.pii.enabled,
                        dictionary_path=(root / params.split.pii.dictionary
                                         if params.split.pii.dictionary else None))
    scrubber = Scrubber(pii_cfg)
    # Reject excerpts are always scrubbed, with the same dictionary when scrubbing is on.
    ingestor = Ingestor(max_line_bytes=params.data.max_line_bytes,
                        excerpt_scrubber=scrubber if scrubber.enabled else None)
    pii_counts: Counter[str] = Counter()
    # First timestamp per conversation: only the date split needs it (the id split only
    # needs to know whether any record was kept).
    by_date = params.split.by == "date"
    first_seen: dict[str, dt.datetime] = {}
    kept_path, keys_path = tmp / "kept.jsonl", tmp / "keys.bin"
    # Files are named relative to the project root in every output, so two checkouts of the
    # same data give byte-identical outputs (and no local path leaks into artifacts).
    skipped: dict[str, str] = {}  # files of the source folders that were not read, and why
    files = [(path, Path(path).resolve().relative_to(root.resolve()).as_posix()
              if Path(path).resolve().is_relative_to(root.resolve()) else display)
             for path, display in discover_files([root / s for s in params.data.sources], skipped)]
    dd = params.split.dedup
    key, report["ids"] = id_key(params)
    inline = evalpool is not None
    job = _Job(pii_cfg, dd.near_threshold, dd.num_perm,
               _Assigner(params.split, {}) if inline else None,
               tokenizer if inline else None, tuple(params.calibration.length_buckets),
               special_strings(tokenizer), key)
    with kept_path.open("w", encoding="utf-8") as kept, keys_path.open("wb") as keys, \
            (tmp / "split" / "rejects.jsonl").open("w", encoding="utf-8") as rejects:

        def records() -> Iterator[str]:  # rejects are written as they stream past
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

        for line, counts, side, evaluation in _scrub_all(records(), job, worker_count(params.split.workers)):
            pii_counts.update(counts)
            if evaluation is not None:
                evalpool.add(*evaluation)
                continue
            kept.write(line)
            keys.write(side)
    stats = ingestor.stats
    report["ingest"] = {"records_in": stats.records_in, "kept": stats.kept,
                        "rejected": stats.rejected,
                        "rejected_by_reason": dict(sorted(stats.rejected_by_reason.items())),
                        "blank_lines": stats.blank_lines,
                        "files_not_read": {Path(k).resolve().relative_to(root.resolve()).as_posix()
                                           if Path(k).resolve().is_relative_to(root.resolve()) else k: v
                                           for k, v in sorted(skipped.items())},
                        "per_file": {f: s.model_dump() for f, s in sorted(stats.per_file.items())}}
    report["special_tokens_escaped"] = pii_counts.pop(SPECIALS_KEY, 0)
    report["pii"] = {"enabled": scrubber.enabled, "replacements": dict(sorted(pii_counts.items()))}
    report["sources"] = {name: file_sha256(path) for path, name in files}
    return kept_path, keys_path, first_seen


class _Job(NamedTuple):
    """What a scrub worker needs (picklable, for spawn-started workers)."""

    pii: PIIConfig
    threshold: float
    num_perm: int
    assign: _Assigner | None  # set when the workers decide pools (split by conversation id)
    tokenizer: object  # builds evaluation items when assign is set
    edges: tuple[int, ...]
    specials: tuple[str, ...] = ()  # the tokenizer's special-token strings, escaped in content
    id_key: bytes | None = None     # ids leave as keyed-hash pseudonyms (None: kept)


_SCRUBBER: Scrubber | None = None
_JOB: _Job | None = None

# What a worker returns per record: the scrubbed JSONL line, PII counts, side record, and
# for an evaluation-pool record (only when the workers decide pools) its id, dedup keys,
# evaluation item line (None: not scorable) and slice labels.
_Scrubbed = tuple[str, dict, bytes, "tuple[str, DedupKeys, str | None, tuple[str, ...]] | None"]


def _init_worker(job: _Job) -> None:
    global _SCRUBBER, _JOB
    _SCRUBBER, _JOB = Scrubber(job.pii), job


def _scrub_one(rec_json: str) -> tuple[dict, _Scrubbed]:
    """One record: validated, scrubbed, as its canonical JSONL line; PII counts; side record
    (an evaluation-pool record's item is completed by :func:`_scrub_chunk`)."""
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
        return data, (line, dict(counts), _pack_side(data["id"], raw_conversation, keys), None)
    return data, (line, dict(counts), b"", (data["id"], keys, None, ()))


def _scrub_chunk(recs: list[str]) -> list[_Scrubbed]:
    done = [_scrub_one(rec) for rec in recs]
    # Evaluation-pool records become items here, their prompts tokenized in one call.
    at = [i for i, (_, out) in enumerate(done) if out[3] is not None]
    items = _eval_entries([done[i][0] for i in at], _JOB.tokenizer, list(_JOB.edges))
    results = [out for _, out in done]
    for i, (item_line, slices) in zip(at, items):
        out = results[i]
        results[i] = (*out[:3], (out[3][0], out[3][1], item_line, slices))
    return results


def _eval_entries(recs: list[dict], tokenizer, edges: list[int]) -> list[tuple[str | None, tuple[str, ...]]]:
    """(evaluation item line or None when not scorable, slice labels) per record, the scorable
    prompts tokenized in one call (a fast tokenizer encodes a batch at once)."""
    prompts = {i: prompt for i, rec in enumerate(recs) if (prompt := _eval_prompt(rec)) is not None}
    n_tokens = dict(zip(prompts, _prompt_tokens([messages for messages, _ in prompts.values()], tokenizer)))
    out = []
    for i, rec in enumerate(recs):
        if i not in prompts:
            out.append((None, ()))
            continue
        item = _eval_item(rec, *prompts[i], n_tokens[i], edges)
        out.append((jsonl_line(item), tuple(f"{k}={v}" for k, v in item["slices"].items())))
    return out


def _scrub_all(recs: Iterator[str], job: _Job, workers: int) -> Iterator[_Scrubbed]:
    """Scrub records in worker processes (the costly step), results in input order."""
    return ordered_map(_scrub_chunk, recs, workers=workers, initializer=_init_worker, initargs=(job,))


# Side record per kept line: flag (1 = has LSH bands), 16-byte exact digest, the bands'
# 8-byte bucket keys, then the id and conversation id, each as 4-byte length + UTF-8.
_SIDE_HEAD = struct.Struct(">B16s")
_LEN = struct.Struct(">I")


def _pack_side(rec_id: str, conversation_id: str, keys: DedupKeys) -> bytes:
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


def _kept(kept_path: Path, keys_path: Path, n_bands: int) -> Iterator[tuple[str, str, str, DedupKeys]]:
    """(line, id, conversation id, dedup keys) of every kept record, in order."""
    with kept_path.open(encoding="utf-8") as lines, keys_path.open("rb") as side:
        for line in lines:
            yield (line, *_read_side(side, n_bands))


def _eval_prompt(rec: dict) -> tuple[list[dict], str] | None:
    """Prompt (every turn before the final assistant answer) and gold reference; None when
    the record cannot be scored (no reference, or the prompt does not end with the user)."""
    messages = rec["messages"]
    reference = rec.get("reference")
    if messages[-1]["role"] == "assistant":
        reference = reference or messages[-1]["content"]
        messages = messages[:-1]
    if not reference or messages[-1]["role"] != "user":
        return None
    return messages, reference


def _prompt_tokens(prompts: list[list[dict]], tokenizer) -> list[int]:
    """Token counts of the prompts as the engines see them (chat template, generation prompt),
    tokenized in one call (a fast tokenizer encodes the batch on every core)."""
    if not prompts:
        return []
    texts = [tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in prompts]
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def _eval_item(rec: dict, messages: list[dict], reference: str, n_tokens: int, edges: list[int]) -> dict:
    """The evaluation item of a record: its prompt (``messages``, ``n_tokens`` long with the
    chat template), gold reference, rubric and slices."""
    slices = {"scenario": rec["scenario"], "difficulty": rec.get("difficulty") or "unlabelled",
              "segment": rec.get("segment") or "unknown",
              "length_bucket": length_bucket(n_tokens, edges)}
    return {"id": rec["id"], "conversation_id": rec["conversation_id"],
            "timestamp": rec["timestamp"], "messages": messages, "reference": reference,
            "rubric": rec.get("rubric") or {"type": "exact"}, "tools": rec.get("tools"),
            "prompt_tokens": n_tokens, "slices": slices}


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

    def add(self, rec_id: str, keys: DedupKeys, item_line: str | None, slices: Iterable[str]) -> None:
        res = self.dedup.add_keys(rec_id, keys)
        if not res.kept:
            self.counts["eval_duplicates"] += 1
            self.dups.write(jsonl_line({"id": rec_id, "pool": "eval", **_dup(res)}))
        elif item_line is None:
            self.counts["eval_unscorable"] += 1
        else:
            self.counts["eval"] += 1
            self.composition.update(slices)
            self.out.write(item_line)


def run(params, root: Path) -> dict:
    from pipeline.models import load_tokenizer

    out = root / params.split.out_dir
    tokenizer = load_tokenizer(root / params.model.path, trust_remote_code=params.model.trust_remote_code)
    edges = list(params.calibration.length_buckets)
    report: dict = {"params": {"data": params.data.model_dump(mode="json"),
                               "split": params.split.model_dump(mode="json", exclude={"workers"})}}
    inline = _pools_known_while_streaming(params.split)
    with tempfile.TemporaryDirectory(dir=root) as tmp_s, \
            atomic_dirs(out, ["evalset", "pools", "split"]) as staged, \
            (staged["split"] / "duplicates.jsonl").open("w", encoding="utf-8") as dups, \
            (staged["evalset"] / "evalset.jsonl").open("w", encoding="utf-8") as ev:
        tmp = Path(tmp_s)
        (tmp / "split").mkdir()
        dd = params.split.dedup
        dedup = Deduplicator(dd.near_threshold, dd.num_perm)
        counts: Counter[str] = Counter()
        composition: Counter[str] = Counter()
        evalpool = _EvalPool(dedup, ev, dups, counts, composition)
        kept_path, keys_path, first_seen = _scrubbed_records(params, root, tmp, report, tokenizer,
                                                             evalpool if inline else None)
        (tmp / "split" / "rejects.jsonl").replace(staged["split"] / "rejects.jsonl")
        kept_records = functools.partial(_kept, kept_path, keys_path, dedup.n_bands)
        if inline:  # only calibration-pool records were kept for pass 3
            assign = lambda conversation_id: "calibration"  # noqa: E731
        else:
            assign = _Assigner(params.split, first_seen) if first_seen else None
            evals = ((line, rec_id, keys) for line, rec_id, conversation_id, keys in kept_records()
                     if assign(conversation_id) == "eval")
            while batch := list(itertools.islice(evals, 256)):
                entries = _eval_entries([json.loads(line) for line, _, _ in batch], tokenizer, edges)
                for (_, rec_id, keys), entry in zip(batch, entries):
                    evalpool.add(rec_id, keys, *entry)
        ev.close()
        # Pass 3: the calibration pool, deduplicated within itself and against eval.
        with (staged["pools"] / "calibration.jsonl").open("w", encoding="utf-8") as cal:
            for line in _unique(kept_records(), assign, "calibration", dedup, dups, counts):
                counts["calibration"] += 1
                cal.write(line)  # kept lines are canonical already (jsonl_line)
        dups.close()
        report["split"] = dict(sorted(counts.items()))
        if sum(counts.values()) != report["ingest"]["kept"]:  # every kept record is accounted for
            raise RuntimeError(f"split lost records: kept {report['ingest']['kept']}, accounted {dict(counts)}")
        eval_card = {"content_sha256": file_sha256(staged["evalset"] / "evalset.jsonl"),
                     "samples": counts["eval"], "slices": dict(sorted(composition.items())),
                     "length_buckets": edges, "tokenizer": str(params.model.path)}
        (staged["evalset"] / "card.json").write_text(json.dumps(eval_card, indent=2) + "\n")
        report["evalset_sha256"] = eval_card["content_sha256"]
        report["calibration_pool_sha256"] = file_sha256(staged["pools"] / "calibration.jsonl")
        (staged["split"] / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    log.info("split: %s", report["split"])
    return report


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
        dups.write(jsonl_line({"id": rec_id, "pool": pool, **_dup(res)}))


def _dup(res) -> dict:
    if res.exact_duplicate_of:
        return {"kind": "exact", "duplicate_of": res.exact_duplicate_of}
    return {"kind": "near", "duplicate_of": res.near_duplicate_of}
