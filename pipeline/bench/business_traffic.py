"""The business's own traffic in `bench` (params `bench.traffic`, docs/engines.md#business-traffic):
requests drawn once from the evaluation set — the logs' held-out conversations, scrubbed by the
split, chat template applied, each request's output length its logged answer's — and replayed by
GuideLLM against every measurement's engine at fixed concurrency levels, the same requests in the
same order every time, so that:

- at concurrency 1 request i of a variant pairs with request i of its bracketing baseline runs
  (the paired per-request speed-up the gain criterion reads);
- at the highest level the output tokens per second are the variant's throughput under the
  business's prompt and answer lengths, the long tail included.

The fixed-shape figures (pipeline/bench/stage.py) stay beside these; where traffic was measured
the comparison's speed columns read these.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pipeline.bench.ratios import log_ratios, neighbours
from pipeline.layout import Layout
from pipeline.loadgen import guidellm_runs as loadgen, traffic
from pipeline.stats.latency import summary
from pipeline.stats.paired import paired_latency
from pipeline.stage_params import StageView

BURST = 0.8  # first token after 80% of a request's time: its tokens came in one burst
SOURCE = "business traffic (GuideLLM)"


def draw_requests(params: StageView, layout: Layout, folder: Path) -> dict[str, Any]:
    """Draw the bench's requests from the evaluation set into `folder/requests.jsonl` (and their
    card); returns the card with the file's path."""
    from pipeline.evaluate.harness import load_evalset, render
    from pipeline.models import load_tokenizer

    t = params.bench.traffic
    evalset = load_evalset(layout.evalset)
    tok = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    pool = traffic.request_pool(evalset.items, render(tok, evalset.items), tok, t.max_output_tokens)
    drawn, threshold = traffic.draw(pool, t.requests, t.long_share, t.long_quantile, t.seed)
    folder.mkdir(parents=True, exist_ok=True)
    card = traffic.write_mix(drawn, folder, "requests", threshold)
    return card | {"path": str(folder / "requests.jsonl")}


def replay(python: str, eng, cfg, data: Path, tokenizer_dir: Path, folder: Path, name: str) -> dict[str, Any]:
    """One measurement's replay: every concurrency level of `bench.traffic` in one GuideLLM run
    (its scenario, report and log kept in `folder` as `<name>.*`)."""
    t = cfg.traffic
    spec = loadgen.scenario(eng.base_url, data, tokenizer_dir, {"kind": "concurrent", "streams": t.concurrency},
                            t.requests, folder / f"{name}.json", t.seed)
    benchmarks = loadgen.run_all(python, spec, folder, name, eng.api_key,
                                 timeout=900 + 60 * t.requests * len(t.concurrency))
    if len(benchmarks) != len(t.concurrency):
        raise loadgen.LoadgenError(f"GuideLLM's replay {name} gave {len(benchmarks)} benchmarks for the "
                                   f"{len(t.concurrency)} concurrency levels {t.concurrency}; its log: "
                                   f"{folder / (name + '.log')}")
    return {"report": f"{folder.name}/{name}.json",
            "levels": {str(c): level(b) for c, b in zip(t.concurrency, benchmarks)}}


def level(benchmark: dict[str, Any]) -> dict[str, Any]:
    """One concurrency level's figures, and its per-request end-to-end latencies in sending order."""
    reqs = loadgen.requests_of(benchmark)
    failed = loadgen.failed_count(benchmark)
    if not reqs:
        return {"requests": 0, "failed": failed}
    span = max(r["end"] for r in reqs) - min(r["start"] for r in reqs)
    out_tok = sum(r["output_tokens"] or 0 for r in reqs)
    e2e = [r["e2e_s"] for r in reqs]
    ttft = [r["ttft_s"] for r in reqs if r["ttft_s"] is not None]
    tpot = [r["tpot_s"] for r in reqs if r["tpot_s"] is not None and (r["output_tokens"] or 0) > 1]
    multi = [r for r in reqs if (r["output_tokens"] or 0) > 1 and r["ttft_s"] is not None and r["e2e_s"] > 0]
    burst = round(sum(r["ttft_s"] >= BURST * r["e2e_s"] for r in multi) / len(multi), 4) if multi else None
    return {"requests": len(reqs), "failed": failed, "span_s": round(span, 4),
            "output_tokens": out_tok,
            "output_tokens_per_second": round(out_tok / span, 2) if span > 0 else None,
            "requests_per_second": round(len(reqs) / span, 3) if span > 0 else None,
            "burst_share": burst, "e2e_s": summary(e2e), "ttft_s": summary(ttft), "tpot_s": summary(tpot),
            "e2e": [round(x, 5) for x in e2e], "prompt_tokens": [r["prompt_tokens"] for r in reqs]}


