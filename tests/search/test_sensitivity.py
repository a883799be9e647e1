"""Per-part sensitivity on the demo model: parts group the projections a mixed recipe gives one
format, the fake quantization is compressed-tensors' own numerics, every weight is restored after
a pass, and a coarser format costs more KL than a finer one."""

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from demo.generator import conversation_text, log_records
from pipeline.search import front, sensitivity

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "models" / "demo"


@pytest.fixture(scope="module")
def demo():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(DEMO, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(DEMO)
    texts = [conversation_text(r["messages"]) for r in log_records(seed=0, n=40, days=30, end_date="2026-01-01")]
    return model, tok, sensitivity.token_batches(tok, texts, max_tokens=1024, max_seq_len=128)


def test_parts_group_the_projections_that_share_a_format(demo):
    model, _, _ = demo
    groups = sensitivity.parts(model)
    assert groups["model.layers.0.self_attn.qkv"] == [f"model.layers.0.self_attn.{p}_proj" for p in "qkv"]
    assert groups["model.layers.0.mlp.gate_up"] == ["model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj"]
    assert groups["model.layers.5.mlp.down_proj"] == ["model.layers.5.mlp.down_proj"]
    assert len(groups) == 6 * 4 and not any("lm_head" in n for names in groups.values() for n in names)


def test_fake_quantization_keeps_the_formats_levels():
    w = torch.randn(8, 256, generator=torch.Generator().manual_seed(0))
    for preset, levels in (("W4A16", 16), ("W8A16", 256)):
        q = sensitivity.fake_quantized(w, preset)
        for row in q.reshape(8, -1, 128):
            for group in row:
                assert len(torch.unique(group)) <= levels
        scale = w.reshape(8, -1, 128).abs().amax(-1, keepdim=True) / (levels / 2 - 0.5)
        assert ((q - w).reshape(8, -1, 128).abs() <= scale * 0.51 + 1e-6).all()
    assert sensitivity.bits_per_weight("W4A16", 256) == pytest.approx(4 + 16 / 128)
    with pytest.raises(sensitivity.SensitivityError, match="not a compressed-tensors preset"):
        sensitivity.fake_quantized(w, "W3A16X")


def test_every_weight_is_restored_after_a_pass_even_on_error(demo):
    model, _, _ = demo
    before = {k: v.clone() for k, v in model.state_dict().items()}
    groups = sensitivity.parts(model)
    with pytest.raises(RuntimeError, match="inside"):
        with sensitivity.quantized(model, dict.fromkeys(groups, "W4A16"), groups):
            assert not torch.equal(model.state_dict()["model.layers.0.mlp.down_proj.weight"],
                                   before["model.layers.0.mlp.down_proj.weight"])
            raise RuntimeError("inside")
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def test_a_coarser_format_costs_more_and_the_front_trades_size_for_it(demo):
    model, _, batches = demo
    m = sensitivity.measure(model, batches, ["W4A16", "W8A16"])
    kl = {(r["part"], r["format"]): r["kl"] for r in m["rows"]}
    assert all(v >= -1e-6 for v in kl.values())
    worse = sum(kl[p, "W4A16"] > kl[p, "W8A16"] for p in m["parts"])
    assert worse >= 0.9 * len(m["parts"])
    assert m["uniform_kl"]["W4A16"] > 4 * m["uniform_kl"]["W8A16"] > 0
    cands = front.front(m, ["W4A16", "W8A16", "BF16"], [4.2, 5.0, 6.0, 8.2, 16.0])
    assert [c["predicted_kl"] for c in cands] == sorted((c["predicted_kl"] for c in cands), reverse=True)
    assert all(c["bits_per_weight"] <= c["budget_bits"] + 1e-9 for c in cands)
    # a measured mix: its KL against the sum its parts predicted
    mix = cands[1]["assignment"]
    got = sensitivity.mix_kl(model, batches, mix)
    assert 0.2 * cands[1]["predicted_kl"] < got < 5 * cands[1]["predicted_kl"]


def test_the_integer_program_finds_the_best_assignment_by_brute_force():
    """Seeded random instances, small enough to enumerate every assignment."""
    rng = np.random.default_rng(0)
    formats = ["W4A16", "W8A16", "BF16"]
    for trial in range(25):
        n = 5
        weights = rng.integers(1, 100, n) * 1000
        # one part in five cannot take W4A16 (its columns and the group size)
        unfit = [{"part": f"p{i}", "format": "W4A16", "why": "columns"} for i in range(n) if rng.random() < 0.2]
        measured = {"parts": {f"p{i}": [f"p{i}"] for i in range(n)}, "uniform_kl": {}, "unfit": unfit,
                    "weights": {f"p{i}": int(weights[i]) for i in range(n)},
                    "rows": [{"part": f"p{i}", "format": f, "kl": float(rng.exponential(1 / b)),
                              "weights": int(weights[i]), "bits_per_weight": b}
                             for i in range(n) for f, b in (("W4A16", 4.125), ("W8A16", 8.125))
                             if {"part": f"p{i}", "format": f, "why": "columns"} not in unfit]}
        budget = float(rng.uniform(4.2, 12))
        names, w, kl, bits, allowed = front.table(measured, formats)
        best = min((sum(kl[i, j] for i, j in enumerate(pick)) for pick in itertools.product(range(3), repeat=n)
                    if (w * bits[np.arange(n), list(pick)]).sum() <= budget * w.sum()
                    and allowed[np.arange(n), list(pick)].all()), default=None)
        pick = front.best_under(budget, w, kl, bits, allowed)
        assert (best is None) == (pick is None), trial
        if pick is not None:
            assert allowed[np.arange(n), pick].all()
            assert kl[np.arange(n), pick].sum() == pytest.approx(best, rel=1e-9, abs=1e-12), trial


def test_a_format_left_unmeasured_or_an_impossible_budget_is_refused():
    measured = {"parts": {"p": ["p"]}, "uniform_kl": {"W8A16": 0.1}, "weights": {"p": 10},
                "rows": [{"part": "p", "format": "W8A16", "kl": 0.1, "weights": 10, "bits_per_weight": 8.125}]}
    with pytest.raises(front.FrontError, match="W4A16 was not measured on p"):
        front.front(measured, ["W4A16", "W8A16"], [5.0])
    with pytest.raises(front.FrontError, match="no assignment fits"):
        front.front(measured, ["W8A16"], [5.0])
    measured["unfit"] = [{"part": "p", "format": "W4A16", "why": "576 columns do not divide into groups of 128"}]
    assert front.front(measured, ["W4A16", "W8A16"], [9.0])[0]["assignment"] == {"p": "W8A16"}
    assert front.uniform(measured, ["W4A16", "W8A16"])[0]["format"] == "W8A16"  # W4A16 cannot be uniform
    measured["unfit"].append({"part": "p", "format": "W8A16", "why": "columns"})
    measured["rows"] = []
    with pytest.raises(front.FrontError, match="no allowed format fits p"):
        front.front(measured, ["W4A16", "W8A16"], [9.0])
    assert front.front(measured, ["W4A16", "W8A16", "BF16"], [16.0])[0]["assignment"] == {"p": "BF16"}


def test_a_layer_whose_columns_the_group_size_does_not_divide_is_unfit_for_it():
    assert sensitivity.unfit("W4A16", 576) == "576 columns do not divide into groups of 128"
    assert sensitivity.unfit("W4A16", 576, group_size=64) is None
    assert sensitivity.bits_per_weight("W4A16", 576, group_size=64) == pytest.approx(4 + 16 / 64)
    w = torch.randn(4, 576)
    assert sensitivity.fake_quantized(w, "W4A16", 64).shape == w.shape
