"""GPTQModel, AutoAWQ and NVIDIA ModelOpt through the quantize stage, each in its own environment
(scripts/setup-backend-env.sh), on the demo model: verified manifest with lineage, the tool's
own load check, vLLM serving the GPTQ and AWQ checkpoints with its CPU kernel; and the checks
that refuse a recipe before any environment or model is touched."""

import json
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.artifacts.manifest import verify
from pipeline.quantize import stage
from pipeline.quantize.base import BackendError, MissingDependency, QuantizeRequest, get_backend
from conftest import stage_args

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "models" / "demo"
# variant: (format, tool distribution in tool_versions, loader the load check names)
EXTERNAL = {
    "gptqmodel_w4a16_business": ("gptq", "gptqmodel", "GPTQModel.load (BACKEND.TORCH)"),
    "autoawq_w4a16_business": ("awq", "autoawq", "GPTQModel.load (BACKEND.AWQ_TORCH)"),
    "modelopt_fp8_business": ("modelopt", "nvidia-modelopt", "simulated quantization"),
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(EXTERNAL))
def test_external_backend_artifact(project, quantized, variant):
    fmt, tool, loader = EXTERNAL[variant]
    m = quantized(variant)
    out = project.root / "artifacts" / variant
    assert verify(out) == []
    assert m["backend"] == project.params.variants[variant].backend
    assert m["format"] == fmt
    assert tool in m["tool_versions"] and "torch" in m["tool_versions"]
    assert m["calibration"]["content_sha256"] == project.card["content_sha256"]
    assert m["quantization"]["calibration_samples"] == project.small_set["num_samples"]
    check = m["load_check"]
    assert check["ok"] is True and loader in check["loader"], check
    assert len(check["tokens"]) > 0 and check["text"].strip()
    baseline = quantized("baseline")
    assert m["size_bytes"] < baseline["size_bytes"]


@pytest.mark.slow
def test_autoawq_manifest_says_why_another_loader_checked_it(quantized):
    m = quantized("autoawq_w4a16_business")
    assert any("intel_extension_for_pytorch" in n and "GPTQModel" in n for n in m["notes"]), m["notes"]
    assert m["quantization"]["quant_config"] == {"w_bit": 4, "q_group_size": 128, "zero_point": True,
                                                 "version": "GEMM"}


@pytest.mark.slow
def test_modelopt_export_holds_fp8_weights_and_scales(project, quantized):
    m = quantized("modelopt_fp8_business")
    export = m["load_check"]["export"]
    assert export["quant_algo"] == "FP8"
    assert export["layer_weight_dtypes"] == {"F8_E4M3": export["layer_weights"]}  # every linear
    assert export["scale_tensors"] >= export["layer_weights"]
    qcfg = json.loads((project.root / "artifacts/modelopt_fp8_business/hf_quant_config.json").read_text())
    assert qcfg["quantization"]["quant_algo"] == "FP8"
    assert any("no CPU engine" in n for n in m["notes"])


@pytest.mark.slow
def test_modelopt_nvfp4_exports_on_a_cpu_and_says_why_it_did_not_generate(project, tmp_path):
    """NVFP4 calibrates and exports on a CPU; ModelOpt's simulated NVFP4 inference needs CUDA,
    so the load check reads the export back and records why it did not generate."""
    out = tmp_path / "out"
    out.mkdir()
    req = QuantizeRequest(variant="modelopt_nvfp4", scheme="nvfp4", model_dir=DEMO, out_dir=out,
                          recipe=REPO / "recipes/modelopt_nvfp4.yaml",
                          calibration_dir=project.root / "data/calibration/business")
    backend = get_backend("modelopt")
    assert backend.check(req) == []
    result = backend.quantize(req)
    check = result.load_check
    assert check["ok"] is None and "needs CUDA" in check["reason"]
    assert check["export"]["quant_algo"] == "NVFP4" and check["export"]["scale_tensors"] > 0
    assert json.loads((out / "hf_quant_config.json").read_text())["quantization"]["group_size"] == 16
    assert any("needs CUDA" in n for n in result.notes)


@pytest.mark.slow
@pytest.mark.vllm_w4a16
@pytest.mark.parametrize("variant", ["gptqmodel_w4a16_business", "autoawq_w4a16_business"])
def test_vllm_serves_the_checkpoint_with_its_cpu_kernel(project, quantized, variant, tmp_path):
    from pipeline.evaluate.stage import PARAMS, open_engine

    ids = quantized(variant)["load_check"]["tokens"]  # any token ids will do as a prompt
    assert project.params.engine_for(variant) == "vllm"
    with open_engine(*stage_args(project.params, project.root, PARAMS, variant), variant,
                     tmp_path / "engine.log") as eng:
        out = eng.complete(ids, max_tokens=8, ignore_eos=True)
        info = eng.info()
    assert out.output_tokens == 8
    assert info.kernel == "CPUWNA16LinearKernel", info


