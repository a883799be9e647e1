"""A quantize project under tmp, shared by the quantize stage's tests.

`project` copies params.yaml, recipes/, models/demo and calibration/ into tmp, shrinks the
calibration sets to 16 samples of at most 256 tokens, and runs `split` and
`calibration@business` once per module. `quantized` makes each variant at most once per module.
"""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

import pipeline.models
from pipeline.artifacts.manifest import MANIFEST
from pipeline.calibration import build, split
from pipeline.config import Params
from pipeline.quantize import stage
from conftest import stage_args
from demo.matrix import full_params

REPO = Path(__file__).resolve().parents[2]
SMALL_SET = dict(num_samples=16, max_seq_len=256)


# ---------------------------------------------------------------------------------- project

@pytest.fixture(scope="module")
def project(tmp_path_factory) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("quantize-project")
    (root / "params.yaml").write_text(yaml.safe_dump(full_params(REPO), sort_keys=False))
    for rel in ("recipes", "models/demo", "calibration"):
        shutil.copytree(REPO / rel, root / rel)
    data = yaml.safe_load((root / "params.yaml").read_text())
    for spec in data["calibration"]["sets"].values():
        spec.update(SMALL_SET)
    # The calibration pool these tests' figures were set on (the demo's own split evaluates
    # half the conversations; here a fifth, leaving more to calibrate with).
    data["split"]["eval_share"] = 0.2
    params = Params.model_validate(data)
    split.run(*stage_args(params, root, split.PARAMS))
    card = build.run(*stage_args(params, root, build.PARAMS, "business"), "business")
    assert card["samples"] == SMALL_SET["num_samples"]
    return SimpleNamespace(root=root, data=data, params=params, card=card, small_set=SMALL_SET)


@pytest.fixture(scope="module")
def quantized(project):
    """variant -> its manifest; each variant is quantized at most once per module."""
    done: dict[str, dict] = {}

    def get(variant: str) -> dict:
        if variant not in done:
            stage.run(*stage_args(project.params, project.root, stage.PARAMS, variant), variant)
            done[variant] = json.loads((project.root / "artifacts" / variant / MANIFEST).read_text())
        return done[variant]

    return get


@pytest.fixture
def no_model_load(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the request was checked")

    monkeypatch.setattr(pipeline.models, "load_model", refuse)
