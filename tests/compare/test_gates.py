"""Gates and the utility score on comparison entries written by hand, one defect at a time."""

import copy

import pytest

from pipeline.config import GatesConfig, GateThresholds, UtilityConfig
from pipeline.compare.gates import (GateError, PROFILES, engine_diff_verdict, evaluate_gates,
                                   thresholds, utility)
from pipeline.compare.plots import pareto


def counts(n, lost, gained):
    return {"n": n, "lost": lost, "gained": gained, "delta": (gained - lost) / n}


def entry(overall=(1500, 4, 2), tool=(200, 1, 0), flips=None, json_counts=(200, 0, 0),
          compression=2.0, serving=True, slices=None):
    """A compared variant as comparison.json holds it: paired counts per criterion."""
    n = overall[0]
    changed = flips if flips is not None else overall[1] + overall[2]
    tool_call = {**counts(*tool), "significant_drop": False, "p_drop_adjusted": 1.0}
    return {"variant": "v", "accuracy": counts(*overall),
            "slices": {"scenario=tool_call": tool_call, **(slices or {})},
            "json": None if json_counts is None else counts(*json_counts),
            "disagreement": {"n": n, "results_changed": changed, "outputs_changed": changed},
            "detectors": {"variant": {"json_validity": 1.0, "repetition_rate": 0.0,
                                      "hit_max_tokens_share": 0.0},
                          "baseline": {"json_validity": 1.0, "repetition_rate": 0.0,
                                       "hit_max_tokens_share": 0.0},
                          "consistency": {"task_agreement": 1 - changed / n}},
            "output_length": {"overall": {"n": n, "ratio": 1.0, "ci": [0.98, 1.02]}},
            "speed": {"serving_engine": serving}, "compression": compression}


SAAS = GatesConfig(profile="general_saas", critical_slices=["scenario=tool_call"])


def verdicts(g):
    return {c["criterion"]: c["verdict"] for c in g["criteria"]}


def limits(kld=(0.01, 0.02), task=(0.04, 0.06), margin=0.03, status="gating"):
    """Derived signal limits as pipeline.compare.limits.derive gives them (intervals by hand)."""
    def one(ci):
        return {"status": status, "limit": ci[0], "limit_ci": list(ci), "margin": margin,
                "why": "the items do not pin it down"}

    return {"calibrated": True, "signals": {"kld": one(kld), "task_disagreement": one(task)}}


