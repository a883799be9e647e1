"""Gates for quantized variants, by business strictness: non-inferiority verdicts.

Every criterion asks whether the variant's TRUE loss against its reference is within the
profile's margin δ, and answers from a valid paired interval (Tango's score interval for pass/
fail accuracy and JSON validity, Wilson's for the share of changed task results), never from a
point estimate:

- **pass**: the interval's lower bound is above −δ (the data show the loss is within δ);
- **fail**: its upper bound is below −δ (the data show a loss beyond δ);
- **inconclusive**: it straddles −δ — with about how many items, at the observed rates, would
  settle it.

The variant passes only when every critical criterion passes (intersection–union: each is a
level-α test of its own and no multiplicity correction is needed for "all must pass"). Any
criterion that fails fails the gate; an inconclusive one blocks handoff unless a person
approves with a recorded reason. Beyond the declared critical slices, a slice whose drop is
significant after Benjamini–Hochberg across the variant's slices, and larger than the profile's
any-slice margin, fails the gate too.

Margins follow docs/rationale.md#margin: "no worse than the baseline −1%", a business that can or
cannot tolerate a 3-point loss, INT4 losses of 1.4–5 points on public sets. Profiles state margins
in business terms only — points of accuracy — because the distribution signals' scale belongs to
the model: the same quantization error measures a mean
token KL of 4e-6 on the demo model and 1e-3 on a real 135M checkpoint. The mean KL and the
share of changed task results therefore gate only through a limit derived for THIS model and
evaluation set from the gate calibration's perturbation ladder, with its uncertainty
(pipeline.compare.limits, pipeline.stats.gate_limits); without one they are reported as
diagnostics, and the verdict comes from the business criteria alone. A custom profile may still
state either limit as a constant. A quantized variant must also earn its keep: a speed gain
(from `bench`, serving engines only, against its own engine's reference) or a size gain.

    >>> PROFILES["finance_medical"].max_drop_overall
    0.01
"""

from __future__ import annotations

from typing import Any

from pipeline.compare import signals
from pipeline.config import GateThresholds
from pipeline.errors import QpipeError
from pipeline.stats import noninferiority as ni
from pipeline.stats.paired import paired_latency

PROFILES: dict[str, GateThresholds] = {
    "compliance_audit": GateThresholds(max_drop_overall=0.005, max_drop_slice=0.01,
                                       max_drop_any_slice=0.02, max_drop_json_validity=0.005,
                                       min_speedup=1.05, min_compression=1.5),
    "finance_medical": GateThresholds(max_drop_overall=0.01, max_drop_slice=0.02,
                                      max_drop_any_slice=0.03, max_drop_json_validity=0.01,
                                      min_speedup=1.05, min_compression=1.5),
    "general_saas": GateThresholds(max_drop_overall=0.03, max_drop_slice=0.05,
                                   max_drop_any_slice=0.05, max_drop_json_validity=0.03,
                                   min_speedup=1.05, min_compression=1.5),
    "research": GateThresholds(max_drop_overall=0.05, max_drop_slice=0.10,
                               max_drop_any_slice=0.10, max_drop_json_validity=0.05,
                               min_speedup=None, min_compression=None),
}


class GateError(QpipeError, ValueError):
    pass


# docs/rationale.md#engine-tiers: how far two ENGINES serving one artifact may differ (greedy decoding), by the
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
    """Judge two engines on one artifact by an engine tier (docs/rationale.md#engine-tiers).
    `speed` maps each engine to its evaluation's speed block; the throughput criterion applies only
    when both are serving engines (a reference engine's speed measures itself) and is `None` (not
    judged) otherwise."""
    if profile not in ENGINE_DIFF_TIERS:
        from pipeline.names import did_you_mean

        raise GateError(f"no engine-difference tier {profile!r} (docs/rationale.md#engine-tiers) "
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
    if not (sa.get("output_tokens_per_second") and sb.get("output_tokens_per_second")):
        add("throughput", None, "not judged: a run's records all came from the record cache, so it "
                                "timed nothing (QPIPE_RECORD_CACHE=off serves every item)")
    elif sa.get("serving_engine") and sb.get("serving_engine"):
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
                            "max_drop_overall and max_drop_slice")
        return cfg.custom
    if cfg.profile not in PROFILES:
        from pipeline.names import did_you_mean

        raise GateError(f"unknown gates.profile {cfg.profile!r} {did_you_mean(cfg.profile, PROFILES)} "
                        f"Known: {', '.join(PROFILES)}, custom")
    return PROFILES[cfg.profile]


