"""Distribution-level signals on the demo model: the same weights diverge by nothing, noised
weights by more the more noise, and a GGUF artifact is read through its dequantized weights."""

import json
import shutil

import pytest
import torch

from pipeline.artifacts.manifest import build_manifest
from pipeline.evaluate import divergence
from pipeline.evaluate.divergence import DivergenceError

from .conftest import REPO, make_params
from conftest import stage_args

pytestmark = pytest.mark.slow


def noised_copy(src, dest, scale: float, seed: int = 0):
    """The demo checkpoint with Gaussian noise of `scale` × each weight's std added."""
    from transformers import AutoModelForCausalLM

    shutil.copytree(src, dest)
    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32, local_files_only=True)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.add_(torch.randn(p.shape, generator=gen) * p.std() * scale)
    model.to(torch.bfloat16).save_pretrained(dest)
    build_manifest(dest, lineage={"variant": dest.name})
    return dest


@pytest.fixture(scope="module")
def project(served, tmp_path_factory):
    root = served.root
    # Its own results folder: the served project's results/ belong to the other tests.
    params = make_params(served.data, evaluate={"limit": 24, "out_dir": "results-divergence"},
                         divergence={"long_prompts": 0})
    base = root / "artifacts" / "baseline"
    if not base.is_dir():
        served.artifact("baseline")
    results = root / "results-divergence" / "baseline"
    results.mkdir(parents=True, exist_ok=True)
    items = [json.loads(x) for x in (root / "data" / "evalset" / "evalset.jsonl").read_text().splitlines()[:24]]
    # the teacher-forcing path: any fixed text per item (here the gold answer, reworded)
    (results / "samples.jsonl").write_text("".join(
        json.dumps({"id": r["id"], "output": "Sure. " + (r.get("reference") or "")}) + "\n" for r in items))
    return params, root


def test_the_same_weights_diverge_by_nothing(project):
    params, root = project
    r = divergence.run(*stage_args(params, root, divergence.PARAMS, "baseline"), "baseline")
    o = r["overall"]
    assert r["measured"] and o["items"] == 24 and o["tokens"] > 100
    assert o["kld_mean"] == pytest.approx(0.0, abs=1e-6) and o["top1_agreement"] == 1.0
    assert o["ref_loglik_delta"] == pytest.approx(0.0, abs=1e-6)
    assert set(r["slices"]) >= {"scenario=tool_call"}
    rows = (root / "results-divergence" / "divergence" / "baseline" / "samples.jsonl").read_text().splitlines()
    assert len(rows) == 24 and "kl" in json.loads(rows[0])


def test_more_weight_noise_means_more_divergence(project):
    params, root = project
    kld, top1, ll = [], [], []
    for scale in (0.02, 0.2):
        name = f"noise_{int(scale * 100)}"
        dest = root / "artifacts" / name
        shutil.rmtree(dest, ignore_errors=True)
        noised_copy(root / "artifacts" / "baseline", dest, scale)
        data = json.loads(json.dumps(project[0].model_dump(mode="json")))
        data["variants"][name] = dict(data["variants"]["baseline"])
        p = make_params(data)
        r = divergence.run(*stage_args(p, root, divergence.PARAMS, name), name)
        assert r["long_generation"] is None  # long_prompts: 0
        o = r["overall"]
        kld.append(o["kld_mean"])
        top1.append(o["top1_agreement"])
        ll.append(o["ref_loglik_delta"])
    assert 0 < kld[0] < kld[1] and top1[0] > top1[1]
    assert ll[1] < 0  # heavy noise makes the gold answers less likely
    lo, hi = divergence.summarize([{"kl": [0.1, 0.2]}, {"kl": [0.3]}])["kld_item_mean_ci"]
    assert lo <= 0.2 <= hi


def test_a_gguf_artifact_is_read_through_its_dequantized_weights(project, served):
    params, root = project
    name = "gguf_q8_0_business"
    served.artifact(name)
    o = divergence.run(*stage_args(params, root, divergence.PARAMS, name), name)["overall"]
    assert 0 < o["kld_mean"] < 0.05 and o["top1_agreement"] > 0.95


def test_without_the_baseline_outputs_it_says_how_to_make_them(project, tmp_path):
    params, root = project
    (tmp_path / "artifacts").mkdir()
    with pytest.raises(DivergenceError, match="dvc repro evaluate@baseline"):
        divergence.run(*stage_args(params, tmp_path, divergence.PARAMS, "baseline"), "baseline")
    assert REPO.is_dir()


def test_the_long_generation_probe_runs_to_the_context_limit(project):
    params, root = project
    from pipeline.models import load_tokenizer

    model = divergence.load_reference(root / "artifacts" / "baseline")
    tok = load_tokenizer(root / "models" / "demo")
    prompt = tok.encode("Hello, I have a question about my order.", add_special_tokens=False)
    r = divergence.long_probe(model, [prompt], 600)
    (run,) = r["runs"]
    assert run["tokens"] == 600 - len(prompt) and len(run["entropy_by_quarter"]) == 4
    assert set(r["summary"]) == {"looping", "repeated_4gram_share", "entropy_last_over_first"}
    # a tiny model run far past anything it was trained on repeats itself: the probe sees it
    assert run["repeated_4gram_share"] > 0.1 and run["loop_start"] is not None
    short = divergence.long_probe(model, [prompt * 40], 600)
    assert "skipped" in short["runs"][0] and "summary" not in short
