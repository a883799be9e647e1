"""Loading the base model's tokenizer and weights: local files only, no remote code unless the
user opted in (`model.trust_remote_code: true` in params.yaml)."""

from __future__ import annotations

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
