"""Non-inferiority of paired proportions: Tango's score interval, three-valued verdicts, exact
power and the items a verdict needs.

A variant and the baseline answer the same n items; `lost` items pass on the baseline only,
`gained` on the variant only. The change in accuracy is Δ = (gained − lost) / n. Tango's score
interval (Stat Med 1998;17:891–908) inverts the score test of H0: Δ = Δ0 with the nuisance
parameter at its constrained maximum-likelihood value; unlike a Wald or bootstrap interval it
keeps its coverage when few (or no) items disagree — with no disagreement at all it is
[−z²/(n+z²), +z²/(n+z²)], not [0, 0].

Because the interval is the set of Δ0 the score test does not reject, a verdict against a margin
δ needs only the statistic at Δ0 = −δ: the lower bound is above −δ exactly when T(−δ) > z, the
upper bound below −δ exactly when T(−δ) < −z. That makes exact power sums over every possible
outcome cheap (`verdict_probabilities`).

    >>> lo, hi = tango_interval(lost=0, gained=0, n=100)
    >>> round(lo, 4), round(hi, 4)
    (-0.0370, 0.0370)
    >>> noninferiority(lost=3, gained=2, n=600, margin=0.03)["verdict"]
    'pass'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special
from scipy import stats as st

VERDICTS = ("pass", "fail", "inconclusive")


def _z(confidence: float) -> float:
    return float(st.norm.ppf(0.5 + confidence / 2))


def tango_statistic(lost, gained, n, delta0):
    """Tango's score statistic for H0: Δ = delta0 (vectorised over any argument). Large positive
    values say the true change is above delta0, large negative ones below it."""
    lost, gained = np.asarray(lost, float), np.asarray(gained, float)
    n, d = np.asarray(n, float), np.asarray(delta0, float)
    # Constrained MLE of P(baseline passes, variant fails) under Δ = d (Tango's p̂21).
    a = 2 * n
    b = -lost - gained + (2 * n - gained + lost) * d
    c = -lost * d * (1 - d)
    with np.errstate(invalid="ignore", divide="ignore"):
        p21 = (-b + np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))) / (2 * a)
        var = n * (2 * p21 + d * (1 - d))  # n·(p12 + p21 − d²), p12 = p21 + d
        num = gained - lost - n * d
        t = num / np.sqrt(np.maximum(var, 1e-300))
    # Zero variance: the data sit exactly at the boundary; the sign of the numerator decides.
    edge = np.where(num > 0, np.inf, np.where(num < 0, -np.inf, 0.0))
    return np.where(var > 1e-15, t, edge)


def _t(lost: float, gained: float, n: float, d: float) -> float:
    """tango_statistic for one value, in plain floats (the root finder calls it often)."""
    b = -lost - gained + (2 * n - gained + lost) * d
    c = -lost * d * (1 - d)
    p21 = (-b + math.sqrt(max(b * b - 8 * n * c, 0.0))) / (4 * n)
    var = n * (2 * p21 + d * (1 - d))
    num = gained - lost - n * d
    if var <= 1e-15:
        return math.inf if num > 0 else -math.inf if num < 0 else 0.0
    return num / math.sqrt(var)


def tango_interval(lost: int, gained: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Tango's score interval for Δ = (gained − lost)/n, the variant minus the baseline."""
    if n <= 0:
        return -1.0, 1.0
    z = _z(confidence)
    est = (gained - lost) / n
    eps = 1e-12

    def f(d: float, target: float) -> float:
        return _t(lost, gained, n, d) - target

    lo = -1.0 if f(-1 + eps, z) <= 0 else optimize.brentq(f, -1 + eps, est, args=(z,), xtol=1e-10)
    hi = 1.0 if f(1 - eps, -z) >= 0 else optimize.brentq(f, est, 1 - eps, args=(-z,), xtol=1e-10)
    return float(lo), float(hi)


def verdict_from_statistic(t: float, alpha: float) -> str:
    z = _z(1 - alpha)
    return "pass" if t > z else "fail" if t < -z else "inconclusive"


