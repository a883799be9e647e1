"""The long-generation probe of divergence@<variant> (docs/rationale.md#long-generation): a few prompts generated
greedily to the model's context limit, EOS ignored — where each starts looping, the share of
repeated 4-grams, and the per-token entropy by quarter of the generation. Prompts of one length
are generated together (one batch, no padding: the same tokens as one at a time)."""

from __future__ import annotations

from typing import Any

import numpy as np

LONG_WINDOW = 128  # the long-generation probe scans for loops in windows of this many tokens


def long_generation(model, prompts: list[list[int]], max_len: int) -> list[dict[str, Any]]:
    """The probe on prompts of one length (generated together, no padding): generate
    greedily to the context limit, ignoring EOS, and measure where each starts looping and how the
    per-token entropy of the model's distribution evolves — the failure (coherent for a few
    hundred tokens, then looping) that short answers never show."""
    import torch

    assert len({len(p) for p in prompts}) == 1, "prompts of one length"
    new = max_len - len(prompts[0])
    if new < 2 * LONG_WINDOW:
        return [{"skipped": f"prompt of {len(p)} tokens leaves under {2 * LONG_WINDOW} of {max_len}"}
                for p in prompts]
    with torch.no_grad():
        ids = torch.tensor(prompts, device=model.device)
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new,
                             min_new_tokens=new, do_sample=False, output_scores=True,
                             return_dict_in_generate=True, pad_token_id=0)
    return [_long_run(out.sequences[row, len(prompts[0]):].tolist(), [s[row] for s in out.scores])
            for row in range(len(prompts))]


def _long_run(tokens: list[int], scores: list) -> dict[str, Any]:
    import torch

    # EOS is masked to reach the limit; the entropy is that of the remaining distribution
    ent = [float(-(torch.log_softmax(s.float(), -1).exp() * torch.log_softmax(s.float(), -1))
                 .nan_to_num().sum()) for s in scores]
    quarters = [round(float(np.mean(q)), 5) for q in np.array_split(np.asarray(ent), 4)]
    loop_at = None
    for start in range(0, len(tokens) - LONG_WINDOW + 1, LONG_WINDOW // 4):
        w = tokens[start:start + LONG_WINDOW]
        grams = [tuple(w[i:i + 4]) for i in range(len(w) - 3)]
        if 1 - len(set(grams)) / len(grams) > 0.5:  # most 4-grams of the window are repeats
            loop_at = start
            break
    grams = [tuple(tokens[i:i + 4]) for i in range(len(tokens) - 3)]
    return {"tokens": len(tokens), "loop_start": loop_at,
            "repeated_4gram_share": round(1 - len(set(grams)) / max(len(grams), 1), 4),
            "entropy_by_quarter": quarters,
            "entropy_last_over_first": round(quarters[3] / quarters[0], 4) if quarters[0] > 0 else None}


def long_probe(model, prompts: list[list[int]], max_len: int) -> dict[str, Any]:
    """The probe on these prompts (those of one length generated together), with a summary;
    compare puts a variant's beside the baseline's own (divergence@<baseline>)."""
    runs: list = [None] * len(prompts)
    for length in sorted({len(p) for p in prompts}):
        idx = [i for i, p in enumerate(prompts) if len(p) == length]
        for i, r in zip(idx, long_generation(model, [prompts[i] for i in idx], max_len)):
            runs[i] = r
    out: dict[str, Any] = {"prompts": len(prompts), "max_len": max_len, "runs": runs}
    done = [r for r in runs if "tokens" in r]
    if done:
        ratios = [r["entropy_last_over_first"] for r in done if r["entropy_last_over_first"]]
        out["summary"] = {
            "looping": sum(r["loop_start"] is not None for r in done),
            "repeated_4gram_share": round(float(np.mean([r["repeated_4gram_share"] for r in done])), 4),
            "entropy_last_over_first": round(float(np.mean(ratios)), 4) if ratios else None}
    return out
