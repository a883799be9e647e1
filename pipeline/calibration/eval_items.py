"""Evaluation items: a scorable record's prompt, gold reference, rubric and slices, its prompt
measured in tokens as the engines see it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pipeline.calibration.dedup import DedupKeys
from pipeline.contracts import EvalItem
from pipeline.io import jsonl_line


@dataclass(frozen=True)
class EvalJob:
    """What building evaluation items needs (picklable, for spawn-started workers)."""

    tokenizer: object  # counts prompt tokens with the chat template
    edges: tuple[int, ...]  # length-bucket edges, in tokens


@dataclass(frozen=True)
class EvalEntry:
    """An evaluation-pool record as pass 2 takes it: its id, dedup keys, evaluation item line
    (None: not scorable) and slice labels."""

    rec_id: str
    keys: DedupKeys
    item_line: str | None = None
    slices: tuple[str, ...] = ()


def length_bucket(n_tokens: int, edges: list[int]) -> str:
    """The label of the length bucket ``n_tokens`` falls in (``edges`` ascending, inclusive)."""
    lo = 0
    for edge in edges:
        if n_tokens <= edge:
            return f"{lo + 1}-{edge}" if lo else f"<={edge}"
        lo = edge
    return f">{edges[-1]}"


def with_items(entries: list[EvalEntry], recs: list[dict], job: EvalJob) -> list[EvalEntry]:
    """``entries`` completed with the evaluation items of their records ``recs`` (scrubbed,
    pseudonymised), the prompts of the whole chunk tokenized in one call."""
    if not entries:
        return []
    items = eval_entries(recs, job.tokenizer, list(job.edges))
    return [dataclasses.replace(entry, item_line=line, slices=slices)
            for entry, (line, slices) in zip(entries, items)]


def eval_entries(recs: list[dict], tokenizer, edges: list[int]) -> list[tuple[str | None, tuple[str, ...]]]:
    """(evaluation item line or None when not scorable, slice labels) per record, the scorable
    prompts tokenized in one call (a fast tokenizer encodes a batch at once)."""
    prompts = {i: prompt for i, rec in enumerate(recs) if (prompt := eval_prompt(rec)) is not None}
    n_tokens = dict(zip(prompts, prompt_tokens([messages for messages, _ in prompts.values()], tokenizer)))
    out = []
    for i, rec in enumerate(recs):
        if i not in prompts:
            out.append((None, ()))
            continue
        item = eval_item(rec, *prompts[i], n_tokens[i], edges)
        line = jsonl_line(EvalItem.model_validate(item).line())  # the contract, typed
        out.append((line, tuple(f"{k}={v}" for k, v in item["slices"].items())))
    return out


def eval_prompt(rec: dict) -> tuple[list[dict], str] | None:
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


def prompt_tokens(prompts: list[list[dict]], tokenizer) -> list[int]:
    """Token counts of the prompts as the engines see them (chat template, generation prompt),
    tokenized in one call (a fast tokenizer encodes the batch on every core)."""
    if not prompts:
        return []
    texts = [tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in prompts]
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def eval_item(rec: dict, messages: list[dict], reference: str, n_tokens: int, edges: list[int]) -> dict:
    """The evaluation item of a record: its prompt (``messages``, ``n_tokens`` long with the
    chat template), gold reference, rubric and slices."""
    slices = {"scenario": rec["scenario"], "difficulty": rec.get("difficulty") or "unlabelled",
              "segment": rec.get("segment") or "unknown",
              "length_bucket": length_bucket(n_tokens, edges)}
    return {"id": rec["id"], "conversation_id": rec["conversation_id"],
            "timestamp": rec["timestamp"], "messages": messages, "reference": reference,
            "rubric": rec.get("rubric") or {"type": "exact"}, "tools": rec.get("tools"),
            "prompt_tokens": n_tokens, "slices": slices}
