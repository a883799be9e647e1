"""The `evaluate@<variant>` stage: verify the artifact → start its engine → business accuracy per
slice, detectors and per-sample records → stop the engine → results/<variant>/ (atomically).

A variant whose engine is `none` gets a results folder that says "not served here: <reason>"
and no metrics, so it is reported, never silently skipped. An engine that is missing, dies at
start or mid-run fails the stage with its log tail; no metrics.json is left for that variant.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from pipeline import progress
from pipeline.artifacts.manifest import require_verified
from pipeline.contracts import EvalRun, Metrics
from pipeline.errors import QpipeError
from pipeline.engines.base import Engine, get_engine
from pipeline.evaluate import detectors, reference_serving
from pipeline.evaluate.reference_serving import serving_record
from pipeline.evaluate.harness import (MemorySampler, gpu_memory, harness_version, load_evalset, render,
                                       run_prompts)
from pipeline.evaluate.looks import StopRule, serve_in_looks
from pipeline.evaluate.record_cache import Cached, RecordCache, code_version, folder as cache_folder, prompt_key
from pipeline.evaluate.scorers import is_valid_json, score
from pipeline.stage_params import Declared, StageView
from pipeline.io import atomic_dirs, write_json
from pipeline.layout import Layout
from pipeline.contracts.files import ENGINE_LOG, ERROR, FAILED_SCHEMA, METRICS, REFERENCE_SAMPLES, RUN, SAMPLES
from pipeline.contracts.records import SampleRecord, line

log = logging.getLogger(__name__)
SCHEMA = Metrics.SCHEMA

PARAMS = Declared("evaluate", "model", "engines", "evaluate", "variants.${key}",
                  # the stopping rule of a sequential evaluation reads the gate as compare will
                  "gates", "compare.alpha", "compare.seed",
                  # an engine's reference serves its opening look only (pipeline.evaluate.reference_serving)
                  "compare.engine_baselines")


def open_engine(params: StageView, layout: Layout, name: str, log_path: Path, *,
                engine: str | None = None, artifact: Path | None = None,
                settings: dict[str, Any] | None = None) -> Engine:
    """The (unstarted) engine for a variant: verified artifact, settings from params (or
    `settings`, a serving configuration's, whole)."""
    engine = engine or params.engine_for(name)
    art = artifact or layout.artifact(name)
    # Nothing is served from files that do not match their manifest; the hash recorded with the
    # results is the one recomputed from the bytes served.
    manifest = require_verified(art)
    if settings is None:
        settings = params.engine_settings(name) if engine == params.engine_for(name) else \
            getattr(params.engines, engine).model_dump() | dict(params.variants[name].engine_options)
    eng = get_engine(engine)(art, settings, log_path=log_path,
                             tokenizer_dir=layout.model,
                             url=params.variants[name].url)
    eng.verified_manifest = manifest
    return eng


def replicated(params: StageView, layout: Layout, name: str, first: Engine, ev, *, engine: str | None,
               artifact: Path | None, settings: dict[str, Any] | None = None) -> Engine:
    """`evaluate.replicas` copies of the variant's engine behind one (pipeline.evaluate.replicas)."""
    from pipeline.engines.base import ServerEngine
    from pipeline.evaluate.replicas import Replicas, replica_environments, replica_log

    if not isinstance(first, ServerEngine) or first.url:
        raise EvaluateError(f"evaluate.replicas is {ev.replicas} but variant {name!r} is served by "
                            f"{first.name}{' at ' + first.url if first.url else ''}, which this "
                            "stage does not start as separate processes — fix: evaluate.replicas: 1")
    engines = [first] + [open_engine(params, layout, name, replica_log(first.log_path, i), engine=engine,
                                     artifact=artifact, settings=settings) for i in range(1, ev.replicas)]
    for e, env in zip(engines, replica_environments(type(first), ev.replicas), strict=True):
        e.extra_env = env
    return Replicas(engines, ev.concurrency)


class EvaluateError(QpipeError, ValueError):
    pass


def hardware() -> dict[str, Any]:
    info = {"node": platform.node(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "python": platform.python_version()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = gpu_memory()
    if gpu:
        info["gpus"] = [g["name"] for g in gpu["gpus"]]
    return info


def score_records(items, prompts: list[list[int]], completions, *, ngram: int) -> list[dict]:
    records = []
    for item, ids, c in zip(items, prompts, completions, strict=True):
        s = score(item.rubric, item.reference, c.text)
        rec = {"id": item.id, "conversation_id": item.conversation_id, "slices": item.slices,
               "rubric": item.rubric.get("type", "exact"), "prompt_tokens": len(ids),
               "output_tokens": c.output_tokens, "ttft": _r(c.ttft), "latency": _r(c.latency),
               "finish_reason": c.finish_reason, "output": c.text, "score": s.value,
               "reason": s.reason, "repetition": detectors.repeats(c.text, ngram),
               "json_valid": is_valid_json(c.text) if item.rubric.get("type") == "json" else None}
        records.append(rec)
    return records


def _relative(path: Path, root: Path) -> str:
    """Paths in results are relative to the project, so records compare across machines."""
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(path)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 5)


def accuracy(records: list[dict]) -> dict[str, Any]:
    """Overall and per slice (`scenario=faq`, `difficulty=hard`, …)."""
    slices: dict[str, list[float]] = {}
    for r in records:
        for k, v in r["slices"].items():
            slices.setdefault(f"{k}={v}", []).append(r["score"])
    return {"accuracy": round(float(np.mean([r["score"] for r in records])), 4),
            "n": len(records),
            "slices": {k: {"n": len(v), "accuracy": round(float(np.mean(v)), 4)}
                       for k, v in sorted(slices.items())}}


def _burst_share(records: list[dict]) -> float | None:
    multi = [r for r in records if r["output_tokens"] > 1 and r["ttft"] is not None and r["latency"]]
    return round(sum(r["ttft"] >= 0.8 * r["latency"] for r in multi) / len(multi), 4) if multi else None


def speed(records: list[dict], wall: float, serving: bool, note: str | None = None, *,
          reused: int = 0) -> dict[str, Any]:
    """Timing of the items this run served (`records`, in `wall` seconds); `reused` more came from
    the record cache, served before by the same artifact, engine and settings, and are not timed."""
    if reused:
        note = "; ".join(filter(None, [None if serving else note, (
            f"{reused} items from the record cache: the timing is of the {len(records)} served now"
            if records else f"all {reused} items from the record cache: nothing was timed")]))
    out_tokens = sum(r["output_tokens"] for r in records)
    ttft = [r["ttft"] for r in records if r["ttft"] is not None]
    tpot = [(r["latency"] - r["ttft"]) / (r["output_tokens"] - 1) for r in records
            if r["ttft"] is not None and r["output_tokens"] > 1]
    pct = lambda a, q: round(float(np.percentile(a, q)), 5) if a else None  # noqa: E731
    return {"serving_engine": serving,
            "note": note if reused or not serving else None,
            "wall_seconds": round(wall, 3),
            "output_tokens_per_second": round(out_tokens / wall, 2) if records and wall > 0 else None,
            "ttft_p50": pct(ttft, 50), "ttft_p99": pct(ttft, 99),
            "tpot_p50": pct(tpot, 50), "tpot_p99": pct(tpot, 99),
            # tokens that reached the client in one burst make TTFT/TPOT describe delivery
            "burst_share": _burst_share(records),
            "latency_p50": pct([r["latency"] for r in records], 50) if records else None,
            "latency_p99": pct([r["latency"] for r in records], 99) if records else None}


def protocol(prompts: list[list[int]], ev) -> dict[str, Any]:
    """The controlled variables a pairing needs equal: the exact prompt token ids (tokenizer and
    chat template included), greedy decoding and the max tokens."""
    h = hashlib.sha256()
    for ids in prompts:
        h.update(",".join(map(str, ids)).encode() + b"\n")
    return {"prompts_sha256": h.hexdigest(), "decoding": "greedy", "max_tokens": ev.max_tokens}


def cache_identity(eng: Engine, name: str, served_with: tuple[dict[str, Any], str], ev) -> dict[str, Any]:
    """Everything that decides an answer of `name`'s engine (pipeline.evaluate.record_cache)."""
    info, (settings, module) = eng.info(), served_with
    return {"variant": name, "artifact_sha256": eng.verified_manifest.content_sha256,
            "engine": info.name, "engine_version": info.version, "settings": settings,
            "url": eng.url if hasattr(eng, "url") else None, "max_tokens": ev.max_tokens,
            "concurrency": ev.concurrency * ev.replicas, "code": code_version(module)}


def cached(eng: Engine, layout: Layout, name: str, served_with: tuple[dict[str, Any], str], ev) -> Engine | Cached:
    """The engine behind the record cache, keyed by everything that decides an answer; the engine
    itself where the cache is off."""
    where = cache_folder(layout.root)
    return eng if where is None else Cached(eng, RecordCache(where, cache_identity(eng, name, served_with, ev)))


def evaluate(params: StageView, layout: Layout, name: str, out: Path, *, engine: str | None = None,
             artifact: Path | None = None, stop_rule: StopRule | None = None,
             settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Serve one variant and evaluate it into `out` (samples.jsonl, metrics.json, run.json,
    engine.log). Returns the metrics. With `stop_rule` the items are served in looks and the
    evaluation stops once the rule settles the variant's gate (pipeline.evaluate.looks)."""
    from pipeline.models import load_tokenizer

    ev = params.evaluate
    evalset = load_evalset(layout.evalset, limit=ev.limit)
    tokenizer = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    prompts = render(tokenizer, evalset.items)
    eng = open_engine(params, layout, name, out / ENGINE_LOG, engine=engine, artifact=artifact,
                      settings=settings)
    served_with = (eng.settings, type(eng).__module__)
    serving = serving_record(eng, engine or params.engine_for(name), params.variants[name].url)
    if ev.replicas > 1:
        eng = replicated(params, layout, name, eng, ev, engine=engine, artifact=artifact, settings=settings)
    # an engine that takes text (mlx) refuses, before it starts, prompts it would not tokenize
    # to the harness's ids
    eng.check_prompts(prompts, [item.id for item in evalset.items])
    if stop_rule is not None:  # before anything is served: records made another way are refused
        stop_rule.check(evalset.sha256, harness_version(), protocol(prompts, ev))

    def score_at(at: list[int], got) -> list[dict]:
        return score_records([evalset.items[i] for i in at], [prompts[i] for i in at], [got[i] for i in at],
                             ngram=ev.repetition_ngram)

    # its reference's items beyond the reference's opening look (the variant's own evaluation only,
    # not one of its artifact on another engine or configuration)
    companion = reference_serving.for_variant(
        params, layout, name, prompts, evalset.items, log_dir=out, score=score_at,
        identity=lambda e, n, sw: cache_identity(e, n, sw, ev) if cache_folder(layout.root) else None
    ) if (engine, artifact, settings) == (None, None, None) else None
    started = time.time()
    with eng, MemorySampler(eng.pids) as mem, companion or contextlib.nullcontext():
        t_ready = time.time() - started
        if ev.warmup:
            run_prompts(eng, prompts[: ev.warmup], max_tokens=ev.max_tokens,
                        concurrency=ev.concurrency)
        server = cached(eng, layout, name, served_with, ev)
        with progress.task(f"eval {name}", total=len(prompts)) as shown:
            correct, answered = 0.0, 0

            def scored(i: int, c) -> None:  # the running accuracy, as answers arrive
                nonlocal correct, answered
                item = evalset.items[i]
                correct, answered = correct + score(item.rubric, item.reference, c.text).value, answered + 1
                shown.advance(status=f"accuracy {correct / answered:.3f}")

            if stop_rule is None:
                completions, wall = run_prompts(server, prompts, max_tokens=ev.max_tokens,
                                                concurrency=ev.concurrency * ev.replicas, progress=scored)
                positions, looks = list(range(len(prompts))), None
            else:
                looks = serve_in_looks(server, prompts, ev, stop_rule, on_answer=scored, score=score_at, extend=(
                    (lambda batch: stop_rule.extend(companion.records_for(batch))) if companion else None))
                positions, wall = looks.positions, looks.wall
                completions = [looks.completions[i] for i in positions]
        hits, counts = server.take() if isinstance(server, Cached) else (set(), {})
        harness_results = None
        if ev.lm_eval.tasks:
            from pipeline.evaluate import lmeval

            harness_results = lmeval.run(eng, ev.lm_eval, evalset, tokenizer, layout.model,
                                         layout.root, max_tokens=ev.max_tokens, concurrency=ev.concurrency,
                                         server=server, only=None if looks is None else
                                         {evalset.items[i].id for i in positions})
            if isinstance(server, Cached):  # what lm-eval asked, beside the items
                counts |= {f"lm_eval_{k}": v for k, v in server.take()[1].items()}
        info = eng.info()
        gpu = gpu_memory()
        paired = companion.records_for(positions) if companion else None  # the reference's, for these items
        if isinstance(server, Cached):
            server.cache.close()
    records = score_records([evalset.items[i] for i in positions], [prompts[i] for i in positions],
                            completions, ngram=ev.repetition_ngram)
    reused = {i for i in positions if prompt_key(prompts[i]) in hits}
    timed = [r for i, r in zip(positions, records) if i not in reused]
    if looks is not None:
        for i, rec in zip(positions, records):
            rec["look"] = looks.look_of[i]
    manifest = eng.verified_manifest
    metrics = {"schema": SCHEMA, "variant": name, "served": True, **accuracy(records),
               "detectors": detectors.variant_detectors(records, max_tokens=ev.max_tokens),
               "speed": speed(timed, wall, info.serving, type(eng).speed_note, reused=len(reused)),
               "memory": {"engine_peak_rss_bytes": mem.peak or None, "gpu": gpu},
               "engine": {"name": info.name, "version": info.version, "kernel": info.kernel,
                          "serving": info.serving, "reason": params.variants[name].reason},
               "evalset_sha256": evalset.sha256, "harness_version": harness_version(),
               "protocol": protocol(prompts, ev),
               "artifact_sha256": manifest.content_sha256,
               "size_bytes": manifest.size_bytes}
    if harness_results is not None:
        metrics["lm_eval"] = harness_results
    if looks is not None:
        metrics["sequential"] = looks.block
    metrics = Metrics.read(metrics, out / METRICS).dump()  # the contract, typed
    run = {"variant": name, "engine": info.__dict__,
           "reason": params.variants[name].reason, "hardware": hardware(),
           "settings": {"max_tokens": ev.max_tokens, "concurrency": ev.concurrency,
                        "replicas": ev.replicas, "warmup": ev.warmup, "limit": ev.limit, "decoding": "greedy",
                        "tokenizer": str(params.model.path), "chat_template": "base model's"},
           **({"sequential": {"look": ev.sequential.look, "seed": ev.sequential.seed,
                              "reference": stop_rule.reference}} if stop_rule is not None else {}),
           **({"record_cache": server.summary(counts)} if isinstance(server, Cached) else {}),
           **({"reference_served": companion.summary(positions)} if companion else {}), "serving": serving,
           "startup_seconds": round(t_ready, 2), "evalset": str(ev.evalset),
           "evalset_sha256": evalset.sha256, "harness_version": harness_version(),
           "artifact": {"path": _relative(eng.artifact, layout.root), "content_sha256": manifest.content_sha256,
                        "format": getattr(manifest, "format", None),
                        "scheme": getattr(manifest, "scheme", None)}}
    for path, recs in ((SAMPLES, records), (REFERENCE_SAMPLES, paired)):
        if recs is not None:
            with (out / path).open("w", encoding="utf-8") as fh:
                fh.writelines(line(SampleRecord.model_validate(r)) for r in recs)
    write_json(out / RUN, EvalRun.model_validate(run).dump())
    write_json(out / METRICS, metrics)
    return metrics


def not_served(params: StageView, name: str, out: Path) -> dict[str, Any]:
    why = f"not served here: {params.variants[name].reason}"
    metrics = Metrics(variant=name, served=False, reason=why).dump()
    write_json(out / RUN, EvalRun(variant=name, served=False, reason=why).dump())
    write_json(out / METRICS, metrics)
    (out / SAMPLES).write_text("")
    return metrics


def keep_failed(staging: Path, failed: Path, name: str, err: BaseException) -> None:
    """Keep what a failed attempt wrote (its engine logs) and the error where a person can read
    them (`failed`, outside the stage's outs); the outs themselves stay absent."""
    shutil.copytree(staging, failed, dirs_exist_ok=True)
    write_json(failed / ERROR, {
        "schema": FAILED_SCHEMA, "variant": name, "error": type(err).__name__,
        "message": str(err) or type(err).__name__,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def run(params: StageView, layout: Layout, name: str, *,
        rules: Callable[..., StopRule | None] | None = None) -> dict[str, Any]:
    """Evaluate one variant into <evaluate.out_dir>/<name>, atomically; `params`: the stage's own
    (PARAMS, for `name`).

    Any failure — the engine missing, dying at start or mid-run, Ctrl-C, SIGTERM, a bug — leaves
    no results for the variant (no stale metrics.json from an earlier run either) and keeps what
    the attempt wrote, its engine log and the error under logs/failed/<name>/, where tracking
    finds it and logs the run as FAILED."""
    results = layout.results
    failed = layout.failed(name)  # outside results/, which `compare` depends on
    shutil.rmtree(failed, ignore_errors=True)
    try:
        with atomic_dirs(results, [name]) as dirs:
            if params.engine_for(name) == "none":
                return not_served(params, name, dirs[name])
            try:
                # a quantized variant may stop early: `rules(params, layout, name)`, the
                # comparison's stopping rule (None: every item is served)
                rule = rules(params, layout, name) if rules is not None else None
                return evaluate(params, layout, name, dirs[name], stop_rule=rule)
            except BaseException as err:
                keep_failed(dirs[name], failed, name, err)
                raise
    except BaseException:
        shutil.rmtree(results / name, ignore_errors=True)  # no stale metrics for a failed run
        raise


def summary_line(name: str, metrics: dict[str, Any]) -> str:
    """One variant's evaluation in one line: accuracy, engine and speed, or why it was not served."""
    if not metrics.get("served", True):
        return f"{name}: {metrics['reason']}"
    sp, eng = metrics["speed"], metrics["engine"]
    return (f"{name}: accuracy {metrics['accuracy']:.3f} (n={metrics['n']}) on {eng['name']} "
            f"{eng['version']} [{eng['kernel']}]; {sp['output_tokens_per_second']} output tok/s"
            f"{'' if sp['serving_engine'] else ' (reference engine)'}")


def serve(params: StageView, layout: Layout, name: str, *, engine: str | None = None,
          ready: Callable[[str], None] = log.info) -> None:
    """`qpipe serve`: start a variant's engine on its verified artifact and keep it serving until
    Ctrl-C (or SIGTERM, which the CLI turns into one), then stop it. `ready` gets the line that
    says where it serves; the engine log is logs/serve-<variant>.log. An engine that dies while
    serving raises its EngineError with the log's tail."""
    log_path = layout.serve_log(name)
    try:
        with open_engine(params, layout, name, log_path, engine=engine) as eng:
            where = getattr(eng, "base_url", "in process")
            ready(f"{name} served by {eng.name} at {where} (log: {log_path}); Ctrl-C stops it")
            while True:
                if hasattr(eng, "check_alive"):
                    eng.check_alive("while serving")
                time.sleep(1)
    except KeyboardInterrupt:
        return
