"""Quantization on a CUDA device (skipped where none is present; run on GPU hosts)."""

import json

import pytest

from pipeline.artifacts.manifest import MANIFEST, verify
from pipeline.quantize import stage

from .test_stage import project  # noqa: F401  (module fixture: small calibration set, split done)

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


@pytest.mark.parametrize("variant", ["gptq_w4a16_business", "awq_w4a16_business", "fp8_dynamic"])
def test_llmcompressor_quantizes_on_cuda(project, variant):  # noqa: F811
    import torch

    torch.cuda.reset_peak_memory_stats()
    stage.run(project.params, project.root, variant, device="cuda")
    out = project.root / "artifacts" / variant
    assert verify(out) == []
    m = json.loads((out / MANIFEST).read_text())
    assert m["quantization"]["device"] == "cuda"
    assert m["quantization"]["peak_gpu_bytes"] > 0
    assert m["load_check"]["ok"] and m["load_check"]["text"]
