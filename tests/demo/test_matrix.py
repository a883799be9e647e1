"""The demo's matrices: the default one runs on any x86 CPU with AVX2 and still has every stage's
kind of work; the full matrix's extra variants reach params.yaml through `dvc exp run -S`, exactly
as demo/full_matrix.yaml states them, in a real DVC repository."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from demo.matrix import added_params, extra_variants, full_params, overrides
from pipeline.config import Params

REPO = Path(__file__).resolve().parents[2]


def test_the_full_matrix_validates_and_only_adds_variants_and_its_params():
    default = yaml.safe_load((REPO / "params.yaml").read_text())
    full = full_params(REPO)
    assert {k: v for k, v in full.items() if k not in ("variants", "compare")} == \
        {k: v for k, v in default.items() if k not in ("variants", "compare")}
    assert full["compare"] == {**default["compare"], "noise_floor": {
        "vllm": "baseline_rerun", "llamacpp": "gguf_f16_rerun"}}
    assert default["compare"]["noise_floor"] == {}
    assert list(full["variants"])[: len(default["variants"])] == list(default["variants"])
    params = Params.model_validate(full)
    # every backend and every engine the pipeline has is in the full matrix
    assert {v.backend for v in params.variants.values()} == {
        "none", "llmcompressor", "llamacpp", "gptqmodel", "autoawq", "modelopt", "mlx"}
    assert {params.engine_for(n) for n in params.variants} == {"vllm", "llamacpp", "transformers", "none", "mlx"}


def test_a_variant_in_both_files_is_refused(tmp_path):
    clash = tmp_path / "full.yaml"
    clash.write_text(yaml.safe_dump({"variants": {"baseline": {"backend": "none"}}}))
    with pytest.raises(ValueError, match="already in params.yaml"):
        full_params(REPO, clash)
    clash.write_text(yaml.safe_dump({"variants": {}, "add": {"compare.alpha": 0.1}}))
    with pytest.raises(ValueError, match="add.compare.alpha is already set in params.yaml"):
        full_params(REPO, clash)


def test_dvc_exp_run_applies_the_overrides_verbatim(tmp_path):
    """A DVC project whose one stage iterates over the variants: the experiment's params.yaml
    holds exactly the full matrix (strings with `;`, `:`, `(` and quotes survive), and then
    exactly a matrix that drops variants (they are gone, their stages with them)."""
    dvc = Path(sys.executable).parent / "dvc"
    if not dvc.is_file():
        pytest.skip("dvc is not installed next to this Python")
    root = tmp_path / "p"
    root.mkdir()
    default = yaml.safe_load((REPO / "params.yaml").read_text())
    (root / "params.yaml").write_text(yaml.safe_dump(
        {"compare": default["compare"], "variants": default["variants"]}, sort_keys=False))
    (root / "dvc.yaml").write_text(
        "stages:\n  q:\n    foreach: ${variants}\n    do:\n"
        "      cmd: echo ${key} ${item.backend} > ${key}.txt\n      outs:\n        - ${key}.txt\n")
    env = {"DVC_NO_ANALYTICS": "1", "PATH": f"{dvc.parent}:/usr/bin:/bin", "HOME": str(tmp_path),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    run = lambda *cmd: subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True,  # noqa: E731
                                      text=True)
    run("git", "init", "-q")
    run(str(dvc), "init", "-q")
    run("git", "add", "-A")
    run("git", "commit", "-qm", "init")
    cmd = [str(dvc), "exp", "run"]
    for item in overrides():
        cmd += ["-S", item]
    run(*cmd)
    got = yaml.safe_load((root / "params.yaml").read_text())
    assert got["variants"] == {**default["variants"], **extra_variants()}
    full = full_params(REPO)
    assert got["compare"] == full["compare"] and added_params()  # the noise floors, added
    assert (root / "modelopt_fp8_business.txt").read_text().strip() == "modelopt_fp8_business modelopt"
    run("git", "checkout", "-q", "--", "params.yaml")
    dropping = tmp_path / "drop.yaml"
    dropping.write_text(yaml.safe_dump({"drop": ["gguf_q4_k_m_general"], "variants": {
        "gguf_q8_0_general": {**default["variants"]["gguf_q4_k_m_general"], "scheme": "gguf_q8_0",
                              "recipe": "recipes/gguf_q8_0.yaml"}}}))
    cmd = [str(dvc), "exp", "run"]
    for item in overrides(dropping):
        cmd += ["-S", item]
    run(*cmd)
    got = yaml.safe_load((root / "params.yaml").read_text())
    assert got["variants"] == full_params(REPO, dropping)["variants"]
    listed = run(str(dvc), "stage", "list").stdout
    assert "q@gguf_q8_0_general" in listed and "q@gguf_q4_k_m_general" not in listed
    shutil.rmtree(root)


def test_the_default_matrix_runs_on_any_avx2_cpu_and_keeps_every_kind_of_work():
    """No variant of the default matrix needs vLLM's 4-bit weight-only kernel (AVX-512 only on a
    CPU); it still has both serving engines with their own baselines, llm-compressor with
    activation quantization, and a business-vs-general calibration pair; the W4A16 variants are
    in the full matrix."""
    from pipeline.compare.stage import calibration_pairs
    from pipeline.environments import host_problems

    params = Params.model_validate(yaml.safe_load((REPO / "params.yaml").read_text()))
    assert not any(v.scheme.startswith("w4a16") and params.engine_for(n) == "vllm"
                   for n, v in params.variants.items())
    assert host_problems(params, kernels={"cpu_gemm_wna16": False}) == {}  # no W4A16 kernel
    assert {params.engine_for(n) for n in params.variants} == {"vllm", "llamacpp"}
    assert params.compare.engine_baselines == {"llamacpp": "gguf_f16"}
    assert {v.backend for v in params.variants.values()} == {"none", "llamacpp", "llmcompressor"}
    assert calibration_pairs(params) == [("gguf_q4_k_m_business", "gguf_q4_k_m_general")]
    full = Params.model_validate(full_params(REPO))
    assert {"gptq_w4a16_business", "gptq_w4a16_general"} <= set(full.variants)
    assert ("gptq_w4a16_business", "gptq_w4a16_general") in calibration_pairs(full)


def test_a_dropped_variant_params_yaml_lacks_is_refused(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text(yaml.safe_dump({"drop": ["no_such_variant"], "variants": {}}))
    with pytest.raises(ValueError, match="drop names 'no_such_variant'"):
        full_params(REPO, bad)
