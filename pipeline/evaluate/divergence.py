"""`divergence@<variant>`: distribution-level regression signals against the baseline, per
sample and per slice — far more sensitive than pass/fail accuracy on a few hundred items.

For every evaluation item, the baseline and the variant read the SAME token ids (teacher
forcing, no generation):

- along the baseline's own greedy output (its evaluation's outputs, re-tokenized with the base
  tokenizer): the token-level KL divergence KL(P_baseline ‖ P_variant) at every output position
  (mean and p99 over tokens), and top-1 agreement (the share of positions where both models'
  most likely next token is the same);
- along the gold reference answer: the paired change in log-likelihood per token
  (variant − baseline), with a paired bootstrap interval per slice (a continuous metric);
- the long-generation probe (docs/rationale.md#long-generation): a few prompts generated greedily to the model's
  context limit, EOS ignored, by the baseline and the variant: where each starts looping, the
  share of repeated 4-grams, and the per-token entropy by quarter of the generation.

Both models run in the transformers reference, on the full vocabulary (exact, no top-k
approximation), in float32, a few right-padded sequences per forward pass. Quantized weights are
what transformers loads from the artifact: compressed-tensors decompressed, GGUF dequantized by
gguf-py — so this measures the error of the quantized WEIGHTS with the engine held fixed; kernel
effects of the serving engine (activation quantization in llama.cpp's dot products, say) are not
in it. A format that transformers cannot load here is recorded as not measured, with why.

    qpipe divergence gguf_q4_k_m_business    # → results/divergence/<variant>/
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import progress
from pipeline.stage_params import Declared, StageView
from pipeline.engines.base import Engine, get_engine
from pipeline.errors import QpipeError
from pipeline.io import atomic_dirs, write_json
from pipeline.layout import Layout
from pipeline.evaluate.passes import (logprobs, chunk_passes, chunk_sequences, continuation, loglik,
                                     sequence_passes)
from pipeline.contracts.files import DIVERGENCE_SCHEMA, METRICS, SAMPLES
from pipeline.contracts import DivergenceRecord, DivergenceResult, Metrics, SampleRecord, read_lines
from pipeline.contracts.records import line

log = logging.getLogger(__name__)
SCHEMA = DIVERGENCE_SCHEMA
# the variant and the reference (divergence.reference); `engines`: both are served with their
# settings for the engine-side signals
PARAMS = Declared("divergence", "model", "engines", "evaluate.evalset", "divergence", "variants.${key}",
                  "variants.${divergence.reference}")
# Formats whose quantized weights transformers reproduces exactly: a checkpoint, compressed-
# tensors (decompressed), GGUF (dequantized by gguf-py), MLX (dequantized by mlx_lm.convert in
# the mlx environment). Others are recorded as not measured.
LOADABLE = ("hf", "compressed-tensors", "gguf", "mlx")


class DivergenceError(QpipeError, RuntimeError):
    pass


def torch_device(setting: str) -> str:
    """divergence.device / gate_calibration.device: "auto" is cuda where torch sees a GPU."""
    import torch

    if setting == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if setting == "cuda" and not torch.cuda.is_available():
        raise DivergenceError("device: cuda, but torch sees no GPU here — fix: set the stage's "
                              "`device` to cpu or auto in params.yaml")
    return setting


def load_reference(artifact: Path, *, engine: type[Engine] | None = None, settings: dict[str, Any] | None = None,
                   device: str = "cpu"):
    """The artifact's weights in transformers, float32, on `device` (GGUF: dequantized; a format
    transformers does not load as written: the copy its `engine` dequantizes, with `settings`)."""
    return _load(artifact, engine, settings or {}).to(torch_device(device))


def _load(artifact: Path, engine: type[Engine] | None, settings: dict[str, Any]):
    import torch
    from transformers import AutoModelForCausalLM

    with tempfile.TemporaryDirectory(prefix="qpipe-divergence-") as tmp:
        copy = engine.dequantized_copy(artifact, Path(tmp) / "model", settings) if engine else None
        if copy is not None:
            return AutoModelForCausalLM.from_pretrained(copy, local_files_only=True,
                                                        dtype=torch.float32).eval()
    ggufs = sorted(artifact.glob("*.gguf"))
    weights = [g for g in ggufs if not g.name.startswith("imatrix")]
    kwargs: dict[str, Any] = {"local_files_only": True, "dtype": torch.float32}
    if weights:
        kwargs["gguf_file"] = weights[0].name
    elif not (artifact / "config.json").is_file():
        raise DivergenceError(f"{artifact}: neither a checkpoint (config.json) nor a .gguf file")
    model = AutoModelForCausalLM.from_pretrained(artifact, **kwargs)
    return model.eval()


def item_signals(base, variant, prompt: list[int], output: list[int], reference: list[int],
                 passes: dict | None = None) -> dict:
    """One item: KL and top-1 agreement along the baseline's output, and the change in the gold
    reference's log-likelihood per token. ``variant=None`` means byte-identical weights: the
    signals are exactly what the passes would give (0, full agreement), without running them.
    ``passes``: the sequences' log-probs computed beforehand (`chunk_passes`), else one pass
    per sequence here."""
    out: dict[str, Any] = {"tokens": len(output)}
    if variant is None:  # the very same weights: every signal is exactly zero (or full agreement)
        return out | ({"kl": [0.0] * len(output), "top1_agree": len(output)} if output else {}) \
            | ({"ref_tokens": len(reference), "ref_loglik_delta": 0.0} if reference else {})

    def pair(seq):
        got = (passes or {}).get(tuple(seq))
        if got is not None:
            return got
        start = len(prompt) - 1
        return start, logprobs(base, seq, start), logprobs(variant, seq, start)

    if output:
        first, lb, lv = pair(prompt + output)
        out |= output_signals(continuation(lb, first, len(prompt), len(output)),
                              continuation(lv, first, len(prompt), len(output)))
    if reference:
        if reference != output:  # a greedy output equal to the gold answer reuses its passes
            first, lb, lv = pair(prompt + reference)
        out |= reference_signals(loglik(continuation(lb, first, len(prompt), len(reference)), reference),
                                 loglik(continuation(lv, first, len(prompt), len(reference)), reference),
                                 len(reference))
    return out


def output_signals(pb, pv) -> dict[str, Any]:
    """KL(P_baseline ‖ P_variant) per output position and top-1 agreement, from both models'
    log-probabilities at the positions that predict the output."""
    kl = (pb.exp() * (pb - pv)).sum(-1).clamp_min(0.0)
    return {"kl": [round(float(x), 7) for x in kl], "top1_agree": int((pb.argmax(-1) == pv.argmax(-1)).sum())}


def reference_signals(ll_b: float, ll_v: float, tokens: int) -> dict[str, Any]:
    return {"ref_tokens": tokens, "ref_loglik_delta": round((ll_v - ll_b) / tokens, 7)}


CHUNK = 64  # items whose passes are computed (batched) and held at once

def summarize(rows: list[dict], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Signals over a group of items: KL mean and p99 over output tokens (the mean with a paired
    bootstrap interval over items), top-1 agreement over tokens (and its item-mean complement with
    a bootstrap interval, as the gates judge it), and the mean change in the reference's
    log-likelihood per token with its bootstrap interval."""
    from pipeline.stats.paired import bootstrap_delta

    kls = [k for r in rows for k in r.get("kl", [])]
    tokens = sum(len(r.get("kl", [])) for r in rows)
    item_kl = [float(np.mean(r["kl"])) for r in rows if r.get("kl")]
    ll = [r["ref_loglik_delta"] for r in rows if "ref_loglik_delta" in r]
    out: dict[str, Any] = {"items": len(rows), "tokens": tokens}
    if kls:
        lo, hi = bootstrap_delta(np.zeros(len(item_kl)), item_kl, n=n_boot, seed=seed)
        # per item, the share of its output positions whose most likely token differs
        miss = [1.0 - r.get("top1_agree", 0) / len(r["kl"]) for r in rows if r.get("kl")]
        mlo, mhi = bootstrap_delta(np.zeros(len(miss)), miss, n=n_boot, seed=seed)
        out |= {"kld_mean": round(float(np.mean(kls)), 7), "kld_p99": round(float(np.percentile(kls, 99)), 7),
                "kld_item_mean": round(float(np.mean(item_kl)), 7),
                "kld_item_mean_ci": [round(lo, 7), round(hi, 7)],
                "top1_agreement": round(sum(r.get("top1_agree", 0) for r in rows) / tokens, 6),
                "top1_disagreement_item_mean": round(float(np.mean(miss)), 7),
                "top1_disagreement_item_mean_ci": [round(mlo, 7), round(mhi, 7)]}
    if ll:
        lo, hi = bootstrap_delta(np.zeros(len(ll)), ll, n=n_boot, seed=seed)
        out |= {"ref_loglik_delta": round(float(np.mean(ll)), 7),
                "ref_loglik_delta_ci": [round(lo, 7), round(hi, 7)]}
    return out


