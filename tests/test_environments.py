"""`qpipe validate` names the tool environments the variants need — ready, or made at first
need with the one command that makes it now — and computes their folders as the set-up scripts
do, without making any."""

import os
import subprocess
from pathlib import Path

import yaml
from typer.testing import CliRunner

from demo.matrix import full_params
from pipeline import environments
from pipeline.cli import app
from pipeline.config import Params

from conftest import REPO


def params_with(variants: dict) -> Params:
    data = full_params(REPO)
    data["variants"] = {k: v for k, v in data["variants"].items() if k in variants}
    data["serving"]["upgrades"] = {}  # the upgrades serve variants left out here
    data["bench"]["traffic"]["enabled"] = False  # GuideLLM: its own test below
    for v in data["variants"].values():  # no engine baselines: everything is judged against the baseline
        v["reference"] = v["reference"] if v["reference"] in (*data["variants"], "none") else "baseline"
    data["compare"]["engine_baselines"] = {}
    data["compare"]["noise_floor"] = {}
    return Params.model_validate(yaml.safe_load(yaml.safe_dump(data)))


def test_only_what_the_variants_need_is_listed(tmp_path, monkeypatch):
    monkeypatch.setenv("QPIPE_CACHE", str(tmp_path))  # an empty machine
    monkeypatch.setenv("QPIPE_LLAMACPP_BIN", "")
    monkeypatch.delenv("QPIPE_VLLM_PYTHON", raising=False)
    monkeypatch.delenv("QPIPE_GPTQMODEL_PYTHON", raising=False)
    envs = {e.name: e for e in environments.needed(params_with({"baseline", "gptq_w4a16_business"}))}
    assert set(envs) == {"vllm"}  # llm-compressor runs in the core environment
    assert not envs["vllm"].ready and envs["vllm"].command == "bash scripts/setup-vllm.sh"
    assert envs["vllm"].needed_by == ("baseline", "gptq_w4a16_business")
    envs = {e.name: e for e in environments.needed(params_with({"baseline", "gptqmodel_w4a16_business",
                                                                 "gguf_q8_0_business"}))}
    assert set(envs) == {"vllm", "gptqmodel", "llama.cpp"}
    assert envs["gptqmodel"].command == "bash scripts/setup-backend-env.sh gptqmodel"
    assert "first stage that needs it makes it" in envs["gptqmodel"].line()


def test_an_override_counts_as_ready(tmp_path, monkeypatch):
    monkeypatch.setenv("QPIPE_CACHE", str(tmp_path))
    monkeypatch.setenv("QPIPE_VLLM_PYTHON", "/opt/vllm/bin/python")
    (env,) = environments.needed(params_with({"baseline"}))
    assert env.ready and env.where == "given: /opt/vllm/bin/python"


def test_the_folder_is_the_one_the_set_up_script_uses():
    """Where an environment exists, the script (which only checks it then) prints its python
    inside the folder computed here."""
    checked = 0
    for name, script, lock in [("vllm", "scripts/setup-vllm.sh", "constraints/vllm.txt"),
                               *[(b, "scripts/setup-backend-env.sh", f"constraints/{b}.txt")
                                 for b in ("gptqmodel", "modelopt", "autoawq")]]:
        d = environments.env_dir(name, script, lock)
        if not (d / ".ready").is_file():
            continue  # making one here would take minutes: checked where the machine has it
        args = ["bash", script] + ([] if name == "vllm" else [name])
        out = subprocess.run(args, cwd=REPO, capture_output=True, text=True, check=True)
        assert out.stdout.strip().splitlines()[-1] == str(d / "bin" / "python")
        checked += 1
    assert checked or not environments.cache().joinpath("envs").is_dir() or not any(
        environments.cache().joinpath("envs").iterdir()), "environments exist, none matched"


