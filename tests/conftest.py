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


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none on this host); runs on GPU machines")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