def run(params: StageView, layout: Layout, name: str) -> dict[str, Any]:
    """results/divergence/<variant>/: samples.jsonl (per item) and metrics.json (overall and per
    slice); `params`: the stage's own (PARAMS). The reference's side of the passes comes from
    divergence_reference (pipeline.evaluate.reference_passes), computed once for all variants."""
    from pipeline.artifacts.manifest import require_verified
    from pipeline.evaluate import reference_passes as rp
    from pipeline.evaluate.long_probe import long_probe
    from pipeline.models import load_tokenizer

    baseline = params.divergence.reference
    dest = layout.divergence
    base_records = layout.result(baseline) / SAMPLES
    if not base_records.is_file():
        raise DivergenceError(f"{base_records} does not exist — the baseline's greedy outputs are "
                              f"the teacher-forcing path — fix: `dvc repro evaluate@{baseline}`")
    t0 = time.time()
    result: dict[str, Any] = {"schema": SCHEMA, "variant": name, "reference": baseline,
                              "method": "transformers reference, float32, full vocabulary (exact); "
                                        "quantized weights as transformers loads them"}
    base_dir, var_dir = layout.artifact(baseline), layout.artifact(name)
    manifest = require_verified(var_dir)  # the bytes measured are the bytes that ship, or nothing
    fmt = params.variants[name].format
    engine_name = params.variants[name].engine or params.engines.formats.get(fmt)
    engine = get_engine(engine_name) if engine_name else None
    if engine is not None and engine.dequantize_note:
        result["method"] += f"; {engine.dequantize_note}"
    if fmt not in LOADABLE:
        result |= {"measured": False, "why": f"format {fmt!r}: transformers does not load it here "
                                             f"without its own library (measured: {', '.join(LOADABLE)})"}
        return _write(dest, name, result, [])
    base_sha = require_verified(base_dir).content_sha256
    same = manifest.content_sha256 == base_sha
    tokenizer = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    tf = rp.teacher_forced(params, layout, tokenizer)
    stored = None if same else rp.load(params, layout, base_sha, tf)
    try:
        section = getattr(params.engines, engine_name, None) if engine_name else None
        variant = load_reference(var_dir, engine=engine, device=params.divergence.device,
                                 settings=section.model_dump() if section is not None else None)
        # the reference model itself only where its passes are not stored (an architecture with
        # a step after the LM head)
        base = variant if same else load_reference(base_dir, device=params.divergence.device) \
            if stored is None else None
    except (OSError, ValueError, RuntimeError, ImportError, QpipeError) as err:
        result |= {"measured": False, "why": f"transformers cannot load this artifact here: "
                                             f"{str(err).splitlines()[0][:300]}"}
        log.warning("divergence %s: not measured (%s)", name, result["why"])
        return _write(dest, name, result, [])
    items, prompts = tf["items"], tf["prompts"]
    # a sequential evaluation's items only: its signals and its accuracy pair on one sample
    served = served_ids(layout, name)
    idx = [i for i, item in enumerate(items) if served is None or item.id in served]
    if served is not None:
        result["method"] += (f"; the {len(idx)} of {len(items)} items its sequential evaluation served")
    rows = []
    with progress.task(f"divergence {name}", total=len(idx)) as shown:
        for start in range(0, len(idx), CHUNK):
            at = idx[start:start + CHUNK]
            chunk = [(prompts[i], tf["outputs"][i], tf["references"][i]) for i in at]
            if same:
                signals = [item_signals(None, None, *c) for c in chunk]
            elif stored is None:
                passes = chunk_passes(base, variant, chunk)
                signals = [item_signals(base, variant, *c, passes) for c in chunk]
            else:
                signals = stored_signals(variant, stored, at, chunk)
            for i, sig in zip(at, signals):
                rows.append({"id": items[i].id, "slices": items[i].slices, **sig})
                shown.advance()
    cfg = params.divergence
    result["engine"] = engine_measure(params, layout, name, [prompts[i] for i in idx],
                                      [tf["outputs"][i] for i in idx], rows) if cfg.engine_top_k else None
    max_len = cfg.long_max_len or rp.context_length(base_dir)
    shortest = sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), items[i].id))
    probe = [prompts[i] for i in shortest[:cfg.long_prompts]]  # the shortest prompts: most room
    if same:
        result["method"] += (f"; the weights are byte-identical to {baseline}'s (content "
                             f"{manifest.content_sha256[:12]}): token signals are exact zeros "
                             "without the passes")
    elif stored is not None:
        result["method"] += (f"; {baseline}'s distribution from its stored last hidden states and "
                             "LM head (divergence_reference)")
    result |= {"measured": True, "artifact_sha256": manifest.content_sha256,
               "evalset_sha256": tf["evalset_sha256"], "overall": summarize(rows), "slices": {},
               "long_generation": long_probe(variant, probe, max_len) if probe else None,
               "seconds": round(time.time() - t0, 2)}
    keys = sorted({f"{k}={v}" for r in rows for k, v in r["slices"].items()})
    for key in keys:
        k, v = key.split("=", 1)
        result["slices"][key] = summarize([r for r in rows if r["slices"].get(k) == v])
    return _write(dest, name, result, rows)


