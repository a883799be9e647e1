"""Paired statistics: each function against a case whose answer is known by construction."""

import numpy as np
import pytest

from pipeline.stats.paired import bootstrap_delta, latency_test, paired_accuracy


def test_mcnemar_counts_discordant_pairs_and_matches_the_binomial_test():
    from scipy.stats import binomtest

    base = [1] * 30 + [0] * 10 + [1] * 60
    other = [0] * 30 + [1] * 10 + [1] * 60  # 30 lost, 10 gained
    r = paired_accuracy(base, other)
    assert (r["lost"], r["gained"]) == (30, 10)
    assert r["p_value"] == pytest.approx(binomtest(10, 40, 0.5).pvalue, rel=1e-4)
    assert r["p_drop"] == pytest.approx(binomtest(30, 40, 0.5, alternative="greater").pvalue, rel=1e-4)


def test_identical_runs_are_not_different_but_not_certain_either():
    scores = [1, 0, 1, 1, 0] * 40
    r = paired_accuracy(scores, scores)
    assert r["delta"] == 0 and r["p_value"] == 1.0 and not r["significant"]
    assert r["ci_low"] < 0 < r["ci_high"]  # no disagreement on 200 items is not [0, 0]


def test_a_clear_drop_is_significant_with_an_interval_below_zero():
    rng = np.random.default_rng(1)
    base = (rng.random(400) < 0.8).astype(float)
    other = base.copy()
    other[rng.choice(np.flatnonzero(base == 1), 40, replace=False)] = 0  # lose 10 points
    r = paired_accuracy(base, other)
    assert r["delta"] == pytest.approx(-0.1)
    assert r["significant"] and r["ci_high"] < 0 < -r["ci_low"]
    assert r["ci_low"] < -0.1 < r["ci_high"]


def test_bootstrap_interval_narrows_with_more_pairs():
    rng = np.random.default_rng(2)
    widths = []
    for n in (100, 1600):
        base = (rng.random(n) < 0.7).astype(float)
        other = np.where(rng.random(n) < 0.1, 1 - base, base)
        lo, hi = bootstrap_delta(base, other, seed=0)
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 2


def test_small_slices_are_underpowered_large_ones_are_not():
    small = paired_accuracy([1, 1, 0, 1] * 5, [1, 1, 0, 1] * 5, min_effect=0.05)
    large = paired_accuracy([1, 1, 0, 1] * 500, [1, 1, 0, 1] * 500, min_effect=0.05)
    assert small["underpowered"] and not large["underpowered"]
    assert large["min_detectable_drop"] < 0.05


def test_latency_shift_is_detected_and_equal_samples_are_not():
    rng = np.random.default_rng(3)
    base = rng.normal(1.0, 0.05, 200)
    slow = latency_test(base, base * 1.3)
    same = latency_test(base, rng.permutation(base))
    assert slow["p_value"] < 1e-6 and slow["median_ratio"] == pytest.approx(1.3, rel=0.01)
    assert same["p_value"] > 0.5
