"""The `calibration@<set>` stage: stratified sample → chat template → token-length filter → hash.

Writes ``<split.out_dir>/calibration/<set>/``:

- ``data.parquet`` — columns ``id, source, scenario, length_bucket, difficulty, n_tokens, text``;
  ``text`` is already rendered with the model's chat template (the same one the engines use), so
  llm-compressor (``datasets``), GPTQModel and ModelOpt consume it without conversion code;
- ``samples.jsonl`` — the same rows for people (and the content hash);
- ``imatrix.txt`` — the texts as plain text for llama.cpp's ``llama-imatrix``;
- ``card.json`` / ``card.md`` — content SHA256, sources and their SHA256, params, composition
  scenario × length bucket × difficulty, token-length histogram, PII replacements, rejects,
  dedup counts, quota shortfalls and fills, and the overlap with the evaluation set (must be 0).

Every candidate is rendered and tokenized in worker processes (``split.workers``, default one
per core), which return only its id, scenario, difficulty and length: stratification needs no
more, and the selected rows are rendered again from their source lines. So memory does not hold
every candidate's text (a million-record pool would need gigabytes), and the number of workers
does not change the outputs.

Same inputs + same seed ⇒ byte-identical outputs.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
from collections import Counter
from pathlib import Path
from statistics import median

from pipeline.calibration.dedup import DedupKeys, dedup_keys_of, near_duplicate_pairs
from pipeline.calibration.parallel import ordered_map, worker_count
from pipeline.calibration.sample import Item, QuotaError, rank, stratify
from pipeline.calibration.split import dedup_text, length_bucket, pii_config, prompt_text
from pipeline.stage_params import Declared, StageView
from pipeline.contracts import CalibrationCard
from pipeline.contracts.records import line as record_line
from pipeline.contracts.split_outputs import CalibrationSample, SplitReport
from pipeline.io import atomic_dirs, file_sha256, write_json
from pipeline.layout import Layout
from pipeline.contracts.files import CALIBRATION_DATA, CALIBRATION_POOL, CARD, CARD_MD, EVALSET_ITEMS, IMATRIX, SAMPLES

log = logging.getLogger(__name__)

PARAMS = Declared("calibration", "calibration.length_buckets", "calibration.sets.${key}", "split.dedup",
                  "split.pii", "split.out_dir", "split.workers", "data.general_corpus", "model.path",
                  "model.trust_remote_code")


class CalibrationError(ValueError):
    pass


_TOKENIZE_BATCH = 256  # texts per tokenizer call


def _render(rows: list[dict], tokenizer, cs) -> list[tuple[str, list[int], str]]:
    """(text, token ids, status) per row: the chat template applied (a general-corpus row is its
    text), tokenized, and past max_seq_len ``dropped`` or ``truncated`` (ids cut, text not yet)."""
    from pipeline.models import escape_messages, escape_specials, special_strings

    # Customer text stays text (the split escapes its pools; the general corpus is escaped here).
    specials = special_strings(tokenizer)
    texts = [tokenizer.apply_chat_template(escape_messages(row["messages"], specials)[0],
                                           tokenize=False) if "messages" in row
             else escape_specials(row["text"], specials)[0] for row in rows]
    out = []
    for text, ids in zip(texts, tokenizer(texts, add_special_tokens=False)["input_ids"]):
        status = "ok"
        if len(ids) > cs.max_seq_len:
            status = "dropped" if cs.overlength == "drop" else "truncated"
            ids = ids[: cs.max_seq_len]
        out.append((text, ids, status))
    return out


def _candidates(rows, tokenizer, cs, edges, counters) -> list[tuple[Item, dict]]:
    """Render candidates in full (text included), enforce max_seq_len (drop or truncate,
    counted), bucket them."""
    out = []
    rows = iter(rows)
    while batch := list(itertools.islice(rows, _TOKENIZE_BATCH)):
        for row, (text, ids, status) in zip(batch, _render(batch, tokenizer, cs)):
            if status == "dropped":
                counters["dropped_overlength"] += 1
                continue
            if status == "truncated":
                counters["truncated"] += 1
                text = tokenizer.decode(ids)
            item = Item(row["id"], row.get("scenario", "general"), length_bucket(len(ids), edges),
                        row.get("difficulty"))
            out.append((item, {"id": row["id"], "source": row["_source"], "scenario": item.scenario,
                               "length_bucket": item.bucket, "difficulty": item.difficulty,
                               "n_tokens": len(ids), "text": text,
                               "_dedup": prompt_text(row["messages"]) if "messages" in row else text}))
    return out


# -------------------------------------------------------------- worker processes

_WORK: tuple | None = None  # (tokenizer, set params, near threshold, num_perm) in each worker


def _init_worker(tokenizer, cs, threshold: float, num_perm: int) -> None:
    global _WORK
    _WORK = (tokenizer, cs, threshold, num_perm)


def _scan_chunk(lines: list[str]) -> list[tuple[str, str, str | None, int, str]]:
    """What stratification needs of each line: id, scenario, difficulty, tokens, status."""
    tokenizer, cs, _, _ = _WORK
    rows = [json.loads(line) for line in lines]
    return [(row["id"], row.get("scenario", "general"), row.get("difficulty"), len(ids), status)
            for row, (_, ids, status) in zip(rows, _render(rows, tokenizer, cs))]


def _eval_keys_chunk(lines: list[str]) -> list[tuple[str, DedupKeys]]:
    """Id and dedup keys of each evaluation item's prompt."""
    _, _, threshold, num_perm = _WORK
    out = []
    for line in lines:
        item = json.loads(line)
        out.append((item["id"], dedup_keys_of(dedup_text(item["messages"]), threshold, num_perm)))
    return out