def _pts(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f}"


def _ni(name: str, kind: str, what: str, s: dict, margin: float, alpha: float,
        power: float | None) -> dict:
    r = ni.noninferiority(s["lost"], s["gained"], s["n"], margin, alpha, power=power)
    return signals.criterion(name, kind, r, f"{what} (n={s['n']}): Δ {_pts(r['delta'])} pts, "
                      f"{100 * (1 - alpha):.0f}% CI [{_pts(r['ci_low'])}, {_pts(r['ci_high'])}] "
                      f"against the margin −{100 * margin:.1f}")


def evaluate_gates(v: dict[str, Any], bench: dict[str, Any] | None, cfg, *, alpha: float = 0.05,
                   power: float | None = 0.8, reference_role: str | None = None,
                   limits: dict[str, Any] | None = None, judge_gain: bool = True) -> dict[str, Any]:
    """The verdict for one compared variant (an entry of comparison.json's `variants`).
    `reference_role` names why a variant is a reference run (a noise-floor re-run, an engine's
    baseline): its accuracy criteria are judged, but it need not earn its keep. `power` is the
    power behind "items needed" for an inconclusive criterion (None: not estimated). `limits`:
    this model's derived signal limits (pipeline.compare.limits.derive), None where there are
    none — the signals are then diagnostics. `judge_gain=False` leaves the speed and size gain out
    (a sequential evaluation's stopping rule: the evaluation settles quality, bench measures speed)."""
    t = thresholds(cfg)
    crit: list[dict[str, Any]] = []
    not_applicable: list[dict[str, str]] = []
    crit.append(_ni("accuracy_overall", "critical", "accuracy", v["accuracy"], t.max_drop_overall,
                    alpha, power))
    for name in cfg.critical_slices:
        s = v["slices"].get(name)
        if s is None:
            crit.append({"criterion": f"slice:{name}", "kind": "critical", "verdict": "fail",
                         "value": None, "threshold": t.max_drop_slice, "message":
                         f"critical slice {name} is not in the evaluation set — fix "
                         "gates.critical_slices"})
            continue
        crit.append(_ni(f"slice:{name}", "critical", f"critical slice {name}", s, t.max_drop_slice,
                        alpha, power))
    if t.max_drop_any_slice is not None:
        crit.append(_any_slice(v, t.max_drop_any_slice, alpha))
    crit += _json(v, t, alpha, power, not_applicable)
    crit += _length(v, t, not_applicable)
    crit += signals.kld(v, t, limits, not_applicable)
    crit += signals.top1(v, limits, not_applicable)
    crit += signals.agreement(v, t, limits, alpha, not_applicable)
    gain = _gain(v, bench, t, reference_role) if judge_gain else {
        "verdict": None, "message": "not judged here: the evaluation settles quality; bench measures speed"}
    if gain.get("verdict") is None:
        not_applicable.append({"criterion": "gain", "why": gain["message"]})
    else:
        crit.append(gain)
    verdicts = {c["verdict"] for c in crit}
    verdict = "fail" if "fail" in verdicts else "inconclusive" if "inconclusive" in verdicts else "pass"
    return {"profile": cfg.profile, "verdict": verdict, "passed": verdict == "pass",
            "criteria": crit, "failed": [c for c in crit if c["verdict"] == "fail"],
            "inconclusive": [c for c in crit if c["verdict"] == "inconclusive"],
            "checked": [c["criterion"] for c in crit], "not_applicable": not_applicable,
            "alpha": alpha, "thresholds": t.model_dump()}


