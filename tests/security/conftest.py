"""A small project on disk with what approve and handoff read — artifacts with manifests,
evaluation results, a comparison — made by the pipeline's own writers, no engine started."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.artifacts.manifest import build_manifest
from pipeline.config import Params
from pipeline.compare.matrix import custody_record
from pipeline.contracts import Metrics
from pipeline.io import file_sha256, write_json
from demo.matrix import full_params

REPO = Path(__file__).resolve().parents[2]
CANDIDATE, OTHER = "w8a8_int8_business", "gptq_w4a16_business"


# a mixed-precision recipe as the manifest records it: one layer kept at 8 bits, the rest at 4
MIXED_RECIPE = {"quant_stage": {"quant_modifiers": {"GPTQModifier": {"ignore": ["lm_head"], "config_groups": {
    "group_0": {"targets": [r"re:^model\.layers\.0\.mlp\.down_proj$"], "weights": {"num_bits": 8}},
    "group_1": {"targets": ["Linear"], "weights": {"num_bits": 4}}}}}}}


def make_artifact(root: Path, name: str, payload: bytes) -> dict:
    art = root / "artifacts" / name
    shutil.rmtree(art, ignore_errors=True)
    (art / "sub").mkdir(parents=True)
    (art / "model.safetensors").write_bytes(payload)
    (art / "sub" / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}\n')
    return build_manifest(art, lineage={
        "variant": name, "scheme": "w8a8_int8", "format": "compressed-tensors", "bits": 8,
        "group_size": None, "backend": "llmcompressor", "tool_versions": {"qpipe": "test"},
        "base_model": {"name": "demo", "content_sha256": "0" * 64},
        "recipe": {"path": "recipes/x.yaml", "sha256": "1" * 64, "resolved": MIXED_RECIPE}, "calibration": {}})


def evaluate(root: Path, name: str, artifact_sha256: str) -> dict:
    d = root / "results" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "samples.jsonl").write_text('{"id": "a", "score": 1.0}\n')
    metrics = {"schema": "qpipe.results/v1", "variant": name, "served": True, "accuracy": 0.9,
               "n": 1, "artifact_sha256": artifact_sha256, "evalset_sha256": "e" * 64,
               "harness_version": "h", "engine": {"name": "vllm", "version": "1", "kernel": "k"}}
    write_json(d / "metrics.json", metrics)
    return metrics


def gate(passed: bool = True) -> dict:
    return {"profile": "general_saas", "passed": passed, "verdict": "pass" if passed else "fail",
            "failed": [], "inconclusive": [], "criteria": []}


def compare(root: Path, names: list[str], *, baseline: str = "baseline") -> dict:
    """comparison.json as the compare stage writes it (custody records included)."""
    base = json.loads((root / "results" / baseline / "metrics.json").read_text())
    variants = {}
    for name in names:
        m = json.loads((root / "results" / name / "metrics.json").read_text())
        variants[name] = {
            "variant": name, "served": True, "reference": baseline, "gate": gate(),
            "custody": custody_record(root / "results", name, Metrics.model_validate(m), Metrics.model_validate(base)),
            "accuracy": {"variant": 0.9, "base": 0.9, "delta": 0.0, "ci_low": -0.01,
                         "ci_high": 0.01, "p_value": 1.0, "n": 1},
            "significant_drops": [], "engine": m["engine"],
            "detectors": {"consistency": {"task_agreement": 1.0}, "variant": {"json_validity": 1.0}}}
    c = {"schema": "qpipe.comparison/v1", "baseline": baseline, "configured_baseline": "baseline",
         "baseline_artifact_sha256": base["artifact_sha256"], "evalset_sha256": "e" * 64,
         "harness_version": "h", "gate_profile": "general_saas", "variants": variants}
    (root / "reports").mkdir(exist_ok=True)
    write_json(root / "reports" / "comparison.json", c)
    return c


@pytest.fixture
def project(tmp_path) -> SimpleNamespace:
    data = full_params(REPO)
    params = Params.model_validate(data)
    root = tmp_path
    shas = {}
    for name, payload in (("baseline", b"B" * 4096), (CANDIDATE, b"C" * 2048), (OTHER, b"D" * 1024)):
        shas[name] = make_artifact(root, name, payload)["content_sha256"]
        evaluate(root, name, shas[name])
    compare(root, [CANDIDATE, OTHER])
    return SimpleNamespace(root=root, params=params, shas=shas,
                           comparison=lambda: json.loads((root / "reports" / "comparison.json").read_text()),
                           sha=file_sha256)
