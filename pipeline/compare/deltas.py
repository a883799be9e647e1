"""The `compare` stage: every variant's per-sample records against the baseline's, paired.

Records pair only when they were made the same way: the same evaluation set (content hash),
the same harness version, the same prompt token ids (tokenizer and chat template), decoding
and max tokens, and — for an engine that served more than one variant — the same engine
version. Anything else is refused with what differs and how to fix it, because a delta
between unlike runs is exactly the silent regression (or phantom) this tool exists to stop.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.config.gating import MLPERF_LENGTH_BAND
from pipeline.evaluate import detectors
import numpy as np

from pipeline.stats import noninferiority as ni
from pipeline.stats.paired import latency_test, paired_accuracy, paired_counts
from pipeline.stats.sequential import OBRIEN_FLEMING, Spending, repeated_alpha
from pipeline.contracts import Comparison, Metrics
from pipeline.errors import QpipeError
from pipeline.contracts.files import METRICS, SAMPLES
from pipeline.contracts import SampleRecord, read_lines

log = logging.getLogger(__name__)
SCHEMA = Comparison.SCHEMA


class CompareError(QpipeError, ValueError):
    pass


def load_results(results: Path, name: str) -> tuple[Metrics, list[dict]]:
    d = results / name
    if not (d / METRICS).is_file():
        raise CompareError(f"{d}: no metrics.json — variant {name!r} was not evaluated (or its "
                           f"evaluation failed) — fix: `dvc repro evaluate@{name}`")
    metrics = Metrics.load(d / METRICS)  # an old or foreign file: ContractError
    records = [r.model_dump(exclude_unset=True)  # the contract checked, the consumers still on dicts
               for r in read_lines(SampleRecord, d / SAMPLES, writer=f"`dvc repro evaluate@{d.name}`")]
    return metrics, records


def check_pairable(base: Metrics, others: dict[str, Metrics]) -> None:
    problems = []
    for name, m in others.items():
        if not m.served:
            continue
        for key, what in (("evalset_sha256", "evaluation set"),
                          ("harness_version", "evaluation harness")):
            if getattr(m, key) != getattr(base, key):
                problems.append(f"{name}: {what} {getattr(m, key)} != baseline's {getattr(base, key)}")
        mp, bp = protocol_of(m), protocol_of(base)
        for key, what in (("prompts_sha256", "prompt token ids (tokenizer, chat template)"),
                          ("max_tokens", "max tokens"), ("decoding", "decoding")):
            if mp.get(key) != bp.get(key):
                problems.append(f"{name}: {what} {mp.get(key)} != baseline's {bp.get(key)}")
    versions: dict[str, set] = {}
    for m in [base, *others.values()]:
        if m.served:
            versions.setdefault(m.engine.name, set()).add(m.engine.version)
    for engine, seen in versions.items():
        if len(seen) > 1:
            problems.append(f"engine {engine} ran at versions {sorted(map(str, seen))}")
    if problems:
        raise CompareError("records made under different conditions cannot be paired:\n  "
                           + "\n  ".join(problems) + "\nfix: re-run the evaluations that are out "
                           "of date (`dvc repro` re-runs exactly those whose inputs changed)")


def slice_table(base: list[dict], other: list[dict], cfg, *, with_power: bool = True) -> dict[str, dict]:
    """Every slice's paired change, with its one-sided drop p-value adjusted by Benjamini–Hochberg
    across the slices (`p_drop_adjusted`) and flagged a significant drop at compare.alpha."""
    keys = sorted({f"{k}={v}" for r in base for k, v in r["slices"].items()})
    out = {}
    for key in keys:
        k, v = key.split("=", 1)
        ids = [r["id"] for r in base if r["slices"].get(k) == v]
        out[key] = _paired(base, other, ids, cfg, with_power=with_power)
    adjusted = ni.bh_adjust([s["p_drop"] for s in out.values()])
    for s, p in zip(out.values(), adjusted):
        s["p_drop_adjusted"] = float(f"{p:.6g}")
        s["significant_drop"] = bool(p < cfg.alpha and s["delta"] < 0)
    return out


def _paired(base: list[dict], other: list[dict], ids: list[str], cfg, *,
            with_power: bool = True) -> dict[str, Any]:
    b = {r["id"]: r["score"] for r in base}
    o = {r["id"]: r["score"] for r in other}
    return paired_accuracy([b[i] for i in ids], [o[i] for i in ids], alpha=cfg.alpha,
                           min_effect=cfg.min_effect, power=cfg.power if with_power else None)


def json_validity(base: list[dict], other: list[dict], alpha: float) -> dict[str, Any] | None:
    """The paired change in JSON validity over the items where a JSON answer is expected."""
    o = {r["id"]: r for r in other}
    pairs = [(r["json_valid"], o[r["id"]].get("json_valid")) for r in base
             if r.get("json_valid") is not None and r["id"] in o]
    if not pairs:
        return None
    b = [float(bool(x)) for x, _ in pairs]
    v = [float(bool(y)) for _, y in pairs]
    n, lost, gained = paired_counts(b, v)
    lo, hi = ni.tango_interval(lost, gained, n, 1 - alpha)
    return {"n": n, "base": round(float(np.mean(b)), 4), "variant": round(float(np.mean(v)), 4),
            "delta": round((gained - lost) / n, 4), "ci_low": round(lo, 4), "ci_high": round(hi, 4),
            "lost": lost, "gained": gained}


def disagreement(base: list[dict], other: list[dict]) -> dict[str, Any]:
    """How many items changed against the reference: a different output at all, a different task
    result (pass/fail) — each with its count, so intervals can be taken on them."""
    o = {r["id"]: r for r in other}
    pairs = [(r, o[r["id"]]) for r in base if r["id"] in o]
    changed = sum(a["output"] != b["output"] for a, b in pairs)
    flipped = sum((a["score"] >= 1.0) != (b["score"] >= 1.0) for a, b in pairs)
    n = len(pairs)
    return {"n": n, "outputs_changed": changed, "results_changed": flipped,
            "outputs_changed_share": round(changed / n, 4) if n else None,
            "results_changed_share": round(flipped / n, 4) if n else None}


def flips(accuracy: dict[str, Any], slices: dict[str, dict]) -> dict[str, Any]:
    """Items whose task result switched, each way, overall and per slice: an unchanged accuracy
    can hide many of them ("Accuracy is Not All You Need", arXiv 2407.09141)."""
    def one(s: dict) -> dict[str, int]:
        return {"n": s["n"], "correct_to_incorrect": s["lost"], "incorrect_to_correct": s["gained"]}

    return {"overall": one(accuracy), "slices": {k: one(s) for k, s in slices.items()}}


# Each slice's ratio is reported against MLPerf's band; the profile's output_length_band judges
# the overall interval (pipeline/compare/gates.py).
LENGTH_BAND = MLPERF_LENGTH_BAND


def output_length(base: list[dict], other: list[dict], *, alpha: float, seed: int,
                  n_boot: int = 1000) -> dict[str, Any]:
    """The variant's output tokens over the reference's on the same items (ratio of sums), with a
    paired bootstrap interval over items, overall and per slice."""
    o = {r["id"]: r for r in other}
    pairs = [(r, o[r["id"]]) for r in base if r["id"] in o]
    rng = np.random.default_rng(seed)

    def ratio(rows: list[tuple[dict, dict]]) -> dict[str, Any]:
        b = np.array([a.get("output_tokens") or 0 for a, _ in rows], float)
        v = np.array([c.get("output_tokens") or 0 for _, c in rows], float)
        if not rows or b.sum() == 0:
            return {"n": len(rows), "ratio": None}
        idx = rng.integers(0, len(rows), (n_boot, len(rows)))
        boot = v[idx].sum(1) / np.maximum(b[idx].sum(1), 1e-12)
        lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
        r = float(v.sum() / b.sum())
        return {"n": len(rows), "ratio": round(r, 4), "ci": [round(float(lo), 4), round(float(hi), 4)],
                "mean_tokens": round(float(v.mean()), 2), "reference_mean_tokens": round(float(b.mean()), 2),
                "within_band": LENGTH_BAND[0] <= r <= LENGTH_BAND[1]}

    keys = sorted({f"{k}={v}" for a, _ in pairs for k, v in a["slices"].items()})
    per = {}
    for key in keys:
        k, v = key.split("=", 1)
        per[key] = ratio([p for p in pairs if p[0]["slices"].get(k) == v])
    return {"band": list(LENGTH_BAND), "overall": ratio(pairs), "slices": per}


def protocol_of(m: Metrics) -> dict[str, Any]:
    """What a pairing needs equal (prompts, decoding, max tokens), as the file holds it; {} when absent."""
    return m.protocol.as_json() if m.protocol else {}


def compare_variant(base_m: Metrics, base_r: list[dict], m: Metrics, r: list[dict], cfg, *,
                    reference: str | None = None, with_power: bool = True) -> dict:
    """One variant against its reference, sample by sample. with_power=False leaves out each
    slice's smallest detectable drop (exact power sums: the slow part), for simulations."""
    ids = [x["id"] for x in base_r]
    missing = sorted(set(ids) - {x["id"] for x in r})
    if missing:
        raise CompareError(f"variant {m.variant}: {len(missing)} baseline samples have no "
                           f"record (first: {missing[:3]}) — re-run its evaluation")
    slices = slice_table(base_r, r, cfg, with_power=with_power)
    drops = sorted((k for k, s in slices.items() if s["significant_drop"]),
                   key=lambda k: slices[k]["delta"])
    sp = m.speed
    speed = {"serving_engine": sp.serving_engine, **{
        k: getattr(sp, k) for k in ("output_tokens_per_second", "ttft_p50", "ttft_p99",
                                    "tpot_p50", "tpot_p99", "latency_p50", "latency_p99")}}
    if sp.serving_engine and base_m.speed.serving_engine:
        speed["latency_vs_baseline"] = latency_test([x["latency"] for x in base_r],
                                                    [x["latency"] for x in r])
    else:
        speed["note"] = "not comparable: " + (
            (sp.note if not sp.serving_engine else None)
            or "a reference engine measures itself, not serving speed")
    accuracy = _paired(base_r, r, ids, cfg, with_power=with_power)
    return {"variant": m.variant, "served": True, "engine": m.engine.as_json(),
            "reference": reference or base_m.variant,
            "size_bytes": m.size_bytes,
            "compression": round(base_m.size_bytes / m.size_bytes, 3)
            if m.size_bytes and base_m.size_bytes else None,
            "accuracy": accuracy, "slices": slices, "flips": flips(accuracy, slices),
            "output_length": output_length(base_r, r, alpha=cfg.alpha, seed=cfg.seed),
            "significant_drops": drops,
            "underpowered_slices": sorted(k for k, s in slices.items() if s["underpowered"]),
            "json": json_validity(base_r, r, cfg.alpha),
            "disagreement": disagreement(base_r, r),
            "detectors": {"variant": m.detectors.as_json(), "baseline": base_m.detectors.as_json(),
                          "consistency": detectors.consistency(base_r, r)},
            "speed": speed, "memory": m.memory.as_json() if m.memory else None}


def served_part(ref_r: list[dict], r: list[dict]) -> list[dict]:
    """The reference's records for the items `r` holds (a sequential evaluation's served items)."""
    ids = {x["id"] for x in r}
    return [x for x in ref_r if x["id"] in ids]


def at_looks(cfg, looks: list[int], total: int, spending: Spending = OBRIEN_FLEMING):
    """Compare's settings (its params section, or any dataclass with `alpha`) with `alpha` the
    repeated-confidence level of `looks` out of `total` items under `spending`, and that level."""
    level = repeated_alpha(looks, total, cfg.alpha, spending)
    at = cfg.model_copy(update={"alpha": level}) if hasattr(cfg, "model_copy") else replace(cfg, alpha=level)
    return at, level
