"""Distribution-level signals on the demo model: the same weights diverge by nothing, noised
weights by more the more noise, and a GGUF artifact is read through its dequantized weights."""

import json
import shutil

import pytest
import torch

from pipeline.artifacts.manifest import build_manifest
from pipeline.evaluate import divergence, passes as pass_helpers, reference_passes
from pipeline.evaluate.divergence import DivergenceError
from pipeline.evaluate.long_probe import long_probe

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
        json.dumps({"id": r["id"], "slices": r["slices"], "score": 0.0,
                    "output": "Sure. " + (r.get("reference") or "")}) + "\n" for r in items))
    reference_passes.run(*stage_args(params, root, reference_passes.PARAMS))  # divergence_reference
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
        data["variants"][name] = dict(data["variants"]["baseline"], reference="baseline")
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
    r = long_probe(model, [prompt], 600)
    (run,) = r["runs"]
    assert run["tokens"] == 600 - len(prompt) and len(run["entropy_by_quarter"]) == 4
    assert set(r["summary"]) == {"looping", "repeated_4gram_share", "entropy_last_over_first"}
    # a tiny model run far past anything it was trained on repeats itself: the probe sees it
    assert run["repeated_4gram_share"] > 0.1 and run["loop_start"] is not None
    short = long_probe(model, [prompt * 40], 600)
    assert "skipped" in short["runs"][0] and "summary" not in short


def _noised_variant(project, scale: float):
    params, root = project
    name = f"noise_{int(scale * 100)}"
    dest = root / "artifacts" / name
    if not dest.is_dir():
        noised_copy(root / "artifacts" / "baseline", dest, scale)
    data = json.loads(json.dumps(params.model_dump(mode="json")))
    data["variants"][name] = dict(data["variants"]["baseline"], reference="baseline")
    return make_params(data), name


def test_stored_reference_passes_give_the_signals_of_running_the_reference(project):
    """divergence@ reads the reference's side from divergence_reference (its last hidden states
    and LM head): every item's signals are those of running both models, to float rounding."""
    _, root = project
    p, name = _noised_variant(project, 0.2)
    args = stage_args(p, root, divergence.PARAMS, name)
    r = divergence.run(*args, name)
    assert "stored last hidden states" in r["method"]
    rows = [json.loads(x) for x in (root / "results-divergence" / "divergence" / name / "samples.jsonl")
            .read_text().splitlines()]
    from pipeline.models import load_tokenizer

    tf = reference_passes.teacher_forced(args[0], args[1], load_tokenizer(root / "models" / "demo"))
    base = divergence.load_reference(root / "artifacts" / "baseline")
    variant = divergence.load_reference(root / "artifacts" / name)
    chunk = list(zip(tf["prompts"], tf["outputs"], tf["references"]))
    passes = pass_helpers.chunk_passes(base, variant, chunk)
    for row, c in zip(rows, chunk):
        direct = divergence.item_signals(base, variant, *c, passes)
        assert row["kl"] == pytest.approx(direct["kl"], rel=1e-4, abs=1e-6) and max(direct["kl"]) > 0
        assert row["top1_agree"] == direct["top1_agree"]
        assert row["ref_loglik_delta"] == pytest.approx(direct["ref_loglik_delta"], abs=1e-6)


def test_passes_of_other_weights_or_outputs_are_refused(project):
    params, root = project
    _, layout = stage_args(params, root)
    from pipeline.models import load_tokenizer

    tf = reference_passes.teacher_forced(params, layout, load_tokenizer(root / "models" / "demo"))
    sha = json.loads((layout.divergence_reference / "reference.json").read_text())["artifact_sha256"]
    assert reference_passes.load(params, layout, sha, tf) is not None
    with pytest.raises(reference_passes.ReferencePassesError,
                       match="reference artifact.*dvc repro divergence_reference"):
        reference_passes.load(params, layout, "0" * 64, tf)
    other = dict(tf, outputs=[o[:-1] for o in tf["outputs"]])
    with pytest.raises(reference_passes.ReferencePassesError, match="teacher-forced output tokens"):
        reference_passes.load(params, layout, sha, other)
    from pipeline.layout import Layout

    elsewhere = make_params(params.model_dump(mode="json"), evaluate={"out_dir": "results-nowhere"})
    with pytest.raises(reference_passes.ReferencePassesError, match="does not exist.*divergence-reference"):
        reference_passes.load(elsewhere, Layout(root, elsewhere), sha, tf)