def _any_slice(v: dict[str, Any], margin: float, alpha: float) -> dict[str, Any]:
    """Fails when some slice's drop is significant after Benjamini–Hochberg across the variant's
    slices (one-sided exact McNemar, adjusted at alpha) and larger than the margin."""
    bad = sorted((k for k, s in v["slices"].items()
                  if s.get("significant_drop") and s["delta"] < -margin),
                 key=lambda k: v["slices"][k]["delta"])
    if not bad:
        return {"criterion": "any_slice", "kind": "any_slice", "verdict": "pass", "value": None,
                "threshold": margin, "message": f"no slice drops more than {100 * margin:.1f} pts "
                f"with a significant drop after Benjamini–Hochberg across {len(v['slices'])} slices"}
    detail = ", ".join(f"{k} {_pts(v['slices'][k]['delta'])} pts (n={v['slices'][k]['n']}, "
                       f"adjusted p={v['slices'][k]['p_drop_adjusted']:.2g})" for k in bad)
    return {"criterion": "any_slice", "kind": "any_slice", "verdict": "fail", "slices": bad,
            "value": v["slices"][bad[0]]["delta"], "threshold": margin,
            "message": f"significant drops beyond {100 * margin:.1f} pts (Benjamini–Hochberg across "
                       f"{len(v['slices'])} slices): {detail}"}


def _json(v: dict[str, Any], t: GateThresholds, alpha: float, power: float | None,
          not_applicable: list) -> list[dict[str, Any]]:
    if t.max_drop_json_validity is None:
        return []
    j = v.get("json")
    if not j:
        not_applicable.append({"criterion": "json_validity",
                               "why": "no structured-output (JSON) samples in the evaluation set"})
        return []
    return [_ni("json_validity", "critical", "valid JSON answers", j, t.max_drop_json_validity,
                alpha, power)]


def _length(v: dict[str, Any], t: GateThresholds, not_applicable: list) -> list[dict[str, Any]]:
    """The output-length ratio's interval against the profile's band (MLPerf's 90–110%)."""
    if t.output_length_band is None:
        return []
    ol = (v.get("output_length") or {}).get("overall") or {}
    if ol.get("ratio") is None or not ol.get("ci"):
        not_applicable.append({"criterion": "output_length",
                               "why": "no output token counts for the reference's items"})
        return []
    (a, b), (lo, hi) = t.output_length_band, ol["ci"]
    verdict = "pass" if a <= lo and hi <= b else "fail" if hi < a or lo > b else "inconclusive"
    word = {"pass": "inside", "fail": "outside", "inconclusive": "not settled against"}[verdict]
    return [{"criterion": "output_length", "kind": "critical", "verdict": verdict,
             "value": ol["ratio"], "ci_low": lo, "ci_high": hi, "threshold": [a, b], "n": ol.get("n"),
             "message": f"output tokens ×{ol['ratio']:.3f} the reference's (95% CI [{lo:.3f}, {hi:.3f}], "
                        f"{ol.get('n')} items): {word} the band {a:g}–{b:g} (MLPerf Inference's "
                        "output-length rule)"}]


def matched_speed(v: dict[str, Any], bench: dict[str, Any] | None) -> dict[str, Any]:
    """The variant's speed against its OWN reference (the unquantized model on its engine: the
    quantization's gain, engine held fixed): offline output tok/s ratio and the paired per-request
    speed-up interval — request i of the variant against request i of the reference, both taken
    against the same bracketing bench baselines — plus, labelled, the figure against the bench
    baseline when that is another engine. Empty where the variant was not benched on a serving
    engine."""
    if not (bench and v["speed"].get("serving_engine") and v["variant"] in bench):
        return {}
    entry, ref = bench[v["variant"]], v.get("reference")
    source = entry.get("speed_source", "fixed shape")  # business traffic where bench replayed it
    cross = {"output_tps_ratio": entry.get("output_tps_ratio"),
             "speedup_ci": (entry.get("latency_paired") or {}).get("speedup_ci")}
    ref_entry = bench.get(ref) if ref else None
    fixed = (entry.get("fixed_shape") or {}).get("output_tps_ratio")  # the fixed shape, for contrast
    if ref_entry is None or "log_latency_ratios" not in ref_entry:  # the bench's own baseline
        return {"against": ref, "source": source, "fixed_shape_ratio": fixed, **cross}
    ref_fixed = (ref_entry.get("fixed_shape") or {}).get("output_tps_ratio")
    mine, theirs = entry.get("log_latency_ratios") or [], ref_entry["log_latency_ratios"]
    ci = None
    if mine and len(mine) == len(theirs):
        ci = paired_latency([a - b for a, b in zip(mine, theirs)]).get("speedup_ci")
    ratio = (round(entry["output_tps_ratio"] / ref_entry["output_tps_ratio"], 4)
             if entry.get("output_tps_ratio") and ref_entry.get("output_tps_ratio") else None)
    return {"against": ref, "source": source, "output_tps_ratio": ratio, "speedup_ci": ci, "cross_engine": cross,
            "fixed_shape_ratio": round(fixed / ref_fixed, 4) if fixed and ref_fixed else None}


