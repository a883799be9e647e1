"""Cross-engine differential test (docs/rationale.md#engine-as-the-only-variable): one artifact,
verified by hash, served by two engines with every other variable fixed; the engine is the only
difference.

    qpipe diff-engines baseline --engines vllm,transformers
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.evaluate import detectors
from pipeline.compare.deltas import check_pairable, load_results, slice_table
from pipeline.contracts.eval_metrics import EngineInfo
from pipeline.evaluate.stage import evaluate
from pipeline.stats.paired import paired_accuracy
from pipeline.errors import QpipeError
from pipeline.io import atomic_dirs, write_json
from pipeline.stage_params import StageView


class DiffEnginesError(QpipeError, ValueError):
    pass


def run(params: StageView, layout, variant: str, engines: str | list[str], *,
        profile: str | None = None) -> dict[str, Any]:
    """Serve `variant`'s artifact on both engines (a list, or "a,b"), one after the other; pair
    their records and judge the difference by its tier (docs/rationale.md#engine-tiers)
    (`profile`, default gates.profile)."""
    from pipeline.compare.gates import ENGINE_DIFF_TIERS, engine_diff_verdict

    if isinstance(engines, str):
        engines = [e.strip() for e in engines.split(",") if e.strip()]
    if len(engines) != 2:
        raise DiffEnginesError(f"--engines takes exactly two engine names, e.g. vllm,transformers; got {engines}")

    profile = profile or params.gates.profile
    if profile not in ENGINE_DIFF_TIERS:  # before minutes of serving
        engine_diff_verdict(profile, {}, {})
    a, b = engines
    parent = layout.reports / "diff-engines"
    name = f"{variant}.{a}-vs-{b}"
    with atomic_dirs(parent, [name]) as dirs:
        out = dirs[name]
        for engine in engines:
            (out / engine).mkdir()
            evaluate(params, layout, variant, out / engine, engine=engine)
        ma, ra = load_results(out, a)
        mb, rb = load_results(out, b)
        check_pairable(ma.model_copy(update={"engine": EngineInfo(name="-", version="-")}),
                       {b: mb.model_copy(update={"engine": EngineInfo(name="+", version="+")})})
        cfg = params.compare
        ids = [r["id"] for r in ra]
        sb = {r["id"]: r["score"] for r in rb}
        report = {"variant": variant, "engines": {a: ma.engine.as_json(), b: mb.engine.as_json()},
                  "accuracy": {a: ma.accuracy, b: mb.accuracy},
                  "paired": paired_accuracy([r["score"] for r in ra], [sb[i] for i in ids],
                                            alpha=cfg.alpha, n_boot=cfg.bootstrap,
                                            min_effect=cfg.min_effect, power=cfg.power,
                                            seed=cfg.seed),
                  "consistency": detectors.consistency(ra, rb),
                  "slices": slice_table(ra, rb, cfg)}
        report["verdict"] = engine_diff_verdict(
            profile, report["consistency"], {a: ma.speed.as_json(), b: mb.speed.as_json()})
        write_json(out / "diff.json", report)
    report["out"] = str(parent / name / "diff.json")
    return json.loads(json.dumps(report))


def summary_lines(r: dict[str, Any]) -> list[str]:
    """The differential test for the terminal: consistency and paired accuracy of the two
    engines, then the verdict and each of its criteria."""
    a, b = r["engines"]
    c, p, v = r["consistency"], r["paired"], r["verdict"]
    lines = [f"{r['variant']}: {a} vs {b} — exact {c['exact_match_rate']:.3f}, char similarity "
             f"{c['char_similarity']:.3f}, task agreement {c['task_agreement']:.3f}; accuracy "
             f"{r['accuracy'][a]:.3f} vs {r['accuracy'][b]:.3f} (delta {p['delta']:+.3f}, CI "
             f"[{p['ci_low']:+.3f}, {p['ci_high']:+.3f}]) → {r['out']}",
             f"verdict ({v['profile']}): {'PASS' if v['passed'] else 'FAIL'}"]
    for k in v["criteria"]:
        mark = "ok  " if k["passed"] else ("n/a " if k["passed"] is None else "FAIL")
        lines.append(f"  {mark} {k['name']}: {k['detail']}")
    return lines