def test_the_load_generator_and_each_release_are_listed_for_who_needs_them(tmp_path, monkeypatch):
    from pipeline.engines.vllm import VllmEngine

    monkeypatch.setenv("QPIPE_CACHE", str(tmp_path))
    monkeypatch.delenv("QPIPE_GUIDELLM_PYTHON", raising=False)
    data = full_params(REPO)
    envs = {e.name: e for e in environments.upgrade_environments(Params.model_validate(data))}
    assert envs["guidellm"].needed_by == ("bench", *data["serving"]["upgrades"])
    old, pinned = envs["vllm 0.31.0"], envs["vllm 0.32.0"]
    assert old.command == "QPIPE_VLLM_RELEASE=0.31.0 bash scripts/setup-vllm.sh" and not old.ready
    assert old.where.startswith(str(tmp_path / "envs" / "vllm-0.31.0-"))
    # the pinned release named as a release is the set-up's own environment
    assert pinned.where == str(environments.env_dir("vllm", "scripts/setup-vllm.sh", "constraints/vllm.txt"))
    assert envs["llamacpp 0.3.16"].where.endswith("llama.cpp/0.3.16")
    monkeypatch.delenv("QPIPE_CACHE")
    home, ready, _ = VllmEngine.release_home("0.31.0")
    if ready:  # where this machine has it, the script (which only checks it then) prints its python there
        out = subprocess.run(["bash", "scripts/setup-vllm.sh"], cwd=REPO, capture_output=True, text=True, check=True,
                             env={**os.environ, "QPIPE_VLLM_RELEASE": "0.31.0"})
        assert out.stdout.strip().splitlines()[-1] == str(home / "bin" / "python")


def test_validate_lists_the_environments(monkeypatch):
    monkeypatch.chdir(REPO)
    # an AVX-512 host's answer: this test is about the lists (the next ones are about the host)
    monkeypatch.setattr(environments, "vllm_cpu_kernels", lambda *a, **k: {"cpu_gemm_wna16": True})
    result = CliRunner().invoke(app, ["validate"])
    assert result.exit_code == 0, result.output
    assert "vllm:" in result.output and "llama.cpp:" in result.output


def _ready_vllm(tmp_path, monkeypatch):
    """An empty machine whose set-up vLLM environment is made (its folder marked ready)."""
    monkeypatch.setenv("QPIPE_CACHE", str(tmp_path))
    monkeypatch.delenv("QPIPE_VLLM_PYTHON", raising=False)
    script, lock, _ = environments.ENGINE_ENVS["vllm"]
    d = environments.env_dir("vllm", script, lock)
    d.mkdir(parents=True)
    (d / ".ready").touch()
    return d


def test_an_avx2_host_is_told_which_w4a16_variants_vllm_cannot_serve(tmp_path, monkeypatch):
    d = _ready_vllm(tmp_path, monkeypatch)
    asked = []

    def kernels(python, env, **_):
        asked.append((python, env))
        return {"cpu_gemm_wna16": False}

    monkeypatch.setattr(environments, "vllm_cpu_kernels", kernels)
    p = params_with({"baseline", "gptq_w4a16_business", "awq_w4a16_business", "w8a8_int8_business",
                     "gguf_q8_0_business"})
    problems = environments.host_problems(p)
    assert asked == [(str(d / "bin" / "python"), d)]
    assert sorted(problems) == ["awq_w4a16_business", "gptq_w4a16_business"]
    assert all("AVX-512" in x and "fix:" in x and f"under variants.{n}" in x for n, x in problems.items())
    # the same host with the AVX-512 extension: nothing to say
    monkeypatch.setattr(environments, "vllm_cpu_kernels", lambda *a, **k: {"cpu_gemm_wna16": True})
    assert environments.host_problems(p) == {}
    # a variant already served by the reference engine is not vLLM's
    data = yaml.safe_load(yaml.safe_dump(p.model_dump(mode="json", exclude_none=True)))
    assert environments.host_problems(p, kernels={"cpu_gemm_wna16": False})
    for name in ("gptq_w4a16_business", "awq_w4a16_business"):
        data["variants"][name].update(engine="transformers", reason="no AVX-512 here")
    assert environments.host_problems(Params.model_validate(data),
                                      kernels={"cpu_gemm_wna16": False}) == {}