def _scan(path: Path, source: str, pool, edges: list[int], counters: Counter
          ) -> tuple[list[Item], dict[str, tuple[str, int]]]:
    """Every candidate of a JSONL file as an :class:`Item` (rendered and tokenized in the
    workers; texts are not kept), and where each one is: (source, line number)."""
    items, where = [], {}
    with path.open(encoding="utf-8") as fh:
        for line_no, (rid, scenario, difficulty, n_tokens, status) in enumerate(pool(_scan_chunk, fh)):
            if status == "dropped":
                counters["dropped_overlength"] += 1
                continue
            if status == "truncated":
                counters["truncated"] += 1
            items.append(Item(rid, scenario, length_bucket(n_tokens, edges), difficulty))
            where[rid] = (source, line_no)
    return items, where


def _materialize(items: list[Item], where: dict[str, tuple[str, int]], paths: dict[str, Path],
                 tokenizer, cs, edges, scrub=None) -> list[dict]:
    """The selected items' rows in full, rendered again from their source lines (in order); a
    general-corpus row's text through `scrub` (the split scrubbed the business pools already)."""
    wanted: dict[str, dict[int, str]] = {}
    for it in items:
        source, line_no = where[it.id]
        wanted.setdefault(source, {})[line_no] = it.id
    raw: dict[str, dict] = {}
    for source, lines in wanted.items():
        with paths[source].open(encoding="utf-8") as fh:
            for line_no, line in enumerate(fh):
                if line_no in lines:
                    row = json.loads(line)
                    row["_source"] = source
                    if source == "general" and scrub is not None and isinstance(row.get("text"), str):
                        row["text"] = scrub(row["text"])
                    raw[lines[line_no]] = row
    rendered = {r["id"]: r for _, r in _candidates((raw[it.id] for it in items), tokenizer, cs, edges, Counter())}
    return [rendered[it.id] for it in items]


def _rotation_keep(cs, root: Path, pool_ids: set[str]) -> list[str]:
    if cs.rotation is None:
        return []
    path = root / cs.rotation.previous
    if not path.is_file():
        raise CalibrationError(f"rotation.previous {path} does not exist — fix: run "
                               "`qpipe calib freeze <set>` on the set to rotate from, and commit it")
    previous = [i for i in path.read_text().split() if i in pool_ids]
    n_keep = round((1 - cs.rotation.refresh) * len(previous))
    return sorted(previous, key=lambda i: rank(cs.seed, i))[:n_keep]


def check_set(sets, set_name: str) -> None:
    """A set params.yaml defines (`sets`: calibration.sets), or a CalibrationError naming them."""
    if set_name not in sets:
        from pipeline.names import did_you_mean
        raise CalibrationError(f"unknown calibration set {set_name!r} {did_you_mean(set_name, sets)} "
                               f"Available: {', '.join(sets)}")


