"""GPTQModel backend: GPTQ W4A16, run in its own environment (see `ExternalBackend` in base.py).

Recipe (recipes/gptqmodel_*.yaml): `quantize_config:` GPTQModel's `QuantizeConfig` fields as is
(bits, group_size, desc_act, sym, …) and `batch_size:` for its `quantize`. The calibration texts
are tokenized with the base model's tokenizer and cut to the set's token limit, as the
llm-compressor backend does. The artifact is GPTQModel's own GPTQ checkpoint
(`quantize_config.json`, `quant_method: gptq` in config.json), which vLLM serves; the load check
reloads it with `GPTQModel.load` on its torch kernel. The same worker also load-checks AutoAWQ's
checkpoints (`load_only`), which AutoAWQ itself cannot reload on a CPU.
"""

from __future__ import annotations

import os
import time
from typing import Any

from pipeline.quantize.base import (
    ExternalBackend,
    QuantizeRequest,
    generate_check,
    group_size_problems,
    log,
    read_request,
    versions,
    write_result,
)


class GptqModelBackend(ExternalBackend):
    name = "gptqmodel"
    schemes = frozenset({"w4a16_gptq"})
    format = "gptq"
    recipe_format = "tool"

    def group_size(self, recipe: dict[str, Any]) -> int | None:
        cfg = recipe.get("quantize_config")
        return int(cfg.get("group_size", 128)) if isinstance(cfg, dict) else None

    def recipe_problems(self, req: QuantizeRequest, recipe: dict[str, Any]) -> list[str]:
        if not isinstance(recipe.get("quantize_config"), dict):
            return [f"{req.recipe}: a GPTQModel recipe needs `quantize_config:` (GPTQModel's "
                    "QuantizeConfig fields, e.g. bits: 4, group_size: 128)"]
        return group_size_problems(req, self.group_size(recipe))


# ── the worker, in the backend's environment ──────────────────────────────────────────


KEEP = ("bits", "group_size", "desc_act", "sym", "quant_method", "format", "checkpoint_format")


def main() -> None:
    request, result_path = read_request()
    os.environ.setdefault("GPTQMODEL_CPU_WORKERS", str(min(2, os.cpu_count() or 1)))
    import torch
    from gptqmodel import BACKEND, GPTQModel, QuantizeConfig
    from transformers import AutoTokenizer

    device = "cpu" if request["device"] == "cpu" else "cuda:0"
    if request.get("load_only"):  # another tool's checkpoint (AutoAWQ's), reloaded here
        tokenizer = AutoTokenizer.from_pretrained(request["out_dir"], local_files_only=True)
        backend = BACKEND(request["load_only"])
        model = GPTQModel.load(request["out_dir"], device=device, backend=backend)
        version = versions("gptqmodel").get("gptqmodel")
        check = generate_check(model, tokenizer, request, device=device,
                               loader=f"gptqmodel {version} GPTQModel.load (BACKEND.{backend.name})")
        write_result(result_path, {"load_check": check})
        return
    recipe = request["recipe"]
    qcfg = QuantizeConfig(**recipe.get("quantize_config", {}))
    tokenizer = AutoTokenizer.from_pretrained(request["model_dir"], local_files_only=True)
    max_len = request["max_seq_length"]
    calib = []
    for text in request["calibration"]:
        enc = tokenizer(text, add_special_tokens=False, truncation=True, max_length=max_len)
        calib.append({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]})
    t0 = time.time()
    model = GPTQModel.load(request["model_dir"], qcfg, device=device,
                           trust_remote_code=request["trust_remote_code"], dtype=torch.bfloat16)
    log(f"gptqmodel: quantizing {request['variant']} on {device} with {len(calib)} samples ≤ {max_len} tokens")
    model.quantize(calib, batch_size=int(recipe.get("batch_size", 1)), tokenizer=tokenizer,
                   calibration_data_min_length=1)
    model.save(request["out_dir"])
    tokenizer.save_pretrained(request["out_dir"])
    quantize_s = time.time() - t0
    del model
    reloaded = GPTQModel.load(request["out_dir"], device=device, backend=BACKEND.TORCH)
    version = versions("gptqmodel").get("gptqmodel")
    check = generate_check(reloaded, tokenizer, request, device=device,
                           loader=f"gptqmodel {version} GPTQModel.load (BACKEND.TORCH)")
    write_result(result_path, {
        "format": "gptq",
        "tool_versions": versions("gptqmodel", "transformers", "torch", "accelerate"),
        "details": {"calibration_samples": len(calib), "max_seq_length": max_len,
                    "quantize_config": {k: v for k, v in qcfg.to_dict().items() if k in KEEP},
                    "quantize_seconds": round(quantize_s, 3)},
        "notes": [],
        "load_check": check,
    })


if __name__ == "__main__":
    main()