def test_a_given_or_unmade_vllm_is_not_probed(tmp_path, monkeypatch):
    def never(*a, **k):
        raise AssertionError("probed")

    monkeypatch.setattr(environments, "vllm_cpu_kernels", never)
    p = params_with({"baseline", "gptq_w4a16_business"})
    monkeypatch.setenv("QPIPE_CACHE", str(tmp_path))  # nothing made
    monkeypatch.delenv("QPIPE_VLLM_PYTHON", raising=False)
    assert environments.host_problems(p) == {}
    _ready_vllm(tmp_path / "made", monkeypatch)
    monkeypatch.setenv("QPIPE_VLLM_PYTHON", "/opt/vllm-gpu/bin/python")  # the user's own build
    assert environments.host_problems(p) == {}


def test_validate_stops_on_what_this_host_cannot_serve(tmp_path, monkeypatch):
    _ready_vllm(tmp_path, monkeypatch)
    monkeypatch.setattr(environments, "vllm_cpu_kernels", lambda *a, **k: {"cpu_gemm_wna16": False})
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["validate"])  # the default matrix: nothing W4A16 on vLLM
    assert result.exit_code == 0, result.output
    assert "this host:" not in result.output
    import pipeline.cli as cli
    from pipeline.layout import Layout

    full = params_with(set(full_params(REPO)["variants"]))
    monkeypatch.setattr(cli, "_params", lambda *a, **k: (full, Layout(REPO, full)))
    result = CliRunner().invoke(app, ["validate"])  # the full matrix: its W4A16 variants
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    assert "this host: variant 'gptq_w4a16_business'" in out and "fix: evaluate on a host with AVX-512" in out
    assert "this host: variant 'awq_w4a16_business'" in out


def test_the_kernel_probe_asks_vllm_once_per_cpu(tmp_path):
    """The real library, in the set-up's environment: the answer is whether the extension vLLM
    loads on this CPU has the op, and it is kept beside the environment for this CPU."""
    import json

    import pytest

    script, lock, _ = environments.ENGINE_ENVS["vllm"]
    d = environments.env_dir("vllm", script, lock)
    if not (d / ".ready").is_file():
        pytest.skip(f"the vLLM environment is not made ({d}): bash {script}")
    env = tmp_path / "env"
    env.mkdir()
    first = environments.vllm_cpu_kernels(str(d / "bin" / "python"), env)
    assert set(first) == set(environments.KERNEL_OPS) and all(isinstance(v, bool) for v in first.values())
    avx512 = " avx512f" in Path("/proc/cpuinfo").read_text()
    assert first["cpu_gemm_wna16"] == avx512  # vLLM builds its W4A16 kernel for AVX-512 only
    [kept] = env.glob(".cpu-kernels-*.json")
    assert json.loads(kept.read_text()) == first
    assert environments.vllm_cpu_kernels("/nonexistent/python", env) == first  # not asked again


def test_an_unanswered_probe_is_no_problem_but_is_said(tmp_path, monkeypatch, caplog):
    _ready_vllm(tmp_path, monkeypatch)

    def broken(*a, **k):
        raise RuntimeError("vLLM's CPU kernels could not be listed with …: ImportError")

    monkeypatch.setattr(environments, "vllm_cpu_kernels", broken)
    with caplog.at_level("WARNING"):
        assert environments.host_problems(params_with({"baseline", "gptq_w4a16_business"})) == {}
    assert "not checked" in caplog.text and "ImportError" in caplog.text


# ── the vLLM engine states its own host requirements ───────────────────────────────────────────

def _checkpoint(root: Path, name: str, quantization: dict | None, dtype: str = "bfloat16") -> Path:
    import json

    d = root / name
    d.mkdir()
    cfg = {"model_type": "llama", "dtype": dtype}
    if quantization is not None:
        cfg["quantization_config"] = quantization
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def _group(weights: dict, acts: dict | None = None) -> dict:
    return {"quant_method": "compressed-tensors",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights,
                                          "input_activations": acts}}}


