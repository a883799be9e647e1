"""bench's business-traffic figures: GuideLLM's per-level report read back, each variant's replay
against the baseline replays around it, the paired per-request speed-up, and the merge that makes
them the comparison's speed while keeping the fixed-shape figures beside them."""

import numpy as np
import pytest

from pipeline.bench.business_traffic import SOURCE, level, merge, ratios
from pipeline.bench.ratios import ratios as fixed_ratios


def guidellm_benchmark(e2e, output_tokens=40, ttft=0.01, failed=0, t0=100.0, streams=1):
    """A GuideLLM benchmark as its JSON report gives it: successful requests with their times."""
    reqs, clock = [], [t0] * streams
    for i, x in enumerate(e2e):
        k = i % streams
        start = clock[k]
        reqs.append({"request_start_time": start, "request_end_time": start + x, "request_latency": x,
                     "time_to_first_token_ms": 1000 * ttft,
                     "time_per_output_token_ms": 1000 * (x - ttft) / output_tokens,
                     "inter_token_latency_ms": 1000 * (x - ttft) / (output_tokens - 1),
                     "prompt_tokens": 100 + i, "output_tokens": output_tokens, "request_dispatch_delay": 0.001})
        clock[k] = start + x
    return {"requests": {"successful": reqs, "errored": [{}] * failed, "incomplete": []}}


BASE = np.random.default_rng(99).uniform(0.05, 0.5, 24)  # the requests' own latencies


def measured(variant, scale, rng):
    """One measurement: concurrency 1 (the requests' latencies × scale, with noise) and 8
    (throughput ∝ 1/scale)."""
    base, n = BASE, len(BASE)
    low = level(guidellm_benchmark(list(base * scale * rng.lognormal(0, 0.02, n))))
    high = level(guidellm_benchmark(list(base * scale), streams=8))
    return {"variant": variant, "traffic": {"levels": {"1": low, "8": high}},
            "offline": {"median_output_tokens_per_second": 100.0, "median_total_tokens_per_second": 200.0},
            "streaming": {"1": {"ttft_p50": 0.01, "tpot_p50": 0.004, "burst_share": 0.0, "e2e": [0.2] * 6}},
            "peak_rss_bytes": 10}


def test_a_level_reads_throughput_percentiles_and_failures_from_the_report():
    got = level(guidellm_benchmark([0.1, 0.2, 0.3, 0.4], failed=1))
    assert got["requests"] == 4 and got["failed"] == 1
    assert got["span_s"] == pytest.approx(1.0) and got["output_tokens_per_second"] == pytest.approx(160.0)
    assert got["e2e"] == [0.1, 0.2, 0.3, 0.4] and got["burst_share"] == 0.0
    assert got["e2e_s"]["p50"] == pytest.approx(0.25)
    burst = level(guidellm_benchmark([0.1, 0.2], ttft=0.095))  # first token at the very end
    assert burst["burst_share"] == 0.5


def test_a_variant_twice_as_fast_on_the_traffic_has_its_speed_up_bracketed_by_the_interval():
    rng = np.random.default_rng(0)
    runs = [measured("b", 1.0, rng), measured("v", 0.5, rng), measured("b", 1.0, rng),
            measured("v", 0.5, rng), measured("b", 1.0, rng)]
    r = ratios(runs, "b")["v"]
    assert r["output_tps_ratio"] == pytest.approx(2.0, rel=0.01)
    assert r["e2e_p99_ratio_at_8"] == pytest.approx(0.5, rel=0.01)
    lo, hi = r["latency_paired"]["speedup_ci"]
    assert lo < 2.0 < hi and hi - lo < 0.1
    # one log ratio per request of each variant replay, against its bracketing baselines' mean
    assert r["latency_paired"]["n"] == 48 and r["failed_requests"] == 0
    assert r["concurrency"] == {"paired": 1, "throughput": 8}


def test_an_equal_variant_does_not_show_a_speed_up_by_simulation():
    """Seeded: a variant that is the baseline's twin gets an interval covering 1 in ≥ 90% of runs."""
    covered = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        runs = [measured("b", 1.0, rng), measured("v", 1.0, rng), measured("b", 1.0, rng)]
        lo, hi = ratios(runs, "b")["v"]["latency_paired"]["speedup_ci"]
        covered += lo <= 1.0 <= hi
    assert covered >= 36


def test_merge_makes_the_traffic_the_speed_and_keeps_the_fixed_shape_beside_it():
    rng = np.random.default_rng(1)
    runs = [measured("b", 1.0, rng), measured("v", 0.8, rng), measured("b", 1.0, rng)]
    runs[1]["offline"]["median_output_tokens_per_second"] = 300.0  # the fixed shape says ×3
    fixed = fixed_ratios(runs, "b", {"b": 100, "v": 50}, 1.0)
    out = merge(fixed, ratios(runs, "b"), "b")
    assert out["v"]["speed_source"] == SOURCE
    assert out["v"]["output_tps_ratio"] == pytest.approx(1.25, rel=0.01)
    assert out["v"]["fixed_shape"]["output_tps_ratio"] == 3.0
    assert out["v"]["peak_rss_ratio"] == 1.0  # what only the fixed shape measures stays
    assert out["b"]["output_tps_ratio"] == 1.0 and out["b"]["speed_source"] == SOURCE
    # without traffic figures (bench.traffic.enabled: false) the fixed shape is the speed
    plain = merge(fixed, {}, "b")
    assert plain["v"]["speed_source"] == "fixed shape" and plain["v"]["output_tps_ratio"] == 3.0


def test_a_variant_whose_replay_failed_requests_says_so():
    rng = np.random.default_rng(2)
    runs = [measured("b", 1.0, rng), measured("v", 1.0, rng), measured("b", 1.0, rng)]
    runs[1]["traffic"]["levels"]["8"]["failed"] = 3
    assert ratios(runs, "b")["v"]["failed_requests"] == 3


def test_replays_of_other_requests_are_not_paired():
    rng = np.random.default_rng(3)
    runs = [measured("b", 1.0, rng), measured("v", 1.0, rng), measured("b", 1.0, rng)]
    runs[2]["traffic"]["levels"]["1"]["prompt_tokens"][0] += 1  # another first request
    r = ratios(runs, "b")["v"]
    assert r["baseline_replays_unpaired"] == 1 and r["latency_paired"]["n"] == 24