def run(params: StageView, layout: Layout, set_name: str) -> dict:
    """The `calibration@<set>` stage; `params`: its own (PARAMS, for `set_name`)."""
    from pipeline.models import load_tokenizer

    root = layout.root
    sets = params.calibration.sets
    check_set(sets, set_name)
    cs, edges = sets[set_name], list(params.calibration.length_buckets)
    data_dir = layout.data
    tokenizer = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    counters: Counter[str] = Counter()
    n_general = cs.num_samples if cs.source == "general" else round(cs.general_ratio * cs.num_samples)
    plans, where, paths = [], {}, {}
    inputs = {}
    dd = params.split.dedup
    pool = functools.partial(_pool, workers=worker_count(params.split.workers),
                             initargs=(tokenizer, cs, dd.near_threshold, dd.num_perm))
    if n_general < cs.num_samples:
        paths["business"] = data_dir / "pools" / CALIBRATION_POOL
        inputs["calibration_pool"] = file_sha256(paths["business"])
        items, found = _scan(paths["business"], "business", pool, edges, counters)
        where |= found
        keep = _rotation_keep(cs, root, set(found))
        plans.append(("business", stratify(items, num_samples=cs.num_samples - n_general,
                                           hard_share_min=cs.hard_share_min, seed=cs.seed,
                                           policy=cs.quota_policy, scenario_weights=cs.scenario_weights,
                                           keep=keep)))
    if n_general:
        if params.data.general_corpus is None:
            raise CalibrationError(f"calibration set {set_name!r} needs data.general_corpus")
        paths["general"] = root / params.data.general_corpus
        inputs["general_corpus"] = file_sha256(paths["general"])
        items, found = _scan(paths["general"], "general", pool, edges, counters)
        where |= found
        plans.append(("general", stratify(items, num_samples=n_general, seed=cs.seed,
                                          policy=cs.quota_policy)))
    # The general corpus goes through the same scrubber as the business logs (same switch).
    from pipeline.calibration.pii import PlaceholderMap, Scrubber

    scrubber = Scrubber(pii_config(params, root))
    general_counts: Counter[str] = Counter()

    def scrub(text: str) -> str:
        mapping = PlaceholderMap()
        out = scrubber.scrub_text(text, mapping)
        general_counts.update(mapping.counts)
        return out

    selected = _materialize([it for _, plan in plans for it in plan.selected], where, paths,
                            tokenizer, cs, edges, scrub=scrub if n_general else None)
    overlap = _overlap_with_eval(data_dir, selected, params, pool)
    if overlap["by_id"] or overlap["near_duplicates"]:
        raise CalibrationError(f"calibration set {set_name!r} overlaps the evaluation set: {overlap} — "
                               "the split must keep them disjoint; re-run `qpipe calib split`")
    card = _card(params, set_name, cs, plans, selected, counters, overlap, inputs, data_dir)
    if n_general:
        card["general_pii"] = {"enabled": scrubber.enabled,
                               "replacements": dict(sorted(general_counts.items()))}
    with atomic_dirs(layout.calibration_sets, [set_name]) as staged:
        d = staged[set_name]
        samples = [CalibrationSample(**{k: v for k, v in r.items() if not k.startswith("_")}) for r in selected]
        with (d / SAMPLES).open("w", encoding="utf-8") as fh:
            fh.writelines(record_line(sample) for sample in samples)
        card["content_sha256"] = file_sha256(d / SAMPLES)
        _write_parquet(d / CALIBRATION_DATA, samples)
        (d / IMATRIX).write_text("\n\n".join(sample.text for sample in samples) + "\n", encoding="utf-8")
        # every file a quantizer reads, by hash: the quantize stage checks them before use
        card["files_sha256"] = {n: file_sha256(d / n) for n in CONSUMED}
        card = CalibrationCard.model_validate(card).dump()  # the contract, with its schema id
        write_json(d / CARD, card)
        (d / CARD_MD).write_text(card_markdown(card), encoding="utf-8")
    log.info("calibration set %s: %d samples, sha256 %s", set_name, len(samples), card["content_sha256"][:12])
    return card


# What quantizers read from a calibration set: llm-compressor and the other backends the
# Parquet rows, llama.cpp's imatrix the text file; samples.jsonl is the set's content hash.
CONSUMED = (SAMPLES, CALIBRATION_DATA, IMATRIX)


