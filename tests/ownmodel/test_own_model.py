"""The pipeline over a second model with the awkward shapes of public checkpoints (see conftest):
576-wide layers, 9/3 heads, tied embeddings, a padded vocabulary, its own special tokens and a
Llama-3 style chat template. Validation, llm-compressor (GPTQ group 64, W8A8), llama.cpp (Q4_K_M
with fallback types), and serving on vLLM and llama.cpp, each checked on concrete facts."""

import hashlib
import json

import pytest

from pipeline.artifacts.manifest import verify
from pipeline.evaluate.harness import load_evalset, render
from pipeline.models import load_tokenizer
from pipeline.validate import validate_project

from .conftest import (BOS, DEMO_SPECIALS, EOT, EVAL_LIMIT, GPTQ_G64, HEADERS, LOAD_CHECK_TOKENS,
                       SHAPE)

pytestmark = pytest.mark.slow

GPTQ_PRESET = ("gptq_w4a16_business", "gptq_w4a16_general")  # recipes/gptq_w4a16.yaml: W4A16, group 128
GGUF_KQUANTS = ("gguf_q4_k_m_business", "gguf_q5_k_m_business", "gguf_q2_k_business")
W8A8, Q4KM = "w8a8_int8_business", "gguf_q4_k_m_business"


