import os
from pathlib import Path

import pytest

# No hub, no telemetry: everything the tests use is made or shipped by the repository.
for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                   "DVC_NO_ANALYTICS": "1", "MLFLOW_DISABLE_TELEMETRY": "true",
                   "DO_NOT_TRACK": "true", "TOKENIZERS_PARALLELISM": "false"}.items():
    os.environ.setdefault(key, value)

REPO = Path(__file__).resolve().parents[1]


def stage_args(params, root, declared=None, key=None) -> tuple:
    """What a stage's `run` (and its helpers) take first, as the CLI passes them: the stage's own
    view of `params` — `declared`, the stage module's PARAMS, for a foreach stage's `key` (None:
    the whole params, for a command that is no DVC stage) — and the layout of the project at
    `root`. Tests import it as `from conftest import stage_args`."""
    from pipeline.layout import Layout

    return (params if declared is None else params.for_stage(declared, key)), Layout(Path(root), params)


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def vllm_w4a16_problem() -> str | None:
    """Why the vLLM environment's CPU build cannot serve 4-bit weight-only layers on this host
    (its kernel is built for AVX-512 only), or None: asked of the library itself, once per
    environment and CPU (pipeline.environments.w4a16_kernel_missing)."""
    from pipeline import environments

    env = environments.made_vllm()  # a given vLLM, or none made yet: the tests say so themselves
    if env is None or not environments.w4a16_kernel_missing(env):
        return None
    return (f"vLLM's CPU build has no W4A16 kernel on this CPU ({environments.cpu_name()}: "
            "cpu_gemm_wna16 is built for AVX-512 only); runs on AVX-512 hosts")


def pytest_collection_modifyitems(config, items):
    w4a16 = [item for item in items if "vllm_w4a16" in item.keywords]
    problem = vllm_w4a16_problem() if w4a16 else None
    if problem:
        for item in w4a16:
            item.add_marker(pytest.mark.skip(reason=problem))
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none on this host); runs on GPU machines")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
