"""The `bench` stage: throughput and latency of the baseline and every served variant,
alternately, in one run — these machines' speed drifts several-fold, so speed is only
comparable as ratios taken side by side.

The schedule brackets the variants with baseline measurements: B V1 V2 B V3 V4 B … (every
`baseline_every` variants; the next round runs the variants in reverse order). Each variant
measurement is divided by the mean of the baseline measurements just before and just after it,
so a ratio never spans more than a few engine runs of drift.

Per measurement (one engine measured at a time, prefix caching off; engines stay started
between measurements, up to `live_engines`: pipeline/bench/pool.py):
- offline (docs/rationale.md#throughput-protocol): `num_prompts` prompts of exactly `input_len` tokens, output forced to
  `output_len` tokens (EOS ignored), all submitted at once; a warm-up run, then `repeats`
  measured runs; median output tok/s and total tok/s, reported separately;
- streaming at each `concurrency` level: TTFT, TPOT and end-to-end latency p50/p99;
- the engine processes' peak memory (GPU memory where there is a GPU);
- the roofline fraction: weight bytes read per decode step × steps/s over memory bandwidth;
- the business's own traffic (`bench.traffic`, pipeline/bench/business_traffic.py): requests drawn from the
  evaluation set, replayed by GuideLLM at fixed concurrency levels — the speed the comparison
  reads where it was measured.
The transformers reference engine is left out: it measures transformers, not serving.
"""

from __future__ import annotations

import logging
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import progress
from pipeline.evaluate.harness import MemorySampler, gpu_memory, run_prompts
from pipeline.bench.pool import EnginePool
from pipeline.bench import business_traffic as traffic
from pipeline.bench.ratios import ratios
from pipeline.bench.twins import distinct_computations
from pipeline.engines.base import get_engine
from pipeline.evaluate.stage import hardware, keep_failed, open_engine
from pipeline.io import atomic_dirs, write_json
from pipeline.processes import gated, wait_until_alone
from pipeline.loadgen import guidellm_runs as loadgen
from pipeline.stage_params import Declared, StageView
from pipeline.layout import Layout
from pipeline.contracts.files import BENCH, BENCH_SCHEMA, MANIFEST

log = logging.getLogger(__name__)
SCHEMA = BENCH_SCHEMA  # v4: measurements carry `traffic`; ratios `speed_source` (+ `fixed_shape`)
PARAMS = Declared("bench", "model", "engines", "bench", "variants", "evaluate.evalset", "serving.loadgen_python")


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


def measure(eng, cfg, prompts, startup: float | None, replay=None) -> dict[str, Any]:
    """One measurement on a serving engine; ``startup``: the seconds it took to start for this
    measurement (None: it was already serving, from an earlier one); ``replay(eng)``: the
    business traffic's replay against it (None: not measured)."""
    with MemorySampler(eng.pids) as mem:
        off = offline(eng, prompts, cfg)
        stream = streaming(eng, prompts, cfg)
        replayed = replay(eng) if replay else None
        info = eng.info()
        gpu = gpu_memory()
    return {"engine": info.__dict__,
            "startup_seconds": None if startup is None else round(startup, 2),
            "engine_log": eng.log_path.name, "offline": off,
            "streaming": stream, "traffic": replayed, "peak_rss_bytes": mem.peak or None, "gpu": gpu}


def served_variants(params: StageView) -> tuple[list[str], dict[str, str]]:
    names = params.bench.variants or list(params.variants)
    if params.baseline not in names:
        names = [params.baseline, *names]
    left_out = {}
    for n in list(names):
        engine = params.engine_for(n)
        if engine == "none":
            left_out[n] = f"not served here: {params.variants[n].reason}"
        elif why := get_engine(engine).bench_exclusion():
            left_out[n] = why
        else:
            continue
        names.remove(n)
    if params.baseline in left_out:
        raise ValueError(f"the baseline {params.baseline!r} must be on a serving engine to "
                         f"compare speed ({left_out[params.baseline]})")
    return names, left_out


def weight_bytes(manifest: dict) -> int:
    """Bytes of the weight files only (what a decode step reads), not tokenizer, config or
    importance-matrix files."""
    files = manifest.get("files") or []
    weights = [f for f in files if f["path"].endswith((".safetensors", ".gguf", ".bin", ".pt"))
               and not f["path"].startswith("imatrix")]
    return sum(f["size"] for f in weights) or manifest.get("size_bytes", 0)


def run(params: StageView, layout: Layout) -> dict[str, Any]:
    """The `bench` stage; `params`: its own (PARAMS)."""
    from pipeline.models import load_tokenizer

    cfg = params.bench
    names, left_out = served_variants(params)
    names, twins = distinct_computations(params, layout, names)
    tok = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    prompts = bench_prompts(tok, cfg.num_prompts, cfg.input_len)
    out_dir = layout.bench
    plan = schedule(names, params.baseline, cfg.rounds, cfg.baseline_every)
    failed = layout.failed_bench
    shutil.rmtree(failed, ignore_errors=True)
    try:
        with atomic_dirs(out_dir.parent, [out_dir.name]) as dirs:
            try:
                return _measure_all(params, layout, cfg, names, left_out, twins, prompts,
                                    plan, dirs[out_dir.name])
            except BaseException as err:  # the engines' logs stay where a person reads them
                keep_failed(dirs[out_dir.name], failed, "bench", err)
                raise
    except BaseException:
        shutil.rmtree(out_dir, ignore_errors=True)  # no stale figures from an earlier run
        raise


