"""Signal limits derived from a perturbation ladder, checked by seeded simulation: a ladder with a
known relation between the signal and the accuracy drop, whose true limit is known."""

import math

import numpy as np
import pytest

from pipeline.stats.gate_limits import derive_limit, invert, isotonic_curve, judge


def ladder(rng, *, n=400, base_acc=0.6, slope=2.0, signals=(0.002, 0.006, 0.015, 0.04),
           gain_rate=0.005):
    """Base results and steps whose TRUE drop is slope × signal (items the base gets right are
    lost at the rate that gives it, plus a little churn both ways); per-item signals are
    exponential with the step's mean."""
    base = rng.random(n) < base_acc
    steps = []
    for x in signals:
        drop = slope * x
        lose = min(1.0, (drop + gain_rate * (1 - base_acc)) / base_acc)
        correct = base.copy()
        correct[base & (rng.random(n) < lose)] = False
        correct[~base & (rng.random(n) < gain_rate)] = True
        steps.append({"correct": correct, "signal": rng.exponential(x, n)})
    return base, steps


def test_the_curve_is_monotone_and_inverted_between_measured_steps_only():
    xs, ds = isotonic_curve([0.01, 0.02, 0.03], [0.02, 0.01, 0.05])
    assert list(ds) == pytest.approx([0.0, 0.015, 0.015, 0.05])
    assert invert(xs, ds, 0.03) == pytest.approx(0.02 + 0.01 * (0.015 / 0.035))
    assert invert(xs, ds, 0.2) == math.inf  # never extrapolated beyond the last step


def test_the_limits_interval_covers_the_true_limit_by_simulation():
    margin, slope = 0.03, 2.0
    truth = margin / slope
    covered, pinned = 0, 0
    for seed in range(120):
        base, steps = ladder(np.random.default_rng(seed), slope=slope)
        fit = derive_limit(base, steps, margin=margin, n_boot=200, seed=seed)
        lo, hi = fit["limit_ci"]
        pinned += fit["status"] == "gating"
        covered += lo is not None and lo <= truth <= (hi if hi is not None else math.inf)
    assert covered / 120 >= 0.88, covered  # a percentile bootstrap: near, not exactly, 95%
    assert pinned / 120 >= 0.9, pinned


def test_variants_well_inside_pass_and_well_beyond_fail_by_simulation():
    margin, slope, truth = 0.03, 2.0, 0.015
    verdicts = {"inside": [], "beyond": []}
    for seed in range(60):
        rng = np.random.default_rng(1000 + seed)
        base, steps = ladder(rng, slope=slope)
        fit = derive_limit(base, steps, margin=margin, n_boot=200, seed=seed)
        for kind, true_kl in (("inside", truth / 4), ("beyond", truth * 4)):
            items = rng.exponential(true_kl, 1500)
            boot = [items[rng.integers(0, 1500, 1500)].mean() for _ in range(300)]
            verdicts[kind].append(judge(np.quantile(boot, [0.025, 0.975]), fit))
    assert verdicts["inside"].count("pass") / 60 >= 0.9
    assert verdicts["beyond"].count("fail") / 60 >= 0.9
    assert "fail" not in verdicts["inside"] and "pass" not in verdicts["beyond"]


def test_a_ladder_that_never_loses_the_margin_cannot_pin_a_limit():
    base, steps = ladder(np.random.default_rng(0), slope=0.2)  # largest true drop 0.8 points
    fit = derive_limit(base, steps, margin=0.03, n_boot=200)
    assert fit["status"] == "diagnostic" and fit["limit"] is None and "never lost" in fit["why"]


def test_a_drop_past_the_limit_that_is_not_significant_makes_the_signal_a_diagnostic():
    # 30 items: one lost item is a 3.3-point drop, but no evidence of a loss at all
    base = np.ones(30, bool)
    correct = base.copy()
    correct[0] = False
    steps = [{"correct": correct, "signal": np.full(30, 0.01)}]
    fit = derive_limit(base, steps, margin=0.03, n_boot=200)
    assert fit["status"] == "diagnostic"
    assert fit["first_step_past_limit"]["p_drop"] > 0.05 or "interval" in fit["why"]


def test_judge_reads_both_intervals():
    fit = {"limit_ci": [0.01, 0.02]}
    assert judge((0.001, 0.009), fit) == "pass"
    assert judge((0.021, 0.03), fit) == "fail"
    assert judge((0.005, 0.015), fit) == "inconclusive"
    assert judge((0.5, 0.6), {"limit_ci": [0.01, None]}) == "inconclusive"


def test_a_calibration_holds_for_its_evaluation_set_whole_or_in_part():
    from pipeline.compare.limits import same_evaluation_set

    sha, other = "a" * 64, "b" * 64
    assert same_evaluation_set(sha, sha) and same_evaluation_set(f"{sha}[:400]", sha)
    assert same_evaluation_set(sha, f"{sha}[:1501]") and same_evaluation_set(f"{sha}[:400]", f"{sha}[:200]")
    assert not same_evaluation_set(other, sha) and not same_evaluation_set(f"{other}[:400]", sha)
