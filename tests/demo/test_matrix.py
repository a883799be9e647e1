"""The demo's full matrix: its extra variants reach params.yaml through `dvc exp run -S`, exactly
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
    exactly the AVX2 matrix (the variants it drops are gone, their stages with them)."""
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
    from demo.matrix import AVX2_MATRIX

    run("git", "checkout", "-q", "--", "params.yaml")
    cmd = [str(dvc), "exp", "run"]
    for item in overrides(AVX2_MATRIX):
        cmd += ["-S", item]
    run(*cmd)
    got = yaml.safe_load((root / "params.yaml").read_text())
    assert got["variants"] == full_params(REPO, AVX2_MATRIX)["variants"]
    listed = run(str(dvc), "stage", "list").stdout
    assert "q@gguf_q4_k_m_general" in listed and "q@gptq_w4a16_business" not in listed
    shutil.rmtree(root)


def test_the_avx2_matrix_drops_the_w4a16_variants_and_keeps_a_calibration_comparison():
    from demo.matrix import AVX2_MATRIX, dropped_variants
    from pipeline.compare.stage import calibration_pairs

    default = yaml.safe_load((REPO / "params.yaml").read_text())
    data = full_params(REPO, AVX2_MATRIX)
    params = Params.model_validate(data)
    dropped = set(dropped_variants(AVX2_MATRIX))
    assert dropped and dropped <= set(default["variants"])
    assert not dropped & set(params.variants)
    assert not any(v.scheme.startswith("w4a16") and params.engine_for(n) == "vllm"
                   for n, v in params.variants.items())
    # still every engine kind of the default matrix, llm-compressor, and business vs general
    default_params = Params.model_validate(default)
    assert {params.engine_for(n) for n in params.variants} == {
        default_params.engine_for(n) for n in default_params.variants}
    assert "llmcompressor" in {v.backend for v in params.variants.values()}
    assert calibration_pairs(params) == [("gguf_q4_k_m_business", "gguf_q4_k_m_general")]
    assert overrides(AVX2_MATRIX)[: len(dropped)] == [f"~variants.{n}" for n in dropped_variants(AVX2_MATRIX)]
    # everything else as in params.yaml
    assert {k: v for k, v in data.items() if k != "variants"} == \
        {k: v for k, v in default.items() if k != "variants"}


def test_a_dropped_variant_params_yaml_lacks_is_refused(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text(yaml.safe_dump({"drop": ["no_such_variant"], "variants": {}}))
    with pytest.raises(ValueError, match="drop names 'no_such_variant'"):
        full_params(REPO, bad)


def test_the_host_picks_the_avx2_matrix_only_for_what_it_replaces():
    from demo.matrix import host_matrix

    avx2 = {"gptq_w4a16_business", "gptq_w4a16_general"}
    assert host_matrix(REPO, avx2) == "avx2"
    assert host_matrix(REPO, set()) == "default"
    assert host_matrix(REPO, avx2 | {"awq_w4a16_business"}) == "default"
