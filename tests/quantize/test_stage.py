"""The `quantize@<variant>` stage end to end on the demo model, in a project under tmp.

The project (conftest.py) is made once per module: calibration sets of 16 samples of at most 256
tokens. Quantization runs (`slow`) are made once per variant and shared; tests that change the
project work on their own copy of it.
"""

import copy
import hashlib
import importlib.metadata
import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml

import pipeline.models

from pipeline.artifacts.manifest import MANIFEST, SUMS, build_manifest, tree_sha256, verify
from pipeline.artifacts.runrecord import is_run_fact, read_run_record
from pipeline.config import Params
from pipeline.quantize import stage
from pipeline.quantize.base import BackendError, QuantizeRequest
from pipeline.quantize.llmcompressor import LlmCompressorBackend
from pipeline.quantize.none import BaselineBackend
from conftest import stage_args

CALIBRATED = ("gptq_w4a16_business", "awq_w4a16_business", "w8a8_int8_business", "nvfp4_business")
LLMC = (*CALIBRATED[:3], "fp8_dynamic", CALIBRATED[3])
# What each variant must record, written out here rather than read from the stage's own tables.
EXPECTED = {  # variant: (bits, group_size, format)
    "baseline": (16, None, "hf"),
    "gptq_w4a16_business": (4, 128, "compressed-tensors"),
    "awq_w4a16_business": (4, 128, "compressed-tensors"),
    "w8a8_int8_business": (8, None, "compressed-tensors"),
    "fp8_dynamic": (8, None, "compressed-tensors"),
    "nvfp4_business": (4, 16, "compressed-tensors"),
}
SMALLER_THAN_BASELINE = ("gptq_w4a16_business", "awq_w4a16_business", "nvfp4_business")


REPO = Path(__file__).resolve().parents[2]