def ratios(measurements: list[dict], baseline: str) -> dict[str, dict[str, Any]]:
    """Per variant, from its traffic replays against the bracketing baseline replays (as the
    fixed-shape ratios): output tok/s at the highest concurrency (median over measurements), its
    P99 and P50 end-to-end latency there, TTFT and TPOT P50 at the lowest level (left out where a
    side's tokens came in one burst), and the paired per-request latency at the lowest level."""
    done = [m for m in measurements if (m.get("traffic") or {}).get("levels")]
    if not done:
        return {}
    replayed = {id(m) for m in done}
    levels = list(done[0]["traffic"]["levels"])
    low, high = levels[0], levels[-1]

    def get(m, lvl, key, sub=None):
        x = ((m.get("traffic") or {}).get("levels") or {}).get(lvl) or {}
        if key in ("ttft_s", "tpot_s") and (x.get("burst_share") or 0) > 0.5:
            return None
        v = x.get(key)
        return v.get(sub) if sub and isinstance(v, dict) else v

    out: dict[str, dict[str, Any]] = {}
    acc: dict[str, dict[str, list]] = {}
    used: dict[str, set[int]] = {}
    for j, m in enumerate(measurements):
        name = m["variant"]
        if name == baseline or id(m) not in replayed:
            continue
        bases = [b for b in neighbours(measurements, j, baseline) if id(b) in replayed]
        a = acc.setdefault(name, {k: [] for k in ("output", "e2e_p99", "e2e_p50", "ttft", "tpot", "logs")})
        a.setdefault("failed", []).append(sum(get(m, lvl, "failed") or 0 for lvl in levels))
        if not bases:
            continue
        fresh = [b for b in bases if id(b) not in used.setdefault(name, set())]
        used[name].update(id(b) for b in fresh)
        # paired only where the same requests went in the same order (GuideLLM's token counts)
        same = [b for b in fresh if get(b, low, "prompt_tokens") == get(m, low, "prompt_tokens")]
        a.setdefault("unpaired", []).append(len(fresh) - len(same))
        a["logs"].extend(log_ratios(get(m, low, "e2e") or [], [get(b, low, "e2e") or [] for b in same]))
        for key, lvl, field, sub in (("output", high, "output_tokens_per_second", None),
                                     ("e2e_p99", high, "e2e_s", "p99"), ("e2e_p50", high, "e2e_s", "p50"),
                                     ("ttft", low, "ttft_s", "p50"), ("tpot", low, "tpot_s", "p50")):
            mine, theirs = get(m, lvl, field, sub), [get(b, lvl, field, sub) for b in bases]
            if mine and all(theirs):
                a[key].append(mine / statistics.fmean(theirs))
    med = lambda xs: round(statistics.median(xs), 4) if xs else None  # noqa: E731
    for name, a in acc.items():
        out[name] = {"output_tps_ratio": med(a["output"]),
                     "output_tps_ratio_per_round": [round(x, 4) for x in a["output"]],
                     f"e2e_p99_ratio_at_{high}": med(a["e2e_p99"]), f"e2e_p50_ratio_at_{high}": med(a["e2e_p50"]),
                     "ttft_p50_ratio": med(a["ttft"]), "tpot_p50_ratio": med(a["tpot"]),
                     "latency_paired": paired_latency(a["logs"]),
                     "log_latency_ratios": [round(x, 6) for x in a["logs"]],
                     "failed_requests": sum(a["failed"]),
                     "baseline_replays_unpaired": sum(a.get("unpaired", [])),  # other requests or order
                     "concurrency": {"paired": int(low), "throughput": int(high)}}
    return out


def merge(fixed: dict[str, dict[str, Any]], measured: dict[str, dict[str, Any]], baseline: str) -> dict[str, Any]:
    """Each variant's ratios with the traffic figures as its speed (`speed_source`) and the
    fixed-shape ones kept under `fixed_shape`; a variant without traffic figures keeps the
    fixed-shape ones as its speed."""
    out = {}
    for name, f in fixed.items():
        t = measured.get(name)
        if name == baseline and measured:
            t = {"output_tps_ratio": 1.0, "ttft_p50_ratio": 1.0, "tpot_p50_ratio": 1.0}
        if not t:
            out[name] = {**f, "speed_source": "fixed shape"}
            continue
        shadowed = {k: f[k] for k in t if k in f}
        out[name] = {**f, **t, "speed_source": SOURCE, "fixed_shape": shadowed}
    return out
