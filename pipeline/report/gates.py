"""Gates for quantized variants, by business strictness.

Accuracy criteria apply to the LOWER bound of the paired 95% confidence interval of the change
(never to the point estimate): a variant passes only if the data show its loss is at most the
allowed drop. A small slice therefore cannot pass a strict profile by luck; it has to be large
enough to show it is safe.

Profile numbers come from the seeds: an accuracy gate of "no worse than baseline −1%" (seed 000
§7.3), the decision tree's "can the business tolerate ≥3% loss? if not: FP8/FP16 only" (§8.2),
INT4 losses of 1.4–5 points on public sets in the 2026 table (§6.3), and the strictness tiers of
§7.5 (compliance audit ≥99.5% task agreement, finance/medical ≥98%, general SaaS ≥95%, research
≥90%). A quantized variant must also earn its keep: a speed gain (from `bench`, serving engines
only) or a size gain.

    >>> PROFILES["finance_medical"].max_drop_overall
    0.01
"""

from __future__ import annotations

from typing import Any

from pipeline.config import GateThresholds
from pipeline.errors import QpipeError

PROFILES: dict[str, GateThresholds] = {
    "compliance_audit": GateThresholds(max_drop_overall=0.005, max_drop_slice=0.01,
                                       min_json_validity=0.995, min_task_agreement=0.995,
                                       min_speedup=1.05, min_compression=1.5),
    "finance_medical": GateThresholds(max_drop_overall=0.01, max_drop_slice=0.02,
                                      min_json_validity=0.98, min_task_agreement=0.98,
                                      min_speedup=1.05, min_compression=1.5),
    "general_saas": GateThresholds(max_drop_overall=0.03, max_drop_slice=0.05,
                                   min_json_validity=0.95, min_task_agreement=0.95,
                                   min_speedup=1.05, min_compression=1.5),
    "research": GateThresholds(max_drop_overall=0.05, max_drop_slice=0.10,
                               min_json_validity=0.90, min_task_agreement=0.90,
                               min_speedup=None, min_compression=None),
}


class GateError(QpipeError, ValueError):
    pass


# Seed 000 §7.5: how far two ENGINES serving one artifact may differ (greedy decoding), by the
# same strictness tiers — exact-match rate, task-result agreement, and the throughput change.
# These judge `qpipe diff-engines`, not quantized variants (their gates are PROFILES above).
ENGINE_DIFF_TIERS: dict[str, dict[str, float | None]] = {
    "compliance_audit": {"min_exact_match": 0.99, "min_task_agreement": 0.995, "max_perf_change": 0.03},
    "finance_medical": {"min_exact_match": 0.95, "min_task_agreement": 0.98, "max_perf_change": 0.05},
    "general_saas": {"min_exact_match": 0.90, "min_task_agreement": 0.95, "max_perf_change": 0.10},
    "research": {"min_exact_match": None, "min_task_agreement": 0.90, "max_perf_change": 0.20},
}


