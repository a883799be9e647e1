"""The business's own traffic, for a replay: requests drawn from the evaluation set — the logs'
held-out conversations, already scrubbed of PII by the split — with each request's output length
the length of the answer the logs hold for it, so prompt and output lengths follow the logs'
distributions per scenario, the long tail included.

A mix names how the requests are drawn: as the logs are (`long_share: null`), or with a fixed
share from the logs' long tail (prompts above `traffic.long_quantile` of the prompt lengths) — the
80/20 short/long mix of a production upgrade test. Same items, seed and params: the same requests
in the same order.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.io import write_json


def request_pool(items, prompts: list[list[int]], tokenizer, max_output_tokens: int) -> list[dict[str, Any]]:
    """One candidate request per evaluation item: its prompt as the engine's text (the chat
    template applied, special tokens kept), prompt and output lengths in tokens, its scenario."""
    out = []
    for item, ids in zip(items, prompts, strict=True):
        answer = tokenizer(item.reference or "", add_special_tokens=False)["input_ids"]
        out.append({"id": item.id, "prompt": tokenizer.decode(ids, skip_special_tokens=False),
                    "prompt_tokens": len(ids),
                    "output_tokens": int(min(max(len(answer), 1), max_output_tokens)),
                    "scenario": item.slices.get("scenario", "all")})
    return out


def draw(pool: list[dict[str, Any]], n: int, long_share: float | None, long_quantile: float,
         seed: int) -> tuple[list[dict[str, Any]], float]:
    """`n` requests from `pool` (seeded; with replacement only where a part of the pool is smaller
    than its draw). Returns them and the prompt-length threshold of "long"."""
    rng = np.random.default_rng(seed)
    lengths = np.array([r["prompt_tokens"] for r in pool])
    threshold = float(np.quantile(lengths, long_quantile))
    if long_share is None:
        idx = list(rng.choice(len(pool), size=n, replace=n > len(pool)))
    else:
        long = np.flatnonzero(lengths > threshold)
        short = np.flatnonzero(lengths <= threshold)
        k = int(round(n * long_share))
        if k and not len(long):
            raise ValueError(f"no prompt is longer than the {long_quantile:.0%} quantile ({threshold:.0f} tokens)")
        idx = [*rng.choice(long, size=k, replace=k > len(long)),
               *rng.choice(short, size=n - k, replace=n - k > len(short))]
        rng.shuffle(idx)
    return [{**pool[int(i)], "long": bool(lengths[int(i)] > threshold)} for i in idx], threshold


def write_mix(requests: list[dict[str, Any]], folder: Path, name: str, threshold: float) -> dict[str, Any]:
    """`<name>.jsonl` (what the load generator reads: `prompt`, `output_tokens_count`) and the
    mix's card: its composition and length distributions."""
    with (folder / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
        for r in requests:
            fh.write(json.dumps({"prompt": r["prompt"], "output_tokens_count": r["output_tokens"]}) + "\n")
    p = np.array([r["prompt_tokens"] for r in requests])
    o = np.array([r["output_tokens"] for r in requests])
    card = {"requests": len(requests), "long_threshold_tokens": threshold,
            "long_share": round(float(np.mean([r["long"] for r in requests])), 4),
            "scenarios": dict(sorted(Counter(r["scenario"] for r in requests).items())),
            "prompt_tokens": _quantiles(p), "output_tokens": _quantiles(o),
            "items": [r["id"] for r in requests]}
    write_json(folder / f"{name}.card.json", card)
    return card


def _quantiles(v: np.ndarray) -> dict[str, float]:
    return {k: float(np.quantile(v, q)) for k, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))}
