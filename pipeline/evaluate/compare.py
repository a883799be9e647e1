"""The `compare` stage: every variant's per-sample records against the baseline's, paired.

Records pair only when they were made the same way: the same evaluation set (content hash),
the same harness version, the same prompt token ids (tokenizer and chat template), decoding
and max tokens, and — for an engine that served more than one variant — the same engine
version. Anything else is refused with what differs and how to fix it, because a delta
between unlike runs is exactly the silent regression (or phantom) this tool exists to stop.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pipeline.evaluate import detectors
from pipeline.evaluate.stats import latency_test, paired_accuracy
from pipeline.io import write_json
from pipeline.errors import QpipeError

log = logging.getLogger(__name__)
SCHEMA = "qpipe.comparison/v1"


class CompareError(QpipeError, ValueError):
    pass


def load_results(results: Path, name: str) -> tuple[dict, list[dict]]:
    d = results / name
    if not (d / "metrics.json").is_file():
        raise CompareError(f"{d}: no metrics.json — variant {name!r} was not evaluated (or its "
                           f"evaluation failed) — fix: `dvc repro evaluate@{name}`")
    metrics = json.loads((d / "metrics.json").read_text())
    records = [json.loads(line) for line in (d / "samples.jsonl").read_text().splitlines() if line]
    return metrics, records


def check_pairable(base: dict, others: dict[str, dict]) -> None:
    problems = []
    for name, m in others.items():
        if not m.get("served", True):
            continue
        for key, what in (("evalset_sha256", "evaluation set"),
                          ("harness_version", "evaluation harness")):
            if m.get(key) != base.get(key):
                problems.append(f"{name}: {what} {m.get(key)} != baseline's {base.get(key)}")
        mp, bp = m.get("protocol") or {}, base.get("protocol") or {}
        for key, what in (("prompts_sha256", "prompt token ids (tokenizer, chat template)"),
                          ("max_tokens", "max tokens"), ("decoding", "decoding")):
            if mp.get(key) != bp.get(key):
                problems.append(f"{name}: {what} {mp.get(key)} != baseline's {bp.get(key)}")
    versions: dict[str, set] = {}
    for m in [base, *others.values()]:
        if m.get("served", True):
            versions.setdefault(m["engine"]["name"], set()).add(m["engine"]["version"])
    for engine, seen in versions.items():
        if len(seen) > 1:
            problems.append(f"engine {engine} ran at versions {sorted(map(str, seen))}")
    if problems:
        raise CompareError("records made under different conditions cannot be paired:\n  "
                           + "\n  ".join(problems) + "\nfix: re-run the evaluations that are out "
                           "of date (`dvc repro` re-runs exactly those whose inputs changed)")


def slice_table(base: list[dict], other: list[dict], cfg) -> dict[str, dict]:
    keys = sorted({f"{k}={v}" for r in base for k, v in r["slices"].items()})
    out = {}
    for key in keys:
        k, v = key.split("=", 1)
        ids = [r["id"] for r in base if r["slices"].get(k) == v]
        out[key] = _paired(base, other, ids, cfg)
    return out


def _paired(base: list[dict], other: list[dict], ids: list[str], cfg) -> dict[str, Any]:
    b = {r["id"]: r["score"] for r in base}
    o = {r["id"]: r["score"] for r in other}
    return paired_accuracy([b[i] for i in ids], [o[i] for i in ids], alpha=cfg.alpha,
                           n_boot=cfg.bootstrap, min_effect=cfg.min_effect, power=cfg.power,
                           seed=cfg.seed)


def compare_variant(base_m: dict, base_r: list[dict], m: dict, r: list[dict], cfg) -> dict:
    ids = [x["id"] for x in base_r]
    missing = sorted(set(ids) - {x["id"] for x in r})
    if missing:
        raise CompareError(f"variant {m['variant']}: {len(missing)} baseline samples have no "
                           f"record (first: {missing[:3]}) — re-run its evaluation")
    slices = slice_table(base_r, r, cfg)
    drops = sorted((k for k, s in slices.items() if s["significant"] and s["delta"] < 0),
                   key=lambda k: slices[k]["delta"])
    speed = {"serving_engine": m["speed"]["serving_engine"], **{
        k: m["speed"][k] for k in ("output_tokens_per_second", "ttft_p50", "ttft_p99",
                                   "tpot_p50", "tpot_p99", "latency_p50", "latency_p99")}}
    if m["speed"]["serving_engine"] and base_m["speed"]["serving_engine"]:
        speed["latency_vs_baseline"] = latency_test([x["latency"] for x in base_r],
                                                    [x["latency"] for x in r])
    else:
        speed["note"] = "not comparable: a reference engine measures itself, not serving speed"
    return {"variant": m["variant"], "served": True, "engine": m["engine"],
            "size_bytes": m.get("size_bytes"),
            "compression": round(base_m["size_bytes"] / m["size_bytes"], 3)
            if m.get("size_bytes") and base_m.get("size_bytes") else None,
            "accuracy": _paired(base_r, r, ids, cfg), "slices": slices,
            "significant_drops": drops,
            "underpowered_slices": sorted(k for k, s in slices.items() if s["underpowered"]),
            "detectors": {"variant": m["detectors"], "baseline": base_m["detectors"],
                          "consistency": detectors.consistency(base_r, r)},
            "speed": speed, "memory": m.get("memory")}


def run(params, root: Path, *, baseline: str | None = None,
        variants: list[str] | None = None) -> dict[str, Any]:
    cfg = params.compare
    results = root / params.evaluate.out_dir
    baseline = baseline or params.baseline
    names = [n for n in (variants or params.variants) if n != baseline]
    base_m, base_r = load_results(results, baseline)
    if not base_m.get("served", True):
        raise CompareError(f"the baseline {baseline!r} is not served ({base_m.get('reason')}); "
                           "every comparison needs a freshly evaluated baseline")
    loaded = {n: load_results(results, n) for n in names}
    check_pairable(base_m, {n: m for n, (m, _) in loaded.items()})
    out = {"schema": SCHEMA, "baseline": baseline, "evalset_sha256": base_m["evalset_sha256"],
           "harness_version": base_m["harness_version"], "alpha": cfg.alpha,
           "min_effect": cfg.min_effect,
           "baseline_metrics": {k: base_m[k] for k in ("accuracy", "n", "engine", "size_bytes")},
           "variants": {}}
    for name, (m, r) in loaded.items():
        out["variants"][name] = (compare_variant(base_m, base_r, m, r, cfg)
                                 if m.get("served", True) else
                                 {"variant": name, "served": False, "reason": m.get("reason")})
    bench = root / params.bench.out_dir / "bench.json"
    if bench.is_file():
        out["bench"] = json.loads(bench.read_text()).get("ratios")
    dest = root / cfg.out_dir
    dest.mkdir(parents=True, exist_ok=True)
    tmp = dest / ".comparison.json.tmp"
    write_json(tmp, out)
    tmp.replace(dest / "comparison.json")
    return out
