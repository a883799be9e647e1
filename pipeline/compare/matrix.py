"""The `compare` stage's matrix: every variant paired with its reference (the baseline, or its
engine's own unquantized baseline), the noise floors, the divergence signals and the custody hashes,
into reports/comparison.json. The statistics of one pair are pipeline.compare.deltas'.

An engine's reference that served its opening look only under a sequential design
(pipeline.evaluate.reference_serving) is paired with each of its variants through the records of it
that variant's own evaluation served and read (REFERENCE_SAMPLES), and with the baseline on the
items it served itself, a sample fixed in advance, read at α.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.compare.deltas import (
    SCHEMA, CompareError, at_looks, check_pairable, compare_variant, disagreement, load_results, served_part,
)
from pipeline.contracts import BenchResults, Comparison, DivergenceResult, EvalRun, Metrics, SampleRecord, read_lines
from pipeline.contracts.files import BENCH, COMPARISON, METRICS, REFERENCE_SAMPLES, RUN, SAMPLES
from pipeline.io import write_json
from pipeline.stage_params import StageView
from pipeline.stats import noninferiority as ni
from pipeline.stats.sequential import Spending, look_sizes


def _divergence(divergence_dir: Path, name: str) -> dict[str, Any] | None:
    """divergence@<name>'s result, read through its contract; None where it was not run."""
    path = divergence_dir / name / DivergenceResult.FILE
    return DivergenceResult.load(path).dump() if path.is_file() else None


def divergence_of(divergence_dir: Path, name: str, evalset_sha256: str) -> dict[str, Any] | None:
    """The variant's distribution-level signals (divergence@<variant>), or why there are none."""
    d = _divergence(divergence_dir, name)
    if d is None:
        return None
    if d.get("measured") and d.get("evalset_sha256") != evalset_sha256:
        return {"measured": False, "why": f"made on another evaluation set ({d.get('evalset_sha256')}) "
                                          f"— fix: `dvc repro divergence@{name}`"}
    keep = ("measured", "why", "reference", "method", "overall", "slices", "artifact_sha256", "engine")
    if d.get("long_generation"):
        base = _divergence(divergence_dir, d.get("reference", "")) or {}
        lg = d["long_generation"]
        d["long_generation_summary"] = {
            "prompts": lg.get("prompts"), "max_len": lg.get("max_len"), "variant": lg.get("summary"),
            "baseline": (base.get("long_generation") or {}).get("summary")}
        keep += ("long_generation_summary",)
    return {k: d[k] for k in keep if k in d}


def references(params: StageView, baseline: str, names: list[str], served: dict[str, str]) -> dict[str, str]:
    """The run each variant is judged against: its engine's own unquantized baseline where
    compare.engine_baselines names one (the quantization effect, with the engine held fixed),
    else the baseline. An engine baseline itself is judged against the baseline (the engine
    effect). A baseline served by the variant's own engine is engine-matched already."""
    own = dict(params.compare.engine_baselines)
    own.pop(served.get(baseline, ""), None)  # the baseline's own engine needs no other
    out = {}
    for name in names:
        ref = own.get(served.get(name, ""))
        out[name] = baseline if ref in (None, name) else ref
    return out


def noise_floors(params: StageView, results: Path, loaded: dict, refs: dict[str, str]) -> dict[str, dict]:
    """compare.noise_floor names, per engine, a variant that serves that engine's reference
    weights again: its disagreement with the reference is what serving alone changes."""
    out = {}
    for engine, rerun in params.compare.noise_floor.items():
        if rerun not in loaded and (results / rerun / METRICS).is_file():
            loaded = {**loaded, rerun: load_results(results, rerun)}  # not among --variant
            check_pairable(loaded[refs.get(rerun, params.baseline)][0], {rerun: loaded[rerun][0]})
        if rerun not in loaded or not loaded[rerun][0].served:
            out[engine] = {"variant": rerun, "measured": False,
                           "why": f"{rerun} was not evaluated" if rerun not in loaded
                           else f"{rerun} is not served here"}
            continue
        ref = refs[rerun]
        ref_m, ref_r = loaded[ref] if ref in loaded else load_results(results, ref)
        ref_r, _ = paired_with(results, rerun, loaded[rerun][1], ref, ref_m, ref_r)
        d = disagreement(ref_r, loaded[rerun][1])
        lo, hi = ni.wilson_interval(d["outputs_changed"], d["n"])
        rlo, rhi = ni.wilson_interval(d["results_changed"], d["n"])
        out[engine] = {"variant": rerun, "reference": ref, "measured": True, **d,
                       "outputs_changed_ci": [round(lo, 4), round(hi, 4)],
                       "results_changed_ci": [round(rlo, 4), round(rhi, 4)]}
    return out


def opening_only(m: Metrics) -> bool:
    """An engine's reference that served its opening look only; its variants served the rest of
    what they used (pipeline.evaluate.reference_serving)."""
    return bool(m.served and m.sequential and m.sequential.role == "reference")


