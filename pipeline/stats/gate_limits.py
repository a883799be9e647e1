"""Limits for distribution-level signals, derived from the user's own model and evaluation set.

A distribution signal (mean token KL divergence from the reference, the share of items whose task
result changed) sees far smaller changes than pass/fail accuracy, but its scale belongs to the
model: the same quantization error gives a KL of 4e-6 on one model and 1e-3 on another. A fixed
KL constant therefore fails good variants of a sensitive model and passes bad ones of a robust
model. This module turns a business margin (δ points of accuracy) into a signal limit for *this*
model from a ladder of controlled perturbations of its own weights (the `gate_calibration` stage):
at each step k the same items give an accuracy drop D_k and a signal value X_k, paired against the
unperturbed model.

- **Fit**: D as a non-decreasing function of X (isotonic regression through the origin, linear
  between the steps); the limit X*(δ) is where the fit first reaches δ — interpolated between two
  measured steps, never extrapolated beyond the last one.
- **Uncertainty**: the items are resampled (paired: the same draw for every step) and the whole fit
  redone; the (α/2, 1 − α/2) quantiles of X* are the limit's interval. A replicate whose curve never
  reaches δ has X* = ∞ (that side of the interval is open).
- **Gating or diagnostic**: the signal gates only when the limit is pinned (finite lower quantile)
  AND the ladder shows a significant accuracy loss at the first step past the limit (a one-sided
  exact McNemar test at α): otherwise KL does not tell business loss near the margin on these
  items, and the signal is reported as a diagnostic, saying why ("Accuracy is Not All You Need",
  arXiv 2407.09141, and arXiv 2606.19558 on KL near the baseline).
- **Verdict** of a variant with signal interval [lo, hi] against a limit interval [L_lo, L_hi]:
  pass when hi < L_lo, fail when lo > L_hi, inconclusive otherwise — so neither the signal's nor
  the limit's uncertainty is ever read as a point.

    >>> import numpy as np
    >>> base = np.ones(200, bool)
    >>> steps = [{"correct": np.arange(200) >= k, "signal": np.full(200, k / 1000)} for k in (2, 6, 20)]
    >>> fit = derive_limit(base, steps, margin=0.03, alpha=0.05, n_boot=200)
    >>> round(fit["limit"], 4), fit["status"]
    (0.006, 'gating')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.stats.noninferiority import mcnemar_p


def isotonic_curve(x: Sequence[float], d: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Points (0, 0), (x_k, d_k) sorted by x, with d made non-decreasing by pool-adjacent-violators
    (the drop cannot shrink as the signal grows: what does is noise)."""
    from scipy.optimize import isotonic_regression

    order = np.argsort(np.asarray(x, float), kind="stable")
    xs = np.concatenate([[0.0], np.asarray(x, float)[order]])
    ds = np.concatenate([[0.0], np.asarray(d, float)[order]])
    fitted = isotonic_regression(ds, increasing=True).x
    return xs, np.maximum(fitted, 0.0)


def invert(xs: np.ndarray, ds: np.ndarray, margin: float) -> float:
    """The smallest signal value at which the piecewise-linear curve reaches `margin` (∞ if it
    never does within the measured steps)."""
    hit = np.nonzero(ds >= margin)[0]
    if hit.size == 0:
        return math.inf
    j = int(hit[0])
    if j == 0:
        return 0.0
    x0, x1, d0, d1 = xs[j - 1], xs[j], ds[j - 1], ds[j]
    return float(x0 + (x1 - x0) * (margin - d0) / (d1 - d0)) if d1 > d0 else float(x1)


def _curve_stats(base: np.ndarray, steps: list[dict], idx: np.ndarray) -> tuple[list[float], list[float]]:
    b = base[idx].mean()
    drops = [float(b - s["correct"][idx].mean()) for s in steps]
    signals = [float(s["signal"][idx].mean()) for s in steps]
    return signals, drops


