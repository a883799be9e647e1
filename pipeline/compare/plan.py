"""`qpipe plan`: how many items a conclusive verdict needs, before any compute is spent.

From the evaluation set's slices (and the baseline's per-sample results when they exist) and
an assumed rate at which a variant of EQUAL quality flips items both ways (the measured noise
floor, or compare.plan_discordance), per slice:

- the smallest drop the exact McNemar test sees with 80% and with 95% power;
- for every gate profile, the items a variant of equal quality needs to PASS the margin that
  applies to the slice (overall, or critical slice) with probability compare.plan_null_pass —
  exact sums over every outcome of Tango's score test, not a normal approximation;
- the same for the JSON-validity criterion, over the items that expect a JSON answer only (a
  set with few of them cannot show a small JSON margin however many other items it has);
- whether the evaluation set supports the profile: every criterion has the items it needs.

Where a profile needs more items than exist, its verdicts will honestly be "inconclusive".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as st

from pipeline.stats import noninferiority as ni
from pipeline.errors import QpipeError
from pipeline.contracts.files import EVALSET_ITEMS, PLAN_SCHEMA, SAMPLES
from pipeline.contracts import SampleRecord, read_lines
from pipeline.stage_params import StageView


class PlanError(QpipeError, ValueError):
    pass


def _item(r: dict) -> dict:
    """id, slices, score (None before any run) and json (the answer is expected to be JSON; with
    a score, whether the reference's answer was valid JSON)."""
    if "json_valid" in r or "score" in r:
        return {"id": r["id"], "slices": r["slices"], "score": r.get("score"), "json": r.get("json_valid")}
    expects = (r.get("rubric") or {}).get("type") == "json"
    return {"id": r["id"], "slices": r["slices"], "score": None, "json": True if expects else None}


def _items(params: StageView, layout) -> tuple[list[dict], str]:
    """One _item per evaluation item: from the baseline's results when present (they carry
    scores), else from the evaluation set itself."""
    results = layout.result(params.baseline) / SAMPLES
    if results.is_file():
        rows = read_lines(SampleRecord, results, writer=f"`dvc repro evaluate@{params.baseline}`")
        return [_item(r.model_dump(exclude_unset=True)) for r in rows], str(results)
    evalset = layout.evalset / EVALSET_ITEMS
    if not evalset.is_file():
        raise PlanError(f"neither {results} nor {evalset} exists — fix: `dvc repro split` (the "
                        "evaluation set), then plan again")
    rows = [json.loads(x) for x in evalset.read_text().splitlines() if x]
    return [_item(r) for r in rows], str(evalset)


def agreement_items(discordance: float, limit: float, *, alpha: float, target: float,
                    cap: int = 200_000) -> int | None:
    """Items at which the share of changed task results (true rate `discordance`) has its Wilson
    upper bound at most `limit` with probability ≥ target; None when it never does."""
    if discordance >= limit:
        return None

    def ok(n: int) -> bool:
        k = np.arange(0, n + 1)
        w = st.binom.pmf(k, n, discordance)
        keep = w > 1e-12
        from statsmodels.stats.proportion import proportion_confint

        _, hi = proportion_confint(k[keep], n, alpha=alpha, method="wilson")
        return float(w[keep][np.asarray(hi) <= limit].sum()) >= target

    hi = 16
    while not ok(hi):
        if hi >= cap:
            return None
        hi = min(cap, hi * 2)
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
    return hi


def allowed_disagreement(layout, comparison: dict | None, t, cfg) -> tuple[float | None, str]:
    """The largest share of changed task results a profile allows: its own constant, else the
    lower end of this model's derived limit for its overall margin (the gate calibration), else
    none (task agreement is then a diagnostic, not a criterion)."""
    if t.min_task_agreement is not None:
        return 1 - t.min_task_agreement, "the profile's constant"
    from pipeline.compare.limits import derive, gating

    lim = gating(derive(layout, comparison, t.max_drop_overall, alpha=cfg.alpha, n_boot=400,
                        seed=cfg.seed), "task_disagreement")
    if lim is None:
        return None, "not gated for this model (no pinned limit from the gate calibration)"
    return lim["limit_ci"][0], "this model's limit from the gate calibration"


def assumed_discordance(params: StageView, layout, given: float | None,
                        comparison: dict | None = None) -> tuple[float, str]:
    if given is not None:
        return given, "given on the command line"
    cfg = params.compare
    floor = layout.comparison
    measured = []
    if comparison is None and floor.is_file():
        from pipeline.contracts import Comparison

        comparison = Comparison.load(floor).dump()
    if comparison is not None:
        measured = [f["results_changed_share"] for f in (comparison.get("noise_floor") or {}).values()
                    if f.get("measured")]
    if measured and max(measured) > cfg.plan_discordance:
        return max(measured), "the measured noise floor (an engine's re-run of its reference)"
    return cfg.plan_discordance, "compare.plan_discordance"


def _row(rs: list[dict], disc: float, cfg, *, critical: bool, score=lambda r: r["score"]) -> dict[str, Any]:
    """n, the reference's accuracy (or valid share) and the smallest drop seen at 80% / 95%."""
    scores = [float(score(r)) for r in rs if score(r) is not None]
    acc = float(np.mean(scores)) if scores else None
    row: dict[str, Any] = {"n": len(rs), "baseline_accuracy": None if acc is None else round(acc, 4),
                           "critical": critical}
    for pw in (0.8, 0.95):
        mdd = ni.min_detectable_drop(len(rs), disc, alpha=cfg.alpha, power=pw,
                                     baseline_accuracy=acc if acc is not None else 1.0)
        row[f"min_detectable_drop_{int(pw * 100)}"] = None if mdd is None else round(mdd, 4)
    row["items_needed"] = {}
    return row


def plan(params: StageView, layout, *, discordance: float | None = None,
         profiles: list[str] | None = None, comparison: dict | None = None,
         records: list[dict] | None = None, json_discordance: float | None = None) -> dict[str, Any]:
    """The plan (see the module docstring); `records` (per-sample results) replace the ones the
    params point at. `layout`: a pipeline.layout.Layout. `json_discordance`: the share of JSON
    answers whose validity an equal-quality variant changes (both ways); by default the same as
    the task results' discordance."""
    from pipeline.compare.gates import PROFILES, thresholds

    items, source = (_items(params, layout) if records is None else
                     ([_item(r) for r in records], "the records given"))
    cfg, gates = params.compare, params.gates
    disc, why = assumed_discordance(params, layout, discordance, comparison)
    jdisc = disc if json_discordance is None else json_discordance
    chosen = profiles or list(PROFILES)
    margins = {p: (thresholds(gates) if p == "custom" else PROFILES[p]) for p in chosen}
    groups: dict[str, list[dict]] = {"overall": items}
    for r in items:
        for k, v in r["slices"].items():
            groups.setdefault(f"{k}={v}", []).append(r)
    json_items = [r for r in items if r["json"] is not None]
    json_gated = bool(json_items) and any(t.max_drop_json_validity is not None for t in margins.values())
    # The variant passes only when EVERY critical criterion does: overall, each critical slice,
    # JSON validity (where the set has JSON items) and (where it gates) task agreement. Each gets
    # an equal share of the allowed failure rate (a union bound), so that all of them together
    # pass with at least plan_null_pass.
    k = 2 + len(gates.critical_slices) + int(json_gated)
    target = 1 - (1 - cfg.plan_null_pass) / k
    rows = {}
    for name in ["overall", *sorted(k for k in groups if k != "overall")]:
        row = rows[name] = _row(groups[name], disc, cfg, critical=name in gates.critical_slices)
        for p, t in margins.items():
            margin = t.max_drop_overall if name == "overall" else (
                t.max_drop_slice if row["critical"] else None)
            if margin is not None:
                row["items_needed"][p] = ni.items_needed(max(disc / 2, 1e-9), max(disc / 2, 1e-9),
                                                         margin, alpha=cfg.alpha, power=target)
    if json_gated:
        row = rows["json_validity"] = _row(json_items, jdisc, cfg, critical=True,
                                           score=lambda r: None if r["score"] is None else r["json"])
        for p, t in margins.items():
            if t.max_drop_json_validity is not None:
                row["items_needed"][p] = ni.items_needed(
                    max(jdisc / 2, 1e-9), max(jdisc / 2, 1e-9), t.max_drop_json_validity,
                    alpha=cfg.alpha, power=target)
    support = {}
    for p, t in margins.items():
        short = [f"{k}: {r['n']} items, needs {r['items_needed'][p] or 'more than 1,000,000'}"
                 for k, r in rows.items() if p in r["items_needed"]
                 and (r["items_needed"][p] is None or r["items_needed"][p] > r["n"])]
        allowed, source_of = allowed_disagreement(layout, comparison, t, cfg)
        agree = None if allowed is None else agreement_items(disc, allowed, alpha=cfg.alpha, target=target)
        if allowed is not None and (agree is None or agree > len(items)):
            short.append(f"task agreement: a variant changing {100 * disc:.1f}% of task results "
                         + ("can never show at most " if agree is None else f"needs {agree} items to "
                            "show at most ") + f"{100 * allowed:.1f}% ({source_of})")
        support[p] = {"supported": not short, "short": short, "task_agreement_items": agree,
                      "task_disagreement_limit": allowed, "task_disagreement_limit_from": source_of}
    return {"schema": PLAN_SCHEMA, "source": source, "n": len(items),
            "assumed_discordance": disc, "discordance_from": why,
            "json_items": len(json_items), "assumed_json_discordance": jdisc, "alpha": cfg.alpha,
            "null_pass_target": cfg.plan_null_pass, "per_criterion_target": round(target, 4),
            "critical_slices": list(gates.critical_slices),
            "slices": rows, "profiles": support}


def render(p: dict[str, Any]) -> list[str]:
    """The plan as markdown (the terminal and comparison.md)."""
    profiles = list(p["profiles"])
    out = [f"Evaluation set: {p['n']} items ({p['source']}). A variant of equal quality is assumed "
           f"to change {100 * p['assumed_discordance']:.1f}% of task results both ways "
           f"({p['discordance_from']}); it should pass with probability "
           f"{p['null_pass_target']:.0%}, so each of the critical criteria with "
           f"{p['per_criterion_target']:.1%}. Drops are exact McNemar (α={p['alpha']}).", "",
           "| slice | n | baseline acc. | smallest drop seen, 80% / 95% power | "
           + " | ".join(f"items {q} needs" for q in profiles) + " |",
           "|" + "---|" * (4 + len(profiles))]
    def need(r: dict, q: str) -> str:
        if q not in r["items_needed"]:
            return "—"
        k = r["items_needed"][q]
        return "> 1,000,000" if k is None else (f"{k}" if k <= r["n"] else f"**{k}**")

    for name, r in p["slices"].items():
        acc = "—" if r["baseline_accuracy"] is None else f"{r['baseline_accuracy']:.3f}"
        if name == "json_validity":
            name = (f"JSON validity ({r['n']} items expect JSON; valid share, changed both ways "
                    f"on {100 * p['assumed_json_discordance']:.1f}%)")
        mdd = " / ".join("none" if r[k] is None else f"{100 * r[k]:.1f} pts"
                         for k in ("min_detectable_drop_80", "min_detectable_drop_95"))
        out.append(f"| {name}{' (critical)' if r['critical'] else ''} | {r['n']} | {acc} | {mdd} | "
                   + " | ".join(need(r, q) for q in profiles) + " |")
    out.append("")
    for q, s in p["profiles"].items():
        out.append(f"- **{q}**: " + ("supported — conclusive for a variant of equal quality" if s["supported"]
                                      else "not supported: " + "; ".join(s["short"])))
    return out


def run(params: StageView, layout, *, discordance: float | None = None,
        profiles: list[str] | None = None, json_out: Path | None = None) -> dict[str, Any]:
    """`qpipe plan`: the plan, also written to `json_out` when given (for scripts and CI)."""
    from pipeline.io import write_json

    p = plan(params, layout, discordance=discordance, profiles=profiles)
    if json_out:
        write_json(json_out, p)
    return p
