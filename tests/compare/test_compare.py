"""The compare stage on per-sample records written by hand: which reference each variant is judged
against (its engine's own baseline), the engine effect beside the quantization effect, the
measured noise floor, Benjamini–Hochberg slice flags, the plan, and the verdicts in the report."""

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import Params
from pipeline.compare import matrix as compare
from pipeline.compare.plan import plan
from pipeline.compare import stage as report
from conftest import stage_args
from demo.matrix import full_params

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("faq", "rag", "tool_call", "ticket")


def records(n: int, rng, *, flip=0.0, lose_in: str | None = None, lose=0.0, base=None):
    """n items over four scenarios; a copy of `base` with flips both ways, plus losses."""
    out = []
    for i in range(n):
        scen = SCENARIOS[i % 4]
        if base is None:
            score = float(rng.random() < 0.8)
        else:
            score = base[i]["score"]
            if rng.random() < flip:
                score = 1.0 - score
            if score == 1.0 and (lose_in in (None, scen)) and rng.random() < lose:
                score = 0.0
        out.append({"id": f"r-{i:05d}", "slices": {"scenario": scen,
                                                   "difficulty": "hard" if i % 3 == 0 else "easy"},
                    "score": score, "output": f"answer {score} {i}", "output_tokens": 8,
                    "latency": 0.1, "json_valid": (score == 1.0) if scen == "tool_call" else None})
    return out


def metrics(name: str, engine: str, recs: list[dict]) -> dict:
    return {"schema": "qpipe.results/v1", "variant": name, "served": True, "evalset_sha256": "e" * 64,
            "harness_version": "h1",
            "protocol": {"prompts_sha256": "p", "max_tokens": 128, "decoding": "greedy"},
            "engine": {"name": engine, "version": "1", "kernel": "k"},
            "size_bytes": 1000 if name in ("baseline", "baseline_rerun", "gguf_f16") else 300,
            "accuracy": float(np.mean([r["score"] for r in recs])), "n": len(recs),
            "detectors": {"json_validity": 1.0},
            "speed": {"serving_engine": True, **{k: 0.1 for k in (
                "output_tokens_per_second", "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99",
                "latency_p50", "latency_p99")}}}


