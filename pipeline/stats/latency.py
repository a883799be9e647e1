"""Latency percentiles of two serving configurations, compared with valid intervals.

A percentile's interval is distribution-free: the order statistics whose ranks a binomial count
brackets (e.g. Hahn & Meeker, *Statistical Intervals*, 1991, §5.2). It is exact for any
continuous latency distribution, and it says plainly when there are too few requests: with 120
requests no upper bound on the P99 exists at 95% (the largest of 120 is below the true P99 with
probability 0.99^120 = 30%), so a verdict that needs it stays inconclusive and the report gives
the requests that would settle it.

The ratio of two percentiles (candidate / current) takes each side's interval at 1 − α/2
(Bonferroni), so the ratio's interval holds at 1 − α whatever the dependence between them. With
three or more rounds the round-to-round spread of the log ratio (a t interval) is taken as well,
and the verdict reads the hull of both: requests inside one replay share a queue, so they are not
independent, and the rounds are what repeats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


def quantile_interval(x: Sequence[float], q: float, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided distribution-free interval for the q-quantile of the distribution `x` came from:
    (X(l), X(u)) with P(X(l) ≤ ξ_q ≤ X(u)) ≥ `confidence`; a bound the sample cannot give is
    -inf / +inf."""
    v = np.sort(np.asarray(x, dtype=float))
    n, tail = len(v), (1 - confidence) / 2
    if n == 0:
        return -math.inf, math.inf
    b = stats.binom(n, q)
    # lower: the largest rank l with P(X(l) > ξ_q) = P(B ≤ l − 1) ≤ tail
    ranks = np.arange(1, n + 1)
    lower_ok = ranks[b.cdf(ranks - 1) <= tail]
    lo = float(v[lower_ok[-1] - 1]) if len(lower_ok) else -math.inf
    # upper: the smallest rank u with P(X(u) < ξ_q) = P(B ≥ u) = 1 − cdf(u − 1) ≤ tail
    upper_ok = ranks[1 - b.cdf(ranks - 1) <= tail]
    hi = float(v[upper_ok[0] - 1]) if len(upper_ok) else math.inf
    return lo, hi


def requests_for_upper_bound(q: float, confidence: float = 0.95) -> int:
    """The fewest requests for which the q-quantile's upper bound exists (the largest of n is
    above ξ_q with probability 1 − q^n ≥ 1 − tail)."""
    tail = (1 - confidence) / 2
    return int(math.ceil(math.log(tail) / math.log(q)))


def _bounds_ratio(current: np.ndarray, candidate: np.ndarray, q: float, confidence: float) -> tuple[float, float]:
    side = 1 - (1 - confidence) / 2           # each side at 1 − α/2 (Bonferroni)
    a_lo, a_hi = quantile_interval(current, q, side)
    b_lo, b_hi = quantile_interval(candidate, q, side)
    lo = b_lo / a_hi if a_hi > 0 and math.isfinite(a_hi) and b_lo > 0 else 0.0
    hi = b_hi / a_lo if a_lo > 0 and math.isfinite(b_hi) else math.inf
    return lo, hi


def _rounds_ratio(current: Sequence[np.ndarray], candidate: Sequence[np.ndarray], q: float,
                  confidence: float) -> tuple[float, float] | None:
    """A t interval over the rounds' log ratios of the q-quantile (None under three rounds)."""
    if len(current) < 3:
        return None
    logs = np.array([math.log(np.quantile(b, q) / np.quantile(a, q)) for a, b in zip(current, candidate)])
    half = stats.t.ppf(1 - (1 - confidence) / 2, len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs))
    return math.exp(logs.mean() - half), math.exp(logs.mean() + half)


def ratio_interval(current: Sequence[Sequence[float]], candidate: Sequence[Sequence[float]], q: float,
                   confidence: float = 0.95) -> tuple[float, float]:
    """Interval for ξ_q(candidate) / ξ_q(current); each argument is one list of latencies per
    round (requests pooled over rounds for the order statistics; rounds for the t interval)."""
    a = [np.asarray(r, dtype=float) for r in current]
    b = [np.asarray(r, dtype=float) for r in candidate]
    lo, hi = _bounds_ratio(np.concatenate(a), np.concatenate(b), q, confidence)
    rounds = _rounds_ratio(a, b, q, confidence)
    if rounds is not None:
        lo, hi = min(lo, rounds[0]), max(hi, rounds[1])
    return lo, hi


def at_most_increase(current: Sequence[Sequence[float]], candidate: Sequence[Sequence[float]], q: float,
                     tolerance: float, *, alpha: float = 0.05, tests: int = 1) -> dict[str, Any]:
    """Is the candidate's q-quantile at most (1 + tolerance) × the current's? pass: the (1 − α)
    interval's upper bound is at most 1 + tolerance; fail: the lower bound of the (1 − α/tests)
    interval is above it (`tests`: the criteria of one verdict, Bonferroni, so that any-fails
    keeps the error rate at α); inconclusive otherwise."""
    limit = 1 + tolerance
    lo, hi = ratio_interval(current, candidate, q, 1 - alpha)
    lo_fail, _ = ratio_interval(current, candidate, q, 1 - alpha / tests)
    verdict = "pass" if hi <= limit else "fail" if lo_fail > limit else "inconclusive"
    n_a, n_b = sum(len(r) for r in current), sum(len(r) for r in candidate)
    est = float(np.quantile(np.concatenate([np.asarray(r, float) for r in candidate]), q)
                / np.quantile(np.concatenate([np.asarray(r, float) for r in current]), q))
    out = {"verdict": verdict, "ratio": round(est, 4), "ci_low": _r(lo), "ci_high": _r(hi),
           "fail_bound": _r(lo_fail), "limit": limit, "requests": [n_a, n_b], "rounds": len(current)}
    if verdict == "inconclusive":
        have = min(n_a, n_b)
        for_pass = requests_for_upper_bound(q, 1 - alpha / 2)
        for_fail = requests_for_upper_bound(q, 1 - alpha / (2 * tests))
        short = [f"{k} needs ≥ {n}" for k, n in (("a pass", for_pass), ("a fail", for_fail)) if have < n]
        if short:
            out["requests_needed"] = max(for_pass, for_fail) if have < for_pass else for_fail
            out["why"] = (f"{have} requests per configuration bound no {q:.0%} quantile from above: "
                          + ", ".join(short))
    return out


def _r(x: float) -> float | None:
    return round(x, 4) if math.isfinite(x) else None


def summary(latencies: Sequence[float]) -> dict[str, float | None]:
    """P50 / P90 / P99 and the mean of one run's latencies (seconds)."""
    v = np.asarray(latencies, dtype=float)
    if not len(v):
        return {k: None for k in (*QUANTILES, "mean")}
    return {**{k: round(float(np.quantile(v, q)), 5) for k, q in QUANTILES.items()},
            "mean": round(float(v.mean()), 5)}
