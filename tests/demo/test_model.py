"""The embedded demo model: loads offline, has shapes every scheme accepts, knows its tasks."""

import json
import math

import pytest

from demo.heldout import evaluate_model, heldout_conversations
from demo.train import decontaminate, shingles
from demo.generator import conversation, conversation_text


@pytest.fixture(scope="module")
def model_dir(repo):
    d = repo / "models" / "demo"
    assert (d / "model.safetensors").is_file(), "the demo model is committed under models/demo"
    return d


@pytest.fixture(scope="module")
def training(model_dir):
    return json.loads((model_dir / "training.json").read_text())


def test_shapes_suit_every_scheme(model_dir):
    cfg = json.loads((model_dir / "config.json").read_text())
    assert cfg["architectures"] == ["LlamaForCausalLM"]
    assert cfg["hidden_size"] % 256 == 0 and cfg["intermediate_size"] % 256 == 0
    assert cfg["num_key_value_heads"] < cfg["num_attention_heads"]  # grouped-query attention
    assert 2 <= cfg["num_hidden_layers"] <= 8
    assert (model_dir / "model.safetensors").stat().st_size <= 25 * 2**20


def test_loads_offline_and_generates(model_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from pipeline.models import load_model, load_tokenizer

    tok, model = load_tokenizer(model_dir), load_model(model_dir)
    assert str(model.dtype) == "torch.bfloat16"
    from demo.world import SYSTEM_PROMPTS

    msgs = [{"role": "system", "content": SYSTEM_PROMPTS["faq"]},
            {"role": "user", "content": "Hello. What is the return window for the Aurora router?"}]
    ids = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    out = model.generate(**ids, max_new_tokens=24, do_sample=False, pad_token_id=tok.pad_token_id)
    text = tok.decode(out[0, ids["input_ids"].shape[1]:], skip_special_tokens=True)
    assert "30 days" in text  # the demo company's policy (demo/world.py)


def test_tokenizer_splits_digits_and_uses_chatml(model_dir):
    from pipeline.models import load_tokenizer

    tok = load_tokenizer(model_dir)
    pieces = tok.tokenize("ORD-48213377")
    assert [p for p in pieces if p.isdigit()] == list("48213377")
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                   add_generation_prompt=True)
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert tok.eos_token == "<|im_end|>"


def test_model_card_states_score_and_command(model_dir, training):
    card = (model_dir / "README.md").read_text()
    assert f"{training['heldout']['overall']:.1%}" in card
    assert "qpipe-demo eval" in card and "python -m demo.train" in card
    assert f"seed {training['config']['seed']}" in card


@pytest.mark.slow
def test_reaches_stated_score_on_a_sample(model_dir, training):
    n = 200
    stated = training["heldout"]["overall"]
    assert stated >= 0.8, "the demo model must know its tasks (≥ 80% held out)"
    result = evaluate_model(model_dir, seed=training["config"]["logs_seed"], n=n)
    se = math.sqrt(stated * (1 - stated) / n)
    assert result["overall"] >= stated - 3 * se, (result["overall"], stated)
    assert result["by_scenario"]["faq"] >= 0.9 and result["by_scenario"]["ticket"] >= 0.9


@pytest.mark.slow
def test_heldout_is_not_near_duplicate_of_training(training):
    """Independent check of the decontamination: LSH candidates (other seed, more
    permutations) confirmed by exact Jaccard over the same word 3-shingles."""
    from datasketch import MinHash, MinHashLSH

    cfg = training["config"]
    held = heldout_conversations(cfg["logs_seed"], cfg["heldout"])
    corpus = [conversation("train", cfg["seed"], i, mode="placeholder") for i in range(cfg["examples"])]
    kept, dropped = decontaminate(corpus, [conversation("logs", cfg["logs_seed"], i, mode="placeholder")
                                          for i in range(cfg["logs_conversations"])], cfg["near_threshold"])
    assert dropped == training["dropped_near_duplicates"]
    lsh = MinHashLSH(threshold=0.7, num_perm=256)
    held_sh = []
    for i, c in enumerate(held):
        sh = shingles(conversation_text(c["messages"]))
        held_sh.append(sh)
        m = MinHash(num_perm=256, seed=42)
        m.update_batch(list(sh))
        lsh.insert(i, m)
    worst = 0.0
    for c in kept:
        sh = shingles(conversation_text(c["messages"]))
        m = MinHash(num_perm=256, seed=42)
        m.update_batch(list(sh))
        for i in lsh.query(m):
            worst = max(worst, len(sh & held_sh[i]) / len(sh | held_sh[i]))
    assert worst < cfg["near_threshold"], worst
