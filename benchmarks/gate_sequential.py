"""The whole gate under the sequential design, on planted variants (`sequential_validity.py --gate`).

Each replicate plants a variant on the baseline's records (gate_validity.simulate), draws a seeded
serving order, and reads every profile's gate at each look with pipeline.compare.stopping — the
project's own compare and gate code, every interval at the repeated-confidence level of the looks
taken. A profile's evaluation stops at its first settled look (every criterion passes, or one
fails); the fixed-sample gate reads the whole set at α. The speed and size gain is left out of both:
it is bench's, not the evaluation's.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from gate_validity import fake_metrics, margin_passed, scenario_row, scope_accuracy, simulate as plant

from pipeline.compare.deltas import compare_variant
from pipeline.compare.gates import PROFILES, evaluate_gates
from pipeline.compare.limits import derive
from pipeline.compare.stopping import decide, gate_at_look
from pipeline.config import GatesConfig, load_params
from pipeline.layout import Layout
from pipeline.stats.sequential import Spending, look_sizes

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = ("pass", "fail", "inconclusive")


def scenarios(params, slice_for_drop: str) -> list[dict]:
    base_d = params.compare.plan_discordance
    out = [{"name": f"null d={d:.1%}", "discordance": d} for d in (0.005, 0.01, 0.02)]
    out += [{"name": f"−{r} pts overall", "discordance": base_d, "extra_loss": r / 100} for r in (5,)]
    for s in (slice_for_drop, "scenario=faq" if slice_for_drop != "scenario=faq" else "scenario=ticket"):
        out.append({"name": f"−10 pts in {s}", "discordance": base_d, "extra_loss": 0.10, "in_slice": s})
    for p, t in PROFILES.items():
        out.append({"name": f"at the overall margin of {p} (−{100 * t.max_drop_overall:g})",
                    "discordance": base_d, "extra_loss": t.max_drop_overall, "margin_of": p,
                    "criterion": "accuracy_overall"})
    t = PROFILES["general_saas"]
    out.append({"name": f"at the slice margin of general_saas in {slice_for_drop} (−{100 * t.max_drop_slice:g})",
                "discordance": base_d, "extra_loss": t.max_drop_slice, "in_slice": slice_for_drop,
                "margin_of": "general_saas", "criterion": f"slice:{slice_for_drop}"})
    return out


def _variant(records: list[dict], scores) -> list[dict]:
    return [{**r, "score": float(s), "output": r["output"] if s == (r["score"] >= 1.0) else "~"}
            for r, s in zip(records, scores)]


def replicate(records, rng, sc, params, gate_cfgs, limits, look: int, spending: Spending = Spending(),
              futility: float = 0.0) -> dict[str, dict]:
    """One planted variant: per profile, the sequential verdict, the items it used and whether the
    criterion at the scenario's margin passed there; the fixed-sample verdict beside it."""
    other = _variant(records, plant(records, rng, discordance=sc["discordance"],
                                    extra_loss=sc.get("extra_loss", 0.0), in_slice=sc.get("in_slice")))
    order = rng.permutation(len(records))
    base_m, var_m = fake_metrics("baseline", records), fake_metrics("v", other)
    total = len(records)
    looks = look_sizes(total, look)
    out: dict[str, dict] = {}
    open_profiles = set(gate_cfgs)
    for k in range(1, len(looks) + 1):
        served = [other[i] for i in sorted(order[:looks[k - 1]])]
        first = None
        for p in sorted(open_profiles):
            if first is None:
                v, gate = gate_at_look(base_m, records, var_m, served, params.compare, gate_cfgs[p],
                                       looks=looks[:k], total=total, limits=limits.get(p), judge_gain=False,
                                       power=None, with_power=False, spending=spending)
                first = (v, gate["sequential"]["repeated_alpha"])
            else:  # the compared variant depends on the looks only: one per look
                gate = evaluate_gates(first[0], None, gate_cfgs[p], alpha=first[1], power=None,
                                      limits=limits.get(p), judge_gain=False)
                gate["sequential"] = {"repeated_alpha": first[1]}
            d = decide(gate, first[0], looks[:k], total, look=look, alpha=params.compare.alpha,
                       spending=spending, futility=futility)
            if d["settled"] or d["futile"] or k == len(looks):
                verdict = "inconclusive" if d["futile"] else gate["verdict"]
                out[p] = {"verdict": verdict, "items": looks[k - 1], "criteria": gate["criteria"]}
                open_profiles.discard(p)
        if not open_profiles:
            break
    v = compare_variant(base_m, records, var_m, other, params.compare, with_power=False)
    for p, cfg in gate_cfgs.items():
        out[p]["fixed"] = evaluate_gates(v, None, cfg, alpha=params.compare.alpha, power=None,
                                         limits=limits.get(p), judge_gain=False)["verdict"]
    return out