def clone(project, dst: Path) -> Path:
    """A private copy of the project (no artifacts), for tests that change it."""
    shutil.copytree(project.root, dst, ignore=shutil.ignore_patterns("artifacts"))
    return dst


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sha256sum_check(directory: Path) -> None:
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (GNU coreutils) is not installed")
    done = subprocess.run(["sha256sum", "--check", "--strict", SUMS], cwd=directory,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def run_fact_keys(obj, path: str = "") -> list[str]:
    """Every key of a manifest, at any depth, that names a run fact (a duration, a peak)."""
    if isinstance(obj, dict):
        return [k for key, val in obj.items() for k in
                ([f"{path}{key}"] if is_run_fact(str(key)) else []) + run_fact_keys(val, f"{path}{key}.")]
    if isinstance(obj, list):
        return [k for item in obj for k in run_fact_keys(item, path)]
    return []


def verified_dirs(artifacts: Path) -> list[Path]:
    """Every directory under artifacts/ (hidden staging ones included) that `verify` accepts."""
    if not artifacts.exists():
        return []
    return sorted(m.parent for m in artifacts.rglob(MANIFEST) if verify(m.parent) == [])


# ---------------------------------------------------------------------------------- variants

@pytest.mark.slow
@pytest.mark.parametrize("variant", ["baseline", *LLMC])
def test_variant_artifact(project, quantized, variant):
    m = quantized(variant)
    out = project.root / "artifacts" / variant
    v = project.params.variants[variant]
    assert verify(out) == []
    sha256sum_check(out)
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {f["path"] for f in m["files"]}

    bits, group_size, fmt = EXPECTED[variant]
    assert (m["variant"], m["scheme"], m["bits"], m["group_size"]) == (variant, v.scheme, bits, group_size)
    assert (m["format"], m["engine"], m["backend"]) == (fmt, project.params.engine_for(variant), v.backend)
    assert m["tool_versions"]["qpipe"]
    assert m["trust_remote_code"] is False  # the one remote-code switch, recorded
    if variant in LLMC:
        assert m["tool_versions"]["llmcompressor"] == importlib.metadata.version("llmcompressor")
    else:
        assert "llmcompressor" not in m["tool_versions"]

    model_dir = project.root / project.params.model.path
    model_files = [{"path": p.relative_to(model_dir).as_posix(), "sha256": sha256(p)}
                   for p in model_dir.rglob("*") if p.is_file() and p.suffix != ".md"]
    assert m["base_model"]["content_sha256"] == tree_sha256(model_files)
    assert m["recipe"]["sha256"] == sha256(project.root / v.recipe)

    if variant in CALIBRATED:
        card = json.loads((project.root / "data/calibration/business/card.json").read_text())
        assert m["calibration"]["content_sha256"] == card["content_sha256"] == project.card["content_sha256"]
        assert m["quantization"]["calibration_samples"] == project.small_set["num_samples"]
        # the bytes the quantizer read, as the set's build recorded them
        assert m["calibration"]["files_sha256"] == card["files_sha256"]
        assert set(card["files_sha256"]) == {"samples.jsonl", "data.parquet", "imatrix.txt"}
    else:
        assert m["calibration"] is None

    # run facts are the run record's, never the artifact's: identical bytes, identical manifest
    record = read_run_record(project.root / "runs/quantize" / f"{variant}.json")
    assert record["artifact_content_sha256"] == m["content_sha256"]
    assert record["wall_seconds"] > 0 and record["peak_rss_bytes"] > 0
    assert record["git"].keys() == {"commit", "dirty"} and record["host"]["cpus"] >= 1
    assert run_fact_keys(m) == [] and "git_commit" not in m
    assert (project.root / "runs/quantize" / f"{variant}.log").is_file()
    assert m["load_check"]["ok"] is True
    assert m["load_check"]["text"].strip()

    config = json.loads((out / "config.json").read_text())
    # saved in the base model's dtype, whatever the calibration computed in on this CPU
    assert float_dtypes(out) == {"BF16"}
    upcast = None if pipeline.models.native_cpu_dtype("bfloat16") else "float32"
    assert m["quantization"].get("compute_dtype") == (upcast if variant in LLMC else None)
    if variant in LLMC:
        assert config["quantization_config"]["quant_method"] == "compressed-tensors"
    else:
        assert "quantization_config" not in config
    if variant in SMALLER_THAN_BASELINE:
        assert m["size_bytes"] < quantized("baseline")["size_bytes"]


def float_dtypes(directory: Path) -> set[str]:
    """The floating-point dtypes of a checkpoint's tensors, read from the safetensors headers;
    compressed-tensors' global scales (float32 by the format, whatever the model's dtype) must be
    float32 and are left out."""
    found = set()
    for f in directory.glob("*.safetensors"):
        raw = f.read_bytes()
        header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
        tensors = {k: t["dtype"] for k, t in header.items() if k != "__metadata__"}
        assert {d for k, d in tensors.items() if k.endswith("_global_scale")} <= {"F32"}
        found |= {d for k, d in tensors.items() if not k.endswith("_global_scale")
                  and d in ("F64", "F32", "F16", "BF16")}
    return found


def test_cast_back_returns_what_was_computed_in_float32_and_keeps_the_formats_own_dtypes():
    lin = torch.nn.Linear(4, 4)
    lin.register_parameter("weight_global_scale", torch.nn.Parameter(torch.ones(1), requires_grad=False))
    lin.register_parameter("weight_scale", torch.nn.Parameter(
        torch.ones(4, 1).to(torch.float8_e4m3fn), requires_grad=False))
    lin.register_buffer("input_global_scale", torch.ones(1))
    lin.register_buffer("zero_point", torch.zeros(4, dtype=torch.int8))
    model = torch.nn.Sequential(lin)
    pipeline.models.cast_back(model, "bfloat16", "bfloat16")  # same dtype: untouched
    assert lin.weight.dtype == torch.float32
    pipeline.models.cast_back(model, "bfloat16", "float32")
    assert lin.weight.dtype == lin.bias.dtype == torch.bfloat16
    assert lin.weight_global_scale.dtype == lin.input_global_scale.dtype == torch.float32
    assert lin.weight_scale.dtype == torch.float8_e4m3fn and lin.zero_point.dtype == torch.int8
    assert isinstance(lin.weight, torch.nn.Parameter)


@pytest.mark.slow
def test_the_compute_dtype_follows_the_cpu_and_the_artifact_keeps_the_stored_one(
        project, quantized, tmp_path, monkeypatch):
    """Both sides of pipeline.models.cpu_compute_dtype on any host: the variant is made again
    with torch's answer about native bfloat16 kernels reversed (an AVX2-only CPU on an AVX-512
    host, and the other way round). Both keep the base model's dtypes and unquantized tensors,
    record the compute dtype only where it is float32, and quantize to nearly the same values."""
    from safetensors.torch import load_file

    native = quantized("fp8_dynamic")
    host = pipeline.models.native_cpu_dtype("bfloat16")
    assert native["quantization"].get("compute_dtype") == (None if host else "float32")
    monkeypatch.setattr(pipeline.models, "native_cpu_dtype", lambda dtype: not host)
    root = clone(project, tmp_path / "p")
    stage.run(*stage_args(project.params, root, stage.PARAMS, "fp8_dynamic"), "fp8_dynamic")
    out = root / "artifacts" / "fp8_dynamic"
    m = json.loads((out / MANIFEST).read_text())
    assert m["quantization"].get("compute_dtype") == ("float32" if host else None)
    upcast = native if not host else m
    assert any("computed in float32" in n for n in upcast["notes"])
    assert float_dtypes(out) == {"BF16"}
    up = load_file(out / "model.safetensors")
    ref = load_file(project.root / "artifacts" / "fp8_dynamic" / "model.safetensors")
    assert up.keys() == ref.keys()
    assert all(up[k].dtype == ref[k].dtype and up[k].shape == ref[k].shape for k in up)
    # tensors left unquantized are the base model's, bit for bit
    assert up["model.embed_tokens.weight"].equal(ref["model.embed_tokens.weight"])
    q = [k for k in up if k.endswith(".weight") and up[k].dtype.itemsize == 1]
    same = sum((up[k].view(torch.uint8) == ref[k].view(torch.uint8)).sum().item() for k in q) \
        / sum(up[k].numel() for k in q)
    assert q and same > 0.95, same


# ---------------------------------------------------------------------------------- checks first

@pytest.mark.parametrize("ignore, named", [
    (["lm_headd"], ["'lm_headd'"]),
    (["re:^lm_headd$"], ["'re:^lm_headd$'"]),
    (["lm_head", "lm_headd", "model.layers.99.mlp"], ["'lm_headd'", "'model.layers.99.mlp'"]),
])
def test_unknown_ignored_layer_is_rejected_before_the_model_loads(project, tmp_path, no_model_load,
                                                                  ignore, named):
    root = clone(project, tmp_path / "p")
    recipe = yaml.safe_load((root / "recipes/gptq_w4a16.yaml").read_text())
    recipe["quant_stage"]["quant_modifiers"]["GPTQModifier"]["ignore"] = ignore
    (root / "recipes/typo.yaml").write_text(yaml.safe_dump(recipe))
    data = copy.deepcopy(project.data)
    data["variants"]["gptq_w4a16_business"]["recipe"] = "recipes/typo.yaml"
    with pytest.raises(BackendError) as info:
        stage.run(*stage_args(Params.model_validate(data), root, stage.PARAMS, "gptq_w4a16_business"),
                  "gptq_w4a16_business")
    msg = str(info.value)
    assert all(n in msg for n in named), msg
    assert "layer 'lm_head'," not in msg and "fix:" in msg
    assert not (root / "artifacts" / "gptq_w4a16_business").exists()


def test_the_model_load_guard_is_the_loader_the_backend_uses(project, tmp_path, no_model_load):
    """Without this, the two tests around it would pass even if the backend loaded the model."""
    root = clone(project, tmp_path / "p")
    with pytest.raises(AssertionError, match="model was loaded"):
        stage.run(*stage_args(project.params, root, stage.PARAMS, "gptq_w4a16_business"), "gptq_w4a16_business")
    assert not (root / "artifacts" / "gptq_w4a16_business").exists()


def test_ignore_lm_head_of_a_tied_embedding_model_is_accepted(tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    model = LlamaForCausalLM(cfg)
    assert "lm_head" in dict(model.named_modules())  # the layer the recipe ignores does exist
    model.save_pretrained(tmp_path / "tied")
    req = QuantizeRequest(variant="gptq", scheme="w4a16_gptq", model_dir=tmp_path / "tied",
                          out_dir=tmp_path / "out", recipe=REPO / "recipes/gptq_w4a16.yaml",
                          calibration_dir=tmp_path / "calib")
    assert LlmCompressorBackend().check(req) == []


@pytest.mark.parametrize("variant", CALIBRATED)
def test_missing_calibration_set_names_the_fix(project, tmp_path, no_model_load, variant):
    root = clone(project, tmp_path / "p")
    shutil.rmtree(root / "data/calibration/business")
    with pytest.raises(BackendError) as info:
        stage.run(*stage_args(project.params, root, stage.PARAMS, variant), variant)
    assert "dvc repro calibration@business" in str(info.value)
    assert variant in str(info.value)
    assert not (root / "artifacts" / variant).exists()
    # A scheme that needs no data does not care.
    req = stage.request_for(*stage_args(project.params, root, stage.PARAMS, "fp8_dynamic"), "fp8_dynamic")
    assert req.calibration_dir is None


# ---------------------------------------------------------------------------------- atomic output

def _crash_after_writing(backend_cls, monkeypatch):
    """The backend's quantize writes a complete-looking artifact (files + a manifest that
    verifies), then fails."""
    def quantize(self, req):
        for f in ("config.json", "tokenizer.json"):
            shutil.copy2(req.model_dir / f, req.out_dir / f)
        (req.out_dir / "model.safetensors").write_bytes(b"half a tensor")
        build_manifest(req.out_dir, lineage={"variant": req.variant})
        assert verify(req.out_dir) == []
        raise RuntimeError("killed midway through quantization")

    monkeypatch.setattr(backend_cls, "quantize", quantize)


BACKEND_OF = {"baseline": BaselineBackend, "fp8_dynamic": LlmCompressorBackend}


@pytest.mark.parametrize("variant, previous", [
    ("baseline", False),
    ("fp8_dynamic", False),
    pytest.param("baseline", True, marks=pytest.mark.slow),
    pytest.param("fp8_dynamic", True, marks=pytest.mark.slow),
])
def test_a_failed_run_leaves_no_artifact_and_keeps_the_previous(project, tmp_path, monkeypatch,
                                                                variant, previous):
    root = clone(project, tmp_path / "p")
    artifacts = root / "artifacts"
    good = stage.run(*stage_args(project.params, root, stage.PARAMS, variant), variant) if previous else None
    _crash_after_writing(BACKEND_OF[variant], monkeypatch)
    with pytest.raises(RuntimeError, match="killed midway"):
        stage.run(*stage_args(project.params, root, stage.PARAMS, variant), variant)
    if previous:
        assert verified_dirs(artifacts) == [artifacts / variant]
        kept = json.loads((artifacts / variant / MANIFEST).read_text())
        assert kept["content_sha256"] == good["content_sha256"]
        assert kept["load_check"]["ok"] is True
    else:
        assert not (artifacts / variant).exists()
        assert verified_dirs(artifacts) == []
    assert sorted(p.name for p in artifacts.iterdir()) == ([variant] if previous else [])


def test_a_failed_load_check_leaves_no_artifact(project, tmp_path, monkeypatch):
    root = clone(project, tmp_path / "p")

    def broken(*args, **kwargs):
        raise RuntimeError("the artifact does not load")

    monkeypatch.setattr(stage, "load_check", broken)
    with pytest.raises(RuntimeError, match="does not load"):
        stage.run(*stage_args(project.params, root, stage.PARAMS, "baseline"), "baseline")
    assert not (root / "artifacts" / "baseline").exists()
    assert verified_dirs(root / "artifacts") == []
    assert list((root / "artifacts").iterdir()) == []


# ---------------------------------------------------------------------------------- determinism

@pytest.mark.slow
def test_baseline_file_table_is_deterministic(project, tmp_path):
    root = clone(project, tmp_path / "p")
    first = stage.run(*stage_args(project.params, root, stage.PARAMS, "baseline"), "baseline")["files"]
    manifest = (root / "artifacts/baseline" / MANIFEST).read_bytes()
    first_record = read_run_record(root / "runs/quantize/baseline.json")
    second = stage.run(*stage_args(project.params, root, stage.PARAMS, "baseline"), "baseline")["files"]
    assert first == second
    # the whole folder is the same bytes (what DVC hashes); the run records are two runs'
    assert (root / "artifacts/baseline" / MANIFEST).read_bytes() == manifest
    assert read_run_record(root / "runs/quantize/baseline.json")["started_at"] >= first_record["started_at"]
    assert {f["path"] for f in first} >= {"config.json", "model.safetensors", "tokenizer.json"}
    base = root / project.params.model.path
    assert {f["path"]: f["sha256"] for f in first}["model.safetensors"] == sha256(base / "model.safetensors")


def test_fast_backend_still_records_a_positive_wall_time(project, tmp_path, monkeypatch):
    root = clone(project, tmp_path / "p")
    clock = iter(1000.0 + i * 0.001 for i in range(1000))  # every reading 1 ms after the last
    monkeypatch.setattr(stage, "time", SimpleNamespace(time=lambda: next(clock)))
    monkeypatch.setattr(stage, "load_check", lambda *a, **k: {"ok": True, "text": "stub"})
    m = stage.run(*stage_args(project.params, root, stage.PARAMS, "baseline"), "baseline")
    record = read_run_record(root / "runs/quantize/baseline.json")
    assert record["wall_seconds"] > 0 and record["artifact_content_sha256"] == m["content_sha256"]


def test_the_load_check_asks_the_prompt_params_name(project, tmp_path):
    """The load check is the user's question (quantize.load_check), not a built-in demo one: the
    baseline reloaded through transformers answers the configured messages, recorded in its
    manifest, and another prompt gives other tokens."""
    root = clone(project, tmp_path / "p")
    params = project.params.model_copy(deep=True)
    params.quantize.load_check.system = None
    params.quantize.load_check.prompt = "What is the warranty period of the Vertex laptop?"
    params.quantize.load_check.new_tokens = 6
    first = stage.run(*stage_args(params, root, stage.PARAMS, "baseline"), "baseline")["load_check"]
    assert first["ok"] and len(first["tokens"]) == 6
    params.quantize.load_check.prompt = "Classify the support ticket: my invoice is wrong."
    second = stage.run(*stage_args(params, root, stage.PARAMS, "baseline"), "baseline")["load_check"]
    assert second["ok"] and second["tokens"] != first["tokens"]
    req = stage.request_for(*stage_args(params, root, stage.PARAMS, "baseline"), "baseline")
    assert req.load_check == [{"role": "user", "content": params.quantize.load_check.prompt}]


def test_reproduce_names_each_differing_file():
    from pipeline.quantize.reproduce import Reproduction, compare_files

    a = [{"path": "model.safetensors", "size": 10, "sha256": "aa" * 32},
         {"path": "config.json", "size": 3, "sha256": "bb" * 32}]
    b = [{"path": "model.safetensors", "size": 10, "sha256": "cc" * 32},
         {"path": "extra.bin", "size": 1, "sha256": "dd" * 32}]
    diff = compare_files(a, b)
    assert diff == ["config.json: only in the recorded artifact", "extra.bin: only in the rebuild",
                    f"model.safetensors: 10 B sha256 {'aa' * 6}… recorded, 10 B sha256 {'cc' * 6}… rebuilt"]
    r = Reproduction("v", "x" * 64, "y" * 64, differences=diff)
    assert not r.matches and "DIFFERS" in r.lines()[0] and len(r.lines()) == 4
    assert Reproduction("v", "x" * 64, "x" * 64, manifest_identical=True).matches