def served_ids(layout: Layout, name: str) -> set[str] | None:
    """The items `name`'s evaluation served where it stopped early (evaluate.sequential); None
    where it served every item."""
    metrics = layout.result(name) / METRICS
    if not metrics.is_file() or not Metrics.load(metrics).sequential:
        return None
    return {r.id for r in read_lines(SampleRecord, layout.result(name) / SAMPLES, writer=f"evaluate@{name}")}


def stored_signals(variant, stored, at: list[int], chunk) -> list[dict[str, Any]]:
    """`item_signals` of a chunk with the reference's side read from its stored passes: the
    variant's passes batched as `chunk_passes` batches them; the reference's log-probabilities at
    the output positions from its stored states, its gold-answer log-likelihood as stored."""
    seqs = chunk_sequences(chunk)
    lv_of = sequence_passes(variant, seqs)
    out = []
    for i, (prompt, output, reference) in zip(at, chunk):
        sig: dict[str, Any] = {"tokens": len(output)}
        if output:
            first, lv = lv_of[tuple(prompt + output)]
            sig |= output_signals(stored.logprobs(i), continuation(lv, first, len(prompt), len(output)))
        if reference:
            first, lv = lv_of[tuple(prompt + reference)]
            ll_v = loglik(continuation(lv, first, len(prompt), len(reference)), reference)
            sig |= reference_signals(stored.ref_loglik[i], ll_v, len(reference))
        out.append(sig)
    return out


