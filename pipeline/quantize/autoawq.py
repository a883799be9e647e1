"""AutoAWQ backend: legacy AWQ W4A16 (GEMM packing), run in its own environment (see
`ExternalBackend` in base.py).

Recipe (recipes/autoawq_*.yaml): `quant_config:` AutoAWQ's own dict as is (w_bit, q_group_size,
zero_point, version) and optional `quantize_args:` for its `quantize`. The calibration texts go
to AutoAWQ as its list of samples (it tokenizes, concatenates and cuts them into blocks of the
set's token limit). AutoAWQ is deprecated upstream and cannot reload its checkpoint on a CPU
(its CPU kernels need intel_extension_for_pytorch, which does not support the torch used here):
the load check reloads it with GPTQModel's AWQ torch kernel, in the GPTQModel environment, and
the manifest says so. vLLM serves the checkpoint (`awq`). AutoAWQ's `from_pretrained` trusts
remote code by default; here it is passed the model's `trust_remote_code` (off unless opted in).
"""

from __future__ import annotations

import time
from typing import Any

from pipeline.quantize.base import (
    ExternalBackend,
    QuantizeRequest,
    QuantizeResult,
    group_size_problems,
    log,
    read_request,
    versions,
    write_result,
)


class AutoAwqBackend(ExternalBackend):
    name = "autoawq"
    schemes = frozenset({"w4a16_awq"})
    format = "awq"
    recipe_format = "tool"

    def group_size(self, recipe: dict[str, Any]) -> int | None:
        cfg = recipe.get("quant_config")
        return int(cfg.get("q_group_size", 128)) if isinstance(cfg, dict) else None

    def recipe_problems(self, req: QuantizeRequest, recipe: dict[str, Any]) -> list[str]:
        if not isinstance(recipe.get("quant_config"), dict):
            return [f"{req.recipe}: an AutoAWQ recipe needs `quant_config:` (AutoAWQ's fields, "
                    "e.g. w_bit: 4, q_group_size: 128, zero_point: true, version: GEMM)"]
        return group_size_problems(req, self.group_size(recipe))

    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        result = super().quantize(req)
        request = {"variant": req.variant, "out_dir": str(req.out_dir), "device": req.device,
                   "load_only": "awq_torch", "load_check": self.load_check_spec(req)}
        result.load_check = self.call("gptqmodel", "gptqmodel", request, req)["load_check"]
        return result


# ── the worker, in the backend's environment ──────────────────────────────────────────


def main() -> None:
    request, result_path = read_request()
    import torch
    from awq import AutoAWQForCausalLM
    from transformers import AutoTokenizer

    recipe = request["recipe"]
    cfg = dict(recipe.get("quant_config", {}))
    texts = request["calibration"]
    max_len = request["max_seq_length"]
    trust = bool(request["trust_remote_code"])  # AutoAWQ's own default is True: never implied
    tokenizer = AutoTokenizer.from_pretrained(request["model_dir"], local_files_only=True,
                                              trust_remote_code=trust)
    t0 = time.time()
    model = AutoAWQForCausalLM.from_pretrained(request["model_dir"], trust_remote_code=trust,
                                               torch_dtype=torch.bfloat16, low_cpu_mem_usage=True,
                                               use_cache=False)
    log(f"autoawq: quantizing {request['variant']} with {len(texts)} samples ≤ {max_len} tokens")
    model.quantize(tokenizer, quant_config=cfg, calib_data=texts, max_calib_samples=len(texts),
                   max_calib_seq_len=max_len, **recipe.get("quantize_args", {}))
    model.save_quantized(request["out_dir"])
    tokenizer.save_pretrained(request["out_dir"])
    write_result(result_path, {
        "format": "awq",
        "tool_versions": versions("autoawq", "transformers", "torch"),
        "details": {"calibration_samples": len(texts), "max_seq_length": max_len, "quant_config": cfg,
                    "quantize_seconds": round(time.time() - t0, 3)},
        "notes": ["AutoAWQ 0.2.9 cannot reload its checkpoint on a CPU (its CPU kernels need "
                  "intel_extension_for_pytorch, which does not support torch 2.13); the load check "
                  "used GPTQModel's AWQ torch kernel on the same files"],
        "load_check": None,
    })


if __name__ == "__main__":
    main()