def noninferiority(lost: int, gained: int, n: int, margin: float, alpha: float = 0.05, *,
                   power: float | None = 0.8) -> dict[str, Any]:
    """Is the true change above −margin? pass: the (1 − alpha) interval's lower bound is above
    −margin; fail: its upper bound is below −margin (the data show a loss beyond it);
    inconclusive otherwise, with about how many items (at the observed rates) would settle it
    with probability `power` (not estimated with power=None)."""
    lo, hi = tango_interval(lost, gained, n, 1 - alpha)
    t = _t(lost, gained, n, -margin) if n else 0.0
    verdict = verdict_from_statistic(t, alpha) if n else "inconclusive"
    out = {"verdict": verdict, "n": n, "lost": lost, "gained": gained,
           "delta": round((gained - lost) / n, 6) if n else None, "ci_low": round(lo, 6),
           "ci_high": round(hi, 6), "margin": margin, "confidence": 1 - alpha,
           # one-sided p of H0 "the loss is at least the margin" (small: non-inferior)
           "p_noninferior": float(f"{st.norm.sf(t):.6g}"),
           # one-sided p of H0 "the loss is at most the margin" (small: a loss beyond it)
           "p_inferior": float(f"{st.norm.cdf(t):.6g}")}
    if verdict == "inconclusive" and power is not None:
        pl, pg = observed_rates(lost, gained, n)
        out["items_needed"] = items_needed(pl, pg, margin, alpha=alpha, power=power, start=max(n, 1),
                                           conclusive=True)
    return out


def observed_rates(lost: int, gained: int, n: int) -> tuple[float, float]:
    """Per-item rates of losing and gaining, shrunk away from zero (add ½ each), so that planning
    from an observation of no disagreement does not assume there will never be any."""
    return (lost + 0.5) / (n + 1), (gained + 0.5) / (n + 1)


def _grid(n: int, p_lost: float, p_gained: float, tail: float = 1e-10):
    """Every (lost, gained) outcome of n items with non-negligible probability, and its
    probability (trinomial)."""
    def span(p: float) -> np.ndarray:
        if p <= 0:
            return np.zeros(1)
        return np.arange(int(st.binom.ppf(tail, n, p)), int(st.binom.isf(tail, n, p)) + 1, dtype=float)

    lost, gained = np.meshgrid(span(p_lost), span(p_gained), indexing="ij")
    ok = lost + gained <= n
    lost, gained = lost[ok], gained[ok]
    rest = 1.0 - p_lost - p_gained
    logp = (special.gammaln(n + 1) - special.gammaln(lost + 1) - special.gammaln(gained + 1)
            - special.gammaln(n - lost - gained + 1)
            + special.xlogy(lost, p_lost) + special.xlogy(gained, p_gained)
            + special.xlogy(n - lost - gained, rest))
    return lost, gained, np.exp(logp)


def verdict_probabilities(n: int, p_lost: float, p_gained: float, margin: float,
                          alpha: float = 0.05) -> dict[str, float]:
    """Exact probabilities of each verdict for n items whose true per-item rates of being lost
    and gained are p_lost and p_gained (sum over every outcome, not simulation)."""
    if n <= 0:
        return {"pass": 0.0, "fail": 0.0, "inconclusive": 1.0}
    lost, gained, p = _grid(n, p_lost, p_gained)
    t = tango_statistic(lost, gained, n, -margin)
    z = _z(1 - alpha)
    pp, pf = float(p[t > z].sum()), float(p[t < -z].sum())
    return {"pass": pp, "fail": pf, "inconclusive": max(0.0, 1.0 - pp - pf)}


