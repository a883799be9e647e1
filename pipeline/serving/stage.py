"""The `upgrade@<name>` stage (`qpipe upgrade <name>`): one artifact, verified by hash, served by
two serving configurations — an engine release and its settings, named in params `serving` — and
compared as a controlled change (docs/upgrades.md):

1. accuracy: the whole evaluation set through each configuration (the evaluate stage's harness),
   paired item by item — outputs changed, task results changed, accuracy change;
2. traffic: requests drawn from the business logs per mix (pipeline/loadgen/traffic.py), replayed
   by GuideLLM at arrival rates, Poisson or constant (fractions of the current configuration's saturation, or
   requests per second), both engines up, the configurations alternating round by round; TTFT,
   TPOT, ITL and end-to-end percentiles, throughput and goodput under the SLO;
3. a synthetic fixed-shape figure (256-token prompts → 64 tokens, one request at a time), the
   kind of benchmark that misses a long-tail regression, beside it;
4. verdicts (pipeline/serving/verdicts.py), the report, the plot, and MLflow runs.
"""

from __future__ import annotations

import gzip
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from pipeline import progress
from pipeline.contracts.files import ENGINE_LOG, SAMPLES, UPGRADE, UPGRADE_MD, UPGRADE_PLOT, UPGRADE_SCHEMA
from pipeline.contracts.records import SampleRecord, read_lines
from pipeline.contracts.stage_results import UpgradeReport
from pipeline.errors import QpipeError
from pipeline.io import atomic_dirs, write_json
from pipeline.layout import Layout
from pipeline.loadgen import guidellm_runs as loadgen, traffic
from pipeline.serving import verdicts
from pipeline.stage_params import Declared, StageView

log = logging.getLogger(__name__)
PARAMS = Declared("upgrade", "serving.configs", "serving.upgrades.${key}", "serving.traffic", "serving.slo",
                  "serving.max_p99_increase", "serving.profile", "serving.loadgen_python", "serving.out_dir",
                  "model", "engines", "evaluate", "variants", "gates", "compare.alpha", "tracking")
SYNTHETIC = {"prompt_tokens": 256, "output_tokens": 64, "requests": 16}
SIDES = ("current", "candidate")
RETRIES = 2  # a replay that did not keep its schedule is measured again, at most this often


class UpgradeError(QpipeError, ValueError):
    pass


def settings_of(params: StageView, artifact: str, spec) -> dict[str, Any]:
    """A configuration's engine settings, whole: the engine's section, the variant's own options,
    the configuration's options, and its release."""
    base = getattr(params.engines, spec.engine).model_dump() | dict(params.variants[artifact].engine_options)
    return base | dict(spec.options) | ({"release": spec.release} if spec.release is not None else {})


def run(params: StageView, layout: Layout, name: str) -> dict[str, Any]:
    """The `upgrade@<name>` stage; `params`: its own (PARAMS)."""
    from pipeline.engines.base import get_engine

    cfg = params.serving
    up = cfg.upgrades[name]
    specs = {side: cfg.configs[getattr(up, side)] for side in SIDES}
    for spec in specs.values():  # a release not built yet is built now (a few minutes)
        if spec.release is not None:
            get_engine(spec.engine).prepare_release(spec.release)
    python = loadgen.loadgen_python(cfg.loadgen_python)
    out, failed = layout.upgrade(name), layout.failed_upgrade(name)
    shutil.rmtree(failed, ignore_errors=True)
    with atomic_dirs(out.parent, [out.name]) as dirs:
        staging = dirs[out.name]
        try:
            report = _run(params, layout, name, up, specs, python, staging)
        except BaseException as err:  # the engines' and the load generator's logs stay readable
            from pipeline.evaluate.stage import keep_failed

            keep_failed(staging, failed, f"upgrade@{name}", err)
            raise
    report["out"] = str(out)
    from pipeline.serving.report import track

    report["mlflow"] = track(params, layout, name, report)
    return report


