"""A gate read at a look of a sequential evaluation (pipeline.compare.stopping): the repeated
level, its agreement with the group-sequential test, and the error rates of the whole gate under
early stopping, by seeded simulation on synthetic records."""

import numpy as np
import pytest

from pipeline.compare.deltas import compare_variant
from pipeline.contracts.eval_metrics import Detectors, EngineInfo, Metrics, Speed
from pipeline.compare.gates import evaluate_gates
from pipeline.compare.stopping import gate_at_look, settled
from pipeline.config import CompareConfig, GatesConfig
from pipeline.stats.noninferiority import tango_statistic
from pipeline.stats.sequential import boundaries, look_sizes, repeated_alpha

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


def _sequential_gate(base, var, order, looks):
    for k in range(1, len(looks) + 1):
        served = [var[i] for i in sorted(order[:looks[k - 1]])]
        v, gate = gate_at_look(metrics("b"), base, metrics("v"), served, CMP, SAAS, looks=looks[:k],
                               total=len(base), judge_gain=False, power=None, with_power=False)
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