def derive_limit(base_correct: Sequence[bool], steps: list[dict[str, Any]], *, margin: float,
                 alpha: float = 0.05, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The signal limit for an accuracy margin (see the module docstring). `base_correct`: the
    unperturbed model's per-item results; each step: `correct` (per item, the same items) and
    `signal` (per-item signal values whose mean is the signal)."""
    base = np.asarray(base_correct, bool)
    steps = [{"correct": np.asarray(s["correct"], bool), "signal": np.asarray(s["signal"], float)}
             for s in steps]
    n = base.size
    all_idx = np.arange(n)
    x, d = _curve_stats(base, steps, all_idx)
    xs, ds = isotonic_curve(x, d)
    point = invert(xs, ds, margin)
    rng = np.random.default_rng(seed)
    reps = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        reps[b] = invert(*isotonic_curve(*_curve_stats(base, steps, idx)), margin)
    lo = float(np.quantile(reps, alpha / 2, method="lower"))
    hi = float(np.quantile(reps, 1 - alpha / 2, method="higher"))
    out: dict[str, Any] = {
        "margin": margin, "limit": _finite(point), "limit_ci": [_finite(lo), _finite(hi)],
        "alpha": alpha, "n": n, "replicates": n_boot,
        "replicates_reaching_margin": int(np.isfinite(reps).sum()),
        "curve": [{"signal": round(float(a), 8), "drop": round(float(c), 6)} for a, c in zip(x, d)]}
    past = _first_step_past(base, steps, x, point)
    if math.isinf(point):
        out |= {"status": "diagnostic", "why": f"the perturbation ladder never lost {_pts(margin)} "
                f"points on these {n} items (largest drop {_pts(max(d, default=0.0))}): the limit "
                "cannot be pinned — add steps (gate_calibration.max_steps) or items"}
    elif not np.isfinite(lo) or lo <= 0.0:
        out |= {"status": "diagnostic", "why": f"the limit's {100 * (1 - alpha):.0f}% interval "
                f"reaches {'∞' if not np.isfinite(lo) else 0} — the items do not pin it down"}
    elif past is not None and past["p_drop"] >= alpha:
        out |= {"status": "diagnostic", "why": f"at the first step past the limit (signal "
                f"{past['signal']:.3g}) the accuracy drop {_pts(past['drop'])} pts is not "
                f"significant (one-sided exact McNemar p={past['p_drop']:.2g}): near the margin "
                "the signal does not tell business loss on these items"}
    else:
        out["status"] = "gating"
    out["first_step_past_limit"] = past
    return out


def _first_step_past(base: np.ndarray, steps: list[dict], x: list[float],
                     limit: float) -> dict[str, Any] | None:
    """The measured step with the smallest signal at or beyond the limit, with its paired drop
    and the one-sided exact McNemar p-value of that drop."""
    if math.isinf(limit):
        return None
    beyond = [k for k in range(len(steps)) if x[k] >= limit]
    if not beyond:
        return None
    k = min(beyond, key=lambda j: x[j])
    lost = int((base & ~steps[k]["correct"]).sum())
    gained = int((~base & steps[k]["correct"]).sum())
    return {"step": k, "signal": round(x[k], 8), "drop": round((lost - gained) / base.size, 6),
            "lost": lost, "gained": gained, "p_drop": mcnemar_p(lost, gained, "less")}


def _finite(v: float) -> float | None:
    return None if not math.isfinite(v) else round(float(v), 8)


def _pts(x: float) -> str:
    return f"{100 * x:.1f}"


def judge(signal_ci: Sequence[float], limit: dict[str, Any]) -> str:
    """pass / fail / inconclusive of a signal interval against a derived limit's interval (the
    limit must be gating: `limit["status"] == "gating"`)."""
    lo, hi = signal_ci
    l_lo, l_hi = limit["limit_ci"]
    if hi < l_lo:
        return "pass"
    if l_hi is not None and lo > l_hi:
        return "fail"
    return "inconclusive"