def track_only(params: StageView, layout: Layout, name: str) -> dict[str, Any]:
    """Log an upgrade's existing results to MLflow (after the store did not answer)."""
    from pipeline.serving.report import track

    path = layout.upgrade(name) / UPGRADE
    if not path.is_file():
        raise UpgradeError(f"{path} does not exist — fix: `qpipe upgrade {name}` (or `dvc repro upgrade@{name}`)")
    report = UpgradeReport.load(path).dump() | {"out": str(path.parent)}
    report["mlflow"] = track(params, layout, name, report)
    return report


def _run(params: StageView, layout: Layout, name: str, up, specs: dict, python: str, staging: Path) -> dict[str, Any]:
    from pipeline.compare.gates import ENGINE_DIFF_TIERS, thresholds
    from pipeline.evaluate.stage import evaluate
    from pipeline.serving.report import plot, write_markdown

    cfg, alpha = params.serving, params.compare.alpha
    profile = cfg.profile or params.gates.profile
    if profile not in ENGINE_DIFF_TIERS:
        raise UpgradeError(f"serving.profile {profile!r} has no engine-difference tier — fix: one of "
                           f"{', '.join(ENGINE_DIFF_TIERS)}")
    t = cfg.traffic
    if len(set(t.rates)) != len(t.rates):
        raise UpgradeError(f"serving.traffic.rates {t.rates} repeats a rate — fix: each rate once")
    settings = {side: settings_of(params, up.artifact, spec) for side, spec in specs.items()}
    started = time.time()
    records, metrics = {}, {}
    for side in SIDES:  # accuracy: the whole evaluation set through each configuration
        folder = staging / side / "eval"
        folder.mkdir(parents=True)
        metrics[side] = evaluate(params, layout, up.artifact, folder, engine=specs[side].engine,
                                 settings=settings[side])
        records[side] = [r.model_dump() for r in read_lines(SampleRecord, folder / SAMPLES)]
    if metrics["current"]["artifact_sha256"] != metrics["candidate"]["artifact_sha256"]:
        raise UpgradeError("the two configurations served different bytes — the artifact changed mid-run")
    acc = verdicts.accuracy(records["current"], records["candidate"], ENGINE_DIFF_TIERS[profile],
                            thresholds(params.gates).max_drop_overall, alpha)
    mixes = _traffic(params, layout, staging)
    runs, failed, rates, saturation, synthetic, redone = _replay(params, layout, up, specs, settings, python,
                                                                 staging, mixes)
    perf = verdicts.traffic(runs, cfg.max_p99_increase, alpha, cfg.slo.model_dump(), failed)
    for mix, res in perf.items():
        res["saturation_rps"], res["rates_rps"] = saturation.get(mix), rates[mix]
        res["traffic"] = {k: v for k, v in mixes[mix].items() if k not in ("items", "paths")}
    report = {"schema": UPGRADE_SCHEMA, "upgrade": name, "artifact": up.artifact,
              "artifact_sha256": metrics["current"]["artifact_sha256"],
              "evalset_sha256": metrics["current"]["evalset_sha256"],
              "configurations": {side: {"name": getattr(up, side), "engine": specs[side].engine,
                                        "release": specs[side].release, "settings": settings[side],
                                        "engine_info": metrics[side]["engine"]} for side in SIDES},
              "profile": profile, "alpha": alpha, "max_p99_increase": cfg.max_p99_increase, "arrivals": t.arrivals,
              "slo": cfg.slo.model_dump(), "accuracy": acc, "traffic": perf, "synthetic": synthetic,
              "loadgen": loadgen.version(python), "replays_redone": redone,
              "verdict": verdicts.combine([acc["verdict"], *(m["verdict"] for m in perf.values())]),
              "seconds": round(time.time() - started, 1)}
    report = UpgradeReport.read(report, staging / UPGRADE).dump()  # the contract, typed
    _compress(staging)
    write_json(staging / UPGRADE, report)
    plot(report, staging / UPGRADE_PLOT)
    write_markdown(report, staging / UPGRADE_MD)
    return report


