"""A gate read at a look of a sequential evaluation (pipeline.compare.stopping): the repeated
level, its agreement with the group-sequential test, and the error rates of the whole gate under
early stopping, by seeded simulation on synthetic records."""

import numpy as np
import pytest

from pipeline.compare.deltas import compare_variant
from pipeline.contracts.eval_metrics import Detectors, EngineInfo, Metrics, Speed
from pipeline.compare.gates import evaluate_gates
from pipeline.compare.stopping import conditional_power, decide, gate_at_look, settled
from pipeline.config import CompareConfig, GatesConfig
from pipeline.stats.noninferiority import tango_statistic
from pipeline.stats.sequential import boundaries, look_sizes, repeated_alpha, settle_chances

CMP = CompareConfig()
SAAS = GatesConfig(profile="general_saas", critical_slices=["scenario=rag"])
SCENARIOS = ("faq", "rag", "ticket")
MARGIN = 0.03  # general_saas overall


def metrics(name):
    speed = Speed(serving_engine=True, output_tokens_per_second=1.0, **dict.fromkeys(
        ("ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "latency_p50", "latency_p99")))
    return Metrics.model_construct(variant=name, served=True, engine=EngineInfo(name="sim", version="0"),
                                   size_bytes=1, detectors=Detectors(), speed=speed)


def records(n, rng, accuracy=0.7):
    return [{"id": f"i{i:05d}", "slices": {"scenario": SCENARIOS[i % 3]}, "score": float(rng.random() < accuracy),
             "output": f"o{i}", "output_tokens": 20, "latency": 1.0} for i in range(n)]


def planted(base, rng, *, p_lost, p_gained):
    """Each passing item lost with p_lost/accuracy, each failing one gained with p_gained/(1−accuracy):
    p_lost and p_gained of the whole set in expectation."""
    acc = np.mean([r["score"] for r in base])
    out = []
    for r in base:
        flip = rng.random() < (p_lost / acc if r["score"] else p_gained / (1 - acc))
        out.append({**r, "score": 1.0 - r["score"] if flip else r["score"], "output": "~" if flip else r["output"]})
    return out


def test_the_repeated_level_is_alpha_at_one_look_and_smaller_at_every_look_of_several():
    assert repeated_alpha([1500], 1500, 0.05) == pytest.approx(0.05)
    looks = look_sizes(1500, 250)
    levels = [repeated_alpha(looks[:k], 1500, 0.05) for k in range(1, len(looks) + 1)]
    assert all(a < b for a, b in zip(levels, levels[1:]))  # later looks spend more
    assert levels[0] < 1e-6 and 0.03 < levels[-1] < 0.05  # the price of looking: under α at the end


def test_the_overall_criterion_at_a_look_is_the_group_sequential_test():
    # the Tango interval at the repeated level excludes −margin exactly when Tango's statistic
    # crosses the look's boundary (pipeline.stats.sequential): pass above it, fail below its mirror
    rng = np.random.default_rng(3)
    base = records(1500, rng)
    b = {r["id"]: r["score"] for r in base}
    order = rng.permutation(1500)
    looks = look_sizes(1500, 300)
    seen = set()
    for p_lost, p_gained in ((0.01, 0.01), (0.08, 0.01), (0.04, 0.01), (0.02, 0.01)):
        var = planted(base, rng, p_lost=p_lost, p_gained=p_gained)
        for k, n in enumerate(looks, 1):
            served = [var[i] for i in sorted(order[:n])]
            lost = sum(b[r["id"]] > r["score"] for r in served)
            gained = sum(b[r["id"]] < r["score"] for r in served)
            t = float(tango_statistic(lost, gained, n, -MARGIN))
            c = boundaries([m / 1500 for m in looks[:k]], 0.025)[-1]
            expected = "pass" if t >= c else "fail" if t <= -c else "inconclusive"
            _, gate = gate_at_look(metrics("b"), base, metrics("v"), served, CMP, SAAS, looks=looks[:k],
                                   total=1500, judge_gain=False, power=None, with_power=False)
            overall = next(c for c in gate["criteria"] if c["criterion"] == "accuracy_overall")
            if abs(abs(t) - c) > 1e-6:  # not on the boundary itself
                assert overall["verdict"] == expected, (p_lost, p_gained, k, t, c)
            seen.add(expected)
            assert gate["sequential"]["repeated_alpha"] == pytest.approx(repeated_alpha(looks[:k], 1500, 0.05))
    assert seen == {"pass", "fail", "inconclusive"}  # every outcome was met


def test_the_gate_needs_the_records_of_the_last_look():
    rng = np.random.default_rng(4)
    base = records(600, rng)
    with pytest.raises(ValueError, match="last look"):
        gate_at_look(metrics("b"), base, metrics("v"), base[:250], CMP, SAAS, looks=[300], total=600)


def _sequential_gate(base, var, order, looks, futility=0.0):
    for k in range(1, len(looks) + 1):
        served = [var[i] for i in sorted(order[:looks[k - 1]])]
        v, gate = gate_at_look(metrics("b"), base, metrics("v"), served, CMP, SAAS, looks=looks[:k],
                               total=len(base), judge_gain=False, power=None, with_power=False)
        if futility:
            d = decide(gate, v, looks[:k], len(base), look=looks[0], alpha=CMP.alpha, futility=futility)
            if d["futile"]:
                return "inconclusive", looks[k - 1]
            assert d["settled"] == settled(gate, v, final=k == len(looks))
        if settled(gate, v, final=k == len(looks)):
            break
    return gate["verdict"], looks[k - 1]


@pytest.mark.slow
def test_the_whole_gate_keeps_its_error_rates_when_it_stops_early():
    # a null variant passes as often as the fixed-sample gate lets it, on fewer items; a variant
    # 3 points down overall (general_saas's margin) passes at most α/2 of the time
    rng = np.random.default_rng(20261205)
    base = records(1500, rng)
    looks = look_sizes(1500, 250)
    null, margin, items = [], [], []
    for _ in range(60):
        order = rng.permutation(1500)
        verdict, n = _sequential_gate(base, planted(base, rng, p_lost=0.005, p_gained=0.005), order, looks)
        null.append(verdict)
        items.append(n)
        margin.append(_sequential_gate(base, planted(base, rng, p_lost=0.04, p_gained=0.01), order, looks)[0])
    assert null.count("pass") >= 0.9 * len(null) and np.mean(items) < 0.8 * 1500
    assert margin.count("pass") <= 2  # ≤ 2.5% with the simulation's own error (60 runs)
    # the fixed-sample gate on the same planted variant: the sequential one is no laxer
    var = planted(base, rng, p_lost=0.04, p_gained=0.01)
    v = compare_variant(metrics("b"), base, metrics("v"), var, CMP, with_power=False)
    assert evaluate_gates(v, None, SAAS, power=None, judge_gain=False)["verdict"] != "pass"


def test_futility_is_judged_only_on_intervals_against_a_margin_or_band():
    def gate(*criteria):
        return {"alpha": 0.01, "criteria": [{"verdict": "inconclusive", **c} for c in criteria]}

    overall = {"criterion": "accuracy_overall", "value": -0.03, "ci_low": -0.06, "ci_high": 0.0, "threshold": 0.03}
    hopeless = {**overall, "criterion": "slice:scenario=rag", "value": -0.05, "ci_low": -0.09, "ci_high": -0.01,
                "threshold": 0.05}
    cp = conditional_power(gate(overall), [500], 1500, 0.04)
    assert 0 < cp < 1 and cp == pytest.approx(sum(settle_chances(-0.03, (-0.06, 0.0), 0.01, 0.04, 1 / 3, margin=0.03)))
    # with two: the chance that both pass is at most the smaller one's; either may fail
    (p1, f1), (p2, f2) = (settle_chances(c["value"], (c["ci_low"], c["ci_high"]), 0.01, 0.04, 1 / 3,
                                         margin=c["threshold"]) for c in (overall, hopeless))
    assert conditional_power(gate(overall, hopeless), [500], 1500, 0.04) == pytest.approx(min(p1, p2) + f1 + f2)
    # a signal against this model's limits, or an any-slice drop: no futility is judged
    kl = {"criterion": "kld", "value": 0.01, "ci_low": 0.005, "ci_high": 0.02, "threshold": 0.01}
    assert conditional_power(gate(overall, kl), [500], 1500, 0.04) is None
    assert conditional_power({"alpha": 0.01, "criteria": [{"criterion": "any_slice", "verdict": "fail"}]},
                             [500], 1500, 0.04) is None
    # every criterion passed: the gate is settled, the chance is 1
    assert conditional_power({"alpha": 0.01, "criteria": [{**overall, "verdict": "pass"}]}, [500], 1500, 0.04) == 1


@pytest.mark.slow
def test_futility_stops_only_what_would_stay_inconclusive_and_keeps_the_error_rates():
    # non-binding futility only turns a would-be verdict into inconclusive: a variant at the margin
    # passes no more often and — the whole set leaving it inconclusive most of the time — stops
    # early; a null one passes as often
    rng = np.random.default_rng(20261206)
    base = records(1500, rng)
    looks = look_sizes(1500, 250)
    runs = {"null": [], "margin": [], "half": []}
    plants = {"null": (0.005, 0.005), "margin": (0.04, 0.01), "half": (0.025, 0.01)}
    for _ in range(40):
        order = rng.permutation(1500)
        for key, (p_lost, p_gained) in plants.items():
            var = planted(base, rng, p_lost=p_lost, p_gained=p_gained)
            runs[key].append((_sequential_gate(base, var, order, looks),
                              _sequential_gate(base, var, order, looks, 0.2)))
    verdicts = {k: ([a[0] for a, _ in v], [b[0] for _, b in v]) for k, v in runs.items()}
    items = {k: (np.mean([a[1] for a, _ in v]), np.mean([b[1] for _, b in v])) for k, v in runs.items()}
    for key in runs:  # futility never creates a pass or a fail
        assert all(b == a or b == "inconclusive" for a, b in zip(*verdicts[key]))
    assert verdicts["margin"][1].count("pass") <= 1
    assert verdicts["null"][1].count("pass") >= verdicts["null"][0].count("pass") - 2
    # at the margin the whole set leaves it inconclusive almost always: it stops far earlier
    assert items["margin"][1] < 0.7 * items["margin"][0]
    # the price: a few passes the whole set would have shown, half-way to the margin
    assert verdicts["half"][1].count("pass") >= 0.8 * verdicts["half"][0].count("pass")
