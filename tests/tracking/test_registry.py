"""Registering an approved handoff bundle: a version made from the bundle logged to the
variant's run, the alias `approved`, version tags, and a download that returns the files."""

import hashlib
from pathlib import Path

import mlflow.artifacts
import pytest
from mlflow import MlflowClient

from pipeline import tracking
from pipeline.tracking import TrackingError
from .conftest import NOT_SERVED
from conftest import stage_args


def bundle(tmp_path, text="weights v1"):
    d = tmp_path / "handoff" / "gptq_w4a16_business"
    d.mkdir(parents=True, exist_ok=True)
    (d / "model.safetensors").write_text(text)
    (d / "MODEL_CARD.md").write_text("# gptq_w4a16_business\n")
    sums = "".join(f"{hashlib.sha256((d / n).read_bytes()).hexdigest()}  {n}\n"
                   for n in ("MODEL_CARD.md", "model.safetensors"))
    (d / "SHA256SUMS").write_text(sums)
    return d


@pytest.fixture
def logged(evaluated):
    params, root = evaluated
    uri = f"sqlite:///{root / 'mlflow.db'}"
    summary = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=uri)
    return params, root, uri, summary


def test_register_sets_alias_tags_and_serves_the_files(logged, tmp_path, monkeypatch):
    params, root, uri, summary = logged
    monkeypatch.setenv("MLFLOW_REGISTRY_URI", uri)  # `models:/` URIs resolve through the registry
    d = bundle(tmp_path)
    tags = {"approved_by": "ana", "note": "ok for support", "gate.passed": True}
    out = tracking.register(params, root, "gptq_w4a16_business", d, tags, tracking_uri=uri)
    assert out["name"] == "tiny-llama" and out["alias"] == "approved"
    assert out["run_id"] == summary["runs"]["gptq_w4a16_business"]
    client = MlflowClient(uri, registry_uri=uri)
    version = client.get_model_version_by_alias("tiny-llama", "approved")
    assert version.version == out["version"] and version.run_id == out["run_id"]
    assert version.tags["approved_by"] == "ana" and version.tags["gate.passed"] == "true"
    assert version.tags["variant"] == "gptq_w4a16_business"
    got = mlflow.artifacts.download_artifacts("models:/tiny-llama@approved",
                                              dst_path=str(tmp_path / "dl"), tracking_uri=uri)
    for name in ("model.safetensors", "MODEL_CARD.md", "SHA256SUMS"):
        assert (d / name).read_bytes() == (Path(got) / name).read_bytes()


def test_same_bundle_twice_is_one_version_a_new_bundle_moves_the_alias(logged, tmp_path):
    params, root, uri, _ = logged
    first = tracking.register(params, root, "gptq_w4a16_business", bundle(tmp_path), {}, tracking_uri=uri)
    again = tracking.register(params, root, "gptq_w4a16_business", bundle(tmp_path), {}, tracking_uri=uri)
    assert again["version"] == first["version"]
    newer = tracking.register(params, root, "gptq_w4a16_business", bundle(tmp_path, "weights v2"),
                              {}, tracking_uri=uri)
    assert int(newer["version"]) == int(first["version"]) + 1
    client = MlflowClient(uri, registry_uri=uri)
    assert client.get_model_version_by_alias("tiny-llama", "approved").version == newer["version"]
    assert client.get_model_version("tiny-llama", first["version"]).source == first["source"]


def test_register_needs_a_served_run(logged, tmp_path):
    params, root, uri, _ = logged
    with pytest.raises(TrackingError, match="no finished MLflow run of a served 'nvfp4_business'"):
        tracking.register(params, root, NOT_SERVED, bundle(tmp_path), {}, tracking_uri=uri)
    with pytest.raises(TrackingError, match="no bundle files"):
        tracking.register(params, root, "gptq_w4a16_business", tmp_path / "nothing", {},
                          tracking_uri=uri)


def test_ui_command_opens_the_project_store(evaluated, monkeypatch, tmp_path):
    params, root = evaluated
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    cmd = tracking.ui_command(params, root, 5077)
    assert cmd[1] == "server" and cmd[cmd.index("--port") + 1] == "5077"
    assert cmd[cmd.index("--backend-store-uri") + 1] == f"sqlite:///{root.resolve() / 'mlflow.db'}"
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow.internal:5000")
    with pytest.raises(TrackingError, match="open that address in a browser"):
        tracking.ui_command(params, root, 5077)
