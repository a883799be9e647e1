"""The `bench` stage: throughput and latency of the baseline and every served variant,
alternately, in one run — these machines' speed drifts several-fold, so speed is only
comparable as ratios taken side by side.

Per variant and round (one engine at a time, prefix caching off):
- offline (seed 002 §4): `num_prompts` prompts of exactly `input_len` tokens, output forced to
  `output_len` tokens (EOS ignored), all submitted at once; a warm-up run, then `repeats`
  measured runs; median output tok/s and total tok/s, reported separately;
- streaming at each `concurrency` level: TTFT, TPOT and end-to-end latency p50/p99;
- the engine processes' peak memory (GPU memory where there is a GPU);
- the roofline fraction: weight bytes read per decode step × steps/s over memory bandwidth.
The transformers reference engine is left out: it measures transformers, not serving.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.evaluate.harness import MemorySampler, gpu_memory, run_prompts
from pipeline.evaluate.stage import hardware, open_engine
from pipeline.io import atomic_dirs, write_json

log = logging.getLogger(__name__)
SCHEMA = "qpipe.bench/v1"


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
        levels[str(c)] = {"requests": len(done), "ttft_p50": q(ttft, 50), "ttft_p99": q(ttft, 99),
                          "tpot_p50": q(tpot, 50), "tpot_p99": q(tpot, 99),
                          "e2e_p50": q(e2e, 50), "e2e_p99": q(e2e, 99),
                          "output_tokens_per_second": round(
                              sum(x.output_tokens for x in done) / wall, 2)}
    return levels


def measure(params, root: Path, name: str, prompts, logs: Path) -> dict[str, Any]:
    cfg = params.bench
    eng = open_engine(params, root, name, logs / f"{name}.log")
    t0 = time.time()
    with eng, MemorySampler(eng.pids) as mem:
        ready = time.time() - t0
        off = offline(eng, prompts, cfg)
        stream = streaming(eng, prompts, cfg)
        info = eng.info()
        gpu = gpu_memory()
    return {"engine": info.__dict__, "startup_seconds": round(ready, 2), "offline": off,
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
        else:
            continue
        names.remove(n)
    if params.baseline in left_out:
        raise ValueError(f"the baseline {params.baseline!r} must be on a serving engine to "
                         f"compare speed ({left_out[params.baseline]})")
    return names, left_out


def ratios(rounds: list[dict[str, dict]], baseline: str, sizes: dict[str, int],
           bandwidth: float) -> dict[str, dict]:
    out = {}
    for name in rounds[0]:
        per_round = [r[name]["offline"]["median_output_tokens_per_second"]
                     / r[baseline]["offline"]["median_output_tokens_per_second"] for r in rounds]
        tpot1 = [r[name]["streaming"].get("1", {}).get("tpot_p50") for r in rounds]
        tpot1 = [t for t in tpot1 if t]
        roof = None
        if tpot1 and sizes.get(name):
            roof = round(sizes[name] / statistics.median(tpot1) / (bandwidth * 1e9), 4)
        out[name] = {"output_tps_ratio": round(statistics.median(per_round), 4),
                     "output_tps_ratio_per_round": [round(x, 4) for x in per_round],
                     "roofline_fraction": roof}
    return out


def run(params, root: Path) -> dict[str, Any]:
    from pipeline.models import load_tokenizer

    cfg = params.bench
    names, left_out = served_variants(params)
    tok = load_tokenizer(root / params.model.path, trust_remote_code=params.model.trust_remote_code)
    prompts = bench_prompts(tok, cfg.num_prompts, cfg.input_len)
    bandwidth = cfg.memory_bandwidth_gbps or memory_bandwidth()
    rounds = []
    out_dir = root / cfg.out_dir
    with atomic_dirs(out_dir.parent, [out_dir.name]) as dirs:
        for i in range(cfg.rounds):
            order = names if i % 2 == 0 else list(reversed(names))  # drift hits both sides alike
            rounds.append({})
            for name in order:
                log.info("bench round %d/%d: %s", i + 1, cfg.rounds, name)
                rounds[-1][name] = measure(params, root, name, prompts, dirs[out_dir.name] / "logs")
        result = _result(params, cfg, names, left_out, rounds, bandwidth, root)
        write_json(dirs[out_dir.name] / "bench.json", result)
    return result


def _result(params, cfg, names, left_out, rounds, bandwidth, root: Path) -> dict[str, Any]:
    sizes = {n: json.loads((root / "artifacts" / n / "manifest.json").read_text())["size_bytes"]
             for n in names}
    return {"schema": SCHEMA, "baseline": params.baseline, "hardware": hardware(),
            "memory_bandwidth_gbps": round(bandwidth, 2),
            "bandwidth_source": "params" if cfg.memory_bandwidth_gbps else "measured (copy)",
            "config": cfg.model_dump(mode="json"), "left_out": left_out, "rounds": rounds,
            "ratios": ratios(rounds, params.baseline, sizes, bandwidth)}