def test_the_engine_knows_which_checkpoints_are_weight_only_4bit(tmp_path):
    from pipeline.engines.vllm import weight_only_4bit

    cases = {
        "gptq_ct": (_group({"num_bits": 4, "type": "int", "group_size": 128}), True),
        "w8a8": (_group({"num_bits": 8, "type": "int"}, {"num_bits": 8, "type": "int"}), False),
        "nvfp4": (_group({"num_bits": 4, "type": "float"}, {"num_bits": 4, "type": "float"}), False),
        "fp8": (_group({"num_bits": 8, "type": "float"}, {"num_bits": 8, "type": "float"}), False),
        "gptq_own": ({"quant_method": "gptq", "bits": 4}, True),
        "awq_own": ({"quant_method": "awq", "bits": 4}, True),
        "gptq_8bit": ({"quant_method": "gptq", "bits": 8}, False),
        "bf16": (None, False),
    }
    got = {name: weight_only_4bit(_checkpoint(tmp_path, name, q)) for name, (q, _) in cases.items()}
    assert got == {name: want for name, (_, want) in cases.items()}
    assert weight_only_4bit(tmp_path / "missing") is False


def _engine(artifact: Path, tmp_path: Path, **settings):
    from pipeline.engines.vllm import VllmEngine

    return VllmEngine(artifact, settings, log_path=tmp_path / "vllm.log")


def test_the_engine_refuses_w4a16_before_starting_where_the_kernel_is_missing(tmp_path, monkeypatch):
    import pytest

    from pipeline.engines import vllm
    from pipeline.engines.base import EngineError

    monkeypatch.delenv("QPIPE_VLLM_PYTHON", raising=False)
    asked = []
    monkeypatch.setattr(vllm, "vllm_python", lambda s: str(tmp_path / "env/bin/python"))

    def kernels(python, env, **k):
        asked.append(env)
        return {"cpu_gemm_wna16": False}

    monkeypatch.setattr(vllm, "vllm_cpu_kernels", kernels)
    w4 = _checkpoint(tmp_path, "gptq", _group({"num_bits": 4, "type": "int"}))
    with pytest.raises(EngineError, match="cpu_gemm_wna16 is built for AVX-512 only.*fix: evaluate on a host"):
        _engine(w4, tmp_path).prepare()
    assert asked == [tmp_path / "env"]
    _engine(_checkpoint(tmp_path, "w8a8", _group({"num_bits": 8}, {"num_bits": 8})), tmp_path).prepare()
    _engine(w4, tmp_path, python="/opt/vllm-gpu/bin/python").prepare()  # the user's own build
    assert len(asked) == 1  # neither asked
    monkeypatch.setattr(vllm, "vllm_cpu_kernels", lambda *a, **k: {"cpu_gemm_wna16": True})
    _engine(w4, tmp_path).prepare()


def test_the_engine_computes_in_float32_where_the_cpu_has_no_16_bit_kernels(tmp_path, monkeypatch):
    import pipeline.models

    monkeypatch.delenv("QPIPE_VLLM_PYTHON", raising=False)
    bf16 = _checkpoint(tmp_path, "bf16", None)
    f32 = _checkpoint(tmp_path, "f32", None, dtype="float32")
    for native, want in ((True, "auto"), (False, "float32")):
        monkeypatch.setattr(pipeline.models, "native_cpu_dtype", lambda dtype, n=native: n or dtype == "float32")
        assert _engine(bf16, tmp_path).dtype() == want
        assert _engine(f32, tmp_path).dtype() == "auto"
        assert _engine(bf16, tmp_path, dtype="bfloat16").dtype() == "bfloat16"  # the user's choice
        assert _engine(bf16, tmp_path, python="/opt/vllm-gpu/bin/python").dtype() == "auto"
        args = _engine(bf16, tmp_path).arguments()
        assert args[args.index("--dtype") + 1] == want
