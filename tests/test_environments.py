"""`qpipe validate` names the tool environments the variants need — ready, or made at first
need with the one command that makes it now — and computes their folders as the set-up scripts
do, without making any."""

import subprocess

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


def test_validate_lists_the_environments(monkeypatch):
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["validate"])
    assert result.exit_code == 0, result.output
    assert "vllm:" in result.output and "llama.cpp:" in result.output
