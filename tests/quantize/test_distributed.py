"""An llm-compressor run spread over several processes (``quantize.gpus`` > 1): torchrun starts
``pipeline.quantize.llmcompressor`` once per GPU. On a CPU the same orchestration runs over
gloo, which is what the first tests use (real torchrun, real distributed oneshot); the `gpu`
test at the end runs it on two GPUs through the stage."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from safetensors import safe_open

from pipeline.artifacts.manifest import MANIFEST, verify
from pipeline.config import ConfigError, Params, load_params
from pipeline.quantize import stage
from pipeline.quantize.base import BackendError, get_backend
from pipeline.quantize.llmcompressor import SHM_RESERVE, _dataset, shared_memory_problem

from .test_stage import clone
from conftest import stage_args

VARIANT = "gptq_w4a16_business"


def tensors(directory: Path) -> dict[str, np.ndarray]:
    out = {}
    for f in sorted(directory.glob("*.safetensors")):
        with safe_open(str(f), framework="pt") as st:
            for k in st.keys():
                t = st.get_tensor(k)
                out[k] = t.float().numpy() if t.is_floating_point() else t.numpy()
    return out


def nibbles(packed: np.ndarray) -> np.ndarray:
    """compressed-tensors' int4 packing: eight values per int32, lowest bits first, offset 8."""
    words = packed.view(np.uint32)
    return np.stack([(words >> (4 * i)) & 15 for i in range(8)], -1).reshape(len(words), -1)


def dequantized(t: dict[str, np.ndarray], layer: str) -> np.ndarray:
    q = nibbles(t[f"{layer}.weight_packed"]).astype(np.float32) - 8
    scale = t[f"{layer}.weight_scale"]
    rows, groups = scale.shape
    return (q.reshape(rows, groups, -1) * scale[:, :, None]).reshape(q.shape)


@pytest.fixture(scope="module")
def two_processes(project, tmp_path_factory):
    """The GPTQ variant quantized by two CPU processes into a directory of its own."""
    req = stage.request_for(*stage_args(project.params, project.root, stage.PARAMS, VARIANT), VARIANT, "cpu", gpus=2)
    problem = shared_memory_problem(req.model_dir)
    if problem:  # the host's limit, not the code's: named in the skip reason
        pytest.skip(problem)
    assert get_backend("llmcompressor").check(req) == []
    req.out_dir = tmp_path_factory.mktemp("two-processes") / VARIANT
    result = get_backend("llmcompressor").quantize(req)
    return req.out_dir, result


