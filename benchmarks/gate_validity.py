"""Are the gate verdicts valid? The project's own compare and gate code on simulated variants
built from the baseline's real per-sample records.

Each simulated variant re-scores the baseline's items:
- null at discordance d: inside every cell (scenario × difficulty × segment × length) items
  that pass are lost and items that fail are gained, each side at a rate that flips d/2 of the
  cell's items in expectation — so every slice's TRUE change is exactly zero;
- a regression of R points overall: the null at the base discordance plus passing items lost
  uniformly at a rate that takes R points off in expectation;
- R points in one slice: the extra losses only inside that slice;
- a regression exactly at a margin: overall at the profile's overall margin, and inside a
  critical slice at its slice margin.

Printed per scenario and profile: how often the gate passes, fails, or is inconclusive, with the
Monte-Carlo standard error, and for margin scenarios how often the criterion at the margin passes
(must be ≤ 2.5% within Monte-Carlo error). A scenario whose scope the baseline answers right less
often than the loss asked (a slice a weak model scores 0 on) cannot be planted: its row is marked
NOT PLANTABLE and its pass rate is no margin test. `qpipe plan` says which profiles the evaluation set
supports at each discordance; null variants should pass ≥ 95% of the time there.

    python benchmarks/gate_validity.py                       # results/baseline/samples.jsonl
    python benchmarks/gate_validity.py --reps 400 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import GatesConfig, load_params  # noqa: E402
from pipeline.compare.deltas import compare_variant  # noqa: E402
from pipeline.contracts.eval_metrics import Detectors, EngineInfo, Metrics, Speed  # noqa: E402
from pipeline.compare.plan import plan  # noqa: E402
from pipeline.compare.gates import PROFILES, evaluate_gates  # noqa: E402
from pipeline.compare.limits import derive  # noqa: E402
from pipeline.compare.stage import PARAMS as COMPARE  # noqa: E402
from pipeline.layout import Layout  # noqa: E402


def cells(records: list[dict]) -> dict[tuple, list[int]]:
    out = defaultdict(list)
    for i, r in enumerate(records):
        out[tuple(sorted(r["slices"].items()))].append(i)
    return out


def simulate(records: list[dict], rng, *, discordance: float, extra_loss: float = 0.0,
             in_slice: str | None = None) -> np.ndarray:
    """New scores for one simulated variant (see the module's docstring)."""
    base = np.array([r["score"] >= 1.0 for r in records])
    new = base.copy()
    for idx in cells(records).values():
        idx = np.asarray(idx)
        passing, failing = idx[base[idx]], idx[~base[idx]]
        if len(passing) and len(failing):
            half = discordance / 2 * len(idx)
            new[passing[rng.random(len(passing)) < min(1.0, half / len(passing))]] = False
            new[failing[rng.random(len(failing)) < min(1.0, half / len(failing))]] = True
    if extra_loss:
        if in_slice:
            k, v = in_slice.split("=", 1)
            scope = np.array([r["slices"].get(k) == v for r in records])
        else:
            scope = np.ones(len(records), bool)
        # Passing items of the scope (after the null flips) lost at the rate that removes
        # extra_loss of the scope's items in expectation.
        candidates = np.flatnonzero(scope & new)
        rate = min(1.0, extra_loss * scope.sum() / max(len(candidates), 1))
        new[candidates[rng.random(len(candidates)) < rate]] = False
    return new.astype(float)


def scope_accuracy(records: list[dict], in_slice: str | None) -> tuple[float, int]:
    """The baseline's accuracy in a scenario's scope (one slice, or every item) and the scope's size."""
    if in_slice:
        k, v = in_slice.split("=", 1)
        scores = [r["score"] >= 1.0 for r in records if r["slices"].get(k) == v]
    else:
        scores = [r["score"] >= 1.0 for r in records]
    return (float(np.mean(scores)) if scores else 0.0), len(scores)


def plantable(records: list[dict], sc: dict) -> bool:
    """Can the scenario's loss be planted at all? A scope that the baseline answers right less
    often than the loss has too few right answers to lose: its "regression" would be smaller than
    asked (a slice the model scores 0 on can lose nothing), so a margin row there measures a
    smaller loss, and its pass rate says nothing about the criterion at the margin."""
    acc, _ = scope_accuracy(records, sc.get("in_slice"))
    return acc >= sc.get("extra_loss", 0.0)


def fake_metrics(name: str, records: list[dict]) -> Metrics:
    """What the pairing reads of a simulated variant's metrics (no accuracy of its own to record)."""
    speed = Speed(serving_engine=True, output_tokens_per_second=1.0, **dict.fromkeys(
        ("ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "latency_p50", "latency_p99")))
    return Metrics.model_construct(variant=name, served=True, engine=EngineInfo(name="sim", version="0"),
                                   size_bytes=1, detectors=Detectors(), speed=speed)


def judge(records, scores, params, gate_cfgs, limits=None) -> dict[str, dict]:
    other = [{**r, "score": float(s), "output": r["output"] if s == (r["score"] >= 1.0) else "~"}
             for r, s in zip(records, scores)]
    v = compare_variant(fake_metrics("baseline", records), records, fake_metrics("v", other), other,
                        params.compare, with_power=False)
    v["compression"] = 4.0  # gain is not what is being validated
    return {p: evaluate_gates(v, None, cfg, alpha=params.compare.alpha, power=None,
                              limits=(limits or {}).get(p))
            for p, cfg in gate_cfgs.items()}


def scenarios(params, slice_for_drop: str, other_slice: str) -> list[dict]:
    base_d = params.compare.plan_discordance
    out = [{"name": f"null d={d:.1%}", "discordance": d} for d in (0.0, 0.005, 0.01, 0.02, 0.04)]
    out += [{"name": f"−{r} pts overall", "discordance": base_d, "extra_loss": r / 100}
            for r in (1, 2, 3, 5)]
    out += [{"name": f"−10 pts in {s}", "discordance": base_d, "extra_loss": 0.10, "in_slice": s}
            for s in (slice_for_drop, other_slice)]
    for p, t in PROFILES.items():
        out.append({"name": f"at the overall margin of {p} (−{100 * t.max_drop_overall:g})",
                    "discordance": base_d, "extra_loss": t.max_drop_overall, "margin_of": p,
                    "criterion": "accuracy_overall"})
        out.append({"name": f"at the slice margin of {p} in {slice_for_drop} (−{100 * t.max_drop_slice:g})",
                    "discordance": base_d, "extra_loss": t.max_drop_slice, "in_slice": slice_for_drop,
                    "margin_of": p, "criterion": f"slice:{slice_for_drop}"})
    return out


def margin_passed(sc: dict, gates: dict[str, dict]) -> bool:
    """Whether the criterion at a margin scenario's margin passed (False for other scenarios)."""
    if not sc.get("margin_of"):
        return False
    c = next(c for c in gates[sc["margin_of"]]["criteria"] if c["criterion"] == sc["criterion"])
    return c["verdict"] == "pass"


def scenario_row(sc: dict, records: list[dict], reps: int) -> dict:
    """A scenario's row before its results: what was planted, in which scope, how often."""
    acc, n = scope_accuracy(records, sc.get("in_slice"))
    return {"scenario": sc["name"], **{k: sc[k] for k in sc if k != "name"}, "reps": reps,
            "scope_accuracy": round(acc, 4), "scope_n": n, "plantable": plantable(records, sc)}


def run_scenario(job) -> dict:
    sc, seed, records, params_path, reps, crit, limits = job
    params = load_params(params_path)
    gate_cfgs = {p: GatesConfig(profile=p, critical_slices=crit) for p in PROFILES}
    rng = np.random.default_rng(seed)
    tally = {p: defaultdict(int) for p in PROFILES}
    at_margin = 0
    for _ in range(reps):
        scores = simulate(records, rng, discordance=sc["discordance"],
                          extra_loss=sc.get("extra_loss", 0.0), in_slice=sc.get("in_slice"))
        g = judge(records, scores, params, gate_cfgs, limits)
        for p in PROFILES:
            tally[p][g[p]["verdict"]] += 1
        at_margin += margin_passed(sc, g)
    row = scenario_row(sc, records, reps) | {
        "profiles": {p: {k: tally[p][k] / reps for k in ("pass", "fail", "inconclusive")} for p in PROFILES}}
    if sc.get("margin_of"):
        row["criterion_at_margin_pass"] = at_margin / reps
    return row


def se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=Path, default=ROOT / "results" / "baseline" / "samples.jsonl")
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml",
                    help="the project's params; its folder holds the gate calibration, if any, whose "
                         "derived limits judge the share of changed results as compare would")
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", nargs="+", default=None, help="run only the scenarios whose name "
                    "contains one of these texts (e.g. 'null d=1' 'margin of general_saas')")
    a = ap.parse_args()
    params = load_params(a.params)
    records = [json.loads(x) for x in a.records.read_text().splitlines() if x]
    shown = a.records.resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown  # no host paths in records
    crit = list(params.gates.critical_slices)
    layout = Layout(a.params.resolve().parent, params)
    limits = {p: derive(layout, None, t.max_drop_overall, alpha=params.compare.alpha)
              for p, t in PROFILES.items()}
    for p, lim in limits.items():
        if lim.get("calibrated"):
            print(f"{p}: this model's limits — " + "; ".join(
                f"{k} {d['limit']} ({d['status']})" for k, d in lim["signals"].items()))
    # the slice to plant in: the first critical one with enough right answers to lose every
    # profile's slice margin (a slice the baseline scores 0 on can lose nothing)
    worst = max(t.max_drop_slice for t in PROFILES.values())
    plantable_crit = [c for c in crit if scope_accuracy(records, c)[0] >= worst]
    slice_for_drop = (plantable_crit or crit or ["scenario=tool_call"])[0]
    other_slice = "scenario=faq" if slice_for_drop != "scenario=faq" else "scenario=ticket"
    t0 = time.time()
    print(f"baseline records: {len(records)} from {shown}; accuracy "
          f"{np.mean([r['score'] for r in records]):.3f}; critical slices {', '.join(crit)}; "
          f"{a.reps} simulated variants per scenario; α={params.compare.alpha}")
    supported = {}
    for d in (0.005, 0.01, 0.02, 0.04):
        # The simulated variants keep every JSON answer's validity, so the plan assumes the same.
        pl = plan(params.for_stage(COMPARE), layout, discordance=d, records=records,
                  json_discordance=0.0)
        supported[d] = [p for p, s in pl["profiles"].items() if s["supported"]]
        print(f"qpipe plan at discordance {d:.1%}: supported — {', '.join(supported[d]) or 'none'}")
    todo = [sc for sc in scenarios(params, slice_for_drop, other_slice)
            if a.only is None or any(o in sc["name"] for o in a.only)]
    seeds = np.random.SeedSequence(a.seed).spawn(len(todo))
    jobs = [(sc, s, records, str(a.params), a.reps, crit, limits) for sc, s in zip(todo, seeds)]
    rows = []
    header = f"{'scenario':58s} " + " ".join(f"{p:>26s}" for p in PROFILES)
    print("\npass / fail / inconclusive (%) per profile; ± is one Monte-Carlo standard error of pass\n")
    print(header)
    with multiprocessing.get_context("fork").Pool(a.workers) as pool:
        for row in pool.imap(run_scenario, jobs):
            cells_ = []
            for p in PROFILES:
                r = row["profiles"][p]
                cells_.append(f"{100 * r['pass']:5.1f}±{100 * se(r['pass'], a.reps):3.1f} / "
                              f"{100 * r['fail']:5.1f} / {100 * r['inconclusive']:5.1f}")
            line = f"{row['scenario'][:58]:58s} " + " ".join(f"{c:>26s}" for c in cells_)
            if not row["plantable"]:
                line += (f"   <- NOT PLANTABLE: the baseline scores {100 * row['scope_accuracy']:.1f}% on "
                         f"{row.get('in_slice') or 'the whole set'} (n={row['scope_n']}), less than the "
                         f"{100 * row['extra_loss']:g}-pt loss asked; not a margin test")
            elif "criterion_at_margin_pass" in row:
                x = row["criterion_at_margin_pass"]
                line += (f"   <- {row['criterion']} passes {100 * x:.1f}% ± {100 * se(x, a.reps):.1f} "
                         f"({row['margin_of']})")
            print(line, flush=True)
            rows.append(row)
    print(f"\n{len(rows)} scenarios × {a.reps} variants in {time.time() - t0:.0f} s")
    if a.json:
        a.json.write_text(json.dumps({"records": str(shown), "n": len(records), "reps": a.reps,
                                      "seed": a.seed, "supported_by_plan": supported,
                                      "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