def _write_parquet(path: Path, samples: list[CalibrationSample]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({c: [getattr(s, c) for s in samples] for c in CalibrationSample.model_fields})
    pq.write_table(table, path, compression="zstd")


def _pool(fn, items, *, workers: int, initargs: tuple):
    return ordered_map(fn, items, workers=workers, initializer=_init_worker, initargs=initargs)


def _overlap_with_eval(data_dir: Path, selected: list[dict], params: StageView, pool=None) -> dict:
    """Selected samples that are evaluation items, by id or as exact or near duplicates of an
    evaluation prompt (the split's own dedup keys: same MinHash, bands and bucket keys)."""
    evalset = data_dir / "evalset" / EVALSET_ITEMS
    dd = params.split.dedup
    if pool is None:  # one process
        pool = functools.partial(_pool, workers=1, initargs=(None, None, dd.near_threshold, dd.num_perm))
    # Compare the prompt turns only: eval prompts lack the final answer the pool rows carry.
    # The (small) selection is indexed and the evaluation set streamed past it.
    sel_keys = [dedup_keys_of(r["_dedup"], dd.near_threshold, dd.num_perm) for r in selected]
    selected_ids = {r["id"] for r in selected}
    in_eval: set[str] = set()
    eval_keys = []
    with evalset.open(encoding="utf-8") as fh:
        for eval_id, keys in pool(_eval_keys_chunk, fh):
            if eval_id in selected_ids:
                in_eval.add(eval_id)
            eval_keys.append(keys)
    by_id = sum(r["id"] in in_eval for r in selected)
    pairs = near_duplicate_pairs(sel_keys, eval_keys)
    return {"by_id": by_id, "near_duplicates": len(pairs), "evalset_sha256": file_sha256(evalset)}


def _business_provenance(data_dir: Path) -> dict:
    """What the business part of a set went through (sources, PII, rejects, dedup)."""
    r = SplitReport.load(data_dir / "split" / SplitReport.FILE)
    return {"sources_sha256": r.sources, "pii": r.pii.model_dump(),
            "rejects_by_reason": r.ingest.rejected_by_reason,
            "dedup": {k: v for k, v in r.split.items() if "duplicates" in k}}


def _card(params: StageView, set_name, cs, plans, selected, counters, overlap, inputs, data_dir) -> dict:
    # A set with no business samples must not change when the business logs do.
    uses_business = any(src == "business" for src, _ in plans)
    business = _business_provenance(data_dir) if uses_business else {
        "sources_sha256": {}, "pii": {"enabled": None, "replacements": {}},
        "rejects_by_reason": {}, "dedup": {}}
    lengths = sorted(r["n_tokens"] for r in selected)
    comp = Counter(f"{r['scenario']}|{r['length_bucket']}|{r['difficulty'] or 'unlabelled'}" for r in selected)
    return {
        "name": set_name, "content_sha256": None, "samples": len(selected),
        "params": {"set": cs.model_dump(mode="json"), "length_buckets": list(params.calibration.length_buckets),
                   "model": str(params.model.path)},
        "inputs_sha256": inputs,
        "sources_sha256": business["sources_sha256"],
        "composition": dict(sorted(comp.items())),
        "by_scenario": dict(sorted(Counter(r["scenario"] for r in selected).items())),
        "by_difficulty": dict(sorted(Counter(r["difficulty"] or "unlabelled" for r in selected).items())),
        "hard_share": round(sum(r["difficulty"] == "hard" for r in selected) / max(1, len(selected)), 4),
        "token_lengths": {"min": lengths[0] if lengths else 0, "median": median(lengths) if lengths else 0,
                          "max": lengths[-1] if lengths else 0, "total": sum(lengths),
                          "histogram": dict(sorted(Counter(r["length_bucket"] for r in selected).items()))},
        "quotas": {src: plan.quotas for src, plan in plans},
        "shortfalls": {src: [str(s) for s in plan.shortfalls] for src, plan in plans},
        "filled_from_neighbours": {src: plan.filled for src, plan in plans},
        "rotation": {"kept_from_previous": sum(p.kept_from_previous for _, p in plans),
                     **(cs.rotation.model_dump(mode="json") if cs.rotation else {})},
        "length_filter": dict(sorted(counters.items())),
        "pii": business["pii"],
        "rejects_by_reason": business["rejects_by_reason"],
        "dedup": business["dedup"],
        "overlap_with_evalset": overlap,
    }


def card_markdown(card: dict) -> str:
    pii_state = {True: "on", False: "**OFF**"}.get(card["pii"]["enabled"], "n/a (no business samples)")
    lines = [f"# Calibration set `{card['name']}`", "",
             f"- samples: **{card['samples']}**, content SHA256 `{card['content_sha256']}`",
             f"- hard share: {card['hard_share']:.0%}; tokens min/median/max "
             f"{card['token_lengths']['min']}/{card['token_lengths']['median']}/{card['token_lengths']['max']}",
             f"- overlap with the evaluation set: {card['overlap_with_evalset']['by_id']} by id, "
             f"{card['overlap_with_evalset']['near_duplicates']} near duplicates",
             f"- PII scrubbing: {pii_state}; replacements "
             + ", ".join(f"{k} {v}" for k, v in card["pii"]["replacements"].items()),
             *([f"- PII scrubbing of the general corpus: "
                f"{ {True: 'on', False: '**OFF**'}[card['general_pii']['enabled']] }; replacements "
                + (", ".join(f"{k} {v}" for k, v in card["general_pii"]["replacements"].items()) or "none")]
               if card.get("general_pii") else []),
             "- rejected source records: "
             + (", ".join(f"{k} {v}" for k, v in card["rejects_by_reason"].items()) or "none"),
             "", "| scenario | samples |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in card["by_scenario"].items()]
    for src, short in card["shortfalls"].items():
        for s in short:
            lines.append(f"\n> shortfall ({src}): {s}; filled from neighbours per quota_policy")
    return "\n".join(lines) + "\n"


__all__ = ["run", "CalibrationError", "QuotaError", "card_markdown"]


def summary_line(set_name: str, card: dict) -> str:
    """One line per built set for the terminal: its name, size and content hash."""
    return f"{set_name}: {card['samples']} samples, sha256 {card['content_sha256']}"
