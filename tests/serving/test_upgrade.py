"""An upgrade end to end on llama-server and GuideLLM: one Q4_K_M artifact served as configured and
with prompts prefilled 8 tokens a pass — a planted serving regression (a smaller batch budget).
Under the business's traffic near saturation its long tail fails the P99 verdict; the report, the
plot and the MLflow runs say so; the artifact served is the one evaluated."""

import json
from pathlib import Path

import pytest

from conftest import stage_args
from pipeline.config import Params
from pipeline.serving import stage

pytestmark = pytest.mark.slow
ART = "gguf_q4_k_m_business"


@pytest.fixture(scope="module")
def small_batch(served):
    served.artifact(ART)
    data = json.loads(json.dumps(served.data))
    data["serving"] = {
        "configs": {"now": {"engine": "llamacpp", "options": {"slots": 4}},
                    "small_batch": {"engine": "llamacpp", "options": {
                        "slots": 4, "extra_args": ["--batch-size", "8", "--ubatch-size", "8"]}}},
        "upgrades": {"small_batch": {"artifact": ART, "current": "now", "candidate": "small_batch"}},
        # 2 × 300 requests: enough for a P99 fail bound at α / 2 (≥ 505)
        "traffic": {"requests": 300, "rounds": 2, "rates": [0.9], "mixes": {"short_long_80_20": {"long_share": 0.2}}}}
    params = Params.model_validate(data)
    report = stage.run(*stage_args(params, served.root, stage.PARAMS, "small_batch"), "small_batch")
    return served, report, params


def test_a_smaller_batch_budget_fails_the_p99_verdict_under_the_business_traffic(small_batch):
    served, r, _ = small_batch
    mix = r["traffic"]["short_long_80_20"]
    e2e = mix["rates"][next(iter(mix["rates"]))]["criteria"]["p99_e2e"]
    assert e2e["verdict"] == "fail" and e2e["ci_low"] > 1.10, e2e
    assert mix["verdict"] == "fail" and r["verdict"] == "fail"
    assert mix["traffic"]["long_share"] == pytest.approx(0.2, abs=0.01)
    assert set(r["synthetic"]) >= {"current", "candidate", "output_tokens_per_s_ratio"}  # reported beside it


def test_both_configurations_served_the_evaluated_bytes(small_batch):
    served, r, _ = small_batch
    manifest = json.loads((served.artifact(ART) / "manifest.json").read_text())
    assert r["artifact_sha256"] == manifest["content_sha256"]
    assert r["configurations"]["current"]["settings"]["extra_args"] == []
    assert r["configurations"]["candidate"]["settings"]["extra_args"][-1] == "8"
    items = sum(1 for _ in (served.root / "data" / "evalset" / "evalset.jsonl").open())
    assert r["accuracy"]["items"] == items  # every item through both


def test_the_report_plot_and_mlflow_runs_are_written(small_batch):
    from mlflow import MlflowClient

    served, r, params = small_batch
    out = served.root / "reports" / "upgrades" / "small_batch"  # beside the comparison report
    assert Path(r["out"]) == out
    md = (out / "upgrade.md").read_text()
    assert "**Verdict: FAIL**" in md and "P99 end-to-end latency" in md
    assert (out / "latency_vs_rate.png").stat().st_size > 1000
    prompts = {json.loads(x)["prompt"] for x in (out / "traffic" / "short_long_80_20-round1.jsonl").open()}
    assert all("<|im_start|>" in p for p in prompts)  # chat-rendered evaluation prompts, nothing else
    assert r["mlflow"]["logged"] and r["mlflow"]["made"]
    client = MlflowClient(tracking_uri=f"sqlite:///{served.root / 'mlflow.db'}")
    parent = client.get_run(r["mlflow"]["run_id"])
    assert parent.data.tags["verdict"] == "fail" and parent.data.tags["qpipe.role"] == "upgrade"
    child = client.get_run(r["mlflow"]["runs"]["candidate"])
    assert "8" in child.data.params["settings.extra_args"] and "short_long_80_20.e2e_p99_s" in child.data.metrics
    again = stage.track_only(*stage_args(params, served.root, stage.PARAMS, "small_batch"), "small_batch")
    assert again["mlflow"]["run_id"] == r["mlflow"]["run_id"] and not again["mlflow"]["made"]  # once per report
