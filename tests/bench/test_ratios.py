"""bench's ratio arithmetic on measurements written by hand: each variant run against the
baseline runs around it, and per-token timings left out where tokens arrived in one burst."""

import pytest

from pipeline.engines.base import Completion
from pipeline.bench.ratios import ratios
from pipeline.bench.stage import burst_share, schedule


def measurement(variant, tps, tpot=0.004, ttft=0.02, burst=0.0, rss=100):
    level = {"ttft_p50": ttft, "tpot_p50": tpot, "burst_share": burst, "e2e": [0.2, 0.21, 0.22]}
    return {"variant": variant, "offline": {"median_output_tokens_per_second": tps,
                                            "median_total_tokens_per_second": 2 * tps},
            "streaming": {"1": level}, "peak_rss_bytes": rss}


def test_each_variant_run_is_divided_by_the_baseline_runs_around_it():
    runs = [measurement("b", 100), measurement("v", 150), measurement("b", 200),
            measurement("v", 300), measurement("b", 100)]
    r = ratios(runs, "b", {"b": 1000, "v": 500}, bandwidth=1.0)
    # 150 / mean(100, 200) = 1.0 and 300 / mean(200, 100) = 2.0 — not 150/100 or 300/100
    assert r["v"]["output_tps_ratio_per_round"] == [1.0, 2.0]
    assert r["v"]["output_tps_ratio"] == 1.5 and r["v"]["total_tps_ratio"] == 1.5
    assert r["v"]["tpot_p50_ratio"] == 1.0 and r["v"]["ttft_tpot_pairs_left_out"] == 0
    assert r["b"]["output_tps_ratio"] == 1.0


def test_a_burst_delivery_is_left_out_of_the_per_token_ratios():
    runs = [measurement("b", 100, tpot=0.00004, ttft=0.22, burst=1.0), measurement("v", 100),
            measurement("b", 100)]
    r = ratios(runs, "b", {"b": 10_000_000, "v": 5_000_000}, bandwidth=2.0)
    assert r["v"]["tpot_p50_ratio"] is None and r["v"]["ttft_p50_ratio"] is None
    assert r["v"]["ttft_tpot_pairs_left_out"] == 1
    assert r["v"]["output_tps_ratio"] == 1.0  # throughput is still compared
    # the roofline uses streamed TPOTs only: 5 MB / 0.004 s / 2 GB/s, and for the baseline
    # its second run's alone
    assert r["v"]["roofline_fraction"] == pytest.approx(5e6 / 0.004 / 2e9, rel=1e-3)
    assert r["b"]["roofline_fraction"] == pytest.approx(1e7 / 0.004 / 2e9, rel=1e-3)


def test_burst_share_counts_requests_whose_first_token_came_last():
    streamed = Completion("x" * 64, 64, 10, latency=0.25, ttft=0.02)
    burst = Completion("x" * 64, 64, 10, latency=0.25, ttft=0.24)
    one_token = Completion("x", 1, 10, latency=0.05, ttft=0.05)
    assert burst_share([streamed, burst, burst, one_token]) == pytest.approx(2 / 3, abs=1e-4)
    assert burst_share([one_token]) is None


def test_schedule_brackets_every_group_and_reverses_the_next_round():
    plan = schedule(["b", "v1", "v2", "v3"], "b", 2, 3)
    assert plan == [(0, "b"), (0, "v1"), (0, "v2"), (0, "v3"), (0, "b"),
                    (1, "v3"), (1, "v2"), (1, "v1"), (1, "b")]


def lat(variant, e2e):
    m = measurement(variant, 100)
    m["streaming"]["1"]["e2e"] = list(e2e)
    return m


def test_the_paired_latency_test_pairs_requests_and_counts_no_baseline_run_twice():
    import numpy as np

    rng = np.random.default_rng(0)
    prompts = rng.uniform(0.1, 0.5, 16)  # request i has its own length, the same in every run

    def noisy(scale):
        return prompts * scale * rng.lognormal(0, 0.02, 16)

    # b v b v b: the second v run shares its first baseline with the first v run
    runs = [lat("b", noisy(1)), lat("v", noisy(1.1)), lat("b", noisy(1)), lat("v", noisy(1.1)),
            lat("b", noisy(1))]
    r = ratios(runs, "b", {"b": 10, "v": 5}, bandwidth=1.0)["v"]["latency_paired"]
    assert r["n"] == 32 and r["median_ratio"] == pytest.approx(1.1, rel=0.03) and r["p_value"] < 1e-4
    # request lengths differ ~5x, so the unpaired rank test cannot see what the paired one does
    assert ratios(runs, "b", {"b": 10, "v": 5}, bandwidth=1.0)["v"]["latency_vs_baseline"]["p_value"] > 0.01
    same = [lat("b", noisy(1)), lat("v", noisy(1)), lat("b", noisy(1))]
    assert ratios(same, "b", {"b": 10, "v": 5}, bandwidth=1.0)["v"]["latency_paired"]["p_value"] > 0.01


