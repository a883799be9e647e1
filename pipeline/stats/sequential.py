"""Group-sequential verdicts: a variant's paired comparison looked at after each batch of items,
stopped as soon as it is settled, with the error rates of the fixed-sample verdict kept.

Looking at a fixed-sample test after every batch and stopping at the first significant look
inflates its error rates (Armitage, McPherson & Rowe 1969). The standard answer, used in clinical
non-inferiority trials for decades, is a boundary per look that spends the test's α over the
looks: Lan & DeMets' alpha-spending (Biometrika 1983;70:659–663). The spending function is the
design's choice (`Spending`): the O'Brien–Fleming type α*(t) = 2 − 2Φ(z_{1−α/2}/√t), t the share of
the planned items seen (the default: early looks need overwhelming evidence, the last one little
more than a fixed-sample test), Pocock's type α·ln(1 + (e − 1)t) (Lan & DeMets 1983: early stops
come cheaper, the last look is wider), or Hwang, Shih & DeCani's family α(1 − e^{−γt})/(1 − e^{−γ})
(Stat Med 1990;9:1439–1445: γ = −4 is close to O'Brien–Fleming, γ = 1 to Pocock). Looks may fall
anywhere (the boundaries follow the items actually seen). Each boundary comes from the
canonical joint distribution of the standardised statistics, Cov(Z_j, Z_k) = √(t_j/t_k)
(Jennison & Turnbull, Group Sequential Methods, 2000, ch. 2 and 7), integrated numerically
(scipy's multivariate normal).

The statistic is the one the fixed-sample verdict reads (pipeline.stats.noninferiority): Tango's
score statistic T at Δ0 = −margin, asymptotically N(0, 1) at the margin, a score statistic whose
increments are asymptotically independent — the canonical form. The two one-sided questions of
the three-valued verdict spend α/2 each, as the fixed-sample verdict's two one-sided tests
have α/2 each: `pass` once T ≥ c_k (non-inferior), `fail` once T ≤ −c_k (a loss beyond the
margin); past the last look, `inconclusive`. That the error rates hold at these counts is
checked by seeded simulation (tests/stats/test_sequential.py), not assumed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy import stats as st

from pipeline.stats.noninferiority import tango_statistic


def obrien_fleming_spent(t: float, alpha: float) -> float:
    """The one-sided α spent by information fraction `t` (O'Brien–Fleming type, Lan–DeMets):
    0 at t = 0, `alpha` at t = 1."""
    if t <= 0:
        return 0.0
    return float(2 * st.norm.sf(st.norm.isf(alpha / 2) / np.sqrt(min(t, 1.0))))


SPENDING_KINDS = ("obrien_fleming", "pocock", "hwang_shih_decani")


@dataclass(frozen=True)
class Spending:
    """An alpha-spending function: `obrien_fleming` (Lan–DeMets' O'Brien–Fleming type), `pocock`
    (Lan–DeMets' Pocock type) or `hwang_shih_decani` with its `gamma` (Hwang, Shih & DeCani 1990)."""

    kind: str = "obrien_fleming"
    gamma: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in SPENDING_KINDS:
            raise ValueError(f"unknown alpha-spending function {self.kind!r}: one of {', '.join(SPENDING_KINDS)}")
        if (self.kind == "hwang_shih_decani") != (self.gamma is not None):
            raise ValueError("gamma belongs to the hwang_shih_decani spending function, and it needs one")

    def spent(self, t: float, alpha: float) -> float:
        """The one-sided α spent by information fraction `t`: 0 at t = 0, `alpha` at t ≥ 1."""
        if t <= 0:
            return 0.0
        t = min(t, 1.0)
        if self.kind == "obrien_fleming":
            return obrien_fleming_spent(t, alpha)
        if self.kind == "pocock":
            return alpha * math.log1p((math.e - 1) * t)
        g = float(self.gamma)
        return alpha * t if abs(g) < 1e-9 else alpha * math.expm1(-g * t) / math.expm1(-g)

    @property
    def label(self) -> str:
        if self.kind == "hwang_shih_decani":
            return f"Hwang–Shih–DeCani, γ = {self.gamma:g}"
        return {"obrien_fleming": "O'Brien–Fleming type", "pocock": "Pocock type"}[self.kind]


OBRIEN_FLEMING = Spending()


def boundaries(fractions: Sequence[float], alpha: float, spending: Spending = OBRIEN_FLEMING) -> list[float]:
    """The critical values c_1…c_K for looks at the increasing information fractions `fractions`
    (the last normally 1), each spending its increment of the one-sided `alpha`."""
    return list(_boundaries(tuple(round(float(t), 12) for t in fractions), float(alpha), spending))


@functools.lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float, spending: Spending) -> tuple[float, ...]:
    if any(b <= a for a, b in zip(fractions, fractions[1:])) or not 0 < fractions[0] <= 1:
        raise ValueError(f"information fractions must increase within (0, 1]: {fractions}")
    t = np.array(fractions)
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    found: list[float] = []
    spent_before = 0.0
    stay = 1.0  # P(no boundary crossed at the looks so far), under H0
    for k, tk in enumerate(t):
        increment = spending.spent(tk, alpha) - spent_before
        if k == 0:
            c = float(st.norm.isf(increment))
        else:
            mvn = st.multivariate_normal(mean=np.zeros(k + 1), cov=cov[:k + 1, :k + 1])
            c = (optimize.brentq(_first_crossing, 0.0, 10.0, args=(mvn, found, stay, increment), xtol=1e-6)
                 if increment > 1e-12 else 10.0)
        found.append(c)
        stay = float(st.norm.cdf(c)) if k == 0 else float(
            st.multivariate_normal(mean=np.zeros(k + 1), cov=cov[:k + 1, :k + 1]).cdf(np.array(found)))
        spent_before = spending.spent(tk, alpha)
    return tuple(found)


def _first_crossing(c: float, mvn, found: list[float], stay: float, increment: float) -> float:
    """P(the first crossing is at this look, its boundary at `c`) − the α it may spend: the
    probability of staying through the looks before, less that of staying through this one."""
    return stay - float(mvn.cdf(np.array([*found, c]))) - increment


def look_sizes(total: int, look: int) -> list[int]:
    """The cumulative item counts at which a set of `total` items served `look` at a time is
    looked at: look, 2·look, …, and the whole set last (a remainder under half a look joins the
    last look rather than making a look of its own).

    >>> look_sizes(1501, 250)
    [250, 500, 750, 1000, 1250, 1501]
    """
    if look < 1 or total < 1:
        raise ValueError(f"a look needs at least one item and the set at least one: look {look}, total {total}")
    sizes = list(range(look, total, look))
    if sizes and total - sizes[-1] < look / 2:
        sizes.pop()
    return sizes + [total]


def repeated_alpha(looks: Sequence[int], total: int, alpha: float, spending: Spending = OBRIEN_FLEMING) -> float:
    """The two-sided nominal level of the repeated confidence interval at the last of `looks`
    (cumulative item counts out of `total`): 2·(1 − Φ(c_k)), c_k the boundary that spends α/2 a
    side over these looks (`spending`: O'Brien–Fleming type unless the design says otherwise).
    Intervals at this level, taken at every look, cover the truth all at once with probability ≥ 1 −
    α, so a verdict read from them at whatever look a variant stops keeps its error rates, whichever
    rule decided to stop (Jennison & Turnbull, "Interim analyses: the repeated confidence interval
    approach", JRSS B 51:305–361, 1989). At a single look at the whole set it is `alpha` itself,
    the fixed-sample level."""
    crit = boundaries([n / total for n in looks], alpha / 2, spending)[-1]
    return float(2 * st.norm.sf(crit))


def settle_chances(estimate: float, ci: tuple[float, float], level: float, final_level: float, seen: float, *,
                   margin: float | None = None, band: tuple[float, float] | None = None) -> tuple[float, float]:
    """(P(pass), P(fail)) of one criterion at the design's last look, given its estimate and
    interval `ci` at two-sided `level` now, after the share `seen` of the items: predictive power
    (Spiegelhalter, Freedman & Blackburn, Control Clin Trials 1986;7:8–17; Jennison & Turnbull 2000,
    §10.3) — the chance under the present evidence, its uncertainty included, not only under the
    estimate taken as the truth, which early on is far too sure of a noisy estimate. Normal
    approximation: with se the present standard error (read off the interval's width) and a flat
    prior, the final estimate is N(estimate, se²·(1 − seen)), and its interval at `final_level` has
    half-width z·se·√seen. `margin`: a non-inferiority criterion on a change (pass when the lower
    bound is above −margin, fail when the upper bound is below it); `band`: a ratio that passes
    inside [a, b] and fails outside it."""
    lo, hi = ci
    z_now, z_end = st.norm.isf(level / 2), st.norm.isf(final_level / 2)
    se = (hi - lo) / (2 * z_now)
    if not 0 < seen < 1 or se <= 0:
        return 0.0, 0.0
    spread, half = se * math.sqrt(1 - seen), z_end * se * math.sqrt(seen)
    above = lambda x: float(st.norm.sf((x - estimate) / spread))  # noqa: E731  P(final estimate > x)
    if margin is not None:
        return above(-margin + half), 1 - above(-margin - half)
    a, b = band
    inside = max(0.0, (1 - above(b - half)) - (1 - above(a + half))) if b - half > a + half else 0.0
    return inside, (1 - above(a - half)) + above(b + half)


def sequential_verdict(looks: Sequence[tuple[int, int, int]], total: int, margin: float,
                       alpha: float = 0.05, spending: Spending = OBRIEN_FLEMING) -> dict[str, Any]:
    """The verdict after cumulative looks (n, lost, gained) out of `total` planned items: `pass`
    or `fail` at the first look whose boundary T crosses, with the look and the items it used;
    `inconclusive` when none does (by the last look, the whole set, it stays so)."""
    fractions = [n / total for n, _, _ in looks]
    crit = boundaries(fractions, alpha / 2, spending)
    for k, ((n, lost, gained), c) in enumerate(zip(looks, crit)):
        t = float(tango_statistic(lost, gained, n, -margin))
        if t >= c or t <= -c:
            return {"verdict": "pass" if t >= c else "fail", "look": k + 1, "n": n, "statistic": t,
                    "boundary": c, "fraction": fractions[k]}
    n, _, _ = looks[-1]
    return {"verdict": "inconclusive", "look": len(looks), "n": n, "statistic": t, "boundary": crit[-1],
            "fraction": fractions[-1]}


def simulate(p_lost: float, p_gained: float, total: int, look_every: int, margin: float, *,
             alpha: float = 0.05, reps: int = 2000, seed: int = 0,
             spending: Spending = OBRIEN_FLEMING) -> dict[str, float]:
    """Seeded simulation of `sequential_verdict` for items that are lost with probability
    `p_lost` and gained with `p_gained`: the share of each verdict and the mean items used."""
    rng = np.random.default_rng(seed)
    ns = list(range(look_every, total, look_every)) + [total]
    crit = np.array(boundaries([n / total for n in ns], alpha / 2, spending))
    sizes = np.diff([0, *ns])
    draws = np.stack([rng.multinomial(s, [p_lost, p_gained, 1 - p_lost - p_gained], size=reps) for s in sizes])
    lost, gained = np.cumsum(draws[..., 0], axis=0), np.cumsum(draws[..., 1], axis=0)  # looks × reps
    t = tango_statistic(lost, gained, np.array(ns)[:, None], -margin)
    crossed = (t >= crit[:, None]) | (t <= -crit[:, None])
    first = np.where(crossed.any(axis=0), crossed.argmax(axis=0), len(ns) - 1)
    t_stop = t[first, np.arange(reps)]
    settled = crossed.any(axis=0)
    verdict_pass = settled & (t_stop >= crit[first])
    verdict_fail = settled & (t_stop <= -crit[first])
    return {"pass": float(verdict_pass.mean()), "fail": float(verdict_fail.mean()),
            "inconclusive": float((~settled).mean()), "mean_items": float(np.array(ns)[first].mean())}
