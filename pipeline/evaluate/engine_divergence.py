"""Distribution-level signals taken from the serving engine itself, where it exposes them.

vLLM returns the log-probabilities of every prompt position (`prompt_logprobs`: the top-k tokens
and the actual one). Feeding each evaluation item's prompt + the baseline's greedy output as the
prompt (one generated token) teacher-forces the engine along the same path as the exact
transformers measure (pipeline.evaluate.divergence), but with the engine's own kernels — the
quantized matmuls vLLM runs in production, activation quantization included.

The approximation, stated with every figure: at each position the KL divergence is summed over
the baseline's top-k tokens only, KL ≈ Σ_{i ∈ topk_base} p_b(i) · (log p_b(i) − log p_v(i)), where
a token missing from the variant's top-k gets the variant's smallest returned log-probability
(an upper bound on its probability, so a lower bound on that term). The baseline's probability
mass outside its top-k is reported beside the figure. Top-1 agreement is exact.

llama.cpp's server returns no prompt log-probabilities, and `llama-perplexity --kl-divergence`
reads raw text without parsing special tokens, which puts a chat-template model off its
distribution. So GGUF variants keep the exact transformers measure only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pipeline.engines.base import EngineError

ENGINES = ("vllm",)  # engines that return prompt log-probabilities


def prompt_logprobs(engine, ids: list[int], k: int) -> list[dict[int, float] | None]:
    """Per prompt position: {token id: log-probability} for the top-k tokens and the actual
    token, as the engine computed them (position 0 has none)."""
    body = {"model": engine.served_name(), "prompt": ids, "max_tokens": 1, "temperature": 0.0,
            "prompt_logprobs": k, "stream": False}
    r = engine._client.post("/v1/completions", json=body)  # noqa: SLF001 (its own connection)
    if r.status_code != 200:
        raise EngineError(f"{engine.name} refused prompt_logprobs (HTTP {r.status_code}): "
                          f"{r.text[:300]}")
    rows = r.json()["choices"][0].get("prompt_logprobs")
    if rows is None:
        raise EngineError(f"{engine.name} returned no prompt_logprobs")
    return [None if row is None else {int(t): float(v["logprob"]) for t, v in row.items()}
            for row in rows]


def along(engine, items: list[tuple[list[int], list[int]]], k: int) -> list[list[dict[int, float]]]:
    """For each (prompt, continuation): the engine's top-k log-probabilities at the positions
    that predict the continuation."""
    out = []
    for prompt, cont in items:
        if not cont:
            out.append([])
            continue
        rows = prompt_logprobs(engine, prompt + cont, k)
        # rows[j] is the distribution that predicted token j: positions len(prompt)…end
        out.append([rows[j] or {} for j in range(len(prompt), len(prompt) + len(cont))])
    return out


def position_signals(base: dict[int, float], var: dict[int, float], k: int) -> tuple[float, bool, float]:
    """(approximate KL, same top-1, baseline mass outside its top-k) at one position."""
    top_b = sorted(base.items(), key=lambda kv: -kv[1])[:k]
    floor = min(var.values()) if var else -math.inf
    kl = sum(math.exp(lb) * (lb - var.get(t, floor)) for t, lb in top_b)
    same = bool(top_b) and bool(var) and top_b[0][0] == max(var.items(), key=lambda kv: kv[1])[0]
    tail = max(0.0, 1.0 - sum(math.exp(lb) for _, lb in top_b))
    return max(kl, 0.0), same, tail


def item_signals(base_rows: list[dict[int, float]], var_rows: list[dict[int, float]], k: int) -> dict:
    vals = [position_signals(b, v, k) for b, v in zip(base_rows, var_rows)]
    if not vals:
        return {}
    return {"engine_kl": [round(x[0], 7) for x in vals], "engine_top1_agree": sum(x[1] for x in vals),
            "engine_tail_mass": round(float(np.mean([x[2] for x in vals])), 6)}


def summarize(rows: list[dict], k: int) -> dict[str, Any]:
    kls = [x for r in rows for x in r.get("engine_kl", [])]
    if not kls:
        return {"items": len(rows), "tokens": 0}
    item_kl = [float(np.mean(r["engine_kl"])) for r in rows if r.get("engine_kl")]
    return {"items": len(rows), "tokens": len(kls), "top_k": k,
            "kld_mean": round(float(np.mean(kls)), 7), "kld_item_mean": round(float(np.mean(item_kl)), 7),
            "kld_p99": round(float(np.percentile(kls, 99)), 7),
            "top1_agreement": round(sum(r.get("engine_top1_agree", 0) for r in rows) / len(kls), 6),
            "baseline_tail_mass": round(float(np.mean([r["engine_tail_mass"] for r in rows
                                                       if "engine_tail_mass" in r])), 6)}
