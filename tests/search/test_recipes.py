"""A proposed mix as native recipes: llama.cpp's preset with `--tensor-type` overrides that hit
exactly the parts' tensors, and llm-compressor config groups whose targets are exactly the parts'
layers — checked by the tools themselves on the demo model (slow tests)."""

import re
from pathlib import Path

import pytest
import yaml

from pipeline.search import recipes

PARTS = {f"model.layers.{i}.{p}": names for i in range(12) for p, names in (
    ("self_attn.qkv", [f"model.layers.{i}.self_attn.{x}_proj" for x in "qkv"]),
    ("self_attn.o_proj", [f"model.layers.{i}.self_attn.o_proj"]),
    ("mlp.gate_up", [f"model.layers.{i}.mlp.gate_proj", f"model.layers.{i}.mlp.up_proj"]),
    ("mlp.down_proj", [f"model.layers.{i}.mlp.down_proj"]))}
GGUF_NAMES = [f"blk.{i}.{t}.weight" for i in range(12)
              for t in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")]
GGUF_NAMES += ["token_embd.weight", "output.weight", "output_norm.weight"]


def mix():
    a = dict.fromkeys(PARTS, "W4A16")
    a["model.layers.1.self_attn.qkv"] = "W8A16"
    a["model.layers.11.mlp.down_proj"] = "W8A16"
    a["model.layers.0.mlp.gate_up"] = "BF16"
    return a


def test_gguf_overrides_hit_exactly_the_parts_tensors():
    r = recipes.gguf_recipe(mix())
    assert r["preset"] == "Q4_K_M"
    hit = {}
    for o in r["tensor_types"]:
        pattern, ggml = o.split("=")
        for name in GGUF_NAMES:
            if re.search(pattern, name):  # llama-quantize searches each tensor name with the regex
                assert name not in hit, f"{name} matched twice"
                hit[name] = ggml
    assert hit == {"blk.1.attn_q.weight": "q8_0", "blk.1.attn_k.weight": "q8_0", "blk.1.attn_v.weight": "q8_0",
                   "blk.11.ffn_down.weight": "q8_0", "blk.0.ffn_gate.weight": "f16", "blk.0.ffn_up.weight": "f16",
                   # outside the blocks, which no part measures: kept near-lossless, as the proxy had them
                   "token_embd.weight": "q8_0", "output.weight": "q8_0"}
    uniform_high = recipes.gguf_recipe(dict.fromkeys(mix(), "W8A16"))
    assert uniform_high["preset"] == "Q8_0" and uniform_high["tensor_types"] == []


def test_an_unknown_part_has_no_gguf_recipe():
    with pytest.raises(recipes.RecipeError, match="no GGUF tensor name"):
        recipes.gguf_recipe({"transformer.h.0.attn.c_attn": "W8A16", "transformer.h.0.mlp.c_fc": "W4A16"})


def test_llmcompressor_groups_target_exactly_the_parts_layers():
    r = recipes.llmcompressor_recipe(mix(), PARTS, group_size=64)
    mod = r["quant_stage"]["quant_modifiers"]["GPTQModifier"]
    layers = [n for names in PARTS.values() for n in names]
    owner = {}
    for spec in mod["config_groups"].values():
        for t in spec["targets"]:
            for n in layers:
                if re.search(t.removeprefix("re:"), n):
                    assert n not in owner
                    owner[n] = spec["weights"]["num_bits"]
    assert owner["model.layers.1.self_attn.k_proj"] == 8 and owner["model.layers.11.mlp.down_proj"] == 8
    assert owner["model.layers.5.mlp.up_proj"] == 4
    assert "model.layers.0.mlp.gate_proj" not in owner  # BF16: ignored
    assert any(re.search(i.removeprefix("re:"), "model.layers.0.mlp.gate_proj") for i in mod["ignore"][1:])
    assert len(owner) == len(layers) - 2
    assert {s["weights"]["group_size"] for s in mod["config_groups"].values()} == {64}


@pytest.mark.slow
def test_llama_quantize_writes_the_mix_and_llm_compressor_applies_it(served, tmp_path):
    """The demo model through the real quantize stage with a mixed GGUF recipe: the overridden
    tensors are q8_0 in the file; and llm-compressor's oneshot applies the mixed recipe, each
    layer with its group's scheme."""
    import json

    from gguf import GGUFReader

    from conftest import stage_args
    from pipeline.config import Params
    from pipeline.quantize import stage as quantize

    assign = {p: "W4A16" for p in [f"model.layers.{i}.{x}" for i in range(6)
                                   for x in ("self_attn.qkv", "self_attn.o_proj", "mlp.gate_up", "mlp.down_proj")]}
    assign["model.layers.0.self_attn.qkv"] = "W8A16"
    (served.root / "recipes" / "gguf_mix.yaml").write_text(yaml.safe_dump(recipes.gguf_recipe(assign)))
    data = json.loads(json.dumps(served.data))
    data["variants"]["gguf_mix"] = {"backend": "llamacpp", "scheme": "gguf_q4_k_m", "recipe": "recipes/gguf_mix.yaml",
                                    "calibration": "business", "reference": "gguf_f16"}
    params = Params.model_validate(data)
    quantize.run(*stage_args(params, served.root, quantize.PARAMS, "gguf_mix"), "gguf_mix")
    art = served.root / "artifacts" / "gguf_mix"
    [gguf] = [p for p in art.glob("*.gguf") if not p.name.startswith("imatrix")]
    types = {t.name: t.tensor_type.name for t in GGUFReader(gguf).tensors}
    assert {types[f"blk.0.attn_{x}.weight"] for x in "qkv"} == {"Q8_0"}
    assert types["blk.1.attn_q.weight"] != "Q8_0" and types["blk.0.attn_output.weight"] != "Q8_0"
    assert types["token_embd.weight"] == "Q8_0" == types["output.weight"]  # Q4_K_M's own: Q4_K, Q6_K
    manifest = json.loads((art / "manifest.json").read_text())
    assert "blk\\.0\\.attn_(q|k|v)\\.weight=q8_0" in manifest["quantization"]["tensor_types"]  # its lineage

    import torch
    from llmcompressor import oneshot
    from transformers import AutoModelForCausalLM

    from demo.generator import conversation_text, log_records

    model = AutoModelForCausalLM.from_pretrained(served.root / "models" / "demo", dtype=torch.float32)
    groups = {p: [f"{p.rsplit('.', 1)[0]}.{x}" for x in
                  {"qkv": ("q_proj", "k_proj", "v_proj"), "gate_up": ("gate_proj", "up_proj")}.get(
                      p.rsplit(".", 1)[1], (p.rsplit(".", 1)[1],))] for p in assign}
    recipe = tmp_path / "mix.yaml"
    recipe.write_text(yaml.safe_dump(recipes.llmcompressor_recipe(assign, groups, None)))
    from datasets import Dataset

    texts = [conversation_text(r["messages"]) for r in log_records(seed=0, n=16, days=30, end_date="2026-01-01")]
    oneshot(model=model, recipe=str(recipe), dataset=Dataset.from_dict({"text": texts}),
            max_seq_length=128, num_calibration_samples=16, output_dir=str(tmp_path / "out"))
    cfg = json.loads((tmp_path / "out" / "config.json").read_text())["quantization_config"]
    bits = {}
    for g in cfg["config_groups"].values():
        for t in g["targets"]:
            bits[t] = g["weights"]["num_bits"]
    k_proj = [b for t, b in bits.items() if re.search(t.removeprefix("re:"), "model.layers.0.self_attn.k_proj")]
    up = [b for t, b in bits.items() if re.search(t.removeprefix("re:"), "model.layers.3.mlp.up_proj")]
    assert k_proj == [8] and up == [4]
    assert list(Path(tmp_path / "out").glob("*.safetensors"))
