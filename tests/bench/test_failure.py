"""A bench that fails keeps its engines' logs and the error under logs/failed-bench/, and leaves
no figures (not even an earlier run's) for `compare` to read."""

import json

import pytest
import yaml

from demo.matrix import full_params
from pipeline.bench import stage
from pipeline.config import Params
from pipeline.engines.base import EngineError

from conftest import REPO, stage_args


def test_a_failed_bench_keeps_its_engine_logs_and_no_figures(tmp_path, monkeypatch):
    params = Params.model_validate(yaml.safe_load(yaml.safe_dump(full_params(REPO))))
    own, layout = stage_args(params, tmp_path, stage.PARAMS)
    monkeypatch.setattr(stage, "served_variants", lambda p: (["baseline", "w8a8_int8_business"], []))
    monkeypatch.setattr(stage, "distinct_computations", lambda p, lay, names: (names, {}))
    monkeypatch.setattr(stage, "bench_prompts", lambda tok, n, k: [[1, 2, 3]] * n)
    monkeypatch.setattr("pipeline.models.load_tokenizer", lambda *a, **k: None)
    layout.bench.mkdir(parents=True)
    (layout.bench / "bench.json").write_text("{}")  # an earlier run's figures

    def dies(params, layout, cfg, names, left_out, twins, prompts, plan, staging):
        (staging / "logs").mkdir(parents=True)
        (staging / "logs" / "00-baseline.log").write_text("engine core died: Server disconnected\n")
        raise EngineError("vllm died while serving baseline — see its log")

    monkeypatch.setattr(stage, "_measure_all", dies)
    with pytest.raises(EngineError, match="died while serving"):
        stage.run(own, layout)
    assert not layout.bench.exists()
    kept = layout.failed_bench
    assert (kept / "logs" / "00-baseline.log").read_text().startswith("engine core died")
    error = json.loads((kept / "error.json").read_text())
    assert error["error"] == "EngineError" and "died while serving" in error["message"]
    assert not any(p.name.startswith(".") for p in layout.bench.parent.iterdir())  # no staging left
