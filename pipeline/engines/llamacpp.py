"""llama.cpp's `llama-server` (the C++ binary, not a Python server: that one is ~30× slower and
would measure itself) serving a GGUF file on 127.0.0.1 through its OpenAI-compatible API.

The "kernel" llama.cpp chose is what its log says about the CPU backend: the SIMD features it
was built for and whether weights were repacked into an interleaved layout (CPU_REPACK).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from pipeline.engines.base import EngineError, EngineInfo, ServerEngine, register
from pipeline.llamacpp_tools import CACHE, ensure, locate

_SYSTEM = re.compile(r"system_info: (.*)")
_REPACK = re.compile(r"CPU_REPACK model buffer size\s*=\s*([\d.]+ \w+)")
_VERSION = re.compile(r"build: (\d+) \((\w+)\)")
_FTYPE = re.compile(r"file type\s*=\s*([^\n]+)")


def gguf_file(artifact: Path) -> Path:
    if artifact.is_file():
        return artifact
    files = sorted(p for p in artifact.glob("*.gguf") if not p.name.startswith("imatrix"))
    if not files:
        raise EngineError(f"no .gguf model file in {artifact} — fix: `dvc repro quantize@<variant>` "
                          "for a GGUF variant, or serve this artifact with another engine")
    return files[0]


@register
class LlamaCppEngine(ServerEngine):
    name: ClassVar[str] = "llamacpp"
    formats: ClassVar[frozenset[str]] = frozenset({"gguf"})
    api_key_env: ClassVar[str | None] = "LLAMA_API_KEY"
    needs_llamacpp_tools: ClassVar[bool] = True
    # the key check's endpoint: /props wants the key in every release (before late 2025,
    # /v1/models was public)
    auth_path: ClassVar[str] = "/props"

    @classmethod
    def handoff_command(cls, model_dir: Path, settings: dict[str, Any]) -> str:
        return cls.exact_command(model_dir, settings)

    @classmethod
    def prepare_release(cls, release: str) -> None:
        ensure(release)  # built from llama-cpp-python's sdist when missing (a few minutes)

    @classmethod
    def release_home(cls, release: str) -> tuple[Path, bool, str] | None:
        d = CACHE / release
        return d, (d / ".built").is_file(), f"QPIPE_LLAMACPP_PY_VERSION={release} bash scripts/setup-llamacpp.sh"

    def program(self) -> list[str]:
        return [locate(self.settings.get("release")).tool("llama-server")]

    def portable_program(self) -> list[str]:
        return ["llama-server"]

    def arguments(self) -> list[str]:
        s = self.settings
        # One slot and a fixed thread count: requests queue instead of sharing a batch, so the
        # per-request timings are the engine's single-stream figures (parallel: engines.llamacpp
        # .slots). `-t 2` stalls on a busy 2-core machine: the default is 1 thread.
        return ["-m", str(gguf_file(self.artifact)),
                "--host", "127.0.0.1", "--port", str(self.port),
                "-t", str(s.get("threads", 1)), "-c", str(s.get("ctx", 4096)),
                "-np", str(s.get("slots", 1)), "--no-webui", "--seed", "0",
                # The KV-cache dtype is a controlled variable: stated, never left to defaults.
                "-ctk", str(s.get("kv_cache_dtype", "f16")),
                "-ctv", str(s.get("kv_cache_dtype", "f16")),
                # No host-memory prompt cache: requests never reuse a prompt (cache_prompt is
                # off), yet the cache kept every prompt and logged its whole state per request —
                # 143 MB of log over 1,501 requests, and time spent on it. Outputs are the same.
                # (Builds older than the option have no such cache.)
                *(["--cache-ram", "0"] if self._tools().supports("llama-server", "--cache-ram") else []),
                # Verbosity 4 prints system_info and the weight buffers (the kernel evidence).
                "-lv", "4",
                *[str(a) for a in s.get("extra_args", [])]]

    def _tools(self):
        return locate(self.settings.get("release"))

    def request_extras(self, ignore_eos: bool) -> dict[str, Any]:
        # Prompt caching off, as for vLLM's prefix cache: every request prefills its prompt.
        return {"cache_prompt": False, "top_k": 1, **({"ignore_eos": True} if ignore_eos else {})}

    def info(self) -> EngineInfo:
        log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        system = _SYSTEM.search(log)
        repack = [m.group(1) for m in _REPACK.finditer(log)][:1]
        ftype = _FTYPE.search(log)
        version = _VERSION.search(log)
        tools = self._tools()
        kernel = "ggml CPU" + (f" + repacked weights ({repack[0]})" if repack else "")
        if system:
            feats = [f.split("=")[0].split(":")[-1].strip() for f in system.group(1).split("|")
                     if f.strip().endswith("= 1")]
            kernel += f" ({', '.join(feats)})" if feats else ""
        return EngineInfo(self.name, version.group(0) if version else tools.version, kernel,
                          details={"file_type": ftype.group(1).strip() if ftype else None,
                                   "repack": repack, "gguf": gguf_file(self.artifact).name,
                                   "kv_cache_dtype": self.settings.get("kv_cache_dtype", "f16"),
                                   "tools": tools.version,
                                   "settings": self.settings})


class LlamaServer(LlamaCppEngine):
    """`with LlamaServer(model_file, log_path) as srv: srv.complete_text(prompt, n)` — the raw
    /completion API with a text prompt (the quantize stage's load check)."""

    def __init__(self, model: Path, log_path: Path, *, threads: int = 1, ctx: int = 2048,
                 ready_timeout: float = 120.0):
        super().__init__(model, {"threads": threads, "ctx": ctx, "startup_timeout": ready_timeout},
                         log_path=log_path)

    def complete(self, prompt, max_tokens, **kw):  # type: ignore[override]
        if isinstance(prompt, str):
            return self.complete_text(prompt, max_tokens)
        return super().complete(prompt, max_tokens, **kw)

    def tokenize(self, text: str) -> list[int]:
        """The model's own tokenization of ``text`` (special-token text parsed, none added), as
        llama-imatrix and the chat endpoint tokenize it."""
        try:
            r = self._client.post("/tokenize", json={"content": text, "add_special": False,
                                                     "parse_special": True}, timeout=120)
            r.raise_for_status()
            return [int(t) for t in r.json()["tokens"]]
        except Exception as err:
            raise EngineError(f"llama-server /tokenize failed: {err!r}; log tail:\n"
                              f"{self.log_tail()}") from err

    def complete_text(self, prompt: str, n_predict: int) -> dict:
        """Greedy completion of a raw prompt; returns the server's JSON (content, tokens…)."""
        body = {"prompt": prompt, "n_predict": n_predict, "temperature": 0, "top_k": 1,
                "cache_prompt": False, "return_tokens": True}
        try:
            r = self._client.post("/completion", json=body, timeout=120)
            r.raise_for_status()
            return r.json()
        except Exception as err:
            raise EngineError(f"llama-server request failed: {err!r}; log tail:\n"
                              f"{self.log_tail()}") from err
