"""Gates and the utility score on comparison entries written by hand, one defect at a time."""

import copy

import pytest

from pipeline.config import GatesConfig, GateThresholds, UtilityConfig
from pipeline.report.gates import (GateError, PROFILES, engine_diff_verdict, evaluate_gates,
                                   thresholds, utility)
from pipeline.report.plots import pareto


def entry(delta=-0.004, ci=(-0.01, 0.002), tool=(-0.01, -0.04), agreement=0.995, json_ok=1.0,
          compression=2.0, serving=True):
    return {"variant": "v", "accuracy": {"delta": delta, "ci_low": ci[0], "ci_high": ci[1]},
            "slices": {"scenario=tool_call": {"delta": tool[0], "ci_low": tool[1], "n": 85,
                                              "underpowered": True}},
            "detectors": {"variant": {"json_validity": json_ok, "repetition_rate": 0.0,
                                      "hit_max_tokens_share": 0.0},
                          "baseline": {"json_validity": 1.0, "repetition_rate": 0.0,
                                       "hit_max_tokens_share": 0.0},
                          "consistency": {"task_agreement": agreement}},
            "speed": {"serving_engine": serving}, "compression": compression}


SAAS = GatesConfig(profile="general_saas", critical_slices=["scenario=tool_call"])


def test_a_clean_variant_passes():
    g = evaluate_gates(entry(), {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert g["passed"] and g["failed"] == []


def test_the_lower_bound_decides_not_the_point_estimate():
    # delta −1 point looks fine, but the data cannot exclude −3.5: general SaaS allows −3
    g = evaluate_gates(entry(delta=-0.01, ci=(-0.035, 0.015)), None, SAAS)
    assert [f["criterion"] for f in g["failed"]] == ["accuracy_overall"]
    assert "lower bound -3.5" in g["failed"][0]["message"]


def test_each_criterion_fails_on_its_own():
    cases = {"slice:scenario=tool_call": entry(tool=(-0.02, -0.08)),
             "json_validity": entry(json_ok=0.9),
             "task_agreement": entry(agreement=0.9),
             "gain": entry(compression=1.1)}
    for criterion, e in cases.items():
        g = evaluate_gates(e, {"v": {"output_tps_ratio": 1.0}}, SAAS)
        assert [f["criterion"] for f in g["failed"]] == [criterion], (criterion, g["failed"])


def test_speed_counts_only_on_a_serving_engine():
    bench = {"v": {"output_tps_ratio": 2.0}}
    assert evaluate_gates(entry(compression=1.0), bench, SAAS)["passed"]
    ref = evaluate_gates(entry(compression=1.0, serving=False), bench, SAAS)
    assert [f["criterion"] for f in ref["failed"]] == ["gain"]


def test_stricter_profiles_are_stricter():
    order = ["research", "general_saas", "finance_medical", "compliance_audit"]
    drops = [PROFILES[p].max_drop_overall for p in order]
    assert drops == sorted(drops, reverse=True)
    e = entry(ci=(-0.008, 0.0))
    passed = [evaluate_gates(e, None, GatesConfig(profile=p))["passed"] for p in order]
    assert passed == [True, True, True, False]


def test_custom_profile_and_unknown_names():
    custom = GatesConfig(profile="custom", custom=GateThresholds(
        max_drop_overall=0.0, max_drop_slice=0.0, min_json_validity=1.0, min_task_agreement=1.0))
    assert not evaluate_gates(entry(), None, custom)["passed"]
    with pytest.raises(GateError, match="did you mean 'research'"):
        thresholds(GatesConfig.model_construct(profile="reserch", custom=None))
    with pytest.raises(GateError, match="gates.custom is empty"):
        thresholds(GatesConfig.model_construct(profile="custom", custom=None))


def test_utility_rewards_speed_and_punishes_loss_and_instability():
    cfg = UtilityConfig(alpha=1, beta=1, gamma=3)
    base = utility(entry(delta=0.0, agreement=1.0), {"v": {"output_tps_ratio": 1.2}}, cfg)
    assert base["score"] == pytest.approx(20.0)
    worse = copy.deepcopy(entry(delta=-0.02, agreement=0.99))
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
    e = entry(json_ok=None)
    g = evaluate_gates(e, {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert g["passed"] and g["not_applicable"] == [
        {"criterion": "json_validity", "why": "no structured-output (JSON) samples in the evaluation set"}]
    e = entry()
    e["detectors"]["consistency"] = {"n": 0}
    g = evaluate_gates(e, {"v": {"output_tps_ratio": 1.3}}, SAAS)
    assert not g["passed"] and [f["criterion"] for f in g["failed"]] == ["task_agreement"]