def _safetensors_keys(folder) -> set[str]:
    from safetensors import safe_open

    keys: set[str] = set()
    for f in sorted(folder.glob("*.safetensors")):
        with safe_open(str(f), framework="np") as st:
            keys.update(st.keys())
    return keys


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _generate(folder, messages, new_tokens) -> list[int]:
    """Greedy tokens from a checkpoint folder, prompted through its own chat template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype="auto", local_files_only=True)
    enc = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                  return_dict=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=new_tokens, do_sample=False,
                             pad_token_id=tok.pad_token_id)
    return out[0, enc["input_ids"].shape[1]:].tolist()


# ── validate ────────────────────────────────────────────────────────────────────────────────


def test_validate_names_the_576_wide_layers_and_proposes_group_64(own_project):
    problems = validate_project(own_project.root / "params.yaml")
    by_variant: dict[str, list] = {}
    for p in problems:
        parts = p.key.split(".")
        assert parts[0] == "variants", f"not a shape problem: {p}"
        by_variant.setdefault(parts[1], []).append(p)
    for name in GPTQ_PRESET:
        found = by_variant.get(name, [])
        dims = sorted(p.message.split(" is not divisible")[0] for p in found)
        # q/k/v/gate/up read hidden_size, o_proj reads heads * head_dim: both 576; down_proj
        # reads 1536, which 128 divides
        assert dims == ["hidden_size=576", "num_attention_heads * head_dim=576"], found
        for p in found:
            assert p.key == f"variants.{name}.scheme"
            assert "not divisible by 128" in p.message and "recipes/gptq_w4a16.yaml" in p.message
            assert p.fix.startswith("quantize with group size 64, which divides every layer")
            assert "group_size: 64" in p.fix
        assert not any("intermediate_size" in p.message for p in found)
    # the same scheme with config_groups of 64: nothing to report
    assert GPTQ_G64 not in by_variant
    # llama.cpp quantizes rows its 256-wide super-blocks do not divide with a fallback type
    assert not set(GGUF_KQUANTS) & set(by_variant)
    assert all(not name.startswith("gguf_") for name in by_variant)
    # every other group-128 scheme on this model is reported too, and nothing else
    assert set(by_variant) == {*GPTQ_PRESET, "awq_w4a16_business", "gptqmodel_w4a16_business",
                               "autoawq_w4a16_business"}, sorted(by_variant)


# ── the baseline: tied embeddings, the model's own template, served on vLLM ────────────────


def test_baseline_keeps_the_tied_embeddings(own_project):
    manifest = own_project.quantized("baseline")
    art = own_project.root / "artifacts" / "baseline"
    assert verify(art) == []
    assert manifest["quantization"]["copied"] is True  # bf16 checkpoint: copied byte for byte
    config = json.loads((art / "config.json").read_text())
    assert config["tie_word_embeddings"] is True
    assert config["vocab_size"] == SHAPE["vocab_size"]
    keys = _safetensors_keys(art)
    assert "model.embed_tokens.weight" in keys
    assert "lm_head.weight" not in keys, "tied output layer stored as a separate tensor"
    assert manifest["load_check"]["ok"] is True
    assert (art / "chat_template.jinja").read_text() == (own_project.model / "chat_template.jinja").read_text()


def test_baseline_is_served_on_vllm_with_the_models_own_chat_template(own_project):
    metrics = own_project.evaluated("baseline")
    out = own_project.root / "results" / "baseline"
    assert json.loads((out / "metrics.json").read_text())["n"] == metrics["n"] == EVAL_LIMIT
    assert metrics["engine"]["name"] == "vllm"
    assert "unquantized" in metrics["engine"]["kernel"]

    tok = load_tokenizer(own_project.model)
    evalset = load_evalset(own_project.root / own_project.params.evaluate.evalset, limit=EVAL_LIMIT)
    prompts = render(tok, evalset.items)
    records = _records(out / "samples.jsonl")
    assert [r["id"] for r in records] == [i.id for i in evalset.items]
    assert [r["prompt_tokens"] for r in records] == [len(p) for p in prompts]
    assert all(r["prompt_tokens"] > 0 for r in records)
    # the prompts the engine got are exactly these ids (the protocol hash is over them)
    h = hashlib.sha256()
    for ids in prompts:
        h.update(",".join(map(str, ids)).encode() + b"\n")
    assert metrics["protocol"]["prompts_sha256"] == h.hexdigest()

    bos, eot = tok.convert_tokens_to_ids(BOS), tok.convert_tokens_to_ids(EOT)
    start, end = (tok.convert_tokens_to_ids(t) for t in HEADERS)
    assistant = tok("assistant", add_special_tokens=False)["input_ids"]
    newlines = tok("\n\n", add_special_tokens=False)["input_ids"]
    for ids in prompts:
        assert ids[0] == bos and ids.count(bos) == 1
        assert ids.count(start) == ids.count(end) == ids.count(eot) + 1  # every turn closed, then the answer's header
        assert ids[-(len(assistant) + len(newlines) + 2):] == [start, *assistant, end, *newlines]
        text = tok.decode(ids)
        assert text.startswith(BOS + HEADERS[0]) and text.endswith(f"{HEADERS[0]}assistant{HEADERS[1]}\n\n")
        assert not any(s in text for s in DEMO_SPECIALS)  # no ChatML from the demo


# ── llm-compressor: GPTQ with groups of 64, W8A8 ──────────────────────────────────────────


@pytest.mark.vllm_w4a16
def test_gptq_group_64_quantizes_loads_and_serves_on_vllm(own_project):
    manifest = own_project.quantized(GPTQ_G64)
    art = own_project.root / "artifacts" / GPTQ_G64
    assert verify(art) == []
    assert manifest["group_size"] == 64 and manifest["bits"] == 4
    assert manifest["format"] == "compressed-tensors" and manifest["engine"] == "vllm"
    assert manifest["calibration"]["samples"] == 16
    assert manifest["quantization"]["calibration_samples"] == 16
    config = json.loads((art / "config.json").read_text())
    qc = config["quantization_config"]
    groups = list(qc["config_groups"].values())
    assert groups and all(g["weights"]["group_size"] == 64 and g["weights"]["num_bits"] == 4
                          and g["weights"]["strategy"] == "group" for g in groups)
    assert "lm_head" in qc["ignore"]
    # every 576- and 1536-wide projection quantized: packed weights with one scale per 64 inputs
    keys = _safetensors_keys(art)
    for i in range(SHAPE["num_hidden_layers"]):
        for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                  "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
            assert f"model.layers.{i}.{m}.weight_packed" in keys, m
            assert f"model.layers.{i}.{m}.weight_scale" in keys, m
    # lm_head is ignored, so the embeddings stay tied: one table, no separate output layer
    assert config["tie_word_embeddings"] is True
    assert "model.embed_tokens.weight" in keys and not any(k.startswith("lm_head.") for k in keys)

    check = manifest["load_check"]
    assert check["ok"] is True and "compressed-tensors" in check["loader"]
    assert 0 < len(check["tokens"]) <= LOAD_CHECK_TOKENS
    # the load check answered the params' prompt, through the model's own template
    lc = own_project.params.quantize.load_check
    assert _generate(art, lc.messages(), lc.new_tokens) == check["tokens"]

    metrics = own_project.evaluated(GPTQ_G64)
    out = own_project.root / "results" / GPTQ_G64
    assert json.loads((out / "metrics.json").read_text())["n"] == metrics["n"] == EVAL_LIMIT
    assert metrics["engine"]["name"] == "vllm"
    assert "WNA16" in metrics["engine"]["kernel"], metrics["engine"]
    assert metrics["artifact_sha256"] == manifest["content_sha256"]
    assert len(_records(out / "samples.jsonl")) == EVAL_LIMIT


def test_w8a8_smoothquant_gptq_quantizes(own_project):
    manifest = own_project.quantized(W8A8)
    art = own_project.root / "artifacts" / W8A8
    assert verify(art) == []
    assert manifest["scheme"] == "w8a8_int8" and manifest["bits"] == 8
    assert manifest["group_size"] is None  # per-channel: 576 needs no group to divide it
    assert manifest["quantization"]["calibration_samples"] == 16
    resolved = manifest["recipe"]["resolved"]["quant_stage"]["quant_modifiers"]
    assert set(resolved) == {"SmoothQuantModifier", "GPTQModifier"}
    qc = json.loads((art / "config.json").read_text())["quantization_config"]
    groups = list(qc["config_groups"].values())
    assert groups and all(g["weights"]["num_bits"] == 8 and g["weights"]["strategy"] == "channel"
                          and g["input_activations"]["num_bits"] == 8 for g in groups)
    assert manifest["load_check"]["ok"] is True
    assert 0 < len(manifest["load_check"]["tokens"]) <= LOAD_CHECK_TOKENS


# ── llama.cpp: Q4_K_M with the business importance matrix ──────────────────────────────────


def test_gguf_q4_k_m_falls_back_on_576_wide_rows_and_serves_on_llamacpp(own_project):
    manifest = own_project.quantized(Q4KM)
    art = own_project.root / "artifacts" / Q4KM
    assert verify(art) == []
    q = manifest["quantization"]
    assert q["preset"] == "Q4_K_M" and q["imatrix"] is True
    assert (art / "imatrix.gguf").is_file() and (art / q["gguf_file"]).is_file()
    fallbacks = q["fallbacks"]
    assert fallbacks, "576 is not a multiple of 256, yet no tensor fell back"
    # only the 576-wide rows fall back (1536, ffn_down's, is a multiple of 256)
    assert {f["cols"] for f in fallbacks} == {SHAPE["hidden_size"]}
    assert {f["block"] for f in fallbacks} == {256}
    names = {f["tensor"] for f in fallbacks}
    for i in range(SHAPE["num_hidden_layers"]):
        assert {f"blk.{i}.attn_q.weight", f"blk.{i}.attn_k.weight", f"blk.{i}.attn_output.weight",
                f"blk.{i}.ffn_gate.weight", f"blk.{i}.ffn_up.weight"} <= names
    assert not any("ffn_down" in n for n in names)
    assert all(f["type"].endswith("_K") and f["fallback"] != f["type"] for f in fallbacks)
    assert any("q4_K -> " in note and "fallback type" in note for note in manifest["notes"]), manifest["notes"]
    reader = q["reader"]
    assert reader["architecture"] == "llama" and reader["pre_tokenizer"] == "qwen2"
    assert reader["has_chat_template"] is True
    # no output.weight: the tied embeddings stay one tensor in the GGUF too
    assert reader["tensors"] == 1 + 1 + 9 * SHAPE["num_hidden_layers"]
    log = (own_project.root / "runs" / "quantize" / f"{Q4KM}.log").read_text()
    assert "as the Hugging Face tokenizer does" in log
    assert manifest["load_check"]["ok"] is True and manifest["load_check"]["tokens"]

    metrics = own_project.evaluated(Q4KM)
    out = own_project.root / "results" / Q4KM
    assert json.loads((out / "metrics.json").read_text())["n"] == metrics["n"] == EVAL_LIMIT
    assert metrics["engine"]["name"] == "llamacpp"
    assert metrics["artifact_sha256"] == manifest["content_sha256"]
    records = _records(out / "samples.jsonl")
    assert len(records) == EVAL_LIMIT and all(r["prompt_tokens"] > 0 for r in records)
    # the same prompt ids as on vLLM: one rendering, through the base model's template
    base = own_project.evaluated("baseline")
    assert metrics["protocol"]["prompts_sha256"] == base["protocol"]["prompts_sha256"]