def run_scenario(job) -> dict:
    sc, seed, records, params_path, reps, crit, limits, look, spending, futility = job
    params = load_params(params_path)
    gate_cfgs = {p: GatesConfig(profile=p, critical_slices=crit) for p in PROFILES}
    rng = np.random.default_rng(seed)
    seq = {p: defaultdict(int) for p in PROFILES}
    fixed = {p: defaultdict(int) for p in PROFILES}
    items = {p: [] for p in PROFILES}
    at_margin = 0
    for _ in range(reps):
        got = replicate(records, rng, sc, params, gate_cfgs, limits, look, spending, futility)
        for p in PROFILES:
            seq[p][got[p]["verdict"]] += 1
            fixed[p][got[p]["fixed"]] += 1
            items[p].append(got[p]["items"])
        at_margin += margin_passed(sc, got)
    row = scenario_row(sc, records, reps) | {
           "profiles": {p: {"sequential": {v: seq[p][v] / reps for v in VERDICTS},
                            "fixed": {v: fixed[p][v] / reps for v in VERDICTS},
                            "items_share": float(np.mean(items[p])) / len(records)} for p in PROFILES}}
    if sc.get("margin_of"):
        row["criterion_at_margin_pass"] = at_margin / reps
    return row


def main(a) -> None:
    params = load_params(a.params)
    records = [json.loads(x) for x in a.records.read_text(encoding="utf-8").splitlines() if x.strip()]
    crit = list(params.gates.critical_slices)
    layout = Layout(a.params.resolve().parent, params)
    limits = {p: derive(layout, None, t.max_drop_overall, alpha=params.compare.alpha) for p, t in PROFILES.items()}
    worst = PROFILES["general_saas"].max_drop_slice
    plantable_crit = [c for c in crit if scope_accuracy(records, c)[0] >= worst]
    slice_for_drop = (plantable_crit or crit or ["scenario=tool_call"])[0]
    shown = a.records.resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else Path(shown.name)
    print(f"{shown}: {len(records)} items; looks every {a.look} ({look_sizes(len(records), a.look)}); "
          f"{a.reps} replicates per scenario; each profile's whole gate, gain left out\n")
    spending = Spending(a.spending, a.gamma)
    print(f"design: {spending.label}" + (f", futility below {a.futility:g} predictive power" if a.futility else ""))
    jobs = [(sc, 1000 + i, records, a.params, a.reps, crit, limits, a.look, spending, a.futility)
            for i, sc in enumerate(scenarios(params, slice_for_drop))
            if not getattr(a, "only", None) or any(o in sc["name"] for o in a.only)]
    t0 = time.time()
    print(f"{'scenario':58s} {'profile':17s} {'sequential p/f/i %':22s} {'fixed p/f/i %':20s} items", flush=True)
    rows = []
    with multiprocessing.get_context("fork").Pool(a.workers) as pool:
        for row in pool.imap_unordered(run_scenario, jobs):  # each as it ends: a cut-short run keeps them
            rows.append(row)
            for p, d in row["profiles"].items():
                s = "/".join(f"{100 * d['sequential'][v]:.1f}" for v in VERDICTS)
                f = "/".join(f"{100 * d['fixed'][v]:.1f}" for v in VERDICTS)
                print(f"{row['scenario'][:58]:58s} {p:17s} {s:22s} {f:20s} {100 * d['items_share']:3.0f}%")
            if "criterion_at_margin_pass" in row:
                q = row["criterion_at_margin_pass"]
                two_se = 200 * math.sqrt(max(q * (1 - q), 1e-12) / row["reps"])
                print(f"{'':58s} criterion at the margin passes {100 * q:.1f}% ± {two_se:.1f}"
                      + ("" if row["plantable"] else "  (NOT PLANTABLE)"))
            print(flush=True)
            if a.json:
                a.json.write_text(json.dumps({"records": str(shown), "look": a.look, "reps": a.reps,
                                              "spending": spending.label, "futility": a.futility,
                                              "rows": rows}, indent=2) + "\n")
    print(f"{time.time() - t0:.0f} s")
