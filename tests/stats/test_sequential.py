"""Group-sequential verdicts: the boundaries against published values, and the error rates, the
power and the saving by seeded simulation against the fixed-sample verdict."""

import numpy as np
import pytest

from pipeline.stats.noninferiority import noninferiority, verdict_probabilities
from pipeline.stats.sequential import (Spending, boundaries, obrien_fleming_spent, sequential_verdict, settle_chances,
                                       simulate)

MARGIN = 0.03


def test_boundaries_are_the_published_obrien_fleming_type_ones():
    # five equally spaced looks, one-sided α = 0.025, Lan–DeMets O'Brien–Fleming-type spending
    # (Jennison & Turnbull 2000, the values every group-sequential package reproduces)
    assert [round(c, 2) for c in boundaries([0.2, 0.4, 0.6, 0.8, 1.0], 0.025)] == [4.88, 3.36, 2.68, 2.29, 2.03]
    # one look at the whole set is the fixed-sample test
    assert boundaries([1.0], 0.025)[0] == pytest.approx(1.959964, abs=1e-5)
    assert obrien_fleming_spent(0.0, 0.025) == 0 and obrien_fleming_spent(1.0, 0.025) == pytest.approx(0.025)
    with pytest.raises(ValueError, match="increase"):
        boundaries([0.5, 0.4, 1.0], 0.025)


@pytest.mark.parametrize("p_lost,p_gained", [(0.05, 0.02), (0.08, 0.05), (0.035, 0.005)],
                         ids=["margin-busy", "margin-busier", "margin-quiet"])
def test_a_variant_at_the_margin_passes_and_fails_at_most_alpha_over_two(p_lost, p_gained):
    got = simulate(p_lost, p_gained, 1500, 250, MARGIN, reps=4000, seed=11)
    # 2.5% each, with the simulation's own error (4,000 runs: ±0.5 points at 2 sd)
    assert got["pass"] <= 0.03 and got["fail"] <= 0.03


def test_a_null_variant_passes_as_often_as_at_a_fixed_sample_and_stops_early():
    seq = simulate(0.01, 0.01, 1500, 250, MARGIN, reps=4000, seed=12)
    fixed = verdict_probabilities(1500, 0.01, 0.01, MARGIN, 0.05)
    assert seq["pass"] >= 0.95 and seq["pass"] >= fixed["pass"] - 0.01
    assert seq["mean_items"] <= 0.6 * 1500  # settled on well under the whole set


def test_a_five_point_loss_fails_about_as_often_as_at_a_fixed_sample():
    seq = simulate(0.07, 0.02, 1500, 250, MARGIN, reps=4000, seed=13)
    fixed = verdict_probabilities(1500, 0.07, 0.02, MARGIN, 0.05)
    assert seq["pass"] == 0 and seq["fail"] >= fixed["fail"] - 0.04


