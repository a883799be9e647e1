"""Non-inferiority statistics, checked by seeded simulation and by exhaustive enumeration on small
cases — not only by examples."""

import itertools

import numpy as np
import pytest
from scipy import stats as st
from statsmodels.stats.contingency_tables import mcnemar

from pipeline.stats import noninferiority as ni

Z = st.norm.ppf(0.975)


def draw(rng, n, p_lost, p_gained, size):
    """`size` simulated paired evaluations of n items: (lost, gained) counts."""
    counts = rng.multinomial(n, [p_lost, p_gained, 1 - p_lost - p_gained], size=size)
    return counts[:, 0], counts[:, 1]


@pytest.mark.parametrize("n", [60, 602])
@pytest.mark.parametrize("discordance", [0.0, 0.005, 0.01, 0.02, 0.05, 0.10])
@pytest.mark.parametrize("true_delta", [0.0, -0.02])
def test_the_95_interval_covers_the_true_change_at_least_94_percent(n, discordance, true_delta):
    """Coverage by seeded simulation over disagreement rates 0–10%, at the demo's old size and at
    n ≈ 60: the true change lies inside the interval ≥ 94% of the time. The interval is the set
    of changes the score test does not reject, so coverage is |T(true change)| ≤ z; a sample of
    draws is also checked against the interval itself."""
    rng = np.random.default_rng(abs(hash((n, discordance, true_delta))) % 2**32)
    p_gained = discordance / 2
    p_lost = p_gained - true_delta
    lost, gained = draw(rng, n, p_lost, p_gained, 4000)
    t = ni.tango_statistic(lost, gained, n, true_delta)
    covered = np.abs(t) <= Z
    assert covered.mean() >= 0.94, (n, discordance, true_delta, covered.mean())
    for i in range(0, 4000, 400):
        lo, hi = ni.tango_interval(int(lost[i]), int(gained[i]), n)
        assert (lo - 1e-7 <= true_delta <= hi + 1e-7) == bool(covered[i])


def test_no_disagreement_is_not_no_uncertainty():
    lo, hi = ni.tango_interval(0, 0, 60)
    assert lo == pytest.approx(-Z**2 / (60 + Z**2), abs=1e-6) and hi == pytest.approx(-lo)
    lo3, _ = ni.tango_interval(3, 0, 60)  # three lost, none gained: a loss of 5% is plausible
    assert lo3 < -0.05 < 0


def test_the_score_statistic_at_zero_is_mcnemars():
    for lost, gained in [(5, 1), (0, 4), (12, 9)]:
        t = float(ni.tango_statistic(lost, gained, 200, 0.0))
        assert t == pytest.approx((gained - lost) / np.sqrt(lost + gained))


def test_the_interval_is_the_set_the_test_does_not_reject():
    for lost, gained, n in [(3, 1, 90), (0, 0, 602), (20, 4, 150), (1, 9, 60)]:
        lo, hi = ni.tango_interval(lost, gained, n)
        assert float(ni.tango_statistic(lost, gained, n, lo)) == pytest.approx(Z, abs=1e-5)
        assert float(ni.tango_statistic(lost, gained, n, hi)) == pytest.approx(-Z, abs=1e-5)
        assert lo < (gained - lost) / n < hi


@pytest.mark.parametrize("lost,gained,n,margin", [(3, 1, 90, 0.05), (2, 2, 602, 0.03), (14, 2, 95, 0.05),
                                                   (30, 0, 100, 0.05), (0, 0, 50, 0.05), (0, 0, 80, 0.05)])
def test_three_valued_verdict_agrees_with_the_interval(lost, gained, n, margin):
    r = ni.noninferiority(lost, gained, n, margin)
    expected = ("pass" if r["ci_low"] > -margin else "fail" if r["ci_high"] < -margin
                else "inconclusive")
    assert r["verdict"] == expected
    assert ("items_needed" in r) == (expected == "inconclusive")


