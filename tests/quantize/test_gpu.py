"""Quantization on a CUDA device (marker `gpu`: skipped where none is present; run on GPU hosts).

The device-resolution tests at the top run everywhere: they stand in for torch's CUDA checks.
"""

import json
import os

import pytest

from pipeline.artifacts.manifest import MANIFEST, verify
from pipeline.quantize import stage
from pipeline.quantize.base import BackendError

from .test_stage import LLMC, clone
from conftest import stage_args

# ---------------------------------------------------------------------------------- resolution

def test_cpu_is_cpu_without_asking_torch(monkeypatch):
    monkeypatch.setattr(stage, "_cuda_available", lambda: pytest.fail("asked torch about CUDA"))
    assert stage.resolve_device("cpu") == "cpu"


@pytest.mark.parametrize("cuda, expected", [(False, "cpu"), (True, "cuda:0")])
def test_auto_is_cuda_when_present_else_cpu(monkeypatch, cuda, expected):
    monkeypatch.setattr(stage, "_cuda_available", lambda: cuda)
    assert stage.resolve_device("auto") == expected


def test_cuda_without_a_gpu_names_the_fix(monkeypatch):
    monkeypatch.setattr(stage, "_cuda_available", lambda: False)
    with pytest.raises(BackendError, match="torch sees no CUDA device.*fix: set quantize.device to cpu or auto"):
        stage.resolve_device("cuda")


def test_an_unknown_device_names_the_fix():
    with pytest.raises(BackendError, match="'tpu' is not a device — fix: use cpu, cuda"):
        stage.resolve_device("tpu")


@pytest.fixture
def cuda_not_started(monkeypatch):
    """A process in which CUDA has not started yet; CUDA_VISIBLE_DEVICES is restored afterwards."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "restored-after-the-test")
    return monkeypatch


@pytest.mark.parametrize("visible, index, expected", [(None, 1, "1"), ("4,6", 1, "6"), ("4, 6", 0, "4")])
def test_cuda_n_limits_the_process_to_that_gpu(cuda_not_started, visible, index, expected):
    if visible is None:
        cuda_not_started.delenv("CUDA_VISIBLE_DEVICES")
    else:
        cuda_not_started.setenv("CUDA_VISIBLE_DEVICES", visible)
    stage._see_only_gpu(index, f"cuda:{index}")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == expected


def test_cuda_n_beyond_the_visible_gpus_names_the_fix(cuda_not_started):
    cuda_not_started.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    with pytest.raises(BackendError, match="lists 2 GPU.*fix: use an index below 2"):
        stage._see_only_gpu(2, "cuda:2")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "4,6"


def test_cuda_n_after_cuda_started_names_the_fix(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.raises(BackendError, match="CUDA_VISIBLE_DEVICES=3 and quantize.device: cuda"):
        stage._see_only_gpu(3, "cuda:3")


# ---------------------------------------------------------------------------------- on the GPU

@pytest.mark.parametrize("variant", LLMC)
@pytest.mark.gpu
@pytest.mark.slow
def test_llmcompressor_quantizes_on_cuda(project, variant):  # noqa: F811
    stage.run(*stage_args(project.params, project.root, stage.PARAMS, variant), variant, device="cuda")
    out = project.root / "artifacts" / variant
    assert verify(out) == []
    m = json.loads((out / MANIFEST).read_text())
    q = m["quantization"]
    assert (q["device"], q["device_requested"]) == ("cuda:0", "cuda")
    assert q["gpu"] and q["peak_gpu_bytes"] > 0
    assert q["onloading"]
    assert m["notes"] == []
    assert m["load_check"]["ok"] and m["load_check"]["text"]
    assert m["load_check"]["device"] == "cuda:0"


@pytest.mark.gpu
def test_auto_picks_the_gpu():
    assert stage.resolve_device("auto") == "cuda:0"


@pytest.mark.gpu
def test_cuda_n_that_cannot_be_honoured_is_refused():
    import torch

    torch.cuda.init()  # as in any process that has used the GPU already
    with pytest.raises(BackendError, match="fix:"):
        stage.resolve_device(f"cuda:{torch.cuda.device_count()}")


@pytest.mark.gpu
@pytest.mark.slow
def test_the_model_stays_in_host_memory_and_is_onloaded(project, tmp_path, monkeypatch):  # noqa: F811
    """A model larger than the GPU fits only if oneshot gets it in host memory: llm-compressor's
    pipeline then onloads it layer by layer to the GPU."""
    import llmcompressor

    seen = {}
    real = llmcompressor.oneshot

    def spy(*, model, **kwargs):
        seen["devices"] = {p.device.type for p in model.parameters()}
        return real(model=model, **kwargs)

    monkeypatch.setattr(llmcompressor, "oneshot", spy)
    root = clone(project, tmp_path / "p")
    m = stage.run(*stage_args(project.params, root, stage.PARAMS, "gptq_w4a16_business"), "gptq_w4a16_business",
                  device="cuda")
    assert seen["devices"] == {"cpu"}
    assert m["quantization"]["peak_gpu_bytes"] > 0


@pytest.mark.gpu
@pytest.mark.slow
def test_a_cpu_run_on_a_gpu_host_says_where_it_calibrated(project, tmp_path):  # noqa: F811
    root = clone(project, tmp_path / "p")
    m = stage.run(*stage_args(project.params, root, stage.PARAMS, "fp8_dynamic"), "fp8_dynamic", device="cpu")
    assert m["quantization"]["device"] == "cpu"
    assert any("CUDA_VISIBLE_DEVICES" in n for n in m["notes"]), m["notes"]
