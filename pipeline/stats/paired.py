"""Paired statistics of a variant against the baseline, sample by sample (docs/rationale.md#paired).

- Tango's score interval for the change in pass/fail accuracy and exact McNemar tests
  (pipeline.stats.noninferiority);
- the smallest drop the exact McNemar test would see on this many items (exact power);
- paired bootstrap only for continuous metrics;
- Mann-Whitney U on latency distributions (scipy).

    >>> r = paired_accuracy([1, 1, 0, 1] * 50, [1, 0, 0, 1] * 50)
    >>> r["delta"], r["significant"]
    (-0.25, True)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy import stats as st

from pipeline.stats import noninferiority as ni


def paired_counts(base: Sequence[float], other: Sequence[float]) -> tuple[int, int, int]:
    """(n, lost, gained): items passed by the baseline only, and by the other run only."""
    b = np.asarray(base) >= 1.0
    o = np.asarray(other) >= 1.0
    return len(b), int(np.sum(b & ~o)), int(np.sum(~b & o))


def bootstrap_delta(base: Sequence[float], other: Sequence[float], *, n: int = 2000,
                    confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Paired bootstrap (BCa) interval of the mean change of a CONTINUOUS per-item metric; pass/fail
    scores use Tango's score interval instead (`paired_accuracy`), which keeps its coverage when
    few items disagree."""
    b, o = np.asarray(base, float), np.asarray(other, float)
    if len(b) < 2 or np.all(b == o):
        d = float(np.mean(o - b)) if len(b) else 0.0
        return d, d
    res = st.bootstrap((b, o), lambda x, y, axis=-1: np.mean(y - x, axis=axis), paired=True,
                       n_resamples=n, confidence_level=confidence, method="BCa",
                       vectorized=True, random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def paired_accuracy(base: Sequence[float], other: Sequence[float], *, alpha: float = 0.05,
                    min_effect: float = 0.05, power: float | None = 0.8, **_: Any) -> dict[str, Any]:
    """The paired change of pass/fail accuracy, other − base: Tango's score interval, exact
    McNemar p-values (two-sided, and one-sided for a drop), and the smallest drop an exact
    McNemar test on this many items would see with probability `power` at the observed rate of
    disagreement (`underpowered` when that is more than `min_effect`, or none is; not computed
    with power=None)."""
    b, o = np.asarray(base, float), np.asarray(other, float)
    n, lost, gained = paired_counts(b, o)
    lo, hi = ni.tango_interval(lost, gained, n, 1 - alpha)
    disc = (lost + gained + 1) / (n + 2)  # shrunk: no observed disagreement is not "none ever"
    mdd = None if power is None else ni.min_detectable_drop(
        n, disc, alpha=alpha, power=power, baseline_accuracy=float(b.mean()) if n else 1.0)
    p = ni.mcnemar_p(lost, gained)
    return {"n": n, "base": round(float(b.mean()), 4) if n else None,
            "variant": round(float(o.mean()), 4) if n else None,
            "delta": round(float((o - b).mean()), 4) if n else None,
            "ci_low": round(lo, 4), "ci_high": round(hi, 4), "interval": "tango",
            "lost": lost, "gained": gained, "p_value": float(f"{p:.6g}"),
            "p_drop": float(f"{ni.mcnemar_p(lost, gained, 'less'):.6g}"),
            "significant": bool(p < alpha),
            "min_detectable_drop": None if mdd is None else round(mdd, 4),
            "underpowered": None if power is None else (mdd is None or mdd > min_effect)}


def latency_test(base: Sequence[float], other: Sequence[float]) -> dict[str, Any]:
    if len(base) < 2 or len(other) < 2:
        return {"n_base": len(base), "n_variant": len(other), "p_value": None}
    r = st.mannwhitneyu(other, base, alternative="two-sided")
    return {"n_base": len(base), "n_variant": len(other),
            "median_ratio": round(float(np.median(other) / max(np.median(base), 1e-12)), 4),
            "u": float(r.statistic), "p_value": float(f"{r.pvalue:.6g}")}


def hodges_lehmann_interval(x: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The Hodges–Lehmann estimate of a paired shift (the median of the Walsh averages) and the
    distribution-free interval that inverts the Wilcoxon signed-rank test (normal approximation
    of the signed-rank statistic's quantile, exact order statistics of the Walsh averages)."""
    from scipy import stats as st

    a = np.asarray(x, float)
    n = len(a)
    walsh = np.sort((a[:, None] + a[None, :])[np.triu_indices(n)] / 2)
    m = len(walsh)
    z = st.norm.ppf(0.5 + confidence / 2)
    k = int(np.floor(m / 2 - z * np.sqrt(n * (n + 1) * (2 * n + 1) / 24)))
    k = min(max(k, 0), (m - 1) // 2)
    return float(np.median(walsh)), float(walsh[k]), float(walsh[m - 1 - k])


def paired_latency(log_ratios: list[float], confidence: float = 0.95) -> dict[str, Any]:
    """Wilcoxon signed-rank test of per-request log latency ratios against the bracketing
    baseline runs (paired by request), with the median ratio, the Hodges–Lehmann latency ratio
    and its interval, and the speed-up interval it implies (1 / latency ratio: the gain gate
    reads this, not a point estimate)."""
    from scipy import stats as st

    n = len(log_ratios)
    if n < 6 or not any(log_ratios):
        return {"n": n, "median_ratio": round(float(np.exp(np.median(log_ratios))), 4) if n else None,
                "p_value": None, "speedup_ci": None}
    r = st.wilcoxon(log_ratios)
    hl, lo, hi = hodges_lehmann_interval(log_ratios, confidence)
    return {"n": n, "median_ratio": round(float(np.exp(np.median(log_ratios))), 4),
            "test": "wilcoxon signed-rank on per-request log ratios", "p_value": float(f"{r.pvalue:.6g}"),
            "ratio_hl": round(float(np.exp(hl)), 4),
            "ratio_ci": [round(float(np.exp(lo)), 4), round(float(np.exp(hi)), 4)],
            "speedup": round(float(np.exp(-hl)), 4),
            "speedup_ci": [round(float(np.exp(-hi)), 4), round(float(np.exp(-lo)), 4)],
            "confidence": confidence}