def test_a_clean_variant_passes():
    g = evaluate_gates(entry(), {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert g["verdict"] == "pass" and g["passed"] and g["failed"] == [] and g["inconclusive"] == []
    assert set(verdicts(g)) == {"accuracy_overall", "slice:scenario=tool_call", "any_slice",
                                "json_validity", "output_length", "gain"}
    # without this model's limits, task agreement is reported, not judged
    na = {x["criterion"]: x for x in g["not_applicable"]}
    assert "no gate calibration" in na["task_agreement"]["why"] and na["task_agreement"]["value"] == 0.004
    g = evaluate_gates(entry(), {"v": {"output_tps_ratio": 1.3}}, SAAS, limits=limits())
    assert verdicts(g)["task_agreement"] == "pass" and g["passed"]


def test_built_in_profiles_state_margins_in_business_terms_only():
    # a KL constant or an agreement floor tuned on one model fails good variants of another
    for name, t in PROFILES.items():
        assert t.max_kld_mean is None and t.min_task_agreement is None, name


def test_the_interval_decides_not_the_point_estimate():
    # −1.3 points looks fine, but on 150 items with 3 lost and 1 gained the data cannot exclude a
    # loss beyond 3 points: inconclusive, with the items that would settle it
    g = evaluate_gates(entry(overall=(150, 3, 1)), {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert g["verdict"] == "inconclusive" and not g["passed"] and g["failed"] == []
    c = next(c for c in g["inconclusive"] if c["criterion"] == "accuracy_overall")
    assert c["ci_low"] < -0.03 < c["ci_high"]
    assert c["items_needed"] > 150 and f"about {c['items_needed']} items" in c["message"]


def test_a_loss_beyond_the_margin_fails():
    g = evaluate_gates(entry(overall=(1500, 160, 10)), None, SAAS)
    assert g["verdict"] == "fail" and verdicts(g)["accuracy_overall"] == "fail"


def test_each_criterion_fails_on_its_own():
    cases = {"slice:scenario=tool_call": entry(tool=(200, 40, 0)),
             "json_validity": entry(json_counts=(400, 60, 0)),
             "task_agreement": entry(overall=(1500, 60, 60)),  # 8% changed, limit ≤ 6%
             "gain": entry(compression=1.1)}
    for criterion, e in cases.items():
        g = evaluate_gates(e, {"v": {"output_tps_ratio": 1.0}}, SAAS, limits=limits())
        assert [f["criterion"] for f in g["failed"]] == [criterion], (criterion, g["criteria"])


def test_a_significant_large_drop_in_a_slice_nobody_declared_critical_fails():
    drop = {**counts(250, 30, 2), "significant_drop": True, "p_drop_adjusted": 1e-5}
    small = {**counts(250, 8, 2), "significant_drop": True, "p_drop_adjusted": 0.03}
    g = evaluate_gates(entry(slices={"scenario=faq": drop, "segment=smb": small}),
                       {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert [f["criterion"] for f in g["failed"]] == ["any_slice"]
    assert g["failed"][0]["slices"] == ["scenario=faq"]  # −2.4 pts is significant but small
    unflagged = {**drop, "significant_drop": False}
    g = evaluate_gates(entry(slices={"scenario=faq": unflagged}), {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert g["passed"]


def test_speed_counts_only_on_a_serving_engine():
    bench = {"v": {"output_tps_ratio": 2.0, "latency_paired": {"speedup_ci": [1.8, 2.2]}}}
    assert evaluate_gates(entry(compression=1.0), bench, SAAS)["passed"]
    ref = evaluate_gates(entry(compression=1.0, serving=False), bench, SAAS)
    assert [f["criterion"] for f in ref["failed"]] == ["gain"]


@pytest.mark.parametrize("ci, verdict", [([1.10, 1.30], "pass"), ([0.95, 1.20], "inconclusive"),
                                         ([0.80, 1.02], "fail")])
def test_speed_gain_is_read_from_its_interval_not_its_point(ci, verdict):
    # the same point estimate (×1.15 > ×1.05) in all three: only the interval decides
    bench = {"v": {"output_tps_ratio": 1.15, "latency_paired": {"speedup_ci": ci}}}
    g = evaluate_gates(entry(compression=1.0), bench, SAAS)
    assert verdicts(g)["gain"] == verdict
    bench["v"]["latency_paired"] = {"speedup_ci": None}  # too few requests for an interval
    assert verdicts(evaluate_gates(entry(compression=1.0), bench, SAAS))["gain"] == "fail"
    assert verdicts(evaluate_gates(entry(compression=2.0), bench, SAAS))["gain"] == "pass"  # size


def test_a_reference_run_need_not_earn_its_keep():
    g = evaluate_gates(entry(compression=1.0), None, SAAS, reference_role="noise floor")
    assert g["passed"] and "gain" in [x["criterion"] for x in g["not_applicable"]]


def test_stricter_profiles_are_stricter():
    order = ["research", "general_saas", "finance_medical", "compliance_audit"]
    drops = [PROFILES[p].max_drop_overall for p in order]
    assert drops == sorted(drops, reverse=True)
    e = entry(overall=(1500, 6, 0), tool=(200, 0, 0), flips=6)  # −0.4 pts, CI down to about −0.9
    got = [evaluate_gates(e, None, GatesConfig(profile=p, critical_slices=["scenario=tool_call"]))["verdict"]
           for p in order]
    assert got[:2] == ["pass", "pass"] and got[3] != "pass"


def test_custom_profile_and_unknown_names():
    custom = GatesConfig(profile="custom", custom=GateThresholds(
        max_drop_overall=0.0001, max_drop_slice=0.0001, min_task_agreement=1.0))
    assert not evaluate_gates(entry(), None, custom)["passed"]
    with pytest.raises(GateError, match="did you mean 'research'"):
        thresholds(GatesConfig.model_construct(profile="reserch", custom=None))
    with pytest.raises(GateError, match="gates.custom is empty"):
        thresholds(GatesConfig.model_construct(profile="custom", custom=None))


def test_utility_rewards_speed_and_punishes_loss_and_instability():
    cfg = UtilityConfig(alpha=1, beta=1, gamma=3)
    base = utility(entry(overall=(100, 0, 0)), {"v": {"output_tps_ratio": 1.2}}, cfg)
    assert base["score"] == pytest.approx(20.0)
    worse = copy.deepcopy(entry(overall=(100, 2, 0), flips=1))
    u = utility(worse, {"v": {"output_tps_ratio": 1.2}}, cfg)
    assert u["score"] == pytest.approx(20.0 - 2.0 - 3 * 1.0)


def test_pareto_front():
    pts = {"base": (0.82, 1.0, 13), "w4": (0.81, 1.1, 6.6), "q2": (0.79, 1.0, 3.0),
           "bad": (0.80, 1.05, 7.0)}
    assert pareto(pts) == ["base", "q2", "w4"]


def _speed(tps, serving=True):
    return {"output_tokens_per_second": tps, "serving_engine": serving}


def test_engine_difference_is_judged_by_the_tier_of_seed_000_7_5():
    close = {"exact_match_rate": 0.96, "task_agreement": 0.99}
    v = engine_diff_verdict("finance_medical", close, {"vllm": _speed(100.0), "sglang": _speed(96.0)})
    assert v["passed"] and [c["passed"] for c in v["criteria"]] == [True, True, True]
    # the same figures fail the compliance tier: 96% identical outputs < 99%, 4% slower > ±3%
    v = engine_diff_verdict("compliance_audit", close, {"vllm": _speed(100.0), "sglang": _speed(96.0)})
    failed = {c["name"] for c in v["criteria"] if c["passed"] is False}
    assert not v["passed"] and failed == {"exact_match", "task_agreement", "throughput"}
    # research does not require identical outputs; a reference engine's speed is never judged
    v = engine_diff_verdict("research", {"exact_match_rate": 0.5, "task_agreement": 0.91},
                            {"vllm": _speed(100.0), "transformers": _speed(3.0, serving=False)})
    crit = {c["name"]: c["passed"] for c in v["criteria"]}
    assert v["passed"] and crit == {"exact_match": None, "task_agreement": True, "throughput": None}
    with pytest.raises(GateError, match="--profile"):
        engine_diff_verdict("custom", close, {})


def test_a_criterion_that_cannot_be_measured_is_said_never_passed_silently():
    e = entry(json_counts=None)
    g = evaluate_gates(e, {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert g["passed"] and [x["criterion"] for x in g["not_applicable"]] == [
        "json_validity", "kld", "task_agreement"]
    assert g["not_applicable"][:2] == [
        {"criterion": "json_validity", "why": "no structured-output (JSON) samples in the evaluation set"},
        {"criterion": "kld", "why": "divergence@<variant> was not run for this variant"}]
    e = entry()
    e["disagreement"] = {"n": 0}
    g = evaluate_gates(e, {"v": {"output_tps_ratio": 1.3}}, SAAS, limits=limits())
    assert not g["passed"] and [f["criterion"] for f in g["failed"]] == ["task_agreement"]


def with_kld(lo, hi, cfg=SAAS, **kw):
    e = entry()
    e["divergence"] = {"measured": True, "overall": {"kld_item_mean": (lo + hi) / 2, "items": 1500,
                                                     "kld_item_mean_ci": [lo, hi], "top1_agreement": 0.99}}
    g = evaluate_gates(e, {"v": {"output_tps_ratio": 1.3}}, cfg, **kw)
    return verdicts(g).get("kld"), g["verdict"], g


def test_mean_kl_is_judged_against_this_models_derived_limit_interval():
    lim = limits(kld=(0.01, 0.02))
    assert with_kld(0.004, 0.008, limits=lim)[:2] == ("pass", "pass")
    assert with_kld(0.025, 0.03, limits=lim)[:2] == ("fail", "fail")
    # overlapping the limit's own interval: neither side's uncertainty is read as a point
    assert with_kld(0.008, 0.012, limits=lim)[:2] == ("inconclusive", "inconclusive")
    assert with_kld(0.015, 0.016, limits=lim)[:2] == ("inconclusive", "inconclusive")
    # an open-ended limit (some replicates never lose the margin) can pass, never fail
    open_ended = limits(kld=(0.01, None))
    assert with_kld(0.5, 0.9, limits=open_ended)[:2] == ("inconclusive", "inconclusive")


def test_without_a_pinned_limit_the_kl_is_a_diagnostic_and_the_business_criteria_decide():
    # a real model's Q4_K_M: KL 0.033, far beyond the demo-tuned constants, accuracy unchanged
    for lim in (None, {"calibrated": False, "why": "no gate calibration for this model"},
                limits(status="diagnostic")):
        kld, verdict, g = with_kld(0.030, 0.036, limits=lim)
        assert kld is None and verdict == "pass"
        na = next(x for x in g["not_applicable"] if x["criterion"] == "kld")
        assert na["value"] == pytest.approx(0.033) and na["why"]


def test_a_custom_profile_may_still_state_a_kl_constant():
    custom = GatesConfig(profile="custom", critical_slices=["scenario=tool_call"], custom=GateThresholds(
        max_drop_overall=0.03, max_drop_slice=0.05, max_kld_mean=0.005))
    assert with_kld(0.001, 0.002, custom)[:2] == ("pass", "pass")
    assert with_kld(0.007, 0.01, custom)[:2] == ("fail", "fail")
    assert with_kld(0.002, 0.01, custom)[:2] == ("inconclusive", "inconclusive")
    e = entry()
    e["divergence"] = {"measured": False, "why": "format 'awq': transformers does not load it here"}
    g = evaluate_gates(e, None, SAAS)
    assert {"criterion": "kld", "why": "format 'awq': transformers does not load it here"} in g["not_applicable"]


def test_the_gain_is_judged_against_the_variants_own_engine_reference():
    # a GGUF variant 5× "faster" than the vLLM baseline but slower than llama.cpp's own F16:
    # the cross-engine figure is reported, labelled, and never passes the gain
    slower = [0.10] * 16            # log latency ratios vs the bench baseline, per request
    f16 = [-1.70] * 8 + [-1.72] * 8
    bench = {"base": {"output_tps_ratio": 1.0},
             "f16": {"output_tps_ratio": 1.1, "log_latency_ratios": f16,
                     "latency_paired": {"speedup_ci": [5.4, 5.6]}},
             "v": {"output_tps_ratio": 1.0, "log_latency_ratios": [x + 0.09 for x in f16],
                   "latency_paired": {"speedup_ci": [4.96, 5.54]}}}
    e = {**entry(compression=1.2), "reference": "f16"}
    g = evaluate_gates(e, bench, SAAS)
    gain = next(c for c in g["criteria"] if c["criterion"] == "gain")
    assert gain["verdict"] == "fail" and gain["against"] == "f16"
    assert gain["value"] == pytest.approx(1.0 / 1.1, abs=1e-3) and gain["ci_high"] < 1.0
    assert gain["cross_engine"]["speedup_ci"] == [4.96, 5.54] and "not judged" in gain["message"]
    # utility reads the same engine-matched figure
    assert utility(e, bench, UtilityConfig())["throughput_gain_pct"] < 0
    # judged against the bench baseline itself (same engine), the bench figures are used as they are
    e2 = {**entry(compression=1.2), "reference": "base"}
    bench["v"]["log_latency_ratios"] = slower
    assert next(c for c in evaluate_gates(e2, bench, SAAS)["criteria"]
                if c["criterion"] == "gain")["ci_low"] == 4.96


@pytest.mark.parametrize("ci, verdict", [((0.97, 1.04), "pass"), ((0.54, 0.66), "fail"),
                                         ((1.12, 1.3), "fail"), ((0.83, 0.94), "inconclusive")])
def test_output_length_is_judged_from_its_interval_against_mlperfs_band(ci, verdict):
    """A variant answering 40% shorter (a real Q2_K: ×0.60 [0.54, 0.66]) fails however its
    accuracy reads; one whose interval straddles the band's edge is not settled."""
    v = entry()
    v["output_length"] = {"overall": {"n": 1500, "ratio": sum(ci) / 2, "ci": list(ci)}}
    g = evaluate_gates(v, {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert verdicts(g)["output_length"] == verdict and g["verdict"] == verdict
    custom = GatesConfig(profile="custom", critical_slices=["scenario=tool_call"],
                         custom=GateThresholds(max_drop_overall=0.03, max_drop_slice=0.05,
                                               output_length_band=None, min_compression=1.5))
    assert "output_length" not in verdicts(evaluate_gates(v, None, custom))


def test_an_output_length_band_must_hold_one():
    with pytest.raises(ValueError, match="output_length_band"):
        GateThresholds(max_drop_overall=0.03, max_drop_slice=0.05, output_length_band=(1.1, 1.3))