def test_the_hodges_lehmann_interval_covers_the_true_shift_by_simulation():
    """Seeded simulation: per-request log latency ratios = true shift + Laplace noise; the 95%
    interval must cover the true shift ≥ 93% of the time at n = 16 and n = 64."""
    import numpy as np

    from pipeline.bench.ratios import hodges_lehmann_interval

    rng = np.random.default_rng(20261201)
    for n in (16, 64):
        covered = 0
        for _ in range(400):
            noise = rng.laplace(0, 0.1, n)  # symmetric, heavy-tailed: what the test assumes
            lo_hi = hodges_lehmann_interval(list(np.log(0.8) + noise))[1:]
            covered += lo_hi[0] <= np.log(0.8) <= lo_hi[1]
        assert covered / 400 >= 0.93, (n, covered)


def test_the_same_bytes_served_alike_are_measured_once(tmp_path):
    """A re-served baseline (same artifact bytes, same engine and settings) is not benched twice:
    it takes its twin's figures, marked; other bytes or other engine settings are measured."""
    import shutil

    import yaml
    from conftest import stage_args
    from demo.matrix import full_params
    from pipeline.artifacts.manifest import build_manifest
    from pipeline.bench.stage import PARAMS
    from pipeline.bench.twins import distinct_computations
    from pipeline.config import Params

    from conftest import REPO

    data = full_params(REPO)
    data["variants"]["gptq_w4a16_business_vllm_eager_off"] = {
        **data["variants"]["gptq_w4a16_business"], "engine_options": {"enforce_eager": False}}
    params = Params.model_validate(yaml.safe_load(yaml.safe_dump(data)))
    for name, source in (("baseline", "a"), ("baseline_rerun", "a"), ("gptq_w4a16_business", "b"),
                         ("gptq_w4a16_business_vllm_eager_off", "b")):
        d = tmp_path / "artifacts" / name
        d.mkdir(parents=True)
        (d / "model.safetensors").write_text(source)
        build_manifest(d, lineage={"variant": name, "scheme": "bf16", "format": "hf", "backend": "none",
                                   "base_model": {"name": "m", "content_sha256": "0" * 64}})
    section, layout = stage_args(params, tmp_path, PARAMS)
    names = ["baseline", "baseline_rerun", "gptq_w4a16_business", "gptq_w4a16_business_vllm_eager_off"]
    keep, twins = distinct_computations(section, layout, names)
    assert keep == ["baseline", "gptq_w4a16_business", "gptq_w4a16_business_vllm_eager_off"]
    assert twins == {"baseline_rerun": {"as": "baseline", "why": "the same bytes served alike"}}
    shutil.rmtree(tmp_path / "artifacts")


def _gguf(path, values, *, dtype="float32", imatrix_file=None, extra=None):
    import gguf
    import numpy as np

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    if imatrix_file:
        w.add_string("quantize.imatrix.file", imatrix_file)
    if extra:
        w.add_string("general.description", extra)
    for name, v in values.items():
        w.add_tensor(name, np.asarray(v, dtype=dtype))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_the_same_tensor_layout_served_alike_is_measured_once(tmp_path):
    """Two GGUFs of one preset from two calibration sets — other weight values, another importance
    matrix — compute the same: measured once, the twin marked with why. Another tensor type,
    shape or metadata, or an imatrix only in the artifact folder, decides as it should."""
    import yaml
    from conftest import REPO, stage_args
    from demo.matrix import full_params
    from pipeline.artifacts.manifest import build_manifest
    from pipeline.bench.stage import PARAMS
    from pipeline.bench.twins import compute_signature, distinct_computations
    from pipeline.config import Params

    params = Params.model_validate(yaml.safe_load(yaml.safe_dump(full_params(REPO))))
    made = {"gguf_q4_k_m_business": ({"a": [[1, 2], [3, 4]]}, "business.dat"),
            "gguf_q4_k_m_general": ({"a": [[5, 6], [7, 8]]}, "general.dat"),
            "gguf_q8_0_business": ({"a": [[1, 2, 3, 4]]}, "business.dat")}   # another shape
    for name, (values, imatrix) in made.items():
        d = tmp_path / "artifacts" / name
        d.mkdir(parents=True)
        _gguf(d / "model.gguf", values, imatrix_file=imatrix)
        _gguf(d / "imatrix.gguf", {"m": [float(len(imatrix))]})  # not served
        build_manifest(d, lineage={"variant": name, "scheme": "gguf_q4_k_m", "format": "gguf",
                                   "backend": "llamacpp",
                                   "base_model": {"name": "m", "content_sha256": "0" * 64}})
    section, layout = stage_args(params, tmp_path, PARAMS)
    keep, twins = distinct_computations(section, layout, list(made))
    assert keep == ["gguf_q4_k_m_business", "gguf_q8_0_business"]
    assert twins == {"gguf_q4_k_m_general": {
        "as": "gguf_q4_k_m_business",
        "why": "the same tensor types and shapes served alike (other weight values)"}}
    art = tmp_path / "artifacts" / "gguf_q4_k_m_general"
    before = compute_signature(art)
    _gguf(art / "model.gguf", {"a": [[5, 6], [7, 8]]}, dtype="float16", imatrix_file="general.dat")
    assert compute_signature(art) != before  # another storage type
    _gguf(art / "model.gguf", {"a": [[5, 6], [7, 8]]}, imatrix_file="general.dat", extra="x")
    assert compute_signature(art) != before  # other metadata
    _gguf(art / "model.gguf", {"a": [[5, 6], [7, 8]]}, imatrix_file="general.dat")
    assert compute_signature(art) == before
