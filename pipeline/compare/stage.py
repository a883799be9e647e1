"""The `compare` stage's report: paired statistics (pipeline.compare.deltas), then gates, the
utility score, the Pareto front, the calibration effect, plots and comparison.md.

`qpipe report` redoes everything after the statistics from an existing comparison.json (a new
gate profile or utility weights need no re-evaluation).
"""

from __future__ import annotations

import logging
from typing import Any

from pipeline.compare import deltas, matrix
from pipeline.compare import plan
from pipeline.compare.deltas import CompareError, load_results, slice_table
from pipeline.compare.limits import derive
from pipeline.contracts import Comparison
from pipeline.io import write_json
from pipeline.compare import gates
from pipeline.compare import markdown
from pipeline.compare import plots
from pipeline.layout import Layout
from pipeline.stage_params import Declared, StageView
from pipeline.contracts.files import COMPARISON, COMPARISON_MD, PLOTS

log = logging.getLogger(__name__)
PARAMS = Declared("compare", "compare", "gates", "utility", "variants", "evaluate.out_dir", "bench.out_dir")


def calibration_pairs(params: StageView) -> list[tuple[str, str]]:
    """(a, b) variants made the same way but for their calibration set."""
    out = []
    names = list(params.variants)
    for i, a in enumerate(names):
        va = params.variants[a]
        for b in names[i + 1:]:
            vb = params.variants[b]
            same = (va.backend, va.scheme, va.recipe) == (vb.backend, vb.scheme, vb.recipe)
            if same and va.calibration != vb.calibration and va.needs_calibration:
                out.append((a, b))
    return out


def calibration_effect(params: StageView, layout: Layout) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Same recipe, business vs general calibration: their paired difference on the business
    evaluation set, overall and per slice — whatever it shows. Returns the effects and the
    pairs that could not be compared, each with why (never dropped silently)."""
    results = layout.results
    effects, skipped = [], []
    for a, b in calibration_pairs(params):
        try:
            ma, ra = load_results(results, a)
            mb, rb = load_results(results, b)
        except CompareError as err:
            skipped.append({"pair": f"{a} / {b}", "reason": str(err).split(" — ")[0]})
            continue
        if not (ma.served and mb.served):
            skipped.append({"pair": f"{a} / {b}", "reason": "not served here: "
                            + str((ma if not ma.served else mb).reason)})
            continue
        # Oriented as (other − business) when one of them is calibrated on business data.
        first, second = (a, b) if params.variants[a].calibration == "business" else (b, a)
        r1, r2 = (ra, rb) if first == a else (rb, ra)
        cfg = params.compare
        table = slice_table(r1, r2, cfg)
        overall = deltas._paired(r1, r2, [r["id"] for r in r1], cfg)  # noqa: SLF001
        effects.append({"reference": first, "other": second,
                        "calibration": {first: params.variants[first].calibration,
                                        second: params.variants[second].calibration},
                        "delta_other_minus_reference": overall, "slices": table,
                        "significant_slices": sorted(k for k, s in table.items() if s["significant"])})
    return effects, skipped


def enrich(params: StageView, layout: Layout, comparison: dict[str, Any]) -> dict[str, Any]:
    bench = comparison.get("bench")
    roles = reference_roles(params)
    cfg = params.compare
    margin = gates.thresholds(params.gates).max_drop_overall
    comparison["gate_limits"] = limits = derive(layout, comparison, margin, alpha=cfg.alpha,
                                                seed=cfg.seed)
    for name, v in comparison["variants"].items():
        v.pop("gate", None)
        v.pop("utility", None)
        if name in roles:
            v["reference_role"] = roles[name]
        if v.get("served"):
            # a sequential evaluation is read at the repeated level of the looks it took
            level = (v.get("sequential") or {}).get("repeated_alpha", params.compare.alpha)
            v["gate"] = gates.evaluate_gates(v, bench, params.gates, alpha=level,
                                             power=params.compare.power,
                                             reference_role=roles.get(name), limits=limits)
            v["utility"] = gates.utility(v, bench, params.utility)
    points = tradeoff_points(comparison)
    comparison["pareto_optimal"] = plots.pareto(points) if points else []
    comparison["gate_profile"] = params.gates.profile
    comparison["calibration_effect"], comparison["calibration_effect_skipped"] = \
        calibration_effect(params, layout)
    comparison["plots"] = dict(PLOTS)
    comparison["plan"] = plan.plan(params, layout, comparison=comparison)
    return comparison


def reference_roles(params: StageView) -> dict[str, str]:
    """Variants that are reference runs rather than candidates: noise-floor re-runs of a
    baseline, and each engine's own unquantized baseline."""
    roles = {v: f"the {engine} noise floor: the reference weights served again"
             for engine, v in params.compare.noise_floor.items()}
    roles |= {v: f"the unquantized baseline on {engine}"
              for engine, v in params.compare.engine_baselines.items()}
    return roles


def tradeoff_points(comparison: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    """(accuracy, speed ratio, size) of the baseline and every variant benched on a serving
    engine; reference-engine variants have no comparable speed and are left out."""
    bench = comparison.get("bench") or {}
    base = comparison["baseline_metrics"]
    points = {}
    if comparison["baseline"] in bench:
        points[comparison["baseline"]] = (base["accuracy"], 1.0, base["size_bytes"] or 0)
    for name, v in comparison["variants"].items():
        ratio = bench.get(name, {}).get("output_tps_ratio")
        if v.get("served") and ratio and v["speed"].get("serving_engine"):
            points[name] = (v["accuracy"]["variant"], ratio, v.get("size_bytes") or 0)
    return points


def write(params: StageView, layout: Layout, comparison: dict[str, Any]) -> dict[str, Any]:
    out = layout.reports
    out.mkdir(parents=True, exist_ok=True)
    points = tradeoff_points(comparison)
    # Both plots are always written (they are the stage's declared outputs): without figures
    # to draw, the image says why.
    if points:
        plots.tradeoff(points, comparison["pareto_optimal"], out / PLOTS["tradeoff"],
                       "output tok/s vs baseline (bench, side by side)")
    else:
        plots.empty(out / PLOTS["tradeoff"], "no bench figures on a serving engine: "
                    "run `dvc repro bench`")
    plots.heatmap(comparison, out / PLOTS["slices"])
    plots.gate_limits(comparison, out / PLOTS["gate_limits"])
    tmp = out / ".comparison.md.tmp"
    tmp.write_text(markdown.render(comparison), encoding="utf-8")
    tmp.replace(out / COMPARISON_MD)
    tmp = out / ".comparison.json.tmp"
    write_json(tmp, Comparison.read(comparison, out / COMPARISON).dump())
    tmp.replace(out / COMPARISON)
    return comparison


def run(params: StageView, layout: Layout, *, baseline: str | None = None,
        variants: list[str] | None = None) -> dict[str, Any]:
    """The `compare` stage; `params`: its own (PARAMS)."""
    comparison = matrix.run(params, layout, baseline=baseline, variants=variants)
    return write(params, layout, enrich(params, layout, comparison))


def report_only(params: StageView, layout: Layout) -> dict[str, Any]:
    """`qpipe report`: the compare stage's outputs again (`params`: its own, PARAMS)."""
    path = layout.comparison
    if not path.is_file():
        raise CompareError(f"{path} does not exist — fix: `dvc repro compare` (or `qpipe compare`)")
    return write(params, layout, enrich(params, layout, Comparison.load(path).dump()))