def test_two_processes_share_the_samples_and_report_it(two_processes, project):
    _, result = two_processes
    d = result.details
    n = project.small_set["num_samples"]
    assert d["processes"] == 2
    assert d["samples_per_process"] == [n // 2, n // 2]
    assert d["calibration_samples"] == n
    assert d["max_seq_length"] == project.small_set["max_seq_len"]
    assert result.format == "compressed-tensors"


def test_two_processes_quantize_like_one(two_processes, quantized, project):
    """GPTQ sums the Hessians of all samples whichever process saw them, so the two-process
    artifact is the one-process artifact up to rounding-order differences: its scales match, most
    int4 values match, and every layer is as close to the bf16 weights."""
    out, _ = two_processes
    quantized(VARIANT)
    one = tensors(project.root / "artifacts" / VARIANT)
    two = tensors(out)
    base = tensors(project.root / project.params.model.path)
    assert one.keys() == two.keys()
    layers = [k[: -len(".weight_packed")] for k in one if k.endswith(".weight_packed")]
    assert len(layers) == 6 * 7  # every linear layer of the demo model's 6 decoder layers
    agree = np.mean(np.concatenate([(nibbles(one[f"{k}.weight_packed"]) ==
                                     nibbles(two[f"{k}.weight_packed"])).ravel() for k in layers]))
    assert agree > 0.8, f"only {agree:.3f} of the int4 values agree"
    for k in layers:
        np.testing.assert_allclose(two[f"{k}.weight_scale"], one[f"{k}.weight_scale"], rtol=0.05,
                                   err_msg=k)
        w = base[f"{k}.weight"]
        err_one = np.linalg.norm(w - dequantized(one, k)) / np.linalg.norm(w)
        err_two = np.linalg.norm(w - dequantized(two, k)) / np.linalg.norm(w)
        assert 0 < err_one < 0.5 and abs(err_two - err_one) < 0.02 * err_one, (k, err_one, err_two)
    cfg_one = json.loads((project.root / "artifacts" / VARIANT / "config.json").read_text())
    cfg_two = json.loads((out / "config.json").read_text())
    assert cfg_two["quantization_config"] == cfg_one["quantization_config"]


def test_the_two_process_artifact_loads_and_answers(two_processes, project):
    out, _ = two_processes
    check = stage.load_check(out, get_backend("llmcompressor"), msgs=[{"role": "user", "content": "Hello"}],
                             model_dir=project.root / project.params.model.path)
    assert check["ok"] and check["tokens"]


def test_each_process_gets_a_disjoint_contiguous_share(project):
    from pipeline.models import load_tokenizer

    calib = project.root / "data" / "calibration" / "business"
    tok = load_tokenizer(project.root / project.params.model.path)
    whole = list(_dataset(calib, "w4a16_gptq", tok, 256)["input_ids"])
    shares = [list(_dataset(calib, "w4a16_gptq", tok, 256, share=(i, 3))["input_ids"])
              for i in range(3)]
    assert [len(s) for s in shares] == [6, 5, 5]
    assert shares[0] + shares[1] + shares[2] == whole


def test_fewer_samples_than_processes_is_refused(project):
    from pipeline.models import load_tokenizer

    calib = project.root / "data" / "calibration" / "business"
    tok = load_tokenizer(project.root / project.params.model.path)
    with pytest.raises(BackendError, match=r"16 calibration sample\(s\) cannot be shared among 17 "
                                           r"processes — fix"):
        _dataset(calib, "w4a16_gptq", tok, 256, share=(0, 17))


def test_a_model_larger_than_shared_memory_is_refused_before_any_process_starts(project, no_model_load,
                                                                                monkeypatch):
    model_dir = project.root / project.params.model.path
    weights = sum(f.stat().st_size for f in model_dir.glob("*.safetensors"))
    assert shared_memory_problem(model_dir, shm_total=weights + SHM_RESERVE) is None
    problem = shared_memory_problem(model_dir, shm_total=weights + SHM_RESERVE - 1)
    assert problem and "/dev/shm" in problem and "fix: enlarge /dev/shm to at least" in problem
    assert "quantize.gpus: 1" in problem
    # A host whose /dev/shm is 64 MB (Docker's default): the check before loading says so.
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda path: SimpleNamespace(total=64 * 2**20))
    req = stage.request_for(*stage_args(project.params, project.root, stage.PARAMS, VARIANT), VARIANT, "cpu", gpus=2)
    [problem] = [p for p in get_backend("llmcompressor").check(req) if "/dev/shm" in p]
    assert "holds 0.1 GB" in problem
    req.processes = 1  # one process shares nothing
    assert get_backend("llmcompressor").check(req) == []


# ---------------------------------------------------------------------------------- settings


@pytest.mark.parametrize("device", ["cpu", "cuda:1"])
def test_params_refuse_several_gpus_without_cuda(project, tmp_path, device):
    data = yaml.safe_load(yaml.safe_dump(project.data))
    data["quantize"] = {"device": device, "gpus": 2}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError) as err:
        load_params(path)
    [problem] = err.value.problems
    assert problem.key == "quantize.gpus"
    assert problem.line == path.read_text().splitlines().index("  gpus: 2") + 1
    assert "set device: cuda" in problem.fix


def test_params_take_several_gpus_with_cuda(project):
    data = yaml.safe_load(yaml.safe_dump(project.data))
    data["quantize"] = {"device": "auto", "gpus": 4}
    assert Params.model_validate(data).quantize.gpus == 4


def test_the_stage_refuses_several_gpus_on_the_cpu(project, tmp_path, no_model_load):
    root = clone(project, tmp_path / "p")
    with pytest.raises(BackendError, match="quantize.gpus is 2 but the run is on the CPU — fix"):
        stage.run(*stage_args(project.params, root, stage.PARAMS, VARIANT), VARIANT, device="cpu", gpus=2)
    with pytest.raises(BackendError, match="--device cuda:1 with 2 GPUs.*fix: use --device cuda"):
        stage.run(*stage_args(project.params, root, stage.PARAMS, VARIANT), VARIANT, device="cuda:1", gpus=2)
    assert not (root / "artifacts" / VARIANT).exists()


# ---------------------------------------------------------------------------------- two GPUs


def _gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(_gpus() < 2, reason="needs two GPUs")
def test_two_gpus_through_the_stage(project, tmp_path):
    root = clone(project, tmp_path / "p")
    m = stage.run(*stage_args(project.params, root, stage.PARAMS, VARIANT), VARIANT, device="cuda", gpus=2)
    out = root / "artifacts" / VARIANT
    assert verify(out) == []
    q = json.loads((out / MANIFEST).read_text())["quantization"]
    assert q["processes"] == 2 and len(q["peak_gpu_bytes_per_process"]) == 2
    assert all(b > 0 for b in q["peak_gpu_bytes_per_process"])
    assert q["peak_gpu_bytes"] == max(q["peak_gpu_bytes_per_process"])
    assert m["load_check"]["ok"] and m["load_check"]["device"] == "cuda:0"