def engine_diff_verdict(profile: str, consistency: dict[str, Any],
                        speed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Judge two engines on one artifact by a §7.5 tier. `speed` maps each engine to its
    evaluation's speed block; the throughput criterion applies only when both are serving
    engines (a reference engine's speed measures itself) and is `None` (not judged) otherwise."""
    if profile not in ENGINE_DIFF_TIERS:
        from pipeline.registry import did_you_mean

        raise GateError(f"no engine-difference tier {profile!r} (seed 000 §7.5) "
                        f"{did_you_mean(profile, ENGINE_DIFF_TIERS)} — fix: --profile one of "
                        f"{', '.join(ENGINE_DIFF_TIERS)}")
    tier = ENGINE_DIFF_TIERS[profile]
    criteria = []

    def add(name: str, passed: bool | None, detail: str) -> None:
        criteria.append({"name": name, "passed": passed, "detail": detail})

    exact, agree = consistency.get("exact_match_rate"), consistency.get("task_agreement")
    if tier["min_exact_match"] is None:
        add("exact_match", None, f"{exact:.4f}; not required by {profile}")
    else:
        add("exact_match", exact >= tier["min_exact_match"],
            f"{exact:.4f} identical outputs, needs ≥ {tier['min_exact_match']:.3f}")
    add("task_agreement", agree >= tier["min_task_agreement"],
        f"{agree:.4f} same task result, needs ≥ {tier['min_task_agreement']:.3f}")
    (a, sa), (b, sb) = speed.items()
    if sa.get("serving_engine") and sb.get("serving_engine"):
        change = sb["output_tokens_per_second"] / sa["output_tokens_per_second"] - 1.0
        add("throughput", abs(change) <= tier["max_perf_change"],
            f"{b} vs {a} output tok/s {change:+.1%}, needs within ±{tier['max_perf_change']:.0%} "
            "(one run, one engine after the other)")
    else:
        ref = a if not sa.get("serving_engine") else b
        add("throughput", None, f"not judged: {ref} is a reference engine, its speed measures "
                                "itself, not a serving engine")
    judged = [c["passed"] for c in criteria if c["passed"] is not None]
    return {"profile": profile, "tier": tier, "passed": all(judged), "criteria": criteria}


def thresholds(cfg) -> GateThresholds:
    if cfg.profile == "custom":
        if cfg.custom is None:
            raise GateError("gates.profile is custom but gates.custom is empty — fix: give "
                            "max_drop_overall, max_drop_slice, min_json_validity, min_task_agreement")
        return cfg.custom
    if cfg.profile not in PROFILES:
        from pipeline.registry import did_you_mean

        raise GateError(f"unknown gates.profile {cfg.profile!r} {did_you_mean(cfg.profile, PROFILES)} "
                        f"Known: {', '.join(PROFILES)}, custom")
    return PROFILES[cfg.profile]


def _fail(out: list, criterion: str, value, threshold, message: str) -> None:
    out.append({"criterion": criterion, "value": value, "threshold": threshold, "message": message})


def evaluate_gates(v: dict[str, Any], bench: dict[str, Any] | None, cfg) -> dict[str, Any]:
    """The verdict for one compared variant (an entry of comparison.json's `variants`)."""
    t = thresholds(cfg)
    failed: list[dict] = []
    checked: list[str] = []
    acc = v["accuracy"]
    checked.append("accuracy_overall")
    if acc["ci_low"] < -t.max_drop_overall:
        _fail(failed, "accuracy_overall", acc["ci_low"], -t.max_drop_overall,
              f"accuracy change lower bound {100 * acc['ci_low']:+.1f} pts is below the allowed "
              f"−{100 * t.max_drop_overall:.1f} (delta {100 * acc['delta']:+.1f}, 95% CI "
              f"[{100 * acc['ci_low']:+.1f}, {100 * acc['ci_high']:+.1f}])")
    for name in cfg.critical_slices:
        s = v["slices"].get(name)
        checked.append(f"slice:{name}")
        if s is None:
            _fail(failed, f"slice:{name}", None, -t.max_drop_slice,
                  f"critical slice {name} is not in the evaluation set — fix gates.critical_slices")
        elif s["ci_low"] < -t.max_drop_slice:
            _fail(failed, f"slice:{name}", s["ci_low"], -t.max_drop_slice,
                  f"critical slice {name} (n={s['n']}): lower bound {100 * s['ci_low']:+.1f} pts "
                  f"is below the allowed −{100 * t.max_drop_slice:.1f}"
                  + (" — the slice is too small to show it is safe" if s.get("underpowered") else ""))
    det = v["detectors"]
    not_applicable: list[dict] = []
    validity = det["variant"].get("json_validity")
    checked.append("json_validity")
    if validity is None:
        not_applicable.append({"criterion": "json_validity",
                               "why": "no structured-output (JSON) samples in the evaluation set"})
    elif validity < t.min_json_validity:
        _fail(failed, "json_validity", validity, t.min_json_validity,
              f"valid JSON in {100 * validity:.1f}% of structured answers, below "
              f"{100 * t.min_json_validity:.1f}%")
    agreement = det["consistency"].get("task_agreement")
    checked.append("task_agreement")
    if agreement is None:
        _fail(failed, "task_agreement", None, t.min_task_agreement,
              "no sample pairs with the baseline: task agreement could not be measured — fix: "
              "re-run both evaluations on the same evaluation set")
    elif agreement < t.min_task_agreement:
        _fail(failed, "task_agreement", agreement, t.min_task_agreement,
              f"same task result as the baseline on {100 * agreement:.1f}% of samples, below "
              f"{100 * t.min_task_agreement:.1f}%")
    _gain(v, bench, t, failed, checked)
    return {"profile": cfg.profile, "passed": not failed, "failed": failed, "checked": checked,
            "not_applicable": not_applicable, "thresholds": t.model_dump()}


def _gain(v, bench, t: GateThresholds, failed: list, checked: list) -> None:
    if t.min_speedup is None and t.min_compression is None:
        return
    checked.append("gain")
    speed = (bench or {}).get(v["variant"], {}).get("output_tps_ratio") \
        if v["speed"].get("serving_engine") else None
    compression = v.get("compression")
    fast = t.min_speedup is not None and speed is not None and speed >= t.min_speedup
    small = t.min_compression is not None and compression is not None and compression >= t.min_compression
    if not (fast or small):
        _fail(failed, "gain", speed, t.min_speedup,
              f"no gain: speed ×{speed if speed is not None else 'n/a (not benched on a serving engine)'}"
              f" (needs ×{t.min_speedup}) and size ×{compression} (needs ×{t.min_compression})")


def utility(v: dict[str, Any], bench: dict[str, Any] | None, cfg) -> dict[str, Any]:
    """U = α·(−accuracy loss, points) + β·(throughput gain %) − γ·instability (seed 000 §8.4): a shared language
    for the trade-off, not a verdict. Instability counts the silent-regression symptoms in
    percentage points: lost task agreement, repetition and max-token hits above the baseline's,
    and lost JSON validity."""
    loss = -100 * v["accuracy"]["delta"]
    speed = (bench or {}).get(v["variant"], {}).get("output_tps_ratio") \
        if v["speed"].get("serving_engine") else None
    gain = 100 * (speed - 1) if speed else 0.0
    dv, db = v["detectors"]["variant"], v["detectors"]["baseline"]
    up = lambda k: max(0.0, (dv.get(k) or 0) - (db.get(k) or 0))  # noqa: E731
    json_loss = max(0.0, (db.get("json_validity") or 0) - (dv.get("json_validity") or 0))
    instability = 100 * ((1 - (v["detectors"]["consistency"].get("task_agreement") or 1))
                         + up("repetition_rate") + up("hit_max_tokens_share") + json_loss)
    u = cfg.alpha * -loss + cfg.beta * gain - cfg.gamma * instability
    return {"score": round(u, 3), "accuracy_loss_pts": round(loss, 3),
            "throughput_gain_pct": round(gain, 3) if speed else None,
            "instability_pct": round(instability, 3),
            "weights": {"alpha": cfg.alpha, "beta": cfg.beta, "gamma": cfg.gamma}}
