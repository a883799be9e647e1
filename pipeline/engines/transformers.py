"""transformers in process: the common reference, and the engine for formats that no serving
engine here can run (FP8 and NVFP4 on a CPU without the instructions they need).

It decodes one prompt at a time (no padding, so a sample's output never depends on its batch).
Its speed measures transformers' eager generate loop, not a serving engine: results are labelled
`serving: false` and kept out of speed comparisons and gates.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from pipeline.engines.base import Completion, Engine, EngineError, EngineInfo, register


class _FirstToken:
    """A generate() streamer that notes when the first new token arrives (its first `put` is
    the prompt itself)."""

    def __init__(self) -> None:
        self.calls, self.first = 0, None

    def put(self, value) -> None:
        self.calls += 1
        if self.calls == 2 and self.first is None:
            self.first = time.perf_counter()

    def end(self) -> None:
        pass


_QUANT_MODULES = {"CompressedLinear", "QuantLinear", "FP8Linear", "Linear8bitLt", "Linear4bit"}


@register
class TransformersEngine(Engine):
    name: ClassVar[str] = "transformers"
    formats: ClassVar[frozenset[str]] = frozenset({"hf", "compressed-tensors"})
    serving: ClassVar[bool] = False
    accepts_parallel: ClassVar[bool] = False
    speed_note: ClassVar[str] = ("transformers reference: measures transformers, not a serving "
                                 "engine; kept out of speed comparisons")

    @classmethod
    def bench_exclusion(cls) -> str | None:
        return "transformers reference engine: not a serving engine"

    @classmethod
    def handoff_command(cls, model_dir: Path, settings: dict[str, Any]) -> str:
        return ("python -c \"from transformers import AutoModelForCausalLM, AutoTokenizer; "
                "m = AutoModelForCausalLM.from_pretrained('model', dtype='auto'); "
                "t = AutoTokenizer.from_pretrained('model')\"  # reference only: no serving engine "
                "here runs this format")

    def lm_eval_model(self, tokenizer_dir: Path, concurrency: int) -> tuple[str, dict[str, Any]]:
        return "hf", {"pretrained": str(self.artifact), "tokenizer": str(tokenizer_dir),
                      "dtype": "auto", "device": getattr(self, "device", "cpu")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.model = self.tokenizer = None
        self._quantized = False
        self._stored = self.compute_dtype = None  # the weights' dtype, and the one computed in
        self._lock = threading.Lock()

    def start(self) -> None:
        import torch
        import transformers

        from pipeline.models import ModelLoadError, cpu_compute_dtype, load_model, load_tokenizer

        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        device = self.settings.get("device", "cpu")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        trust = bool(self.settings.get("trust_remote_code", False))
        try:
            self.model = load_model(self.artifact, dtype="auto", trust_remote_code=trust,
                                    device=device).eval()
            self._stored = stored = str(self.model.dtype).removeprefix("torch.")
            # a CPU without native 16-bit kernels computes in float32 (pipeline.models)
            self.compute_dtype = cpu_compute_dtype(stored) if device == "cpu" else stored
            if self.compute_dtype != stored:
                self.model.to(getattr(torch, self.compute_dtype))
            self.tokenizer = load_tokenizer(self.tokenizer_dir or self.artifact,
                                            trust_remote_code=trust)
        except (ModelLoadError, OSError, ValueError, RuntimeError) as err:
            self.log_path.write_text(f"load failed: {err!r}\n")
            raise EngineError(f"transformers could not load {self.artifact}: {err}") from err
        qcfg = getattr(self.model.config, "quantization_config", None)
        self._quantized = qcfg is not None
        self.log_path.write_text(
            f"transformers {transformers.__version__}, torch {torch.__version__}, device {device}\n"
            f"model class {type(self.model).__name__}, dtype {self.model.dtype}\n"
            f"quantization_config: {qcfg!r}\n")

    def stop(self) -> None:
        self.model = None

    def complete(self, prompt_ids: list[int], max_tokens: int, *,
                 ignore_eos: bool = False) -> Completion:
        import torch

        if self.model is None:
            raise EngineError("transformers engine is not started")
        ids = torch.tensor([prompt_ids], device=self.device)
        streamer = _FirstToken()
        kwargs: dict[str, Any] = {"max_new_tokens": max_tokens, "do_sample": False,
                                  "streamer": streamer, "pad_token_id": self.tokenizer.pad_token_id
                                  if self.tokenizer.pad_token_id is not None
                                  else self.tokenizer.eos_token_id}
        if ignore_eos:
            kwargs.update(min_new_tokens=max_tokens)
        with self._lock, torch.no_grad():
            t0 = time.perf_counter()
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), **kwargs)
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
            latency = time.perf_counter() - t0
        new = out[0, len(prompt_ids):].tolist()
        eos = self.tokenizer.eos_token_id
        finish = "stop" if (new and new[-1] == eos) else "length"
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        ttft = streamer.first - t0 if streamer.first else None
        return Completion(text, len(new), len(prompt_ids), latency, ttft, finish)

    def info(self) -> EngineInfo:
        import torch
        import transformers

        kinds = sorted({type(m).__name__ for m in self.model.modules()} & _QUANT_MODULES) \
            if self.model is not None else []
        dtype = getattr(self.model, "dtype", "?")
        # compressed-tensors keeps packed formats packed (CompressedLinear unpacks the weights
        # in every forward); other formats are decompressed to the model's dtype on load.
        kernel = (f"transformers eager generate; {', '.join(kinds)} (weights unpacked per "
                  f"forward, {dtype} matmul)" if kinds else
                  f"transformers eager generate; dense {dtype} matmul"
                  + ("" if not self._quantized else " (quantized weights decompressed on load)"))
        # named only where it differs from the weights' dtype (a CPU without 16-bit kernels)
        upcast = {"compute_dtype": self.compute_dtype, "weights_dtype": self._stored} \
            if self.compute_dtype != self._stored else {}
        return EngineInfo(self.name, transformers.__version__, kernel, serving=False,
                          details={"torch": torch.__version__, "device": self.device, **upcast})
