"""A small served project under tmp: the demo model, its split (the evaluation set), a 16-sample
business calibration set, and artifacts made once per session by the real quantize stage."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from pipeline.calibration import build, split
from pipeline.config import Params
from pipeline.quantize import stage as quantize
from conftest import stage_args
from demo.matrix import full_params

REPO = Path(__file__).resolve().parents[2]


def make_params(data: dict, **sections) -> Params:
    data = json.loads(json.dumps(data))
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    return Params.model_validate(data)


@pytest.fixture(scope="session")
def served(tmp_path_factory) -> SimpleNamespace:
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


def kill_when_found(find, *, timeout: float = 120.0):
    """Start a thread that polls `find()` — a psutil.Process to kill, or None — until it returns
    one, kills it and records its pid in the returned list (empty if none was found in time).
    Join the returned thread (`.thread`) after the run it interrupts."""
    import threading
    import time

    killed: list[int] = []

    def loop():
        deadline = time.time() + timeout
        while time.time() < deadline:
            p = find()
            if p is not None:
                p.kill()
                killed.append(p.pid)
                return
            time.sleep(0.05)

    t = threading.Thread(target=loop)
    t.start()
    return SimpleNamespace(killed=killed, thread=t)