def _measure_all(params: StageView, layout: Layout, cfg, names, left_out, twins, prompts, plan,
                 staging) -> dict[str, Any]:
    measurements: list[dict] = []
    logs = staging / "logs"
    requests, python = None, None
    if cfg.traffic.enabled:  # drawn once: every measurement replays the same requests in the same order
        python = loadgen.loadgen_python(params.serving.loadgen_python)
        requests = traffic.draw_requests(params, layout, staging / "traffic")
    opener = lambda n, path: open_engine(params, layout, n, path)  # noqa: E731
    with progress.task("bench", total=len(plan)) as shown, \
            EnginePool(opener, cfg.live_engines) as pool:
        together, prestarted = started_together(cfg), []
        if together > 1:
            first: dict[str, Any] = {}
            for k, (_, name) in enumerate(plan):
                first.setdefault(name, logs / f"{k:02d}-{name}.log")
            shown.status(f"starting up to {together} engines together")
            prestarted = pool.start_together(list(first.items())[:together])
        # started by `qpipe repro` while the last stages finished (dvc.yaml prepare_beside): the
        # engines are up; every figure from here on is taken with nothing else running
        if gated():
            shown.status("waiting for the other stages to finish")
        waited = wait_until_alone()
        if waited is not None:
            log.info("bench: engines ready; measuring alone after waiting %.1f s for the stages "
                     "that were running", waited)
        bandwidth = cfg.memory_bandwidth_gbps or memory_bandwidth()
        for k, (r, name) in enumerate(plan):
            log.info("bench %d/%d (round %d): %s", k + 1, len(plan), r + 1, name)
            shown.status(f"round {r + 1}: {name}")
            started = time.time()
            eng, startup = pool.get(name, logs / f"{k:02d}-{name}.log")
            replay = None
            if requests is not None:
                replay = lambda e, k=k, name=name: traffic.replay(  # noqa: E731
                    python, e, cfg, Path(requests["path"]), layout.model.resolve(), staging / "traffic",
                    f"{k:02d}-{name}")
            measurements.append({"variant": name, "round": r, "position": k,
                                 "started_at": round(started, 1),
                                 **measure(eng, cfg, prompts, startup, replay)})
            shown.advance()
        log.info("bench: %d measurements, %d engine starts", len(plan), pool.starts)
    result = _result(params, cfg, names, left_out, measurements, bandwidth, layout, twins)
    if requests is not None:  # what was replayed: composition and lengths, the items' ids
        result["traffic"] = {k: v for k, v in requests.items() if k != "path"} | {
            "file": "traffic/requests.jsonl", "loadgen": loadgen.version(python)}
    result["engines_started_together"] = prestarted  # before the first measurement
    # seconds the prepared engines waited for the stages beside them (None: started alone); their
    # startup_seconds then include that contention, no other figure does
    result["waited_alone_s"] = waited
    write_json(staging / BENCH, result)
    return result


def started_together(cfg) -> int:
    """How many engines start at once before the first measurement (bench.start_together)."""
    if cfg.start_together != "auto":
        return min(int(cfg.start_together), cfg.live_engines)
    from pipeline.evaluate.replicas import visible_gpus

    return 1 if visible_gpus() else cfg.live_engines


def _result(params: StageView, cfg, names, left_out, measurements, bandwidth, layout: Layout,
            twins: dict[str, dict[str, Any]]) -> dict[str, Any]:
    from pipeline.contracts import ArtifactManifest

    sizes = {n: weight_bytes(ArtifactManifest.load(layout.artifact(n) / MANIFEST).dump())
             for n in [*names, *twins]}
    measured = traffic.merge(ratios(measurements, params.baseline, sizes, bandwidth),
                             traffic.ratios(measurements, params.baseline), params.baseline)
    for twin, same in twins.items():
        measured[twin] = {**measured[same["as"]], "measured_as": same["as"], "measured_as_why": same["why"]}
    return {"schema": SCHEMA, "baseline": params.baseline, "hardware": hardware(),
            "memory_bandwidth_gbps": round(bandwidth, 2),
            "bandwidth_source": "params" if cfg.memory_bandwidth_gbps else "measured (copy)",
            "weight_bytes": sizes, "config": cfg.model_dump(mode="json"), "left_out": left_out,
            "twins": twins, "measurements": measurements, "ratios": measured}


def summary_lines(r: dict[str, Any]) -> list[str]:
    """The bench result for the terminal: each variant's speed ratio against the baseline, then
    every variant left out and why."""
    lines = [f"{name}: output tok/s ×{x['output_tps_ratio']} vs {r['baseline']} "
             f"(rounds {x['output_tps_ratio_per_round']}; {x.get('speed_source', 'fixed shape')}"
             + (f", fixed shape ×{x['fixed_shape']['output_tps_ratio']}" if x.get("fixed_shape") else "")
             + f"), roofline {x['roofline_fraction']}"
             + (f" — {x.get('measured_as_why', 'the same bytes served alike')} as "
                f"{x['measured_as']}: measured once" if x.get("measured_as") else "")
             for name, x in r["ratios"].items()]
    return lines + [f"{name}: {why}" for name, why in r["left_out"].items()]
