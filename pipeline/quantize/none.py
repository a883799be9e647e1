"""The baseline "backend": the unquantized checkpoint itself, copied as an artifact so that
everything downstream (manifest, verify, engines, comparison) treats it like any variant."""

from __future__ import annotations

import json
import shutil

from pipeline.config import BASELINE_SCHEMES
from pipeline.quantize.base import Backend, QuantizeRequest, QuantizeResult

# What a serving engine needs from a Hugging Face checkpoint directory.
MODEL_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
               "chat_template.jinja", "special_tokens_map.json", "tokenizer.model")


class BaselineBackend(Backend):
    name = "none"
    schemes = BASELINE_SCHEMES
    format = "hf"
    recipe_format = "dtype"
    transformers_loads = True
    DTYPES = {"bf16": "bfloat16", "fp16": "float16"}  # scheme -> torch dtype name

    def recipe_key(self, scheme: str) -> tuple[str, str | None]:
        return "dtype", self.DTYPES.get(scheme)

    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        import torch
        import transformers

        want = self.DTYPES[req.scheme]
        cfg = json.loads((req.model_dir / "config.json").read_text())
        have = cfg.get("dtype") or cfg.get("torch_dtype")
        if have == want:  # byte-for-byte copy of the weights
            for f in [*MODEL_FILES, *(p.name for p in req.model_dir.glob("*.safetensors*"))]:
                if (req.model_dir / f).is_file():
                    shutil.copy2(req.model_dir / f, req.out_dir / f)
        else:  # cast once, so the baseline is served in the dtype the variant names
            from pipeline.models import load_model, load_tokenizer

            model = load_model(req.model_dir, dtype=want, trust_remote_code=req.trust_remote_code)
            model.save_pretrained(req.out_dir)
            load_tokenizer(req.model_dir, trust_remote_code=req.trust_remote_code).save_pretrained(req.out_dir)
        return QuantizeResult(format="hf", tool_versions={"transformers": transformers.__version__,
                                                          "torch": torch.__version__},
                              details={"dtype": want, "copied": have == want})