def test_a_step_after_the_lm_head_is_caught_and_the_reference_run_instead(project, monkeypatch):
    """An architecture that changes the logits after the LM head (a logit scale here) keeps no
    states; divergence@ then runs the reference itself and measures the same signals."""
    params, root = project
    model = divergence.load_reference(root / "artifacts" / "baseline")
    seq = [1, 17, 240, 33, 91, 5]
    assert reference_passes.head_check(model, seq) == 0.0
    forward = model.forward

    def scaled(*a, **k):
        out = forward(*a, **k)
        out.logits = out.logits * 0.5
        return out

    monkeypatch.setattr(model, "forward", scaled)
    assert reference_passes.head_check(model, seq) > reference_passes.HEAD_TOLERANCE
    p, name = _noised_variant(project, 0.2)
    stored = divergence.run(*stage_args(p, root, divergence.PARAMS, name), name)["overall"]
    monkeypatch.setattr(reference_passes, "head_check", lambda m, s: 1.0)
    try:
        reference_passes.run(*stage_args(params, root, reference_passes.PARAMS))
        card = json.loads((root / "results-divergence" / "divergence-reference" / "reference.json").read_text())
        assert card["hidden_states"] is False and "after" in card["why"]
        r = divergence.run(*stage_args(p, root, divergence.PARAMS, name), name)
        assert "stored" not in r["method"]
        for key in ("kld_mean", "top1_agreement", "ref_loglik_delta"):
            assert r["overall"][key] == pytest.approx(stored[key], abs=1e-6)
    finally:
        monkeypatch.undo()
        reference_passes.run(*stage_args(params, root, reference_passes.PARAMS))


def test_prompts_of_one_length_are_probed_together_as_alone(project):
    """The probe generates same-length prompts in one batch (no padding): each gets the tokens
    and figures it gets alone; a prompt of another length runs in its own batch."""
    _, root = project
    from pipeline.models import load_tokenizer

    model = divergence.load_reference(root / "artifacts" / "baseline")
    tok = load_tokenizer(root / "models" / "demo")
    a = tok.encode("Where is my order?", add_special_tokens=False)
    b = tok.encode("Can I get a refund?", add_special_tokens=False)
    b = (b + a)[:len(a)] if len(b) < len(a) else b[:len(a)]
    assert len(a) == len(b) and a != b
    c = a + b  # another length
    together = long_probe(model, [a, c, b], 400)
    alone = [long_probe(model, [p], 400)["runs"][0] for p in (a, c, b)]
    for got, want in zip(together["runs"], alone):
        assert {k: v for k, v in got.items() if "entropy" not in k} == \
            {k: v for k, v in want.items() if "entropy" not in k}
        assert got["entropy_by_quarter"] == pytest.approx(want["entropy_by_quarter"], abs=1e-4)
    assert together["runs"][0] != together["runs"][2]


def test_the_gate_calibration_ladder_grows_with_the_noise_and_is_reproducible(project):
    from pipeline.compare import limits
    from pipeline.evaluate import gate_calibration
    from pipeline.layout import Layout

    params, root = project
    p = make_params(params.model_dump(mode="json"), evaluate={"limit": 24, "out_dir": "results-divergence"},
                    gate_calibration={"items": 16, "start": 0.3, "factor": 4.0, "max_steps": 3,
                                      "target_drop": 0.9, "batch": 8})
    r = gate_calibration.run(*stage_args(p, root, gate_calibration.PARAMS))
    steps = r["steps"]
    assert len(r["items"]) == len(r["base_correct"]) == 16 and len(steps) >= 2
    assert [s["scale"] for s in steps] == [0.3, 1.2, 4.8][:len(steps)]
    kl = [s["kld_item_mean"] for s in steps]
    assert kl == sorted(kl) and kl[0] > 0  # more noise, further from the reference
    assert all(len(s[k]) == 16 for s in steps for k in ("correct", "kld", "top1_agree", "tokens"))
    assert steps[-1]["lost"] >= steps[0]["lost"]
    out = root / "results-divergence" / "gate-calibration" / gate_calibration.FILE
    first = out.read_bytes()
    gate_calibration.run(*stage_args(p, root, gate_calibration.PARAMS))
    assert out.read_bytes() == first  # no run facts inside: an unchanged input keeps its DVC hash
    # compare uses it only for the reference weights and evaluation set it was made with
    layout = Layout(root, p)
    same = {"baseline_artifact_sha256": r["artifact_sha256"], "evalset_sha256": r["evalset_sha256"]}
    got = limits.derive(layout, same, 0.05, alpha=0.05, n_boot=100)
    assert got["calibrated"] and set(got["signals"]) == set(limits.SIGNALS)
    other = limits.derive(layout, {**same, "baseline_artifact_sha256": "0" * 64}, 0.05, alpha=0.05)
    assert not other["calibrated"] and "other reference weights" in other["why"]
