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