# ---------------------------------------------------------------------------------- checks


def request(tmp_path: Path, backend: str, scheme: str, recipe: dict) -> QuantizeRequest:
    path = tmp_path / f"{backend}.yaml"
    path.write_text(yaml.safe_dump(recipe))
    calib = tmp_path / "calib"
    calib.mkdir(exist_ok=True)
    return QuantizeRequest(variant=f"{backend}_test", scheme=scheme, model_dir=DEMO, out_dir=tmp_path / "out",
                           recipe=path, calibration_dir=calib)


@pytest.mark.parametrize("backend,scheme,recipe,field", [
    ("gptqmodel", "w4a16_gptq", {"quantize_config": {"bits": 4, "group_size": 96}}, "group size 96"),
    ("autoawq", "w4a16_awq", {"quant_config": {"w_bit": 4, "q_group_size": 96}}, "group size 96"),
])
def test_a_group_size_that_does_not_divide_a_layer_is_refused_naming_it(tmp_path, backend, scheme, recipe, field):
    problems = get_backend(backend).check(request(tmp_path, backend, scheme, recipe))
    assert len(problems) == 1 and field in problems[0]
    # The demo model's hidden size is 256 and its MLP width 768: 96 divides 768 but not 256.
    assert "model.layers.0.self_attn.q_proj (256)" in problems[0]
    assert "down_proj" not in problems[0]


def test_a_divisible_group_size_passes(tmp_path):
    req = request(tmp_path, "gptqmodel", "w4a16_gptq", {"quantize_config": {"bits": 4, "group_size": 64}})
    assert get_backend("gptqmodel").check(req) == []


@pytest.mark.parametrize("backend,scheme,recipe,needle", [
    ("gptqmodel", "w4a16_gptq", {"batch_size": 1}, "needs `quantize_config:`"),
    ("autoawq", "w4a16_awq", {}, "needs `quant_config:`"),
    ("modelopt", "fp8", {"config": "NVFP4_DEFAULT_CFG"}, "does not make scheme fp8"),
    ("modelopt", "fp8", {"config": "FP8_DEFALT_CFG"}, "FP8_DEFAULT_CFG"),
])
def test_a_recipe_that_does_not_fit_is_refused(tmp_path, backend, scheme, recipe, needle):
    problems = get_backend(backend).check(request(tmp_path, backend, scheme, recipe))
    assert problems and needle in problems[0], problems


def test_modelopt_int4_awq_needs_rows_of_128(tmp_path):
    """ModelOpt packs INT4 AWQ in blocks of 128 input features: the demo's 256/768 fit."""
    req = request(tmp_path, "modelopt", "w4a16_awq", {"config": "INT4_AWQ_CFG"})
    assert get_backend("modelopt").check(req) == []


def test_a_refused_recipe_starts_no_environment(project, tmp_path, monkeypatch):
    """The stage refuses before it looks for the backend's environment (or loads anything)."""
    monkeypatch.setenv("QPIPE_GPTQMODEL_PYTHON", str(tmp_path / "no-such-python"))
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"quantize_config": {"bits": 4, "group_size": 96}}))
    params = project.params.model_copy(deep=True)
    params.variants["gptqmodel_w4a16_business"].recipe = bad
    with pytest.raises(BackendError, match="group size 96"):  # not MissingDependency
        stage.run(*stage_args(params, project.root, stage.PARAMS, "gptqmodel_w4a16_business"),
                  "gptqmodel_w4a16_business")


def test_an_environment_python_that_does_not_exist_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("QPIPE_AUTOAWQ_PYTHON", str(tmp_path / "no-such-python"))
    from pipeline.quantize.base import backend_python

    with pytest.raises(MissingDependency) as err:
        backend_python("autoawq")
    msg = str(err.value)
    assert "QPIPE_AUTOAWQ_PYTHON" in msg and "scripts/setup-backend-env.sh autoawq" in msg


def test_backend_modules_import_only_the_standard_library_at_module_level():
    """They are their own workers, imported in environments without the core packages."""
    import ast

    allowed_pipeline = {"pipeline.quantize.base", "pipeline.names", "pipeline.errors"}
    for name in ("gptqmodel", "autoawq", "modelopt", "base"):
        tree = ast.parse((REPO / "pipeline" / "quantize" / f"{name}.py").read_text())
        for node in tree.body:
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) else []
            for mod in mods:
                top = mod.split(".")[0]
                assert mod in allowed_pipeline or top == "__future__" or top in sys.stdlib_module_names, (name, mod)
