"""A proposed mix as the recipes the field's tools build natively:

- an llm-compressor recipe: one `config_groups` entry per format, each targeting its parts'
  layers by regex (`re:`), the unquantized parts and the LM head ignored — compressed-tensors
  writes the per-layer schemes into the checkpoint's config, and vLLM serves it;
- a GGUF recipe for this project's llama.cpp backend: llama.cpp's preset for the parts at the
  lowest format, and a `--tensor-type` override (a regex on GGUF tensor names) for every other
  part — llama-quantize's own per-tensor mechanism.

The proxy measures the blocks' linear layers with the token embedding and the output matrix
unquantized, and the llm-compressor recipe leaves them so. A GGUF preset quantizes them too
(Q4_K_M: the embedding in Q4_K, the output in Q6_K), which no part measured: on the demo that
alone held every mix at Q4_K_M's served KL (1.2e-3, even with 35 of 44 block matrices in Q8_0)
and the same mix with the embedding in Q8_0 served 7e-6. So the GGUF recipe keeps both at Q8_0
(`KEEP_OUTSIDE_BLOCKS`): near-lossless, as W8A16 measures on every part, and the proposal served
is the one the proxy measured.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.search.sensitivity import LAYER, UNQUANTIZED, weight_args

# a part's projection (the tail of its name) → the GGUF tensors it is written as
GGUF_TENSORS = {"self_attn.qkv": "attn_(q|k|v)", "self_attn.o_proj": "attn_output",
                "mlp.gate_up": "ffn_(gate|up)", "mlp.down_proj": "ffn_down"}
# each weight format → the GGUF type of the same bits; the preset for parts at the lowest one
GGUF_TYPES = {"W4A16": "q4_K", "W4A16_ASYM": "q4_1", "W8A16": "q8_0", UNQUANTIZED: "f16"}
GGUF_PRESETS = {"W4A16": "Q4_K_M", "W4A16_ASYM": "Q4_1", "W8A16": "Q8_0", UNQUANTIZED: "F16"}
# the GGUF tensors outside the blocks (no part holds them) and the type they are kept at; a
# pattern that matches nothing (a tied output matrix is not written) changes nothing
KEEP_OUTSIDE_BLOCKS = {"token_embd": "q8_0", "output": "q8_0"}


class RecipeError(ValueError):
    pass


def _order(fmt: str) -> float:
    return 16.0 if fmt == UNQUANTIZED else float(weight_args(fmt).num_bits)


def gguf_recipe(assignment: dict[str, str]) -> dict[str, Any]:
    """The llama.cpp backend's recipe for a mix: the lowest format's preset, the other parts
    overridden by tensor-name regex."""
    used = sorted(set(assignment.values()), key=_order)
    base = used[0]
    overrides = [] if GGUF_PRESETS[base] in ("Q8_0", "F16") else [
        f"^{name}\\.weight$={kind}" for name, kind in KEEP_OUTSIDE_BLOCKS.items()]  # whole names, not attn_output
    for part, fmt in assignment.items():
        if fmt == base:
            continue
        m = LAYER.match(part)
        tail = m["rest"] if m else None
        if tail not in GGUF_TENSORS:
            raise RecipeError(f"part {part!r} has no GGUF tensor name known here (known: "
                              f"{', '.join(GGUF_TENSORS)}) — fix: keep it at {base}")
        index = re.search(r"\.(\d+)$", m["prefix"]).group(1)
        overrides.append(f"blk\\.{index}\\.{GGUF_TENSORS[tail]}\\.weight={GGUF_TYPES[fmt]}")
    return {"preset": GGUF_PRESETS[base], "outtype": "f16", "tensor_types": overrides,
            "imatrix": {"ctx": 512, "chunks": 256}}


def llmcompressor_recipe(assignment: dict[str, str], parts: dict[str, list[str]], group_size: int | None,
                         modifier: str = "GPTQModifier") -> dict[str, Any]:
    """An llm-compressor recipe for a mix: one config group per quantized format, its targets the
    layers of the parts at that format (exact names, as regexes); unquantized parts ignored."""
    groups: dict[str, Any] = {}
    ignore = ["lm_head"]
    for k, fmt in enumerate(sorted(set(assignment.values()), key=_order)):
        layers = [name for part, f in assignment.items() if f == fmt for name in parts[part]]
        if fmt == UNQUANTIZED:
            ignore += [f"re:^{re.escape(n)}$" for n in layers]
            continue
        args = weight_args(fmt, group_size).model_dump(mode="json")
        weights = {k: args[k] for k in ("num_bits", "type", "symmetric", "strategy", "group_size")
                   if args.get(k) is not None}
        groups[f"group_{k}"] = {"targets": [f"re:^{re.escape(n)}$" for n in layers], "weights": weights}
    return {"quant_stage": {"quant_modifiers": {modifier: {"config_groups": groups, "ignore": ignore,
                                                          "dampening_frac": 0.01}}}}
