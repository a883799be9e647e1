"""NVIDIA ModelOpt backend: FP8 (static activation scales), NVFP4 and INT4 AWQ, run in its own
environment (see `ExternalBackend` in base.py), exported as a unified Hugging Face checkpoint.

Recipe (recipes/modelopt_*.yaml): `config:` the name of one of ModelOpt's quantization configs
(`FP8_DEFAULT_CFG`, `NVFP4_DEFAULT_CFG`, `INT4_AWQ_CFG`, …) and optional `overrides:` merged into
its `quant_cfg` by pattern. Calibration is ModelOpt's forward loop over the calibration texts,
tokenized with the base model's tokenizer and cut to the set's token limit, one at a time.

Load check: the unified checkpoint (`hf_quant_config.json`) is loaded by TensorRT-LLM, vLLM and
SGLang on GPUs with FP8/FP4 support; no engine on a CPU loads it (vLLM's CPU build has no static
FP8 activation kernel). So the check generates with ModelOpt's own quantized model (simulated
quantization: the numerics the exported weights carry) and reads the exported checkpoint back —
its quantization config and every quantized weight with its dtype and scales. NVFP4's simulated
inference needs CUDA ("amax must be a CUDA tensor"): on a CPU the generation is skipped and the
manifest says so.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
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


# ModelOpt's export packs INT4 AWQ weights in blocks of 128 input features.
BLOCK = {"INT4_AWQ_CFG": 128, "W4A8_AWQ_BETA_CFG": 128, "NVFP4_DEFAULT_CFG": 16, "NVFP4_AWQ_LITE_CFG": 16}
SCHEME_CONFIGS = {"fp8": {"FP8_DEFAULT_CFG"}, "nvfp4": {"NVFP4_DEFAULT_CFG", "NVFP4_AWQ_LITE_CFG"},
                  "w4a16_awq": {"INT4_AWQ_CFG"}}


class ModelOptBackend(ExternalBackend):
    name = "modelopt"
    schemes = frozenset({"fp8", "nvfp4", "w4a16_awq"})
    format = "modelopt"
    recipe_format = "tool"

    def group_size(self, recipe: dict[str, Any]) -> int | None:
        return BLOCK.get(recipe.get("config"))

    def recipe_problems(self, req: QuantizeRequest, recipe: dict[str, Any]) -> list[str]:
        cfg = recipe.get("config")
        allowed = SCHEME_CONFIGS.get(req.scheme, set())
        if cfg not in allowed:
            return [f"{req.recipe}: `config: {cfg}` does not make scheme {req.scheme} — fix: one of "
                    f"{', '.join(sorted(allowed))}"]
        return group_size_problems(req, self.group_size(recipe))


# ── the worker, in the backend's environment ──────────────────────────────────────────


def read_back(out_dir: Path) -> dict:
    """The exported checkpoint as a deployment engine would find it."""
    from safetensors import safe_open

    qcfg = json.loads((out_dir / "hf_quant_config.json").read_text())
    dtypes: dict[str, int] = {}
    weights = scales = 0
    for f in sorted(out_dir.glob("*.safetensors")):
        with safe_open(str(f), framework="pt") as st:
            for key in st.keys():
                if key.endswith(".weight") and ".layers." in key and len(st.get_slice(key).get_shape()) == 2:
                    weights += 1
                    dt = str(st.get_slice(key).get_dtype())
                    dtypes[dt] = dtypes.get(dt, 0) + 1
                elif "scale" in key.rsplit(".", 1)[-1]:
                    scales += 1
    quant = qcfg.get("quantization", qcfg)
    return {"quant_algo": quant.get("quant_algo"), "group_size": quant.get("group_size"),
            "exclude_modules": quant.get("exclude_modules"), "layer_weight_dtypes": dtypes,
            "scale_tensors": scales, "layer_weights": weights}


def main() -> None:
    request, result_path = read_request()
    import modelopt
    import modelopt.torch.quantization as mtq
    import torch
    from modelopt.torch.export import export_hf_checkpoint
    from transformers import AutoModelForCausalLM, AutoTokenizer

    recipe = request["recipe"]
    device = "cpu" if request["device"] == "cpu" else "cuda:0"
    name = recipe["config"]
    cfg = copy.deepcopy(getattr(mtq, name))
    for pattern, override in (recipe.get("overrides") or {}).items():
        cfg["quant_cfg"][pattern] = override
    trust = bool(request["trust_remote_code"])
    tokenizer = AutoTokenizer.from_pretrained(request["model_dir"], local_files_only=True,
                                              trust_remote_code=trust)
    max_len = request["max_seq_length"]
    calib = [tokenizer(t, add_special_tokens=False, truncation=True, max_length=max_len,
                       return_tensors="pt")["input_ids"] for t in request["calibration"]]
    t0 = time.time()
    model = AutoModelForCausalLM.from_pretrained(request["model_dir"], dtype=torch.bfloat16,
                                                 local_files_only=True, trust_remote_code=trust).to(device)
    model.eval()

    def forward_loop(m):
        with torch.no_grad():
            for ids in calib:
                m(ids.to(device))

    log(f"modelopt: {name} on {request['variant']} ({device}), {len(calib)} samples ≤ {max_len} tokens")
    model = mtq.quantize(model, cfg, forward_loop)
    notes = []
    if "NVFP4" in name and device == "cpu":
        check = {"loader": f"modelopt {modelopt.__version__} simulated quantization", "ok": None,
                 "reason": "NVFP4 simulated inference needs CUDA (ModelOpt: 'amax must be a CUDA "
                           "tensor'); generation skipped on the CPU, exported tensors read back below"}
        notes.append(check["reason"])
    else:
        check = generate_check(model, tokenizer, request, device=device,
                               loader=f"modelopt {modelopt.__version__} simulated quantization (mtq.quantize)")
    out = Path(request["out_dir"])
    with torch.inference_mode():
        export_hf_checkpoint(model, export_dir=out)
    tokenizer.save_pretrained(out)
    check["export"] = read_back(out)
    if not check["export"]["quant_algo"]:
        raise SystemExit(f"modelopt: {out}/hf_quant_config.json names no quant_algo")
    notes.append("ModelOpt's unified checkpoint is loaded by TensorRT-LLM, vLLM or SGLang on GPUs with "
                 "FP8/FP4 support; no CPU engine loads it, so the load check generated with ModelOpt's "
                 "simulated-quantization model and read the exported tensors back")
    write_result(result_path, {
        "format": "modelopt",
        "tool_versions": versions("nvidia-modelopt", "transformers", "torch"),
        "details": {"calibration_samples": len(calib), "max_seq_length": max_len, "config": name,
                    "overrides": recipe.get("overrides") or {}, "quant_algo": check["export"]["quant_algo"],
                    "quantize_seconds": round(time.time() - t0, 3)},
        "notes": notes,
        "load_check": check,
    })


if __name__ == "__main__":
    main()