def items_needed(p_lost: float, p_gained: float, margin: float, *, alpha: float = 0.05,
                 power: float = 0.8, start: int = 1, conclusive: bool = False,
                 limit: int = 1_000_000) -> int | None:
    """The smallest number of items at which the verdict is `pass` (or, with conclusive=True,
    pass or fail) with probability ≥ power, at these true rates; None when even `limit` items
    do not get there (the true change is at, or too close to, the margin). A normal
    approximation brackets the answer; exact sums settle it."""
    def ok(n: int) -> bool:
        pr = verdict_probabilities(n, p_lost, p_gained, margin, alpha)
        return (pr["pass"] + (pr["fail"] if conclusive else 0.0)) >= power

    delta = p_gained - p_lost
    gap = abs(delta + margin)
    if gap < 1e-12 or (not conclusive and delta <= -margin):
        return None
    z = _z(1 - alpha) + float(st.norm.ppf(power))
    guess = z * z * max(p_lost + p_gained - delta * delta, 1e-9) / (gap * gap)
    if guess > 4 * limit:
        return None
    hi = max(8, int(guess))
    while not ok(hi):
        if hi >= limit:
            return None
        hi = min(limit, hi * 2)
    lo = max(1, hi // 4) if hi > 8 else 1
    while lo > 1 and ok(lo):
        lo //= 2
    while lo < hi:  # the smallest n that works (probabilities of discrete tests wiggle a little)
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


# ----- the exact McNemar test: is there a change at all? ------------------------------------

def mcnemar_p(lost: int, gained: int, alternative: str = "two-sided") -> float:
    """Exact (conditional binomial) McNemar p-value; 'less' tests for a drop (more items lost
    than gained)."""
    d = lost + gained
    if d == 0:
        return 1.0
    if alternative == "less":
        return float(st.binom.sf(lost - 1, d, 0.5))
    return float(min(1.0, 2 * min(st.binom.cdf(lost, d, 0.5), st.binom.sf(lost - 1, d, 0.5))))


def mcnemar_power(n: int, p_lost: float, p_gained: float, alpha: float = 0.05,
                  alternative: str = "two-sided") -> float:
    """Exact power of the exact McNemar test to see a drop: the sum over the number d of
    discordant items of P(d) · P(the lost count reaches the test's critical value for d)."""
    pd = p_lost + p_gained
    if n <= 0 or pd <= 0:
        return 0.0
    lo, hi = (int(x) for x in st.binom.ppf([1e-14, 1 - 1e-14], n, pd))
    d = np.arange(max(lo, 1), max(hi, 1) + 1)
    # Reject when P(X ≥ lost | d, ½) < alpha/2 (two-sided; the drop side) or < alpha ('less'):
    # the smallest such lost count is one more than the binomial's inverse survival value.
    level = alpha / 2 if alternative == "two-sided" else alpha
    k = st.binom.isf(level, d, 0.5) + 1
    k = np.where(st.binom.sf(k - 1, d, 0.5) < level, k, k + 1)
    return float(np.sum(st.binom.pmf(d, n, pd) * st.binom.sf(k - 1, d, p_lost / pd)))


def min_detectable_drop(n: int, discordance: float, *, alpha: float = 0.05, power: float = 0.8,
                        baseline_accuracy: float = 1.0) -> float | None:
    """The smallest true drop Δ that the exact two-sided McNemar test sees with probability ≥
    power on n items, when items otherwise flip both ways at `discordance` in total (a drop of
    Δ adds Δ to the items lost). None when no drop up to the baseline's accuracy is seen."""
    if n <= 0:
        return None
    flip = discordance / 2

    def pw(delta: float) -> float:
        return mcnemar_power(n, flip + delta, flip, alpha)

    top = max(min(baseline_accuracy, 1 - discordance), 1e-6)
    hi = min(0.01, top)
    while pw(hi) < power:  # bracket from below: most drops worth reporting are small
        if hi >= top:
            return None
        hi = min(top, hi * 2)
    return float(optimize.brentq(lambda x: pw(x) - power, 1e-6, hi, xtol=1e-4))


def bh_adjust(pvalues: list[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (statsmodels), in the input's order."""
    if not pvalues:
        return []
    from statsmodels.stats.multitest import multipletests

    return [float(x) for x in multipletests(pvalues, method="fdr_bh")[1]]


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a proportion k/n (statsmodels)."""
    if n <= 0:
        return 0.0, 1.0
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return float(lo), float(hi)


def at_most(k: int, n: int, limit: float, alpha: float = 0.05) -> dict[str, Any]:
    """Is a rate (k of n) at most `limit`? pass: the Wilson interval's upper bound is at most
    the limit; fail: its lower bound is above it; inconclusive otherwise."""
    lo, hi = wilson_interval(k, n, 1 - alpha)
    verdict = "pass" if hi <= limit else "fail" if lo > limit else "inconclusive"
    out = {"verdict": verdict, "n": n, "count": k, "rate": round(k / n, 6) if n else None,
           "ci_low": round(lo, 6), "ci_high": round(hi, 6), "limit": limit}
    if verdict == "inconclusive" and n:
        rate = (k + 0.5) / (n + 1)
        out["items_needed"] = _wilson_items(rate, limit, alpha)
    return out


def _wilson_items(rate: float, limit: float, alpha: float) -> int | None:
    """About how many items put the Wilson interval of a rate clear of the limit (normal
    approximation of the score interval's half-width)."""
    gap = abs(rate - limit)
    if gap < 1e-9:
        return None
    z = _z(1 - alpha)
    return int(math.ceil(z * z * rate * (1 - rate) / (gap * gap))) + 1