def test_the_verdict_stops_at_the_first_look_that_crosses():
    # the same counts at every look: the statistic grows with n and crosses a later boundary
    looks = [(n, n // 100, n // 100) for n in (300, 600, 900, 1200, 1500)]
    got = sequential_verdict(looks, 1500, MARGIN)
    assert got["verdict"] == "pass" and 1 < got["look"] < 5 and got["n"] < 1500
    assert got["statistic"] >= got["boundary"]
    # a single look at the whole set is the fixed-sample verdict
    for lost, gained in ((30, 28), (80, 20), (45, 10)):
        assert sequential_verdict([(1500, lost, gained)], 1500, MARGIN)["verdict"] == \
            noninferiority(lost, gained, 1500, MARGIN, power=None)["verdict"]
    # nothing crosses: inconclusive at the last look
    assert sequential_verdict([(200, 5, 1), (400, 12, 4)], 1500, MARGIN)["verdict"] == "inconclusive"


@pytest.mark.parametrize("spending,published", [
    # five equally spaced looks, one-sided α = 0.025 (the values gsDesign and rpact print)
    (Spending("pocock"), [2.438, 2.427, 2.410, 2.396, 2.386]),
    (Spending("hwang_shih_decani", -4.0), [3.253, 2.986, 2.692, 2.374, 2.025]),
])
def test_other_spending_functions_give_their_published_boundaries(spending, published):
    assert boundaries([0.2, 0.4, 0.6, 0.8, 1.0], 0.025, spending) == pytest.approx(published, abs=2e-3)
    # nothing spent before the first item, all of α by the whole set, more at every later fraction
    assert spending.spent(1.0, 0.025) == pytest.approx(0.025) and spending.spent(0.0, 0.025) == 0
    spent = [spending.spent(t, 0.025) for t in (0.1, 0.3, 0.5, 0.9)]
    assert all(a < b for a, b in zip(spent, spent[1:]))
    # Pocock spends more early than O'Brien–Fleming: it stops sooner and ends wider
    assert spending.spent(0.2, 0.025) > obrien_fleming_spent(0.2, 0.025)


def test_a_spending_function_needs_its_own_parameters():
    with pytest.raises(ValueError, match="unknown alpha-spending"):
        Spending("haybittle")
    with pytest.raises(ValueError, match="gamma"):
        Spending("hwang_shih_decani")
    with pytest.raises(ValueError, match="gamma"):
        Spending("pocock", 1.0)
    from pipeline.config.evaluation import SequentialConfig

    with pytest.raises(ValueError, match="gamma: -4"):
        SequentialConfig(spending="hwang_shih_decani")
    assert SequentialConfig(spending="hwang_shih_decani", gamma=-2).gamma == -2


def test_pocock_keeps_the_error_rates_and_stops_a_null_sooner():
    pocock = Spending("pocock")
    at_margin = simulate(0.05, 0.02, 1500, 250, MARGIN, reps=4000, seed=14, spending=pocock)
    assert at_margin["pass"] <= 0.03 and at_margin["fail"] <= 0.03
    null_p = simulate(0.01, 0.01, 1500, 250, MARGIN, reps=4000, seed=15, spending=pocock)
    null_of = simulate(0.01, 0.01, 1500, 250, MARGIN, reps=4000, seed=15)
    assert null_p["mean_items"] < null_of["mean_items"] and null_p["pass"] >= 0.93


def test_the_chance_to_settle_is_calibrated_by_simulation():
    # truths drawn over a wide range (a flat prior), an interim estimate after a share `seen` of the
    # items, the final estimate from the rest: among interim looks that give a criterion a chance p
    # of passing (or failing) at the end, about p of them do — predictive power is calibrated
    rng = np.random.default_rng(20261206)
    margin, seen, z = 0.05, 0.4, 1.959964
    se_k = 0.02                                  # the interim standard error; se at the end: se_k·√seen
    theta = rng.uniform(-0.12, 0.04, 40000)
    interim = rng.normal(theta, se_k)
    rest = rng.normal(theta, se_k * np.sqrt(seen / (1 - seen)))
    final = seen * interim + (1 - seen) * rest
    half = z * se_k * np.sqrt(seen)
    passed, failed = final - half > -margin, final + half < -margin
    chances = np.array([settle_chances(x, (x - z * se_k, x + z * se_k), 0.05, 0.05, seen, margin=margin)
                        for x in interim])
    inner = (interim > -0.09) & (interim < 0.01)  # away from the prior's edges
    for k, hit in ((0, passed), (1, failed)):
        p = chances[:, k]
        for lo, hi in ((0.05, 0.2), (0.2, 0.5), (0.5, 0.8), (0.8, 0.95)):
            sel = inner & (p >= lo) & (p < hi)
            assert sel.sum() > 300
            assert abs(hit[sel].mean() - p[sel].mean()) < 0.04, (k, lo, hi)
    # a band: a ratio well inside passes surely, one well outside fails surely
    assert settle_chances(1.0, (0.98, 1.02), 0.05, 0.04, 0.5, band=(0.9, 1.1))[0] > 0.99
    assert settle_chances(1.3, (1.25, 1.35), 0.05, 0.04, 0.5, band=(0.9, 1.1))[1] > 0.99
