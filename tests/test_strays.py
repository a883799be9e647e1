"""Outputs of no variant in params, in the folders bench, compare, track and handoff hash whole:
`qpipe repro` names them before it runs (a fresh clone would otherwise re-run those stages)."""

from pathlib import Path

from pipeline.config import load_params
from pipeline.orchestrate.strays import stray_outputs, warning

REPO = Path(__file__).resolve().parents[1]


def test_outputs_of_variants_not_in_params_are_named(tmp_path):
    params = load_params(REPO / "params.yaml")
    assert "baseline" in params.variants and "gguf_q2_k_business" not in params.variants
    for rel in ("artifacts/baseline", "artifacts/gguf_q2_k_business", "results/baseline",
                "results/bench", "results/gate-calibration", "results/divergence-reference", "results/none",
                "results/.staging-host-1-abcdefgh", "results/divergence/baseline",
                "results/divergence/gguf_q2_k_business",
                "runs/quantize"):
        (tmp_path / rel).mkdir(parents=True)
    for rel in ("artifacts/.gitignore", "runs/quantize/baseline.json", "runs/quantize/baseline.log",
                "runs/quantize/gguf_q2_k_business.log"):
        (tmp_path / rel).write_text("x")
    strays = stray_outputs(params, tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in strays] == [
        "artifacts/gguf_q2_k_business", "results/divergence/gguf_q2_k_business",
        "runs/quantize/gguf_q2_k_business.log"]
    text = warning(strays, tmp_path)
    assert text.startswith("warning: artifacts/gguf_q2_k_business, ") and "fix: remove them" in text
    for p in strays:
        (p.unlink() if p.is_file() else p.rmdir())
    assert stray_outputs(params, tmp_path) == []
