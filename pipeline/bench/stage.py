"""The `bench` stage: throughput and latency of the baseline and every served variant,
alternately, in one run — these machines' speed drifts several-fold, so speed is only
comparable as ratios taken side by side.

The schedule brackets the variants with baseline measurements: B V1 V2 B V3 V4 B … (every
`baseline_every` variants; the next round runs the variants in reverse order). Each variant
measurement is divided by the mean of the baseline measurements just before and just after it,
so a ratio never spans more than a few engine runs of drift.

Per measurement (one engine measured at a time, prefix caching off; engines stay started
between measurements, up to `live_engines`: pipeline/bench/pool.py):
- offline (seed 002 §4): `num_prompts` prompts of exactly `input_len` tokens, output forced to
  `output_len` tokens (EOS ignored), all submitted at once; a warm-up run, then `repeats`
  measured runs; median output tok/s and total tok/s, reported separately;
- streaming at each `concurrency` level: TTFT, TPOT and end-to-end latency p50/p99;
- the engine processes' peak memory (GPU memory where there is a GPU);
- the roofline fraction: weight bytes read per decode step × steps/s over memory bandwidth.
The transformers reference engine is left out: it measures transformers, not serving.
"""

from __future__ import annotations

import logging
import statistics
import time
from typing import Any

import numpy as np

from pipeline import progress
from pipeline.evaluate.harness import MemorySampler, gpu_memory, run_prompts
from pipeline.stats.paired import latency_test
from pipeline.bench.pool import EnginePool
from pipeline.engines.base import get_engine
from pipeline.evaluate.stage import hardware, open_engine
from pipeline.io import atomic_dirs, write_json
from pipeline.stage_params import Declared
from pipeline.layout import Layout

log = logging.getLogger(__name__)
SCHEMA = "qpipe.bench/v2"
PARAMS = Declared("bench", "model", "engines", "bench", "variants")


