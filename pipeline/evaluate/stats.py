"""Paired statistics of a variant against the baseline, sample by sample (seed 000 §6.2).

- exact McNemar test on per-sample pass/fail (statsmodels);
- paired bootstrap confidence interval of the accuracy delta (scipy.stats.bootstrap, paired);
- Mann-Whitney U on latency distributions (scipy);
- power: can a slice of this size detect a drop of `min_effect` at all? (Connor's
  approximation for paired proportions, with the observed discordance).

    >>> r = paired_accuracy([1, 1, 0, 1] * 50, [1, 0, 0, 1] * 50, seed=0)
    >>> r["delta"], r["significant"]
    (-0.25, True)
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from scipy import stats as st


def mcnemar_exact(base: Sequence[float], other: Sequence[float]) -> dict[str, Any]:
    from statsmodels.stats.contingency_tables import mcnemar

    b = np.asarray(base) >= 1.0
    o = np.asarray(other) >= 1.0
    lost, gained = int(np.sum(b & ~o)), int(np.sum(~b & o))
    table = [[int(np.sum(b & o)), lost], [gained, int(np.sum(~b & ~o))]]
    p = 1.0 if lost + gained == 0 else float(mcnemar(table, exact=True).pvalue)
    return {"lost": lost, "gained": gained, "p_value": float(f"{p:.6g}")}


def bootstrap_delta(base: Sequence[float], other: Sequence[float], *, n: int = 2000,
                    confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    b, o = np.asarray(base, float), np.asarray(other, float)
    if len(b) < 2 or np.all(b == o):
        d = float(np.mean(o - b)) if len(b) else 0.0
        return d, d  # no variation to resample: the interval is the point
    res = st.bootstrap((b, o), lambda x, y, axis=-1: np.mean(y - x, axis=axis), paired=True,
                       n_resamples=n, confidence_level=confidence, method="percentile",
                       vectorized=True, random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def power_paired(n: int, effect: float, discordance: float, alpha: float = 0.05) -> float:
    """Approximate power of a two-sided paired test of proportions to detect `effect` with
    `n` pairs, where `discordance` is the share of pairs that disagree (Connor 1987)."""
    pd = max(discordance, effect, 1e-9)
    if n <= 0 or pd <= effect ** 2:
        return 0.0 if n <= 0 else 1.0
    z_a = st.norm.ppf(1 - alpha / 2)
    z = (effect * math.sqrt(n) - z_a * math.sqrt(pd)) / math.sqrt(pd - effect ** 2)
    return float(st.norm.cdf(z))


def paired_accuracy(base: Sequence[float], other: Sequence[float], *, alpha: float = 0.05,
                    n_boot: int = 2000, min_effect: float = 0.05, power: float = 0.8,
                    seed: int = 0) -> dict[str, Any]:
    b, o = np.asarray(base, float), np.asarray(other, float)
    lo, hi = bootstrap_delta(b, o, n=n_boot, confidence=1 - alpha, seed=seed)
    mc = mcnemar_exact(b, o)
    n = len(b)
    # The discordance a drop of min_effect implies at least; the observed one when larger.
    disc = max((mc["lost"] + mc["gained"]) / n if n else 0.0, min_effect)
    pw = power_paired(n, min_effect, disc, alpha)
    return {"n": n, "base": round(float(b.mean()), 4) if n else None,
            "variant": round(float(o.mean()), 4) if n else None,
            "delta": round(float((o - b).mean()), 4) if n else None,
            "ci_low": round(lo, 4), "ci_high": round(hi, 4), **mc,
            "significant": bool(mc["p_value"] < alpha and (hi < 0 or lo > 0)),
            "power": round(pw, 3),
            "underpowered": pw < power}


def latency_test(base: Sequence[float], other: Sequence[float]) -> dict[str, Any]:
    if len(base) < 2 or len(other) < 2:
        return {"n_base": len(base), "n_variant": len(other), "p_value": None}
    r = st.mannwhitneyu(other, base, alternative="two-sided")
    return {"n_base": len(base), "n_variant": len(other),
            "median_ratio": round(float(np.median(other) / max(np.median(base), 1e-12)), 4),
            "u": float(r.statistic), "p_value": float(f"{r.pvalue:.6g}")}
