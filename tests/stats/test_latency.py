"""Percentile intervals and the P99 verdict of an upgrade, checked by seeded simulation: the
distribution-free interval covers at its level, no bound is invented from too few requests, a
candidate equal to the current one (or exactly at the limit) fails at most α of the time, and a
real tail regression fails almost always."""

import math

import numpy as np
import pytest
from scipy import stats

from pipeline.stats.latency import at_most_increase, quantile_interval, ratio_interval, requests_for_upper_bound


def latencies(rng, n, scale=1.0):
    """A long-tailed latency sample (lognormal, seconds)."""
    return scale * rng.lognormal(mean=-3.0, sigma=0.8, size=n)


@pytest.mark.parametrize("q, n", [(0.5, 60), (0.9, 200), (0.99, 600)])
def test_the_quantile_interval_covers_at_its_level(q, n):
    rng = np.random.default_rng(7)
    truth = math.exp(-3.0 + 0.8 * stats.norm.ppf(q))
    reps, covered = 1500, 0
    for _ in range(reps):
        lo, hi = quantile_interval(latencies(rng, n), q, 0.95)
        covered += lo <= truth <= hi
    se = math.sqrt(0.95 * 0.05 / reps)
    assert covered / reps >= 0.95 - 3 * se  # exact (conservative) for any continuous distribution


def test_too_few_requests_give_no_upper_bound_on_the_p99():
    need = requests_for_upper_bound(0.99, 0.975)
    assert need == 437  # 0.99^n ≤ 0.0125
    rng = np.random.default_rng(1)
    assert quantile_interval(latencies(rng, need - 1), 0.99, 0.975)[1] == math.inf
    assert math.isfinite(quantile_interval(latencies(rng, need), 0.99, 0.975)[1])


def test_a_verdict_on_too_few_requests_is_inconclusive_and_says_how_many_would_do():
    rng = np.random.default_rng(2)
    same = [latencies(rng, 40)], [latencies(rng, 40)]
    got = at_most_increase(*same, 0.99, 0.10)
    assert got["verdict"] == "inconclusive" and got["ci_high"] is None
    assert got["requests_needed"] == 437 and got["why"].startswith("40 requests") and "a pass needs ≥ 437" in got["why"]
    four = at_most_increase(*same, 0.99, 0.10, tests=4)  # a fail bound at α / 4 needs more
    assert four["requests_needed"] == 574 and "a fail needs ≥ 574" in four["why"]


def simulate(ratio: float, *, reps: int, n: int = 240, rounds: int = 2, tests: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    counts = {"pass": 0, "fail": 0, "inconclusive": 0}
    for _ in range(reps):
        cur = [latencies(rng, n) for _ in range(rounds)]
        cand = [latencies(rng, n, ratio) for _ in range(rounds)]
        counts[at_most_increase(cur, cand, 0.99, 0.10, alpha=0.05, tests=tests)["verdict"]] += 1
    return {k: v / reps for k, v in counts.items()}


@pytest.mark.parametrize("ratio", [1.0, 1.10])
def test_a_candidate_no_worse_than_the_limit_fails_at_most_alpha(ratio):
    got = simulate(ratio, reps=600)
    assert got["fail"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 600)


def test_a_candidate_at_the_limit_passes_at_most_alpha():
    got = simulate(1.10, reps=600, seed=3)
    assert got["pass"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 600)


def test_a_fourfold_tail_fails_and_a_threefold_faster_candidate_passes():
    """Distribution-free P99 bounds are wide: 2 × 400 requests a side see a 4× tail (a queue
    that no longer drains) and a 3× faster one, not a 1.5× change (docs/upgrades.md)."""
    assert simulate(4.0, reps=200, n=400, seed=4)["fail"] >= 0.93
    assert simulate(1 / 3, reps=200, n=400, seed=5)["pass"] >= 0.95


def test_rounds_that_disagree_widen_the_interval():
    """Three rounds whose ratios spread (drift between replays) give an interval at least as
    wide as the pooled order statistics alone."""
    rng = np.random.default_rng(6)
    cur = [latencies(rng, 300) for _ in range(3)]
    cand = [latencies(rng, 300, s) for s in (0.7, 1.0, 1.6)]
    lo, hi = ratio_interval(cur, cand, 0.99)
    pooled = ratio_interval([np.concatenate(cur)], [np.concatenate(cand)], 0.99)
    assert lo <= pooled[0] and hi >= pooled[1] and (lo, hi) != pooled