def bench_prompts(tokenizer, n: int, length: int) -> list[list[int]]:
    """`n` distinct prompts of exactly `length` tokens (a numbered request, repeated)."""
    out = []
    for i in range(n):
        unit = tokenizer.encode(f"Request {i}: explain the warranty and shipping policy. ",
                                add_special_tokens=False)
        out.append((unit * (length // len(unit) + 1))[:length])
    return out


def memory_bandwidth(size_mb: int = 256, repeats: int = 5) -> float:
    """Host memory copy bandwidth in GB/s (read + write), the best of a few large copies."""
    a = np.ones(size_mb * 2**20 // 8)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return 2 * a.nbytes / best / 1e9


def offline(engine, prompts, cfg) -> dict[str, Any]:
    run_prompts(engine, prompts, max_tokens=cfg.output_len, concurrency=len(prompts),
                ignore_eos=True)  # warm-up with the full load, not timed
    runs = []
    for _ in range(cfg.repeats):
        done, wall = run_prompts(engine, prompts, max_tokens=cfg.output_len,
                                 concurrency=len(prompts), ignore_eos=True)
        out_tok = sum(c.output_tokens for c in done)
        in_tok = sum(len(p) for p in prompts)
        runs.append({"seconds": round(wall, 4), "output_tokens": out_tok,
                     "output_tokens_per_second": round(out_tok / wall, 2),
                     "total_tokens_per_second": round((in_tok + out_tok) / wall, 2)})
    expected = cfg.num_prompts * cfg.output_len
    return {"runs": runs, "forced_length": all(r["output_tokens"] == expected for r in runs),
            "median_output_tokens_per_second": statistics.median(
                r["output_tokens_per_second"] for r in runs),
            "median_total_tokens_per_second": statistics.median(
                r["total_tokens_per_second"] for r in runs)}


def streaming(engine, prompts, cfg) -> dict[str, Any]:
    levels = {}
    for c in cfg.concurrency:
        reqs = (prompts * (cfg.stream_requests // len(prompts) + 1))[: cfg.stream_requests]
        done, wall = run_prompts(engine, reqs, max_tokens=cfg.output_len, concurrency=c,
                                 ignore_eos=True)
        ttft = [x.ttft for x in done if x.ttft is not None]
        tpot = [(x.latency - x.ttft) / (x.output_tokens - 1) for x in done
                if x.ttft is not None and x.output_tokens > 1]
        e2e = [x.latency for x in done]
        q = lambda a, p: round(float(np.percentile(a, p)), 5) if a else None  # noqa: E731
        levels[str(c)] = {"requests": len(done), "burst_share": burst_share(done),
                          "ttft_p50": q(ttft, 50), "ttft_p99": q(ttft, 99),
                          "tpot_p50": q(tpot, 50), "tpot_p99": q(tpot, 99),
                          "e2e_p50": q(e2e, 50), "e2e_p99": q(e2e, 99),
                          "output_tokens_per_second": round(
                              sum(x.output_tokens for x in done) / wall, 2),
                          # per request, for the rank test against the neighbouring baselines
                          "e2e": [round(x, 5) for x in e2e], "ttft": [round(x, 5) for x in ttft]}
    return levels


BURST = 0.8  # first token after 80% of the request's time: the tokens came in one burst


def burst_share(done) -> float | None:
    """Share of streamed requests whose tokens reached the client in one burst at the end
    (first token after BURST of the whole request). Seen with vLLM on a 2-core CPU when its
    API server process gets no CPU while the engine core decodes: TTFT and TPOT measured by
    the client then describe that delivery, not the engine, and are not compared."""
    multi = [x for x in done if x.output_tokens > 1 and x.ttft is not None and x.latency > 0]
    if not multi:
        return None
    return round(sum(x.ttft >= BURST * x.latency for x in multi) / len(multi), 4)


def schedule(names: list[str], baseline: str, rounds: int, every: int) -> list[tuple[int, str]]:
    """(round, variant) in measuring order: the baseline first, then after every `every`
    variants and at the end of each round; odd rounds take the variants in reverse order.

    >>> schedule(["b", "v1", "v2", "v3"], "b", 2, 2)  # doctest: +NORMALIZE_WHITESPACE
    [(0, 'b'), (0, 'v1'), (0, 'v2'), (0, 'b'), (0, 'v3'), (0, 'b'),
     (1, 'v3'), (1, 'v2'), (1, 'b'), (1, 'v1'), (1, 'b')]
    """
    others = [n for n in names if n != baseline]
    out = [(0, baseline)]
    for r in range(rounds):
        order = others if r % 2 == 0 else list(reversed(others))
        for i in range(0, len(order), every):
            out += [(r, n) for n in order[i:i + every]] + [(r, baseline)]
    return out


def measure(eng, cfg, prompts, startup: float | None) -> dict[str, Any]:
    """One measurement on a serving engine; ``startup``: the seconds it took to start for this
    measurement (None: it was already serving, from an earlier one)."""
    with MemorySampler(eng.pids) as mem:
        off = offline(eng, prompts, cfg)
        stream = streaming(eng, prompts, cfg)
        info = eng.info()
        gpu = gpu_memory()
    return {"engine": info.__dict__,
            "startup_seconds": None if startup is None else round(startup, 2),
            "engine_log": eng.log_path.name, "offline": off,
            "streaming": stream, "peak_rss_bytes": mem.peak or None, "gpu": gpu}


def served_variants(params) -> tuple[list[str], dict[str, str]]:
    names = params.bench.variants or list(params.variants)
    if params.baseline not in names:
        names = [params.baseline, *names]
    left_out = {}
    for n in list(names):
        engine = params.engine_for(n)
        if engine == "none":
            left_out[n] = f"not served here: {params.variants[n].reason}"
        elif engine == "transformers":
            left_out[n] = "transformers reference engine: not a serving engine"
        elif not get_engine(engine).serving:
            left_out[n] = f"{engine} engine: {get_engine(engine).speed_note}"
        else:
            continue
        names.remove(n)
    if params.baseline in left_out:
        raise ValueError(f"the baseline {params.baseline!r} must be on a serving engine to "
                         f"compare speed ({left_out[params.baseline]})")
    return names, left_out


def _neighbours(measurements: list[dict], j: int, baseline: str) -> list[dict]:
    """The baseline measurements just before and just after measurement j."""
    before = next((m for m in reversed(measurements[:j]) if m["variant"] == baseline), None)
    after = next((m for m in measurements[j + 1:] if m["variant"] == baseline), None)
    return [m for m in (before, after) if m is not None]


def ratios(measurements: list[dict], baseline: str, sizes: dict[str, int],
           bandwidth: float) -> dict[str, dict]:
    """Per variant: each of its measurements over its bracketing baselines' mean, then the
    median over rounds — output and total tok/s, single-stream TTFT/TPOT p50, peak memory —
    a Mann-Whitney U test of single-stream end-to-end latency against those baselines, and a
    paired test (Wilcoxon signed-rank on per-request log ratios, request i against request i
    of the bracketing baseline runs, no baseline run counted twice for one variant)."""
    def tps(m, key):
        return m["offline"][key]

    def stream1(m, key):
        level = m["streaming"].get("1") or {}
        if key in ("ttft_p50", "tpot_p50") and (level.get("burst_share") or 0) > 0.5:
            return None  # tokens arrived in one burst: no per-token timing to compare
        return level.get(key)

    out: dict[str, dict] = {}
    per: dict[str, dict[str, list]] = {}
    used: dict[str, set[int]] = {}
    for j, m in enumerate(measurements):
        name = m["variant"]
        if name == baseline:
            continue
        bases = _neighbours(measurements, j, baseline)
        # The paired latency test: request i of this run against request i of its bracketing
        # baseline runs (same prompt, same position), each baseline run used once per variant.
        fresh = [b for b in bases if id(b) not in used.setdefault(name, set())]
        used[name].update(id(b) for b in fresh)
        per.setdefault(name, {}).setdefault("log_ratios", []).extend(
            _log_ratios(stream1(m, "e2e") or [], [stream1(b, "e2e") or [] for b in fresh]))
        mean = lambda f, bases=bases: statistics.fmean(f(b) for b in bases)  # noqa: E731
        acc = per[name]
        for k in ("output", "total", "ttft", "tpot", "rss", "e2e", "e2e_base", "tpot1"):
            acc.setdefault(k, [])
        acc["output"].append(tps(m, "median_output_tokens_per_second")
                             / mean(lambda b: tps(b, "median_output_tokens_per_second")))
        acc["total"].append(tps(m, "median_total_tokens_per_second")
                            / mean(lambda b: tps(b, "median_total_tokens_per_second")))
        if stream1(m, "ttft_p50") and all(stream1(b, "ttft_p50") for b in bases):
            acc["ttft"].append(stream1(m, "ttft_p50") / mean(lambda b: stream1(b, "ttft_p50")))
        if stream1(m, "tpot_p50") and all(stream1(b, "tpot_p50") for b in bases):
            acc["tpot"].append(stream1(m, "tpot_p50") / mean(lambda b: stream1(b, "tpot_p50")))
        elif stream1(m, "tpot_p50") is None or not all(stream1(b, "tpot_p50") for b in bases):
            acc["burst"] = acc.get("burst", 0) + 1
        if stream1(m, "tpot_p50"):
            acc["tpot1"].append(stream1(m, "tpot_p50"))
        if m.get("peak_rss_bytes") and all(b.get("peak_rss_bytes") for b in bases):
            acc["rss"].append(m["peak_rss_bytes"] / mean(lambda b: b["peak_rss_bytes"]))
        acc["e2e"] += stream1(m, "e2e") or []
        for b in bases:
            acc["e2e_base"] += stream1(b, "e2e") or []
    rnd = lambda xs: round(statistics.median(xs), 4) if xs else None  # noqa: E731
    for name, acc in per.items():
        roof = None
        if acc["tpot1"] and sizes.get(name):
            roof = round(sizes[name] / statistics.median(acc["tpot1"]) / (bandwidth * 1e9), 4)
        out[name] = {"output_tps_ratio": rnd(acc["output"]),
                     "output_tps_ratio_per_round": [round(x, 4) for x in acc["output"]],
                     "total_tps_ratio": rnd(acc["total"]),
                     "ttft_p50_ratio": rnd(acc["ttft"]), "tpot_p50_ratio": rnd(acc["tpot"]),
                     "peak_rss_ratio": rnd(acc["rss"]),
                     "ttft_tpot_pairs_left_out": acc.get("burst", 0),  # a side came in one burst
                     "latency_vs_baseline": latency_test(acc["e2e_base"], acc["e2e"]),
                     "latency_paired": paired_latency(acc["log_ratios"]),
                     "roofline_fraction": roof}
    base_tpot = [stream1(m, "tpot_p50") for m in measurements
                 if m["variant"] == baseline and stream1(m, "tpot_p50")]
    out[baseline] = {"output_tps_ratio": 1.0, "output_tps_ratio_per_round": [],
                     "total_tps_ratio": 1.0, "ttft_p50_ratio": 1.0, "tpot_p50_ratio": 1.0,
                     "peak_rss_ratio": 1.0, "latency_vs_baseline": None,
                     "roofline_fraction": round(sizes[baseline] / statistics.median(base_tpot)
                                                / (bandwidth * 1e9), 4)
                     if base_tpot and sizes.get(baseline) else None}
    return out


def _log_ratios(variant: list[float], bases: list[list[float]]) -> list[float]:
    """Per request: log(variant latency) − mean over the baseline runs of log(their latency for
    the same request)."""
    bases = [b for b in bases if len(b) == len(variant)]
    if not bases or not variant:
        return []
    return [float(np.log(v) - np.mean([np.log(b[i]) for b in bases]))
            for i, v in enumerate(variant) if v > 0 and all(b[i] > 0 for b in bases)]


def hodges_lehmann_interval(x: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The Hodges–Lehmann estimate of a paired shift (the median of the Walsh averages) and the
    distribution-free interval that inverts the Wilcoxon signed-rank test (normal approximation
    of the signed-rank statistic's quantile, exact order statistics of the Walsh averages)."""
    from scipy import stats as st

    a = np.asarray(x, float)
    n = len(a)
    walsh = np.sort((a[:, None] + a[None, :])[np.triu_indices(n)] / 2)
    m = len(walsh)
    z = st.norm.ppf(0.5 + confidence / 2)
    k = int(np.floor(m / 2 - z * np.sqrt(n * (n + 1) * (2 * n + 1) / 24)))
    k = min(max(k, 0), (m - 1) // 2)
    return float(np.median(walsh)), float(walsh[k]), float(walsh[m - 1 - k])


def paired_latency(log_ratios: list[float], confidence: float = 0.95) -> dict[str, Any]:
    """Wilcoxon signed-rank test of per-request log latency ratios against the bracketing
    baseline runs (paired by request), with the median ratio, the Hodges–Lehmann latency ratio
    and its interval, and the speed-up interval it implies (1 / latency ratio: the gain gate
    reads this, not a point estimate)."""
    from scipy import stats as st

    n = len(log_ratios)
    if n < 6 or not any(log_ratios):
        return {"n": n, "median_ratio": round(float(np.exp(np.median(log_ratios))), 4) if n else None,
                "p_value": None, "speedup_ci": None}
    r = st.wilcoxon(log_ratios)
    hl, lo, hi = hodges_lehmann_interval(log_ratios, confidence)
    return {"n": n, "median_ratio": round(float(np.exp(np.median(log_ratios))), 4),
            "test": "wilcoxon signed-rank on per-request log ratios", "p_value": float(f"{r.pvalue:.6g}"),
            "ratio_hl": round(float(np.exp(hl)), 4),
            "ratio_ci": [round(float(np.exp(lo)), 4), round(float(np.exp(hi)), 4)],
            "speedup": round(float(np.exp(-hl)), 4),
            "speedup_ci": [round(float(np.exp(-hi)), 4), round(float(np.exp(-lo)), 4)],
            "confidence": confidence}


def weight_bytes(manifest: dict) -> int:
    """Bytes of the weight files only (what a decode step reads), not tokenizer, config or
    importance-matrix files."""
    files = manifest.get("files") or []
    weights = [f for f in files if f["path"].endswith((".safetensors", ".gguf", ".bin", ".pt"))
               and not f["path"].startswith("imatrix")]
    return sum(f["size"] for f in weights) or manifest.get("size_bytes", 0)


def run(params, layout: Layout) -> dict[str, Any]:
    """The `bench` stage; `params`: its own (PARAMS)."""
    from pipeline.models import load_tokenizer

    cfg = params.bench
    names, left_out = served_variants(params)
    names, twins = distinct_artifacts(params, layout, names)
    tok = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    prompts = bench_prompts(tok, cfg.num_prompts, cfg.input_len)
    bandwidth = cfg.memory_bandwidth_gbps or memory_bandwidth()
    measurements: list[dict] = []
    out_dir = layout.bench
    plan = schedule(names, params.baseline, cfg.rounds, cfg.baseline_every)
    with atomic_dirs(out_dir.parent, [out_dir.name]) as dirs:
        logs = dirs[out_dir.name] / "logs"
        opener = lambda n, path: open_engine(params, layout, n, path)  # noqa: E731
        with progress.task("bench", total=len(plan)) as shown, \
                EnginePool(opener, cfg.live_engines) as pool:
            for k, (r, name) in enumerate(plan):
                log.info("bench %d/%d (round %d): %s", k + 1, len(plan), r + 1, name)
                shown.status(f"round {r + 1}: {name}")
                started = time.time()
                eng, startup = pool.get(name, logs / f"{k:02d}-{name}.log")
                measurements.append({"variant": name, "round": r, "position": k,
                                     "started_at": round(started, 1),
                                     **measure(eng, cfg, prompts, startup)})
                shown.advance()
            log.info("bench: %d measurements, %d engine starts", len(plan), pool.starts)
        result = _result(params, cfg, names, left_out, measurements, bandwidth, layout, twins)
        write_json(dirs[out_dir.name] / "bench.json", result)
    return result


def distinct_artifacts(params, layout: Layout, names: list[str]) -> tuple[list[str], dict[str, str]]:
    """The variants to measure — one per distinct (artifact bytes, engine, engine settings) — and
    each other variant's twin: the same bytes served the same way run at the same speed, so a
    re-served baseline is not measured twice (its figures are its twin's, marked so)."""
    import hashlib
    import json

    from pipeline.contracts import ArtifactManifest

    first: dict[str, str] = {}
    keep, twins = [], {}
    for n in names:
        manifest = ArtifactManifest.load(layout.artifact(n) / "manifest.json")
        how = json.dumps([params.engine_for(n), params.engine_settings(n)], sort_keys=True, default=str)
        key = manifest.content_sha256 + hashlib.sha256(how.encode()).hexdigest()
        if key in first:
            twins[n] = first[key]
        else:
            first[key] = n
            keep.append(n)
    return keep, twins


def _result(params, cfg, names, left_out, measurements, bandwidth, layout: Layout,
            twins: dict[str, str]) -> dict[str, Any]:
    from pipeline.contracts import ArtifactManifest

    sizes = {n: weight_bytes(ArtifactManifest.load(layout.artifact(n) / "manifest.json").dump())
             for n in [*names, *twins]}
    measured = ratios(measurements, params.baseline, sizes, bandwidth)
    for twin, same in twins.items():
        measured[twin] = {**measured[same], "measured_as": same}
    return {"schema": SCHEMA, "baseline": params.baseline, "hardware": hardware(),
            "memory_bandwidth_gbps": round(bandwidth, 2),
            "bandwidth_source": "params" if cfg.memory_bandwidth_gbps else "measured (copy)",
            "weight_bytes": sizes, "config": cfg.model_dump(mode="json"), "left_out": left_out,
            "twins": twins, "measurements": measurements, "ratios": measured}


def summary_lines(r: dict[str, Any]) -> list[str]:
    """The bench result for the terminal: each variant's speed ratio against the baseline, then
    every variant left out and why."""
    lines = [f"{name}: output tok/s ×{x['output_tps_ratio']} vs {r['baseline']} "
             f"(rounds {x['output_tps_ratio_per_round']}), roofline {x['roofline_fraction']}"
             + (f" — the same bytes served alike as {x['measured_as']}: measured once"
                if x.get("measured_as") else "")
             for name, x in r["ratios"].items()]
    return lines + [f"{name}: {why}" for name, why in r["left_out"].items()]
