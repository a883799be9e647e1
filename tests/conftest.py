import os
from pathlib import Path
from types import SimpleNamespace

import pytest

# No hub, no telemetry: everything the tests use is made or shipped by the repository.
for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                   "DVC_NO_ANALYTICS": "1", "MLFLOW_DISABLE_TELEMETRY": "true",
                   "DO_NOT_TRACK": "true", "TOKENIZERS_PARALLELISM": "false"}.items():
    os.environ.setdefault(key, value)
# Every evaluation a test runs is served: a test that evaluates a variant twice measures the engine,
# not the record cache (tests/evaluate/test_record_cache.py and test_stage.py turn it on themselves).
os.environ["QPIPE_RECORD_CACHE"] = "off"

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


@pytest.fixture(scope="session")
def served(tmp_path_factory) -> SimpleNamespace:
    """A small served project under tmp: the demo model, its split (the evaluation set), a 16-sample
    business calibration set, and artifacts made once per session by the real quantize stage."""
    import shutil

    import yaml

    from demo.matrix import full_params
    from pipeline.calibration import build, split
    from pipeline.config import Params
    from pipeline.quantize import stage as quantize

    root = tmp_path_factory.mktemp("served-project")
    (root / "params.yaml").write_text(yaml.safe_dump(full_params(REPO), sort_keys=False))
    for rel in ("recipes", "models/demo", "calibration"):
        shutil.copytree(REPO / rel, root / rel)
    data = yaml.safe_load((root / "params.yaml").read_text())
    for spec in data["calibration"]["sets"].values():
        spec.update(num_samples=16, max_seq_len=256)
    data["evaluate"].update(warmup=2)
    data["split"]["eval_share"] = 0.2  # ~600 evaluation items: real engines, minutes not tens
    params = Params.model_validate(data)
    split.run(*stage_args(params, root, split.PARAMS))
    build.run(*stage_args(params, root, build.PARAMS, "business"), "business")
    made: set[str] = set()

    def artifact(name: str) -> Path:
        if name not in made:
            quantize.run(*stage_args(params, root, quantize.PARAMS, name), name)
            made.add(name)
        return root / "artifacts" / name

    return SimpleNamespace(root=root, data=data, params=params, artifact=artifact)
