"""The upgrade's accuracy verdict from paired records, and how criteria combine."""

import numpy as np
import pytest

from pipeline.compare.gates import ENGINE_DIFF_TIERS
from pipeline.serving.verdicts import accuracy, combine, goodput, traffic


def records(n, *, changed=0, lost=0, prefix="out"):
    """n items; the first `changed` outputs differ from the reference run's, of which the first
    `lost` also lose a correct answer."""
    out = []
    for i in range(n):
        out.append({"id": str(i), "output": f"{prefix}{i}" if i < changed else f"out{i}",
                    "score": 0.0 if i < lost else 1.0})
    return out


def test_identical_runs_pass_and_a_changed_run_fails():
    tier = ENGINE_DIFF_TIERS["general_saas"]
    same = accuracy(records(1500), records(1500), tier, 0.03, 0.05)
    assert same["verdict"] == "pass" and same["outputs_changed"] == 0
    assert set(same["criteria"]) == {"outputs_changed", "task_results_changed", "accuracy"}
    bad = accuracy(records(1500), records(1500, changed=300, lost=150, prefix="x"), tier, 0.03, 0.05)
    assert bad["verdict"] == "fail"
    assert bad["criteria"]["outputs_changed"]["verdict"] == "fail"  # 20% > the tier's 10%
    assert bad["criteria"]["accuracy"]["verdict"] == "fail"         # a 10-point loss, margin 3


def test_few_items_are_inconclusive_not_a_pass():
    got = accuracy(records(20), records(20), ENGINE_DIFF_TIERS["compliance_audit"], 0.005, 0.05)
    assert got["verdict"] == "inconclusive"  # zero changes in 20 items is not "no uncertainty"
    assert got["criteria"]["outputs_changed"]["items_needed"] > 20


def test_a_tier_without_an_exact_output_floor_does_not_judge_it():
    got = accuracy(records(100), records(100), ENGINE_DIFF_TIERS["research"], 0.05, 0.05)
    assert "outputs_changed" not in got["criteria"]


@pytest.mark.parametrize("verdicts, expected", [(["pass", "pass"], "pass"), (["pass", "inconclusive"], "inconclusive"),
                                                (["inconclusive", "fail"], "fail"), ([], "inconclusive")])
def test_criteria_combine(verdicts, expected):
    assert combine(verdicts) == expected


def test_goodput_counts_requests_meeting_both_limits():
    rnd = [{"ttft_s": 0.05, "e2e_s": 0.2, "start": 0.0, "end": 1.0},
           {"ttft_s": 0.2, "e2e_s": 0.2, "start": 0.5, "end": 2.0},
           {"ttft_s": 0.05, "e2e_s": 0.9, "start": 1.0, "end": 2.0}]
    got = goodput([rnd], {"ttft_s": 0.1, "e2e_s": 0.5}, 0.05)
    assert got["good"] == 1 and got["attainment"] == pytest.approx(1 / 3, abs=1e-3)
    assert got["goodput_per_s"] == pytest.approx(0.5) and got["ci_low"] < 1 / 3 < got["ci_high"]


def rounds(n_rounds, n, scale, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_rounds):
        lat = scale * rng.lognormal(-3.0, 0.8, n)
        out.append([{"ttft_s": x / 2, "e2e_s": x, "tpot_s": 0.001, "itl_s": 0.001, "start": i * 0.05,
                     "end": i * 0.05 + x, "output_tokens": 10} for i, x in enumerate(lat)])
    return out


def test_a_candidate_that_fails_requests_does_not_pass_on_the_ones_it_answered():
    runs = {"mix": {10.0: {"current": rounds(2, 300, 1.0, 1), "candidate": rounds(2, 300, 1 / 3, 2)}}}
    clean = traffic(runs, 0.10, 0.05, {"ttft_s": 1.0, "e2e_s": 1.0})
    assert clean["mix"]["verdict"] == "pass"  # 3× faster, nothing failed
    lossy = traffic(runs, 0.10, 0.05, {"ttft_s": 1.0, "e2e_s": 1.0},
                    {"mix": {10.0: {"current": [0, 0], "candidate": [20, 20]}}})
    crit = lossy["mix"]["rates"]["10.0"]["criteria"]["failed_requests"]
    assert crit["verdict"] == "fail" and crit["count"] == 40 and lossy["mix"]["verdict"] == "fail"
    assert lossy["mix"]["rates"]["10.0"]["figures"]["candidate"]["failed"] == 40


def test_a_side_with_nothing_measured_is_inconclusive_not_a_crash():
    runs = {"mix": {10.0: {"current": rounds(2, 300, 1.0, 1), "candidate": [[], []]}}}
    got = traffic(runs, 0.10, 0.05, {"ttft_s": 1.0, "e2e_s": 1.0})
    assert got["mix"]["rates"]["10.0"]["criteria"]["p99_e2e"]["verdict"] == "inconclusive"
    assert got["mix"]["verdict"] != "pass"