def test_verdicts_in_each_direction():
    assert ni.noninferiority(2, 2, 1500, 0.03)["verdict"] == "pass"
    assert ni.noninferiority(150, 5, 1500, 0.03)["verdict"] == "fail"  # −9.7 pts, clearly beyond
    r = ni.noninferiority(3, 1, 63, 0.05)
    assert r["verdict"] == "inconclusive" and r["items_needed"] > 63


def test_exact_verdict_probabilities_match_simulation():
    rng = np.random.default_rng(7)
    n, pl, pg, margin = 95, 0.03, 0.01, 0.05
    exact = ni.verdict_probabilities(n, pl, pg, margin)
    lost, gained = draw(rng, n, pl, pg, 20000)
    t = ni.tango_statistic(lost, gained, n, -margin)
    sim = {"pass": np.mean(t > Z), "fail": np.mean(t < -Z)}
    for k in ("pass", "fail"):
        assert exact[k] == pytest.approx(sim[k], abs=0.01)
    assert sum(exact.values()) == pytest.approx(1.0)


def test_items_needed_is_the_smallest_size_that_reaches_the_power():
    need = ni.items_needed(0.005, 0.005, 0.05, power=0.95)
    assert ni.verdict_probabilities(need, 0.005, 0.005, 0.05)["pass"] >= 0.95
    assert ni.verdict_probabilities(need - 1, 0.005, 0.005, 0.05)["pass"] < 0.95
    assert ni.items_needed(0.03, 0.0, 0.03, power=0.8) is None or \
        ni.items_needed(0.03, 0.0, 0.03, power=0.8) > 100_000  # a true change AT the margin


@pytest.mark.parametrize("n", [12, 20, 30])
@pytest.mark.parametrize("pl,pg", [(0.2, 0.05), (0.1, 0.1), (0.3, 0.0)])
def test_exact_mcnemar_power_equals_brute_force_enumeration(n, pl, pg):
    """Every (lost, gained) outcome, judged by statsmodels' exact McNemar and weighted by its
    trinomial probability."""
    brute = 0.0
    for lost, gained in itertools.product(range(n + 1), repeat=2):
        if lost + gained > n:
            continue
        prob = st.multinomial.pmf([lost, gained, n - lost - gained], n, [pl, pg, 1 - pl - pg])
        if lost + gained == 0:
            continue
        p = mcnemar([[0, lost], [gained, 0]], exact=True).pvalue
        if p < 0.05 and lost > gained:
            brute += prob
    assert ni.mcnemar_power(n, pl, pg) == pytest.approx(brute, abs=1e-9)


def test_min_detectable_drop_is_where_power_crosses():
    mdd = ni.min_detectable_drop(150, 0.02, power=0.8)
    assert ni.mcnemar_power(150, 0.01 + mdd, 0.01) == pytest.approx(0.8, abs=0.01)
    assert ni.min_detectable_drop(1500, 0.02) < mdd  # more items see smaller drops
    assert ni.min_detectable_drop(3, 0.02) is None  # nothing is seen on 3 items


def test_benjamini_hochberg_matches_the_textbook_procedure():
    p = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216]
    adj = ni.bh_adjust(p)
    m = len(p)
    ranked = sorted(range(m), key=lambda i: p[i])
    expect = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):  # step-up: min over j >= rank of p_(j) m / j
        i = ranked[rank - 1]
        running = min(running, p[i] * m / rank)
        expect[i] = running
    assert adj == pytest.approx(expect)
    assert [a < 0.05 for a in adj] == [True, True, False, False, False, False, False, False, False, False]


def test_rate_at_most_a_limit_is_three_valued():
    assert ni.at_most(5, 1500, 0.05)["verdict"] == "pass"
    assert ni.at_most(200, 1500, 0.05)["verdict"] == "fail"
    r = ni.at_most(4, 60, 0.05)
    assert r["verdict"] == "inconclusive" and r["items_needed"] > 60