def engine_measure(params: StageView, layout: Layout, name: str, prompts, outs,
                   rows: list[dict]) -> dict[str, Any]:
    """The signals from the serving engine itself (pipeline.evaluate.engine_divergence), when
    both the baseline and the variant are served by an engine that returns prompt
    log-probabilities; else why not."""
    from pipeline.evaluate import engine_divergence as ed
    from pipeline.evaluate.stage import open_engine

    k = params.divergence.engine_top_k
    engines = {params.engine_for(params.divergence.reference), params.engine_for(name)}
    if not engines <= set(ed.ENGINES):
        return {"measured": False, "why": f"served by {', '.join(sorted(engines))}: only "
                                          f"{', '.join(ed.ENGINES)} returns prompt log-probabilities"}
    seqs = list(zip(prompts, outs))
    logs = layout.divergence_logs  # the engines' logs, outside the stage's outputs
    logs.mkdir(parents=True, exist_ok=True)
    got = {}
    for who in (params.divergence.reference, name):
        with open_engine(params, layout, who, logs / f"{name}-{who}.log") as eng:
            got[who] = ed.along(eng, seqs, k)
            version = eng.info().version
    for row, b, v in zip(rows, got[params.divergence.reference], got[name]):
        row.update(ed.item_signals(b, v, k))
    method = " ".join(ed.__doc__.split(chr(10) * 2)[2].split())  # the stated approximation
    out = {"measured": True, "engine": f"vllm {version}", "method": method,
           "overall": ed.summarize(rows, k), "slices": {}}
    keys = sorted({f"{kk}={vv}" for r in rows for kk, vv in r["slices"].items()})
    for key in keys:
        kk, vv = key.split("=", 1)
        out["slices"][key] = ed.summarize([r for r in rows if r["slices"].get(kk) == vv], k)
    return out


def _write(dest: Path, name: str, result: dict, rows: list[dict]) -> dict:
    dest.mkdir(parents=True, exist_ok=True)
    with atomic_dirs(dest, [name]) as dirs:
        write_json(dirs[name] / METRICS, DivergenceResult.read(result, dirs[name] / METRICS).dump())
        with (dirs[name] / SAMPLES).open("w", encoding="utf-8") as fh:
            fh.writelines(line(DivergenceRecord.model_validate(r), compact=False) for r in rows)
    return result


def load(results: Path, name: str) -> dict[str, Any] | None:
    path = results / "divergence" / name / METRICS
    return DivergenceResult.load(path).dump() if path.is_file() else None


def summary_line(name: str, r: dict[str, Any]) -> str:
    """The divergence of one variant in one line, or why it was not measured."""
    if not r.get("measured"):
        return f"{name}: not measured — {r['why']}"
    o = r["overall"]
    return (f"{name}: KLD mean {o.get('kld_mean', 0):.5f} (p99 {o.get('kld_p99', 0):.5f}) over "
            f"{o['tokens']} tokens, top-1 agreement {o.get('top1_agreement', 1):.4f}, reference "
            f"log-likelihood {o.get('ref_loglik_delta', 0):+.5f}/token vs {r['reference']} "
            f"({r['seconds']} s)")
