"""Loading the base model's tokenizer and weights: local files only, no remote code unless the
user opted in (`model.trust_remote_code: true` in params.yaml)."""

from __future__ import annotations

import json
import os
from pathlib import Path


class ModelLoadError(RuntimeError):
    pass


def _check(path: Path) -> None:
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"{path}: no config.json — model.path must be a local Hugging Face "
                             "checkpoint directory (downloads from a hub are not attempted)")


def load_tokenizer(path: Path | str, *, trust_remote_code: bool = False):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    path = Path(path)
    _check(path)
    return AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code, local_files_only=True)


def stored_dtype(path: Path | str, dtype: str = "auto") -> str:
    """The dtype `load_model(path, dtype=dtype)` gives: `dtype`, or for "auto" the checkpoint's
    (config.json's dtype / torch_dtype; float32 when it names none, as transformers does)."""
    if dtype != "auto":
        return dtype
    cfg = json.loads((Path(path) / "config.json").read_text())
    return str(cfg.get("dtype") or cfg.get("torch_dtype") or "float32").removeprefix("torch.")


# oneDNN's 16-bit matmuls need AVX-512 (or AMX, or Arm's BF16/FP16 extensions): on an AVX2-only
# x86 CPU torch falls back to scalar code for them. Measured on an AVX2 AMD EPYC: a 512×1024 by
# 1024×4096 matmul 12.5 s in bfloat16 against 0.04 s in float32; the demo model's forward over
# 8×512 tokens 4.7 s against 0.9 s; llm-compressor's W8A8 (SmoothQuant + GPTQ) 886 s against 46 s.
_NATIVE_CHECK = {"bfloat16": "_is_mkldnn_bf16_supported", "float16": "_is_mkldnn_fp16_supported"}


def native_cpu_dtype(dtype: str) -> bool:
    """Whether torch computes in `dtype` on this CPU with native (oneDNN) kernels — asked of
    torch itself; a torch that cannot say is taken at its word (True)."""
    check = _NATIVE_CHECK.get(dtype)
    if check is None:
        return True
    import torch

    probe = getattr(torch.ops.mkldnn, check, None)
    try:
        return bool(probe()) if probe is not None else True
    except (RuntimeError, AttributeError):
        return True


def cpu_compute_dtype(dtype: str) -> str:
    """The dtype to compute in on this CPU for weights stored as `dtype`: the same, or float32
    where torch has no native kernels for it. float32 holds every bfloat16/float16 value exactly,
    so the weights are the same numbers; only the arithmetic is wider (and the results round
    differently, as they already do between instruction sets)."""
    return dtype if native_cpu_dtype(dtype) else "float32"


def compute_dtypes(path: Path | str, dtype: str, device: str) -> tuple[str, str]:
    """(the dtype a checkpoint is loaded and saved in, the dtype to compute in on `device`): on a
    CPU without native 16-bit kernels, float32 (llm-compressor's W8A8 on the demo model: 46 s
    instead of 886 s on an AVX2 host); on a GPU the stored dtype."""
    stored = stored_dtype(path, dtype)
    return stored, (cpu_compute_dtype(stored) if device == "cpu" else stored)


# Tensors a quantization scheme keeps in float32 whatever the model's dtype: compressed-tensors'
# per-tensor global scales (NVFP4's scale of its FP8 block scales, input and weight).
KEEP_FLOAT32 = ("_global_scale",)


def cast_back(model, stored: str, compute: str) -> None:
    """Return a model computed in `compute` to the dtype it is saved in, as if it had been
    computed in `stored`: the tensors in `compute` go back to `stored`, except those the
    quantization scheme keeps in float32 (KEEP_FLOAT32); tensors of other dtypes (FP8 scales,
    integer weights) are untouched. Nothing to do when the dtypes are the same."""
    if compute == stored:
        return
    import torch

    was, to = getattr(torch, compute), getattr(torch, stored)
    for module in model.modules():
        for name, t in [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]:
            if t.dtype == was and not name.endswith(KEEP_FLOAT32):
                t.data = t.data.to(to)


def upcast_record(stored: str, compute: str) -> tuple[dict[str, str], list[str]]:
    """What an artifact's lineage says about its compute dtype: nothing where it is the stored
    one (so artifacts made that way keep their manifests), else the dtype and a note."""
    if compute == stored:
        return {}, []
    return {"compute_dtype": compute}, [
        f"computed in {compute}: this CPU has no native {stored} kernels (torch falls back to "
        f"scalar code); the weights were cast back to {stored} before saving"]


def load_model(path: Path | str, *, dtype: str = "bfloat16", trust_remote_code: bool = False,
               device: str = "cpu", device_map: str | None = None):
    """The model on ``device``; or placed by ``device_map`` (e.g. llm-compressor's
    "auto_offload" inside its loading context), then left where that put it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM

    path = Path(path)
    _check(path)
    torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
    placement = {} if device_map is None else {"device_map": device_map}
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype, local_files_only=True,
                                                 trust_remote_code=trust_remote_code, **placement)
    return model if device_map is not None else model.to(device)


# U+2060 WORD JOINER: invisible, and no tokenizer's added-token matcher sees through it.
_JOINER = "\u2060"


def special_strings(tokenizer) -> tuple[str, ...]:
    """Every string the tokenizer turns into a special (control) token when it reads text:
    its special tokens and added special tokens (chat turn markers and the like)."""
    found = set(getattr(tokenizer, "all_special_tokens", []) or [])
    for tok in (getattr(tokenizer, "added_tokens_decoder", None) or {}).values():
        if getattr(tok, "special", False):
            found.add(str(tok))
    return tuple(sorted((s for s in found if s), key=len, reverse=True))


def escape_specials(text: str, specials: tuple[str, ...]) -> tuple[str, int]:
    """Customer text stays text: each special-token string inside it gets a word joiner after
    its first character, so no tokenizer (transformers, llama.cpp, an engine's) reads it as a turn
    marker. Returns the text and how many were escaped; text without one is returned as is."""
    n = 0
    for s in specials:
        if s in text:
            n += text.count(s)
            text = text.replace(s, s[0] + _JOINER + s[1:])
    return text, n


def escape_messages(messages: list[dict], specials: tuple[str, ...]) -> tuple[list[dict], int]:
    """`escape_specials` over every message's content (strings only)."""
    total, out = 0, []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            content, n = escape_specials(content, specials)
            total += n
            m = {**m, "content": content}
        out.append(m)
    return out, total