def _compress(staging: Path, above: int = 1 << 20) -> None:
    """GuideLLM's full reports and the engines' logs gzip'd where large (an older llama.cpp writes
    tens of MB of log at the verbosity that shows its kernel); `zcat` reads them."""
    for f in sorted(staging.rglob("*")):
        if f.is_file() and f.suffix in (".json", ".log") and f.name != UPGRADE and f.stat().st_size > above:
            with f.open("rb") as src, gzip.GzipFile(f.with_name(f.name + ".gz"), "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            f.unlink()


def _traffic(params: StageView, layout: Layout, staging: Path) -> dict[str, dict[str, Any]]:
    """Each mix's requests, drawn afresh for every round (traffic/<mix>-round<r>.jsonl: both sides
    of a round replay the same requests, another round other ones), and their cards."""
    from pipeline.evaluate.harness import load_evalset, render
    from pipeline.models import load_tokenizer

    t = params.serving.traffic
    evalset = load_evalset(layout.evalset)
    tok = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    pool = traffic.request_pool(evalset.items, render(tok, evalset.items), tok, t.max_output_tokens)
    folder = staging / "traffic"
    folder.mkdir()
    cards = {}
    for k, (mix, spec) in enumerate(t.mixes.items()):
        rounds = []
        for rnd in range(t.rounds):
            drawn, threshold = traffic.draw(pool, t.requests, spec.long_share, t.long_quantile,
                                            t.seed + 1000 * k + rnd)
            rounds.append(traffic.write_mix(drawn, folder, f"{mix}-round{rnd}", threshold))
        cards[mix] = rounds[0] | {"paths": [str(folder / f"{mix}-round{r}.jsonl") for r in range(t.rounds)],
                                  "long_share": round(sum(c["long_share"] for c in rounds) / len(rounds), 4)}
    return cards


def _replay(params: StageView, layout: Layout, up, specs, settings, python: str, staging: Path, mixes):
    """Both engines up; per mix: each side's saturation, then every rate, round by round, the
    sides alternating (current first in even rounds)."""
    from pipeline.evaluate.stage import open_engine

    t = params.serving.traffic
    folder = staging / "replays"
    folder.mkdir()
    engines = {side: open_engine(params, layout, up.artifact, staging / side / ENGINE_LOG,
                                 engine=specs[side].engine, settings=settings[side]) for side in SIDES}
    runs: dict = {}
    failed: dict = {}
    redone: list[dict[str, Any]] = []
    rates: dict[str, list[float]] = {}
    saturation: dict[str, dict[str, float]] = {}
    steps = len(mixes) * (2 + len(t.rates) * t.rounds * 2) + 2
    with engines["current"], engines["candidate"], progress.task(f"upgrade {up.artifact}", total=steps) as shown:

        def replay(side: str, tag: str, data: Path | dict, profile: dict, requests: int, seed: int = t.seed) -> dict:
            eng = engines[side]
            shown.status(f"{tag} {side}")
            spec = loadgen.scenario(f"http://127.0.0.1:{eng.port}", data, layout.model.resolve(), profile,
                                    requests, folder / f"{tag}-{side}.json", seed)
            # a replay at a rate lasts about requests / rate: its limit grows with it
            limit = 600 + 5 * requests / profile["rate"][0] if "rate" in profile else 1800
            got = loadgen.run(python, spec, folder, f"{tag}-{side}", eng.api_key, timeout=limit)
            shown.advance()
            return got

        synthetic = _synthetic(replay, folder)
        for mix, card in mixes.items():
            paths = [Path(p) for p in card["paths"]]
            everything = {"kind": "throughput", "max_concurrency": 64}  # all at once: the saturation rate
            sat = {side: loadgen.achieved_rate(replay(side, f"{mix}-saturation", paths[0], everything, t.requests))
                   for side in SIDES}
            saturation[mix] = {k: round(v, 3) for k, v in sat.items()}
            rates[mix] = [round(r * sat["current"], 3) if t.rate_unit == "saturation" else r for r in t.rates]
            runs[mix], failed[mix] = {}, {}
            for i, rate in enumerate(rates[mix]):
                runs[mix][rate], failed[mix][rate] = {side: [] for side in SIDES}, {side: [] for side in SIDES}
                for rnd in range(t.rounds):
                    # both sides of a round: the same requests at the same arrival times; rounds differ
                    arrivals, seed = {"kind": t.arrivals, "rate": [rate]}, t.seed + 1000 * i + rnd
                    for side in (SIDES if rnd % 2 == 0 else SIDES[::-1]):
                        tag = f"{mix}-rate{i}-round{rnd}"
                        bench = replay(side, tag, paths[rnd], arrivals, t.requests, seed)
                        why, attempt = loadgen.schedule_problem(bench, rate), 0
                        while why is not None and attempt < RETRIES:  # off its schedule: measured again
                            attempt += 1
                            redone.append({"replay": f"{tag}-{side}", "attempt": attempt, "why": why})
                            log.warning("upgrade: replay %s-%s off its schedule (%s); again", tag, side, why)
                            bench = replay(side, f"{tag}-again{attempt}", paths[rnd], arrivals, t.requests, seed)
                            why = loadgen.schedule_problem(bench, rate)
                        if why is not None:
                            raise UpgradeError(f"GuideLLM's replay {tag}-{side} did not keep its schedule "
                                               f"{RETRIES + 1} times ({why}) — fix: a quieter machine, or fewer "
                                               "requests per second (serving.traffic.rates)")
                        errors = loadgen.failed_count(bench)
                        if errors:
                            log.warning("upgrade: %d requests failed (%s, %s, rate %s)", errors, side, mix, rate)
                        runs[mix][rate][side].append(loadgen.requests_of(bench))
                        failed[mix][rate][side].append(errors)
    return runs, failed, rates, saturation, synthetic, redone


def _synthetic(replay, folder: Path) -> dict[str, Any]:
    """The fixed-shape figure a synthetic staging benchmark gives: 256-token prompts, 64 output
    tokens, one request at a time (GuideLLM's synthetic text, synchronous)."""
    from pipeline.stats.latency import summary

    data = {"kind": "synthetic_text", "prompt_tokens": SYNTHETIC["prompt_tokens"],
            "output_tokens": SYNTHETIC["output_tokens"]}
    out: dict[str, Any] = {"shape": SYNTHETIC}
    for side in SIDES:
        bench = replay(side, "synthetic", data, {"kind": "synchronous"}, SYNTHETIC["requests"])
        reqs = loadgen.requests_of(bench)
        span = max(r["end"] for r in reqs) - min(r["start"] for r in reqs)
        out[side] = {"e2e_s": summary([r["e2e_s"] for r in reqs]),
                     "output_tokens_per_s": round(sum(r["output_tokens"] or 0 for r in reqs) / span, 2)}
    out["e2e_p50_ratio"] = round(out["candidate"]["e2e_s"]["p50"] / out["current"]["e2e_s"]["p50"], 4)
    out["output_tokens_per_s_ratio"] = round(out["candidate"]["output_tokens_per_s"]
                                             / out["current"]["output_tokens_per_s"], 4)
    return out


def summary_lines(r: dict[str, Any]) -> list[str]:
    a = r["accuracy"]
    c = r["configurations"]
    lines = [f"upgrade {r['upgrade']}: {c['current']['name']} → {c['candidate']['name']} on {r['artifact']} "
             f"— {r['verdict'].upper()} → {r['out']}",
             f"  accuracy: {a['verdict']} ({a['outputs_changed']} of {a['items']} outputs changed, "
             f"{a['task_results_changed']} task results)"]
    for mix, m in r["traffic"].items():
        worst = [f"{k} ×{v['ratio']} [{v['ci_low']}, {v['ci_high']}] {v['verdict']}"
                 for rate in m["rates"].values() for k, v in rate["criteria"].items() if "ratio" in v]
        lines.append(f"  traffic {mix}: {m['verdict']} — " + "; ".join(worst))
    s = r["synthetic"]
    lines.append(f"  synthetic fixed shape: output tok/s ×{s['output_tokens_per_s_ratio']}, "
                 f"P50 latency ×{s['e2e_p50_ratio']}")
    return lines
