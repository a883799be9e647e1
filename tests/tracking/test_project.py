"""Reading an evaluated project into records, and the names and values MLflow will get."""

import json

import pytest

from pipeline.tracking import project
from .conftest import CALIB_SHA, EVALSET_SHA, FAILED, NOT_SERVED
from conftest import stage_args
from pipeline.tracking.log import PARAMS as TRACK


@pytest.mark.parametrize("parts, name", [
    (("slice", "scenario=faq", "accuracy"), "slice/scenario/faq/accuracy"),
    (("slice", "length_bucket=<=128"), "slice/length_bucket/le128"),
    (("slice", "length_bucket=>512"), "slice/length_bucket/gt512"),
    (("detectors", "output tokens (p99)"), "detectors/output tokens _p99_"),
    (("", "accuracy"), "accuracy"),
])
def test_metric_names_are_mlflow_safe(parts, name):
    assert project.metric_name(*parts) == name


def test_statuses(evaluated):
    params, root = evaluated
    ex = project_records(params, root)
    assert ex["baseline"].status == "served"
    assert ex[NOT_SERVED].status == "not_served"
    assert ex[NOT_SERVED].reason == "not served here: NVFP4 kernels need a Blackwell GPU"
    assert ex[FAILED].status == "failed"
    assert "vllm exited with code 1" in ex[FAILED].reason


def project_records(params, root):
    return {v.name: v for v in project.load_execution(*stage_args(params, root, TRACK)).variants}


def test_datasets_carry_the_hashes_the_variant_used(evaluated):
    params, root = evaluated
    gptq = project_records(params, root)["gptq_w4a16_business"]
    assert {d.name: d.content_sha256 for d in gptq.datasets} == {
        "calibration/business": CALIB_SHA, "evalset": EVALSET_SHA}
    assert all(d.card_sha256 is None for d in gptq.datasets)


def test_a_rebuilt_calibration_card_is_recorded_beside_the_hash_used(evaluated):
    params, root = evaluated
    card = root / "data/calibration/business/card.json"
    card.write_text(json.dumps({"schema": "qpipe.calibration-card/v1", "name": "business", "samples": 16,
                                "content_sha256": "f" * 64}))
    calib = project_records(params, root)["gptq_w4a16_business"].datasets[0]
    assert calib.content_sha256 == CALIB_SHA  # what the artifact was made with
    assert calib.card_sha256 == "f" * 64


def test_params_tags_and_metrics_of_a_quantized_variant(evaluated):
    params, root = evaluated
    ex = project.load_execution(*stage_args(params, root, TRACK))
    gguf = next(v for v in ex.variants if v.name == "gguf_q4_k_m_business")
    p = project.variant_params(params, gguf)
    assert p["scheme"] == "gguf_q4_k_m" and "bits" not in p  # a K-quant mixes bit widths
    assert p["group_size"] == "256" and p["engine"] == "llamacpp"
    assert p["recipe.preset"] == "Q4_K_M" and p["recipe.imatrix.chunks"] == "8"
    t = project.variant_tags(params, gguf, ex)
    assert t["dvc.stage"] == "evaluate@gguf_q4_k_m_business"
    assert t["engine.kernel"] == "ggml CPU" and t["gate.passed"] == "false"
    assert t["calibration.content_sha256"] == CALIB_SHA and t["evalset.sha256"] == EVALSET_SHA
    m = project.variant_metrics(gguf)
    assert m["accuracy"] == pytest.approx(7 / 12, abs=1e-4)
    assert m["slice/scenario/faq/accuracy"] == pytest.approx(0.5)  # misses ev-003, ev-009
    assert "slice/length_bucket/le128/accuracy_delta_ci_low" in m
    assert m["bench/output_tps_ratio"] == 1.12 and m["gate/passed"] == 0.0
    assert m["quantize/wall_seconds"] == 12.5 and m["compression"] > 2
    assert m["divergence/kld_mean"] == 0.0123 and m["divergence/top1_agreement"] == 0.98
    assert m["divergence/slice/scenario/faq/kld_mean"] == 0.02
    assert m["evaluate/record_cache/served"] == 8 and m["evaluate/record_cache/from_cache"] == 4
    assert not any("=" in k or "<" in k for k in m)


def test_the_run_record_is_read_only_for_the_bytes_it_made(evaluated):
    """Run facts come from quantize.runs_dir/<variant>.json, and only while the record names the
    artifact's content hash: a record left by a run that made other bytes is not this artifact's."""
    params, root = evaluated
    gguf = next(v for v in project.load_execution(*stage_args(params, root, TRACK)).variants
                if v.name == "gguf_q4_k_m_business")
    assert gguf.run["wall_seconds"] == 12.5 and gguf.files["quantize_run"]
    path = root / "runs/quantize/gguf_q4_k_m_business.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps(record | {"artifact_content_sha256": "f" * 64}))
    ex = project.load_execution(*stage_args(params, root, TRACK))
    gguf = next(v for v in ex.variants if v.name == "gguf_q4_k_m_business")
    assert gguf.run == {} and "quantize_run" not in gguf.files
    assert "quantize/wall_seconds" not in project.variant_metrics(gguf)
    assert "git_commit" not in project.variant_tags(params, gguf, ex)
    path.write_text(json.dumps(record | {"schema": "qpipe.quantize-run/v0"}))
    with pytest.raises(ValueError, match="quantize-run/v0.*fix: re-run its quantize stage"):
        project.load_execution(*stage_args(params, root, TRACK))


def test_execution_id_follows_the_files(evaluated):
    params, root = evaluated
    first = project.load_execution(*stage_args(params, root, TRACK)).id
    assert project.load_execution(*stage_args(params, root, TRACK)).id == first
    (root / "results/gptq_w4a16_business/engine.log").write_text("another run\n")
    assert project.load_execution(*stage_args(params, root, TRACK)).id != first


def test_calibration_effect_becomes_parent_run_metrics():
    from pipeline.tracking.log import calibration_effect_metrics

    comparison = {"calibration_effect": [{
        "reference": "gptq_business", "other": "gptq_general",
        "delta_other_minus_reference": {"delta": -0.02, "ci_low": -0.04, "ci_high": 0.0, "p_value": 0.03},
        "slices": {"scenario=rag": {"delta": -0.1, "ci_low": -0.2},
                   "length_bucket=<=128": {"delta": 0.0, "ci_low": -0.01}}}]}
    m = calibration_effect_metrics(comparison)
    prefix = "calibration_effect/gptq_general-minus-gptq_business"
    assert m[f"{prefix}/delta"] == -0.02 and m[f"{prefix}/p_value"] == 0.03
    assert m[f"{prefix}/slice/scenario/rag/delta"] == -0.1
    assert f"{prefix}/slice/length_bucket/le128/ci_low" in m
    assert calibration_effect_metrics({}) == {}
