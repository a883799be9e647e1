"""The mlx backend (MLX-LM's own checkpoints, in its own environment: scripts/setup-backend-env.sh
mlx) and the mlx engine (mlx_lm.server), on the demo model: conversion through the quantize stage
with manifest, lineage and the mlx load check, a deterministic rebuild (`qpipe reproduce`), the
RoPE fix, serving, the tokenization check that refuses a prompt the server would read otherwise,
and the death of the server's generation thread. The checks that refuse a recipe run first and
touch no environment."""

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest
import yaml

from pipeline.artifacts.manifest import MANIFEST, verify
from pipeline.config import Params
from pipeline.engines.base import EngineError, get_engine
from pipeline.quantize import stage
from pipeline.quantize.base import QuantizeRequest, get_backend
from pipeline.quantize.mlx import fix_rope
from conftest import stage_args
from demo.matrix import full_params

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "models" / "demo"
CHAT = [{"role": "system", "content": "You are the support assistant of Northwind Devices. Answer "
                                      "policy questions briefly."},
        {"role": "user", "content": "Good afternoon! How many business days does shipping take for "
                                    "the Lumen desk lamp? Kind regards."}]


# ── before any environment: recipe, group size, RoPE ──────────────────────────────────────


def _request(tmp_path, scheme="mlx_q4", recipe: dict | None = None, model_dir: Path = DEMO):
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe if recipe is not None else
                                   {"mode": "affine", "bits": 4, "group_size": 64}))
    return QuantizeRequest(variant="v", scheme=scheme, model_dir=model_dir, out_dir=tmp_path / "out",
                           recipe=path)


def test_the_demo_recipe_passes_and_mismatches_are_refused(tmp_path):
    backend = get_backend("mlx")
    assert backend.check(_request(tmp_path)) == []
    assert backend.check(_request(tmp_path, "mlx_mxfp4", {"mode": "mxfp4", "bits": 4, "group_size": 32})) == []
    [p] = backend.check(_request(tmp_path, "mlx_q8", {"mode": "affine", "bits": 4, "group_size": 64}))
    assert "bits is 4 but scheme mlx_q8 is 8-bit" in p
    [p] = backend.check(_request(tmp_path, "mlx_mxfp4", {"mode": "mxfp4", "bits": 4, "group_size": 64}))
    assert "mxfp4 quantizes in groups of 32, not 64" in p
    [p] = backend.check(_request(tmp_path, "mlx_q4", {"mode": "mxfp4", "bits": 4}))
    assert "mode is 'mxfp4' but scheme mlx_q4 is MLX affine" in p
    [p] = backend.check(_request(tmp_path, "mlx_q4", {"mode": "affine", "bits": 4, "group_size": 48}))
    assert "group size 32, 64 or 128, not 48" in p


def _tiny_model(root: Path, in_features: int, config: dict | None = None) -> Path:
    import numpy as np
    from safetensors.numpy import save_file

    root.mkdir(parents=True, exist_ok=True)
    save_file({"model.embed_tokens.weight": np.zeros((8, 256), np.float32),
               "model.layers.0.mlp.down_proj.weight": np.zeros((256, in_features), np.float32),
               "lm_head.weight": np.zeros((8, 256), np.float32)}, str(root / "model.safetensors"))
    (root / "config.json").write_text(json.dumps(config or {"model_type": "llama"}))
    return root


def test_a_group_size_mlx_would_silently_skip_is_refused_with_a_divisor(tmp_path):
    model = _tiny_model(tmp_path / "m", 96)  # 96 = 32 * 3
    [p] = get_backend("mlx").check(_request(tmp_path, model_dir=model))
    assert "group size 64 does not divide the in-features of model.layers.0.mlp.down_proj (96)" in p
    assert "silently leave them unquantized" in p and "set `group_size: 32`" in p
    assert get_backend("mlx").check(_request(tmp_path, recipe={"mode": "affine", "bits": 4, "group_size": 32},
                                             model_dir=model)) == []