def _gain(v, bench, t: GateThresholds, reference_role: str | None) -> dict[str, Any]:
    base = {"criterion": "gain", "kind": "critical", "value": None, "threshold": t.min_speedup}
    if reference_role:
        return {**base, "verdict": None, "message": f"a reference run ({reference_role}), not a "
                "candidate: it need not be faster or smaller"}
    if t.min_speedup is None and t.min_compression is None:
        return {**base, "verdict": None, "message": "the profile asks for no speed or size gain"}
    m = matched_speed(v, bench)
    speed, ci = m.get("output_tps_ratio"), m.get("speedup_ci")
    compression = v.get("compression")  # exact: bytes on disk, against the same reference
    small = t.min_compression is not None and compression is not None and compression >= t.min_compression
    # Speed is read from the interval of the paired per-request speed-up (bench's interleaved
    # runs, Hodges–Lehmann) against the variant's own engine reference, never a point estimate
    # and never across engines; without an interval it cannot pass.
    if t.min_speedup is None or ci is None:
        fast = None
    else:
        fast = "pass" if ci[0] >= t.min_speedup else "fail" if ci[1] < t.min_speedup else "inconclusive"
    verdict = "pass" if small or fast == "pass" else "inconclusive" if fast == "inconclusive" else "fail"
    speed_txt = ("n/a (not benched on a serving engine)" if speed is None and ci is None else
                 f"{speed} output tok/s under load ({m.get('source', 'fixed shape')}, reported)"
                 + (f"; one-at-a-time latency paired by request, speed-up 95% CI [{ci[0]}, {ci[1]}] (judged)" if ci
                    else " (no paired interval: too few requests)") + f" — both against {m['against']}")
    cross = m.get("cross_engine")
    if cross and cross.get("output_tps_ratio") is not None:
        speed_txt += (f" (across engines, against the bench baseline: ×{cross['output_tps_ratio']}"
                      + (f", paired CI {cross['speedup_ci']}" if cross.get("speedup_ci") else "")
                      + " — not judged: it mixes the engine with the quantization)")
    msg = f"speed ×{speed_txt} (needs ×{t.min_speedup}), size ×{compression} (needs ×{t.min_compression})"
    return {**base, "value": speed, "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
            "against": m.get("against"), "cross_engine": cross,
            "verdict": verdict, "message": {"pass": "gain: ", "fail": "no gain: ",
                                            "inconclusive": "gain not shown yet: "}[verdict] + msg}


def utility(v: dict[str, Any], bench: dict[str, Any] | None, cfg) -> dict[str, Any]:
    """U = α·(−accuracy loss, points) + β·(throughput gain %) − γ·instability (docs/rationale.md#utility), the
    loss and the gain both against the variant's own reference (engine held fixed): a shared language
    for the trade-off, not a verdict. Instability counts the silent-regression symptoms in
    percentage points: lost task agreement, repetition and max-token hits above the baseline's,
    and lost JSON validity."""
    loss = -100 * v["accuracy"]["delta"]
    speed = matched_speed(v, bench).get("output_tps_ratio")  # against its own engine's reference
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