def paired_with(results: Path, name: str, r: list[dict], ref: str, ref_m: Metrics,
                ref_r: list[dict]) -> tuple[list[dict], str | None]:
    """The reference records `name` is paired with, and the hash of the file they came from where
    it is not the reference's own: where the reference served its opening look only, those its
    own evaluation served and read (REFERENCE_SAMPLES), checked to be the reference's artifact's
    and to cover exactly its items."""
    if not opening_only(ref_m):
        return ref_r, None
    from pipeline.io import file_sha256

    path, fix = results / name / REFERENCE_SAMPLES, f" — fix: `dvc repro -f evaluate@{name}`"
    if not path.is_file():
        raise CompareError(f"{name}: {ref} served its opening look only and {name}'s evaluation holds no "
                           f"records of {ref} for its other items" + fix)
    served = (EvalRun.load(results / name / RUN).dump().get("reference_served") or {})
    if served.get("artifact_sha256") != ref_m.artifact_sha256:
        raise CompareError(f"{name}: the {ref} records it holds were served from artifact "
                           f"{served.get('artifact_sha256')}, not the {ref_m.artifact_sha256} {ref}'s "
                           f"evaluation verified" + fix)
    records = [x.model_dump(exclude_unset=True) for x in read_lines(SampleRecord, path, writer=f"`evaluate@{name}`")]
    if sorted(x["id"] for x in records) != sorted(x["id"] for x in r):
        raise CompareError(f"{name}: its {len(records)} records of {ref} are not for its {len(r)} items" + fix)
    return records, file_sha256(path)


def served_in_all(results: Path, ref: str, loaded: dict, refs: dict[str, str]) -> list[dict]:
    """Every record of an engine's reference that served its opening look: its own, then those its
    variants served for it (in name order; an item two served differently — the record cache off,
    an engine whose outputs depend on the batch — is taken from the first), in evaluation-set order
    (each source is in it, and each is a prefix of one seeded order: the longest holds them all)."""
    sources = [loaded[ref][1]] + [paired_with(results, n, loaded[n][1], ref, *loaded[ref])[0] for n in sorted(
        n for n, (m, _) in loaded.items() if refs.get(n) == ref and m.served)]
    got: dict[str, dict] = {}
    for src in sources:
        for x in src:
            got.setdefault(x["id"], x)
    order = dict.fromkeys(x["id"] for src in sorted(sources, key=len, reverse=True) for x in src)
    return [got[i] for i in order]


def sequential_design(name: str, m: Metrics, r: list[dict], ref: str, ref_r: list[dict],
                      cfg, *, ref_total: int | None = None) -> tuple[dict | None, list[dict], Any]:
    """A sequential evaluation's design, checked against what it is paired with, with the level
    its intervals are read at (the repeated level of the looks it took), the reference's records for
    the items it was served, and compare's settings at that level; (None, every record, `cfg`) for a
    full evaluation. `ref_total`: the items the reference's design planned, where it served its
    opening look only. An engine's reference that served its opening look is read on `r`, what it
    served in all: its opening look alone is a sample fixed in advance, read at α; with the items its
    variants served for it, as far as the longest-running went — a stopping time — at the repeated
    level of the looks those items make."""
    if not m.sequential:
        return None, ref_r, cfg
    seq = m.sequential.as_json()
    problems = []
    if seq.get("role") == "reference":
        if len(r) == seq["items"]:
            return {**seq, "repeated_alpha": cfg.alpha}, served_part(ref_r, r), cfg
        looks = [n for n in look_sizes(seq["total"], seq["look"]) if n <= len(r)]
        seq = {**seq, "opening_items": seq["items"], "looks": looks, "items": len(r),
               "saving": round(1 - len(r) / seq["total"], 4)}
        ref, ref_total = seq["reference"], seq["total"]  # its design's own: nothing stopped against it
    if seq["reference"] != ref:
        problems.append(f"it stopped against {seq['reference']}'s records but is judged against {ref}'s "
                        f"— fix: `reference: {ref}` in variants.{name}, then `dvc repro evaluate@{name}`")
    if seq["total"] != (ref_total or len(ref_r)):
        problems.append(f"its design planned {seq['total']} items but {ref} has {ref_total or len(ref_r)} — fix: "
                        f"`dvc repro evaluate@{ref} evaluate@{name}`")
    if seq["looks"][-1] != len(r):
        problems.append(f"its last look served {seq['looks'][-1]} items but it has {len(r)} records")
    if problems:
        raise CompareError(f"{name}: " + "; ".join(problems))
    spending = Spending(seq["spending"], seq["gamma"])  # the one its looks were taken under
    at, level = at_looks(cfg, seq["looks"], seq["total"], spending)
    return {**seq, "repeated_alpha": level}, served_part(ref_r, r), at


