"""llm-compressor backend: AWQ / GPTQ W4A16, W8A8 INT8 (SmoothQuant + GPTQ), FP8 dynamic, NVFP4.

The recipe is llm-compressor's own YAML (recipes/*.yaml), passed to ``oneshot`` as is; the
calibration set's ``data.parquet`` (text already rendered with the chat template) is tokenized
here with the base model's tokenizer and handed over as a ``datasets.Dataset``. The model is
saved compressed (compressed-tensors), the format vLLM serves natively.

On a GPU the model is loaded into host memory and stays there: llm-compressor's calibration
pipelines (sequential for calibrated schemes, data-free for FP8 dynamic) onload one layer at a
time to the first visible GPU, so a model larger than the GPU is quantized all the same; only
a layer's weights and one batch of activations are on the GPU at a time.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import yaml

from pipeline.config import BACKENDS as SCHEMES_BY_BACKEND
from pipeline.quantize.base import BACKENDS, Backend, BackendError, QuantizeRequest, QuantizeResult

log = logging.getLogger(__name__)


def _recipe_ignores(recipe: dict) -> list[str]:
    out: list[str] = []

    def walk(obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k == "ignore" and isinstance(v, list):
                    out.extend(str(x) for x in v)
                else:
                    walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(recipe)
    return out


def module_names(model_dir: Path) -> set[str]:
    """Module names from the checkpoint's tensor names, read from safetensors headers only
    (a model with tied embeddings stores no lm_head tensor, yet has the module)."""
    import json

    from safetensors import safe_open

    names: set[str] = set()
    cfg = json.loads((model_dir / "config.json").read_text())
    if cfg.get("tie_word_embeddings"):
        names.add("lm_head")
    for f in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(f), framework="np") as st:
            for key in st.keys():
                parts = key.split(".")
                names.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return names


def _disable_pinning_without_accelerator() -> None:
    """llm-compressor 0.14.0.1's AWQ pins cached activations in host memory for faster
    host-to-device copies; without an accelerator `Tensor.pin_memory()` raises "Cannot access
    accelerator device when none is available". Pinning has no purpose then: make it a no-op."""
    import torch

    if torch.cuda.is_available():
        return
    from llmcompressor.pipelines.cache import IntermediatesCache

    IntermediatesCache.pin_memory = lambda self, batch_index, input_names=None: None


def _onloading_notes(device: str) -> list[str]:
    """What the manifest must say when llm-compressor's own device choice differs from the one
    asked for: it onloads to the first GPU it sees, whatever the request."""
    import torch

    if device != "cpu":
        if torch.device(device).index not in (None, 0):
            raise BackendError(f"device {device!r}: llm-compressor 0.14 onloads to the first visible "
                               "GPU only — fix: use cuda, or cuda:N through the quantize stage "
                               "(which limits the process to that GPU)")
        return []
    if not torch.cuda.is_available():
        return []
    note = ("quantize.device is cpu, but llm-compressor 0.14 calibrated on the visible GPU "
            f"({torch.cuda.get_device_name(0)}) regardless — to stay on the CPU, hide the GPUs "
            "with CUDA_VISIBLE_DEVICES=\"\"; to say so, set quantize.device: cuda")
    log.warning(note)
    return [note]


@BACKENDS.register("llmcompressor")
class LlmCompressorBackend(Backend):
    name = "llmcompressor"
    schemes = SCHEMES_BY_BACKEND["llmcompressor"]
    extra = "quantize"

    def check(self, req: QuantizeRequest) -> list[str]:
        problems = []
        if req.recipe is None or not req.recipe.is_file():
            return [f"{req.variant}: recipe {req.recipe} not found — fix: point `recipe:` at a "
                    "file under recipes/"]
        recipe = yaml.safe_load(req.recipe.read_text())
        names = module_names(req.model_dir)
        for pattern in _recipe_ignores(recipe):
            if pattern.startswith("re:"):
                rx = re.compile(pattern[3:])
                if not any(rx.match(n) for n in names):
                    problems.append(f"{req.recipe}: ignore pattern {pattern!r} matches no layer of "
                                    f"{req.model_dir} — fix: correct the regex or drop it")
            elif pattern not in names:
                problems.append(f"{req.recipe}: ignore names layer {pattern!r}, which {req.model_dir} "
                                "does not have — fix: use a module name from the checkpoint "
                                "(e.g. 'lm_head') or a 're:' pattern")
        if req.scheme != "fp8_dynamic" and req.calibration_dir is None:
            problems.append(f"{req.variant}: scheme {req.scheme} needs a calibration set")
        return problems

    @staticmethod
    def _set_max_len(req: QuantizeRequest) -> int | None:
        """The calibration set's own token limit (its samples are already cut to it)."""
        import json

        if req.calibration_dir is None or not (req.calibration_dir / "card.json").is_file():
            return None
        card = json.loads((req.calibration_dir / "card.json").read_text())
        return card.get("params", {}).get("set", {}).get("max_seq_len")

    def _dataset(self, req: QuantizeRequest, tokenizer, max_len: int):
        from datasets import Dataset

        ds = Dataset.from_parquet(str(req.calibration_dir / "data.parquet"))
        ds = ds.map(lambda r: tokenizer(r["text"], add_special_tokens=False, truncation=True,
                                        max_length=max_len),
                    remove_columns=ds.column_names)
        return ds

    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        llmc = self.require("llmcompressor")
        import compressed_tensors
        import torch
        import transformers

        from pipeline.models import load_model, load_tokenizer

        _disable_pinning_without_accelerator()
        notes = _onloading_notes(req.device)
        tokenizer = load_tokenizer(req.model_dir, trust_remote_code=req.trust_remote_code)
        # Host memory on every device: on a GPU, oneshot onloads layer by layer (see above).
        model = load_model(req.model_dir, dtype=req.dtype, trust_remote_code=req.trust_remote_code,
                           device="cpu")
        max_len = int(req.options.get("max_seq_length") or self._set_max_len(req) or 512)
        kwargs = {}
        n = 0
        if req.calibration_dir is not None and req.scheme != "fp8_dynamic":
            ds = self._dataset(req, tokenizer, max_len)
            n = len(ds)
            kwargs = dict(dataset=ds, num_calibration_samples=n, max_seq_length=max_len)
        try:
            llmc.oneshot(model=model, recipe=str(req.recipe), processor=tokenizer, **kwargs)
        except Exception as err:  # surface which variant and recipe failed, keep the cause
            raise BackendError(f"llm-compressor failed on variant {req.variant!r} with recipe "
                               f"{req.recipe}: {err}") from err
        model.save_pretrained(req.out_dir, save_compressed=True)
        tokenizer.save_pretrained(req.out_dir)
        return QuantizeResult(
            format="compressed-tensors",
            tool_versions={"llmcompressor": llmc.__version__,
                           "compressed-tensors": compressed_tensors.__version__,
                           "transformers": transformers.__version__, "torch": torch.__version__},
            details={"calibration_samples": n, "max_seq_length": max_len if n else None,
                     "onloading": None if req.device == "cpu" else
                     "host memory, onloaded layer by layer by llm-compressor's pipeline"},
            notes=notes)
