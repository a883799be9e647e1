"""`gate_calibration`: how this model's distribution signals relate to its business accuracy.

The KL divergence a quantized variant shows says nothing by itself: its scale is the model's
(the demo model's Q8_0 measures 4e-6 nats per token, a real 135M model's 1e-3). This stage
measures the relation for the user's own model on the user's own evaluation items, once (DVC
caches it until the model, the evaluation set or this section change), so `compare` can turn each
profile's business margin into a signal limit (pipeline.stats.gate_limits).

A ladder of controlled perturbations of the reference weights: Gaussian noise added to every
Linear weight but the LM head, each tensor getting noise of `scale` × its own standard deviation
(one seed per step), the scale growing geometrically (`start` × `factor`^k) until the accuracy
drop reaches `target_drop` (or the reference's accuracy is nearly gone, or `max_steps`). At each
step, on the same seeded sample of evaluation items, with the engine held fixed (the transformers
reference, float32, greedy, `evaluate.max_tokens`):

- business accuracy, scored by the evaluation's own scorers, paired against the unperturbed
  model's greedy outputs on the same engine (so no engine difference is counted as a loss);
- the signals exactly as divergence@<variant> computes them, teacher-forced along the served
  reference's outputs: per-item mean token KL(P_reference ‖ P_step), top-1 agreement, and
  whether the item's task result changed (flips, both ways).

Per-item values are kept, so `compare` can resample items for the limit's uncertainty.
Nothing in the output depends on the run (no times): unchanged inputs keep its DVC hash.

    qpipe gate-calibration               # → results/gate-calibration/calibration.json
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import numpy as np

from pipeline import progress
from pipeline.io import atomic_dirs, write_json
from pipeline.layout import Layout
from pipeline.stage_params import Declared, StageView
from pipeline.contracts.files import GATE_CALIBRATION, GATE_CALIBRATION_SCHEMA
from pipeline.contracts import GateCalibration

log = logging.getLogger(__name__)
SCHEMA = GATE_CALIBRATION_SCHEMA
FILE = GATE_CALIBRATION
PARAMS = Declared("gate_calibration", "model", "evaluate.evalset", "evaluate.max_tokens",
                  "divergence.reference", "variants.${divergence.reference}", "gate_calibration")


def perturbed(model, scale: float, seed: int):
    """A copy of `model` with noise of `scale` × each Linear weight's standard deviation added
    (the LM head, embeddings and norms untouched)."""
    import torch

    out = copy.deepcopy(model)
    g = torch.Generator(device="cpu").manual_seed(seed)
    with torch.no_grad():
        for name, mod in out.named_modules():
            if isinstance(mod, torch.nn.Linear) and "lm_head" not in name:
                w = mod.weight
                noise = torch.randn(w.shape, generator=g).to(device=w.device, dtype=w.dtype)
                w.add_(noise * w.float().std().to(w.dtype) * scale)
    return out


def generate(model, tokenizer, prompts: list[list[int]], max_tokens: int, batch: int) -> list[list[int]]:
    """Greedy answers' token ids (up to and with the end-of-sequence token), batched with left
    padding (the same batches for every step)."""
    import torch

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos = tokenizer.eos_token_id
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    out: list[list[int]] = [[] for _ in prompts]
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        width = max(len(prompts[i]) for i in idx)
        ids = torch.full((len(idx), width), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for r, i in enumerate(idx):
            ids[r, width - len(prompts[i]):] = torch.tensor(prompts[i])
            mask[r, width - len(prompts[i]):] = 1
        ids, mask = ids.to(model.device), mask.to(model.device)
        with torch.no_grad():
            gen = model.generate(ids, attention_mask=mask, max_new_tokens=max_tokens,
                                 do_sample=False, pad_token_id=pad)
        for r, i in enumerate(idx):
            new = gen[r, width:].tolist()
            if eos in new:
                new = new[:new.index(eos) + 1]
            out[i] = new
    return out


def sample_items(n: int, size: int | None, seed: int) -> list[int]:
    """A seeded sample of item positions (all of them when `size` is None or ≥ n), in order."""
    if size is None or size >= n:
        return list(range(n))
    return sorted(int(i) for i in np.random.default_rng(seed).choice(n, size, replace=False))


def signals(base, model, prompts, outputs) -> list[dict[str, Any]]:
    """Per item, teacher-forced along the served reference's outputs, as divergence@ computes
    them: the mean token KL, top-1 agreements and the number of output tokens."""
    from pipeline.evaluate.divergence import CHUNK, item_signals
    from pipeline.evaluate.passes import chunk_passes

    rows = []
    for start in range(0, len(prompts), CHUNK):
        chunk = [(prompts[i], outputs[i], []) for i in range(start, min(start + CHUNK, len(prompts)))]
        passes = chunk_passes(base, model, chunk)
        for c in chunk:
            sig = item_signals(base, model, *c, passes)
            kl = sig.get("kl") or []
            rows.append({"kld": round(float(np.mean(kl)), 8) if kl else 0.0,
                         "top1_agree": int(sig.get("top1_agree", 0)), "tokens": len(kl)})
    return rows


def run(params: StageView, layout: Layout) -> dict[str, Any]:
    """results/gate-calibration/calibration.json (`params`: the stage's own, PARAMS)."""
    from pipeline.artifacts.manifest import require_verified
    from pipeline.evaluate import reference_passes as rp
    from pipeline.evaluate.divergence import load_reference
    from pipeline.evaluate.scorers import score
    from pipeline.models import load_tokenizer

    cfg = params.gate_calibration
    reference = params.divergence.reference
    dest = layout.gate_calibration
    art = layout.artifact(reference)
    manifest = require_verified(art)
    tokenizer = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    tf = rp.teacher_forced(params, layout, tokenizer)
    pick = sample_items(len(tf["items"]), cfg.items, cfg.seed)
    items = [tf["items"][i] for i in pick]
    prompts = [tf["prompts"][i] for i in pick]
    outputs = [tf["outputs"][i] for i in pick]
    base = load_reference(art, device=cfg.device)
    max_tokens = params.evaluate.max_tokens

    def correct(model, label: str) -> list[int]:
        with progress.task(f"gate calibration: {label}", total=1) as shown:
            answers = generate(model, tokenizer, prompts, max_tokens, cfg.batch)
            shown.advance()
        texts = [tokenizer.decode(a, skip_special_tokens=True) for a in answers]  # as the engine does
        return [int(score(it.rubric, it.reference, t).value >= 1.0) for it, t in zip(items, texts)]

    base_correct = correct(base, "the reference")
    base_acc = float(np.mean(base_correct))
    steps: list[dict[str, Any]] = []
    for k in range(cfg.max_steps):
        scale = cfg.start * cfg.factor ** k
        model = perturbed(base, scale, cfg.seed + k + 1)
        got = correct(model, f"step {k + 1}/{cfg.max_steps}, noise ×{scale:.3g}")
        rows = signals(base, model, prompts, outputs)
        del model
        steps.append(step_record(scale, cfg.seed + k + 1, base_correct, got, rows))
        log.info("gate calibration step %d: noise ×%.3g, accuracy %+.1f pts, mean KL %.3g", k + 1,
                 scale, -100 * steps[-1]["drop"], steps[-1]["kld_item_mean"])
        if steps[-1]["drop"] >= min(cfg.target_drop, 0.8 * base_acc):
            break
    result = {"schema": SCHEMA, "reference": reference, "artifact_sha256": manifest.content_sha256,
              "evalset_sha256": tf["evalset_sha256"], "method": _method(cfg, max_tokens),
              "items": [it.id for it in items], "base_correct": base_correct,
              "base_accuracy": round(base_acc, 6), "steps": steps}
    if not steps or steps[-1]["drop"] < min(cfg.target_drop, 0.8 * base_acc):
        result["note"] = (f"the ladder stopped after {len(steps)} steps without losing "
                          f"{100 * cfg.target_drop:.0f} points: margins beyond its largest drop "
                          "cannot be calibrated (raise gate_calibration.max_steps or start)")
    with atomic_dirs(dest.parent, [dest.name]) as staged:
        write_json(staged[dest.name] / FILE, GateCalibration.read(result, dest / FILE).dump())
    return result


def step_record(scale: float, seed: int, base: list[int], got: list[int],
                rows: list[dict[str, Any]]) -> dict[str, Any]:
    b, g = np.asarray(base, bool), np.asarray(got, bool)
    tokens = sum(r["tokens"] for r in rows)
    return {"scale": round(scale, 8), "seed": seed, "accuracy": round(float(g.mean()), 6),
            "drop": round(float(b.mean() - g.mean()), 6), "lost": int((b & ~g).sum()),
            "gained": int((~b & g).sum()),
            "kld_item_mean": round(float(np.mean([r["kld"] for r in rows])), 8),
            "top1_agreement": round(sum(r["top1_agree"] for r in rows) / tokens, 6) if tokens else None,
            "task_disagreement": round(float((b != g).mean()), 6),
            "correct": [int(x) for x in g], "kld": [r["kld"] for r in rows],
            "top1_agree": [r["top1_agree"] for r in rows], "tokens": [r["tokens"] for r in rows]}


def _method(cfg, max_tokens: int) -> str:
    return (f"Gaussian noise ×scale×std on every Linear weight but the LM head, scale "
            f"{cfg.start:g}×{cfg.factor:g}^k, one seed per step; transformers reference, float32 "
            f"on {cfg.device}, "
            f"greedy, {max_tokens} new tokens; accuracy paired against the unperturbed model on the "
            "same engine; signals teacher-forced along the served reference's outputs")


def summary_line(r: dict[str, Any]) -> str:
    last = r["steps"][-1] if r["steps"] else {}
    return (f"gate calibration on {len(r['items'])} items: reference accuracy {r['base_accuracy']:.3f}, "
            f"{len(r['steps'])} steps, largest drop {100 * last.get('drop', 0):.1f} pts at mean KL "
            f"{last.get('kld_item_mean', 0):.3g}")