def test_a_rope_scaling_mlx_would_ignore_is_refused(tmp_path):
    model = _tiny_model(tmp_path / "m", 256, {"model_type": "llama", "rope_parameters": {
        "rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0}})
    [p] = get_backend("mlx").check(_request(tmp_path, model_dir=model))
    assert "rope_type is 'llama3'" in p and "silently run without this scaling" in p


def test_fix_rope_copies_theta_to_the_top_level(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "rope_parameters": {"rope_theta": 500000.0,
                                                                             "rope_type": "default"}}))
    assert fix_rope(config) is True
    data = json.loads(config.read_text())
    assert data["rope_theta"] == 500000.0 and data["rope_parameters"]["rope_theta"] == 500000.0
    before = config.read_bytes()
    assert fix_rope(config) is False and config.read_bytes() == before  # idempotent
    config.write_text(json.dumps({"rope_parameters": {"rope_theta": 1.0, "rope_type": "yarn"}}))
    with pytest.raises(ValueError, match="'yarn'"):
        fix_rope(config)
    config.write_text(json.dumps({"rope_theta": 10000.0}))  # nothing nested: untouched
    assert fix_rope(config) is False


def test_bench_leaves_the_mlx_engine_out_and_says_why():
    from pipeline.bench.stage import served_variants

    data = full_params(REPO)
    data["bench"]["variants"] = ["baseline", "mlx_q4"]
    names, left_out = served_variants(Params.model_validate(data))
    assert names == ["baseline"]
    assert left_out["mlx_q4"].startswith("mlx engine: ") and "non-Apple host" in left_out["mlx_q4"]
    assert get_engine("mlx").serving is False and get_engine("mlx").formats == {"mlx"}


def test_which_weights_the_engine_serves(tmp_path, monkeypatch):
    """Off Apple silicon `auto` serves a dequantized copy; on it, the artifact as it is; an
    artifact with no quantized layer is served as it is; a typo is refused."""
    import pipeline.engines.mlx as mlx_engine

    art = tmp_path / "art"
    art.mkdir()
    (art / "config.json").write_text(json.dumps({"quantization": {"group_size": 64, "bits": 4, "mode": "affine"}}))

    def weights(settings, apple):
        monkeypatch.setattr(mlx_engine, "apple_silicon", lambda: apple)
        return get_engine("mlx")(art, settings, log_path=tmp_path / "e.log").weights()

    assert weights({}, apple=False) == "dequantized"
    assert weights({}, apple=True) == "quantized"
    assert weights({"weights": "quantized"}, apple=False) == "quantized"
    assert weights({"weights": "dequantized"}, apple=True) == "dequantized"
    with pytest.raises(EngineError, match="engines.mlx.weights is 'fast'"):
        weights({"weights": "fast"}, apple=False)
    (art / "config.json").write_text(json.dumps({"hidden_size": 64}))
    assert weights({}, apple=False) == "unquantized"


def test_an_mlx_scheme_needs_the_mlx_engine():
    data = full_params(REPO)
    data["variants"]["mlx_q4"]["engine"] = "vllm"
    with pytest.raises(ValueError, match="engine 'vllm' cannot serve scheme 'mlx_q4'"):
        Params.model_validate(data)


# ── in the mlx environment: conversion, load check, reproduce ─────────────────────────────


@pytest.fixture(scope="module")
def mlx_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlx-project")
    data = full_params(REPO)
    for rel in ("recipes", "models/demo"):
        shutil.copytree(REPO / rel, root / rel)
    (root / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    params = Params.model_validate(data)
    t0 = time.time()
    stage.run(*stage_args(params, root, stage.PARAMS, "mlx_q4"), "mlx_q4")
    manifest = json.loads((root / "artifacts" / "mlx_q4" / MANIFEST).read_text())
    return root, params, manifest, time.time() - t0


@pytest.mark.slow
def test_mlx_artifact_manifest_lineage_and_load_check(mlx_project):
    root, params, m, _ = mlx_project
    out = root / "artifacts" / "mlx_q4"
    assert verify(out) == []
    assert m["backend"] == "mlx" and m["format"] == "mlx" and m["scheme"] == "mlx_q4"
    assert m["group_size"] == 64 and m["bits"] == 4 and m["calibration"] is None
    assert {"mlx", "mlx-lm"} <= set(m["tool_versions"]) and "torch" not in m["tool_versions"]
    assert m["quantization"]["mlx_quantization"] == {"group_size": 64, "bits": 4, "mode": "affine"}
    config = json.loads((out / "config.json").read_text())
    assert config["quantization"] == {"group_size": 64, "bits": 4, "mode": "affine"}
    # the demo keeps its theta only in rope_parameters: copied to the top level, and said so
    assert config["rope_theta"] == config["rope_parameters"]["rope_theta"] == 10000.0
    assert any("copied to the artifact's top-level rope_theta" in n for n in m["notes"])
    check = m["load_check"]
    assert check["ok"] is True and "mlx_lm.load" in check["loader"], check
    assert 0 < len(check["tokens"]) <= params.quantize.load_check.new_tokens and check["text"].strip()
    assert "seconds" not in check  # a run fact: in the run record, not the manifest
    base = sum(f.stat().st_size for f in (root / "models/demo").glob("*.safetensors"))
    assert m["size_bytes"] < base / 2


@pytest.mark.slow
def test_mlx_rebuild_is_identical(mlx_project):
    from pipeline.layout import Layout
    from pipeline.quantize.reproduce import reproduce

    root, params, m, _ = mlx_project
    r = reproduce(params.for_stage(stage.PARAMS, "mlx_q4"), Layout(root, params), "mlx_q4")
    assert r.matches, r.lines()


# ── the engine ────────────────────────────────────────────────────────────────────────────


def _ids(tokenizer, messages=CHAT) -> list[int]:
    return list(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                              return_dict=True)["input_ids"])


@pytest.fixture
def engine(mlx_project, tmp_path):
    root, _, _, _ = mlx_project
    eng = get_engine("mlx")(root / "artifacts" / "mlx_q4", {"startup_timeout": 300},
                            log_path=tmp_path / "engine.log", tokenizer_dir=root / "models/demo")
    return eng


@pytest.mark.slow
def test_mlx_engine_serves_greedy_and_reports_itself(engine):
    from pipeline.models import load_tokenizer

    ids = _ids(load_tokenizer(DEMO))
    with engine as eng:
        a = eng.complete(ids, 30)
        b = eng.complete(ids, 30)
        # what a client naming the model (lm-eval's `model`) must send to get this model
        named = eng._client.post("/v1/completions", json={  # noqa: SLF001
            "model": eng.served_name(), "prompt": eng.text_for(ids), "max_tokens": 2, "temperature": 0.0})
        info = eng.info()
        cmd = eng.command()
    assert a.text and a.text == b.text  # greedy
    assert named.status_code == 200 and named.json()["choices"][0]["text"]
    assert a.prompt_tokens == len(ids) and 0 < a.output_tokens <= 30
    assert info.name == "mlx" and info.serving is False and info.version
    assert "affine, 4 bit, group 64" in info.kernel and "non-Apple" in info.details["speed_note"]
    assert cmd[1:3] == ["-m", "mlx_lm.server"] and "--model" in cmd and "--seed" not in cmd
    assert "$ " in engine.log_path.read_text()  # the command line, logged


@pytest.mark.slow
def test_off_apple_silicon_the_server_runs_the_artifacts_own_weights_dequantized(mlx_project, tmp_path):
    """`weights: dequantized` serves mlx_lm.convert --dequantize's copy: every weight equals
    mx.dequantize of the artifact's (checked array by array in the mlx environment), no layer
    is left quantized, the copy is gone after stop, and the portable command names the artifact."""
    import subprocess

    from pipeline.engines.mlx import mlx_python
    from pipeline.models import load_tokenizer

    root, _, _, _ = mlx_project
    art = root / "artifacts" / "mlx_q4"
    eng = get_engine("mlx")(art, {"startup_timeout": 300, "weights": "dequantized"},
                            log_path=tmp_path / "engine.log", tokenizer_dir=DEMO)
    ids = _ids(load_tokenizer(DEMO))
    with eng:
        served = eng._served  # noqa: SLF001
        assert served is not None and served != art and served.is_dir()
        assert eng.command()[eng.command().index("--model") + 1] == str(served)
        c = eng.complete(ids, 16)
        check = subprocess.run([mlx_python({}), "-c", f"""
import mlx.core as mx, json
q = mx.load({str(art / "model.safetensors")!r}); d = mx.load({str(served / "model.safetensors")!r})
cfg = json.load(open({str(art / "config.json")!r}))["quantization"]
names = [k[:-len(".scales")] for k in q if k.endswith(".scales")]
assert names and not any(k.endswith(".scales") for k in d), "a layer left quantized"
for n in names:
    w = mx.dequantize(q[n + ".weight"], q[n + ".scales"], q[n + ".biases"], cfg["group_size"], cfg["bits"])
    assert w.dtype == d[n + ".weight"].dtype and mx.array_equal(w, d[n + ".weight"]).item(), n
print(len(names), "layers equal")
"""], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr[-2000:]
        info = eng.info()
    assert c.text and c.prompt_tokens == len(ids)
    assert info.details["weights"] == "dequantized" and "dequantized by mlx_lm.convert" in info.kernel
    assert "layers equal" in check.stdout
    assert not served.exists()
    portable = eng.portable_command(art)
    assert str(served) not in portable and "--model model" in portable


@pytest.mark.slow
def test_divergence_loads_the_mlx_artifacts_weights_into_transformers(mlx_project):
    """The divergence stage measures an MLX variant on its dequantized weights: every tensor of
    the demo model is there, each within the 4-bit rounding of the original and none equal to it."""
    import torch

    from pipeline.engines.base import get_engine
    from pipeline.evaluate.divergence import load_reference

    root, _, _, _ = mlx_project
    variant = load_reference(root / "artifacts" / "mlx_q4", engine=get_engine("mlx"), settings={}).state_dict()
    base = load_reference(DEMO).state_dict()
    assert set(variant) == set(base)
    w = "model.layers.0.mlp.down_proj.weight"
    assert variant[w].dtype == torch.float32 and not torch.equal(variant[w], base[w])
    # affine 4-bit, groups of 64: each weight within one step (its group's range / 15; scales
    # and biases are stored in bf16) of the original
    step = (base[w].view(-1, 64).amax(1) - base[w].view(-1, 64).amin(1)) / 15
    err = (variant[w] - base[w]).abs().view(-1, 64).amax(1)
    assert bool((err <= step + 1e-3).all()) and float((err / step).mean()) < 0.75, float((err / step).max())


@pytest.mark.slow
def test_mlx_engine_refuses_an_empty_prompt_before_sending(engine):
    with engine as eng:
        with pytest.raises(EngineError, match="empty prompt"):
            eng.complete([], 5)
        assert eng._client.get("/health").status_code == 200  # noqa: SLF001 (nothing was sent)


@pytest.mark.slow
def test_a_dead_generation_thread_fails_the_run_with_the_log(engine):
    """A list-of-strings prompt kills mlx_lm.server's generation thread (docs/mlx.md §3): the
    process lives on, /health turns 503, and the next request fails with the engine's log."""
    from pipeline.models import load_tokenizer

    ids = _ids(load_tokenizer(DEMO))
    with engine as eng:
        eng.complete(ids, 2)
        try:
            eng._client.post("/v1/completions", json={"prompt": ["a", "b"], "max_tokens": 2}, timeout=60)  # noqa: SLF001
        except Exception:  # noqa: BLE001 (the reply may be cut)
            pass
        deadline = time.time() + 30
        while eng._client.get("/health").status_code != 503 and time.time() < deadline:  # noqa: SLF001
            time.sleep(0.5)
        assert eng.proc.poll() is None  # the process is alive…
        with pytest.raises(EngineError, match="generation thread died") as err:
            eng.complete(ids, 2)  # …but the run fails
        assert "log tail" in str(err.value) and "TypeError" in str(err.value)
        with pytest.raises(EngineError, match="generation thread died"):
            eng.check_alive("while serving")


@pytest.mark.slow
def test_a_killed_server_fails_the_run(engine):
    from pipeline.models import load_tokenizer

    ids = _ids(load_tokenizer(DEMO))
    with engine as eng:
        os.kill(eng.proc.pid, signal.SIGKILL)
        eng.proc.wait(10)
        with pytest.raises(EngineError, match="exited with code"):
            eng.complete(ids, 2)


@pytest.mark.slow
def test_a_tokenizer_that_reads_the_prompt_otherwise_is_refused(mlx_project, tmp_path):
    """An artifact whose tokenizer splits the rendered text into other ids than the harness's:
    the check before evaluation names the first differing item, and nothing is served."""
    from pipeline.models import load_tokenizer

    root, _, _, _ = mlx_project
    art = tmp_path / "art"
    shutil.copytree(root / "artifacts" / "mlx_q4", art)
    tok = json.loads((art / "tokenizer.json").read_text())
    vocab = tok["model"]["vocab"]
    # one merge fewer: the words that used it now come out as two tokens
    tok["model"]["merges"] = tok["model"]["merges"][1:]
    (art / "tokenizer.json").write_text(json.dumps(tok))
    base = load_tokenizer(DEMO)
    good = _ids(base, [{"role": "user", "content": "Hi"}])
    prompts = [good, _ids(base)]
    eng = get_engine("mlx")(art, {}, log_path=tmp_path / "engine.log", tokenizer_dir=DEMO)
    eng_ok = get_engine("mlx")(root / "artifacts" / "mlx_q4", {}, log_path=tmp_path / "ok.log",
                               tokenizer_dir=DEMO)
    eng_ok.check_prompts(prompts, ["item-1", "item-2"])  # the real artifact: the same ids
    assert len(vocab) > 0
    with pytest.raises(EngineError, match="item item-") as err:
        eng.check_prompts(prompts, ["item-1", "item-2"])
    assert "other token ids than the harness's" in str(err.value)
    assert eng.proc is None  # refused before anything started
