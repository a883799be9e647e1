"""Group-sequential verdicts: the boundaries against published values, and the error rates, the
power and the saving by seeded simulation against the fixed-sample verdict."""

import pytest

from pipeline.stats.noninferiority import noninferiority, verdict_probabilities
from pipeline.stats.sequential import boundaries, obrien_fleming_spent, sequential_verdict, simulate

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