@pytest.fixture
def project(tmp_path):
    data = full_params(REPO)
    keep = ("baseline", "baseline_rerun", "gguf_f16", "gguf_f16_rerun", "gguf_q8_0_business",
            "gguf_q2_k_business", "gptq_w4a16_business")
    data["variants"] = {k: v for k, v in data["variants"].items() if k in keep}
    data["serving"]["upgrades"] = {}  # the upgrades serve variants left out here
    data["gates"]["critical_slices"] = ["scenario=tool_call"]
    params = Params.model_validate(data)
    rng = np.random.default_rng(0)
    n = 1600
    base = records(n, rng)
    made = {"baseline": ("vllm", base),
            "baseline_rerun": ("vllm", records(n, rng, flip=0.004, base=base)),
            # the engine alone changes results: llama.cpp's own baseline loses 3 points
            "gguf_f16": ("llamacpp", records(n, rng, lose=0.04, base=base))}
    f16 = made["gguf_f16"][1]
    made["gguf_q8_0_business"] = ("llamacpp", records(n, rng, flip=0.002, base=f16))
    made["gguf_q2_k_business"] = ("llamacpp", records(n, rng, flip=0.01, lose=0.4, lose_in="faq", base=f16))
    made["gptq_w4a16_business"] = ("vllm", records(n, rng, flip=0.004, base=base))
    # llama.cpp's reference served again: its own floor, a little wider than vLLM's
    made["gguf_f16_rerun"] = ("llamacpp", records(n, rng, flip=0.01, base=f16))
    for name, (engine, recs) in made.items():
        d = tmp_path / "results" / name
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps(metrics(name, engine, recs)))
        (d / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return params, tmp_path


def test_each_variant_is_judged_against_its_engines_own_baseline(project):
    params, root = project
    c = compare.run(*stage_args(params, root, report.PARAMS))
    v = c["variants"]
    assert v["gguf_q8_0_business"]["reference"] == "gguf_f16"
    assert v["gptq_w4a16_business"]["reference"] == "baseline"
    assert v["gguf_f16"]["reference"] == "baseline"  # the engine effect
    # Q8 is near its engine's baseline, while against the vLLM baseline it carries the engine's loss
    q8 = v["gguf_q8_0_business"]
    assert abs(q8["accuracy"]["delta"]) < 0.01
    assert q8["against_baseline"]["accuracy"]["ci_high"] < 0
    assert v["gguf_f16"]["accuracy"]["ci_high"] < 0


def test_noise_floor_is_measured_and_reported(project):
    params, root = project
    c = compare.run(*stage_args(params, root, report.PARAMS))
    floor = c["noise_floor"]["vllm"]
    assert floor["measured"] and floor["variant"] == "baseline_rerun" and floor["reference"] == "baseline"
    assert floor["outputs_changed"] == floor["results_changed"] > 0
    assert floor["outputs_changed_ci"][0] < floor["outputs_changed_share"] < floor["outputs_changed_ci"][1]
    assert "within_noise_floor" in c["variants"]["gptq_w4a16_business"]
    # each engine has its own floor, measured against its own reference
    cpp = c["noise_floor"]["llamacpp"]
    assert cpp["measured"] and (cpp["variant"], cpp["reference"]) == ("gguf_f16_rerun", "gguf_f16")
    assert cpp["outputs_changed"] > floor["outputs_changed"]
    assert c["variants"]["gguf_q8_0_business"]["within_noise_floor"]


def test_slice_drops_are_flagged_after_benjamini_hochberg(project):
    params, root = project
    v = compare.run(*stage_args(params, root, report.PARAMS))["variants"]["gguf_q2_k_business"]
    faq = v["slices"]["scenario=faq"]
    assert faq["significant_drop"] and faq["p_drop_adjusted"] >= faq["p_drop"]
    assert v["significant_drops"][0] == "scenario=faq"
    assert not v["slices"]["scenario=rag"]["significant_drop"]


def test_report_verdicts_plan_and_reference_runs(project):
    params, root = project
    c = report.run(*stage_args(params, root, report.PARAMS))
    v = c["variants"]
    assert v["gptq_w4a16_business"]["gate"]["verdict"] == "pass"
    q2 = v["gguf_q2_k_business"]["gate"]
    assert q2["verdict"] == "fail" and "any_slice" in [f["criterion"] for f in q2["failed"]]
    rerun = v["baseline_rerun"]
    assert rerun["reference_role"].startswith("the vllm noise floor")
    assert rerun["gate"]["verdict"] == "pass"
    assert "gain" in [x["criterion"] for x in rerun["gate"]["not_applicable"]]
    md = (root / "reports" / "comparison.md").read_text()
    for text in ("## Verdicts", "## Noise floor", "## Engine effect and quantization effect",
                 "qpipe plan", "PASS `accuracy_overall`", "FAIL `any_slice`"):
        assert text in md, text
    assert c["plan"]["n"] == 1600 and "general_saas" in c["plan"]["profiles"]


def test_the_plan_says_which_profiles_the_set_supports(project):
    params, root = project
    small = plan(*stage_args(params, root, report.PARAMS), discordance=0.02)
    assert small["slices"]["scenario=tool_call"]["critical"]
    need = small["slices"]["overall"]["items_needed"]
    assert need["compliance_audit"] > need["finance_medical"] > need["general_saas"] > need["research"]
    assert not small["profiles"]["compliance_audit"]["supported"]
    assert small["profiles"]["research"]["supported"]
    # more disagreement needs more items
    more = plan(*stage_args(params, root, report.PARAMS), discordance=0.04)
    assert more["slices"]["overall"]["items_needed"]["research"] > need["research"]


def test_an_engine_baseline_that_was_not_evaluated_is_refused(project):
    params, root = project
    import shutil

    shutil.rmtree(root / "results" / "gguf_f16")
    with pytest.raises(compare.CompareError):
        compare.run(*stage_args(params, root, report.PARAMS))


def test_the_plan_counts_the_json_criterion_over_json_items_only(project):
    """1,600 items support `research` on accuracy, but with only 40 of them expecting JSON its
    5-point JSON margin cannot be shown: the plan says so, naming the criterion."""
    params, root = project
    rng = np.random.default_rng(3)
    recs = records(1600, rng)
    for i, r in enumerate(recs):
        r["json_valid"] = (r["score"] == 1.0) if i < 40 else None
    few = plan(*stage_args(params, root, report.PARAMS), discordance=0.0, records=recs)
    assert few["json_items"] == 40 and few["slices"]["json_validity"]["n"] == 40
    assert not few["profiles"]["research"]["supported"]
    assert any(s.startswith("json_validity: 40 items") for s in few["profiles"]["research"]["short"])
    for r in recs:
        r["json_valid"] = r["score"] == 1.0
    many = plan(*stage_args(params, root, report.PARAMS), discordance=0.0, records=recs)
    assert many["profiles"]["research"]["supported"], many["profiles"]["research"]["short"]
    assert (many["slices"]["json_validity"]["items_needed"]["general_saas"]
            > many["slices"]["json_validity"]["items_needed"]["research"])