def custody_record(results: Path, name: str, m: Metrics, ref_m: Metrics,
                   reference_samples_sha256: str | None = None) -> dict[str, Any]:
    """The hashes a later step checks before it approves or ships `name`: its artifact as
    evaluated, its reference's, and the result files the comparison read."""
    from pipeline.io import file_sha256

    d = results / name
    return {"artifact_sha256": m.artifact_sha256,
            "reference_artifact_sha256": ref_m.artifact_sha256,
            "metrics_sha256": file_sha256(d / METRICS),
            "samples_sha256": file_sha256(d / SAMPLES),
            **({"reference_samples_sha256": reference_samples_sha256} if reference_samples_sha256 else {})}


def run(params: StageView, layout, *, baseline: str | None = None,
        variants: list[str] | None = None) -> dict[str, Any]:
    """The paired statistics of the `compare` stage (`params`: its own, compare.stage.PARAMS;
    `layout`: a pipeline.layout.Layout)."""
    cfg = params.compare
    results = layout.results
    baseline = baseline or params.baseline
    names = [n for n in (variants or params.variants) if n != baseline]
    base_m, base_r = load_results(results, baseline)
    if not base_m.served:
        raise CompareError(f"the baseline {baseline!r} is not served ({base_m.reason}); "
                           "every comparison needs a freshly evaluated baseline")
    loaded = {n: load_results(results, n) for n in names}
    check_pairable(base_m, {n: m for n, (m, _) in loaded.items()})
    served_by = {n: m.engine.name for n, (m, _) in loaded.items() if m.served}
    refs = references(params, baseline, names, {**served_by, baseline: base_m.engine.name})
    for name, ref in sorted(set(refs.items())):
        if ref != baseline and (ref not in loaded or not loaded[ref][0].served):
            raise CompareError(f"{name} is to be judged against its engine's baseline {ref!r} "
                               f"(compare.engine_baselines), which was not evaluated — fix: "
                               f"`dvc repro evaluate@{ref}`, or remove it from compare.engine_baselines")
    out = {"schema": SCHEMA, "baseline": baseline, "configured_baseline": params.baseline,
           "baseline_artifact_sha256": base_m.artifact_sha256,
           "evalset_sha256": base_m.evalset_sha256,
           "harness_version": base_m.harness_version, "alpha": cfg.alpha,
           "min_effect": cfg.min_effect, "interval": "tango score interval (paired proportions)",
           "baseline_metrics": {"accuracy": base_m.accuracy, "n": base_m.n, "engine": base_m.engine.as_json(),
                                "size_bytes": base_m.size_bytes},
           "references": {n: refs[n] for n in served_by},
           "engine_baselines": dict(cfg.engine_baselines),
           "variants": {}}
    all_loaded = {baseline: (base_m, base_r), **loaded}
    for name, (m, r) in loaded.items():
        if not m.served:
            out["variants"][name] = {"variant": name, "served": False, "reason": m.reason}
            continue
        if opening_only(m):  # an engine's reference, read on every item it was served, by it or its variants
            r = served_in_all(results, name, loaded, refs)
        ref_m, ref_r = all_loaded[refs[name]]
        ref_r, ref_sha = paired_with(results, name, r, refs[name], ref_m, ref_r)
        seq, ref_used, vcfg = sequential_design(name, m, r, refs[name], ref_r, cfg,
                                                ref_total=ref_m.sequential.total if ref_sha else None)
        v = compare_variant(ref_m, ref_used, m, r, vcfg, reference=refs[name])
        if seq is not None:
            v["sequential"] = seq
        # The chain of custody: what was paired, by the hashes of the bytes evaluated.
        v["custody"] = custody_record(results, name, m, ref_m, ref_sha)
        if refs[name] != baseline:  # the total change against the baseline, beside it
            total = compare_variant(base_m, served_part(base_r, r), m, r, vcfg)
            v["against_baseline"] = {"accuracy": total["accuracy"],
                                     "disagreement": total["disagreement"]}
        out["variants"][name] = v
    for name, v in out["variants"].items():
        v["divergence"] = divergence_of(layout.divergence, name, out["evalset_sha256"])
    out["noise_floor"] = noise_floors(params, results, all_loaded, {**refs, baseline: baseline})
    for name, v in out["variants"].items():
        floor = out["noise_floor"].get(served_by.get(name, ""))
        if v.get("served") and floor and floor.get("measured"):
            d = v["disagreement"]
            v["within_noise_floor"] = d["outputs_changed_share"] <= floor["outputs_changed_ci"][1]
    bench = layout.bench / BENCH
    if bench.is_file():
        measured = BenchResults.load(bench).dump()
        out["bench"] = measured.get("ratios")
        out["bench_node"] = measured.get("hardware")
    dest = layout.reports
    dest.mkdir(parents=True, exist_ok=True)
    tmp = dest / ".comparison.json.tmp"
    out = Comparison.read(out, dest / COMPARISON).dump()
    write_json(tmp, out)
    tmp.replace(dest / COMPARISON)
    return out
