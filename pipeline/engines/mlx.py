"""MLX-LM's `mlx_lm.server` serving an MLX checkpoint (backend mlx), run with the mlx
environment's Python (`bash scripts/setup-backend-env.sh mlx`). Measured behaviour: docs/mlx.md §3.

Its quirks, and what the engine does about them:
- It takes text prompts only (token ids are refused), so the harness's token ids are decoded
  with the base model's tokenizer (the text its chat template rendered) and sent as text. Before
  evaluation (`check_prompts`), and for any prompt not checked then, the artifact's own tokenizer
  must turn that text back into exactly the harness's ids — the server tokenizes it with that
  tokenizer (`tokenizer.encode(prompt)`) — or the run is refused, naming the first differing
  item. The server's `usage.prompt_tokens` is checked against the ids too.
- No `model` field (anything but the served path makes it load another model) and no `seed` (a
  seeded request is served alone, outside continuous batching; greedy decoding needs none):
  temperature 0, top_p 1, max_tokens per request.
- An empty prompt or a malformed one kills its generation thread while the process lives on:
  prompts are validated before sending, and /health 503 (or a reply saying "generation thread
  died") fails the run with the engine's log, like any engine death.
- /health says only that the generation thread lives (the model loads inside it), so readiness
  is /health 200 and then one max_tokens=1 request answered.
- Its speed is not comparable: this is MLX's CPU build (mlx[cpu]); on a non-Apple host it is a
  single-threaded reference path (quantized matmuls ~10x slower than bf16 there). Results are
  labelled `serving: false` with that reason and kept out of speed comparisons and bench.
- Weights (`engines.mlx.weights`): on Apple silicon the server runs the artifact as it is, with
  MLX's quantized kernels (`quantized`). Elsewhere (`auto` → `dequantized`) the quantized matmul
  is a scalar loop: 32 evaluation prompts took 223 s against 14 s for the same weights
  dequantized, so a 1,501-item evaluation would take about three hours. There the server runs a
  copy that MLX-LM's own `mlx_lm.convert --dequantize` makes from the artifact at start (every
  weight is the artifact's quantized value, `scales * q + biases`, in the artifact's dtype): the
  evaluation measures the artifact's rounding, not the kernel's arithmetic. What the kernel
  changes is measured apart (benchmarks/eval_ab.py; docs/mlx.md §5) and every result says
  which weights were served (`info().kernel`, `details.weights`).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from collections.abc import Mapping
from typing import Any, ClassVar

import httpx

from pipeline import progress
from pipeline.engines.base import Completion, EngineError, EngineInfo, ServerEngine, register, stream_completion

ROOT = Path(__file__).resolve().parents[2]
DEAD = "generation thread died"
SPEED_NOTE = ("mlx_lm.server with MLX's CPU build: on a non-Apple host a single-threaded "
              "reference path, not a serving engine's speed; kept out of speed comparisons")
_FINGERPRINT = re.compile(r'"system_fingerprint":\s*"([^"]+)"')
WEIGHTS = ("auto", "quantized", "dequantized")


def apple_silicon() -> bool:
    """MLX's quantized kernels are the ones a deployment runs only on Apple silicon (Metal)."""
    return platform.system() == "Darwin" and platform.machine() == "arm64"


def mlx_python(settings: dict[str, Any]) -> str:
    """The mlx environment's interpreter: engines.mlx.python, QPIPE_MLX_PYTHON, or the set-up's
    (the one the mlx backend uses: scripts/setup-backend-env.sh mlx, found by its lock hash)."""
    py = settings.get("python") or os.environ.get("QPIPE_MLX_PYTHON")
    if py:
        return py
    script = ROOT / "scripts" / "setup-backend-env.sh"
    try:
        out = subprocess.run(["bash", str(script), "mlx"], capture_output=True, text=True,
                             check=True, timeout=3600)
    except subprocess.CalledProcessError as err:
        raise EngineError(f"the mlx environment could not be made (`bash {script} mlx`):\n"
                          f"{err.stderr[-2000:]}") from err
    return out.stdout.strip().splitlines()[-1]


def dequantize(artifact: Path, out: Path, settings: dict[str, Any], *,
               env: dict[str, str] | None = None) -> Path:
    """MLX-LM's own `mlx_lm.convert --dequantize` of an MLX checkpoint into `out` (which must
    not exist): every quantized layer becomes a plain one holding `scales * q + biases` in the
    checkpoint's dtype — a Hugging Face-layout checkpoint transformers loads too."""
    cmd = [mlx_python(settings), "-m", "mlx_lm.convert", "--hf-path", str(artifact),
           "--mlx-path", str(out), "--dequantize"]
    env = env or (dict(os.environ) | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    with progress.task(f"mlx: dequantizing {artifact.name}") as shown:
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                               timeout=float(settings.get("startup_timeout", 600)))
        except (OSError, subprocess.TimeoutExpired) as err:
            raise EngineError(f"mlx: `{' '.join(cmd)}` failed: {err}") from err
        if r.returncode != 0 or not (out / "config.json").is_file():
            raise EngineError(f"mlx: `{' '.join(cmd)}` exited with code {r.returncode}:\n"
                              f"{(r.stdout + r.stderr)[-2000:]}")
        shown.status("done")
    if json.loads((out / "config.json").read_text()).get("quantization"):
        raise EngineError(f"mlx: the dequantized copy of {artifact} still says it is quantized "
                          "(config.json `quantization`) — refused")
    return out


class PromptMismatch(EngineError):
    """The text sent to mlx_lm.server would not be the harness's token ids."""


@register
class MlxEngine(ServerEngine):
    name: ClassVar[str] = "mlx"
    formats: ClassVar[frozenset[str]] = frozenset({"mlx"})
    serving: ClassVar[bool] = False
    speed_note: ClassVar[str] = SPEED_NOTE
    dequantize_note: ClassVar[str | None] = "MLX: the artifact's weights dequantized by mlx_lm.convert --dequantize"

    @classmethod
    def dequantized_copy(cls, artifact: Path, out: Path, settings: dict[str, Any]) -> Path:
        return dequantize(artifact, out, settings)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._texts: dict[tuple[int, ...], str] = {}
        self._lock = threading.Lock()
        self._base_tok = self._art_tok = None
        self._hf_cache: str | None = None
        self.fingerprint: str | None = None
        self._served: Path | None = None  # what the server loads: the artifact, or its dequantized copy
        self._dq_dir: str | None = None

    # ── weights: the artifact's quantized kernels, or its dequantized copy ──────────────────
    def quantization(self) -> dict[str, Any]:
        try:
            cfg = json.loads((self.artifact / "config.json").read_text())
        except (OSError, ValueError):
            return {}
        return cfg.get("quantization") or {}

    def weights(self) -> str:
        """`quantized` (the artifact as it is), `dequantized` (a copy with every weight
        dequantized), or `unquantized` (the artifact holds no quantized layer)."""
        mode = self.settings.get("weights", "auto")
        if mode not in WEIGHTS:
            raise EngineError(f"engines.mlx.weights is {mode!r}; it must be one of {', '.join(WEIGHTS)}")
        if not self.quantization():
            return "unquantized"
        if mode == "auto":
            return "quantized" if apple_silicon() else "dequantized"
        return mode

    def _dequantized_copy(self) -> Path:
        self._dq_dir = tempfile.mkdtemp(prefix="qpipe-mlx-dequantized-")
        return dequantize(self.artifact, Path(self._dq_dir) / "model", self.settings,
                          env=self.environment())

    # ── the command ──────────────────────────────────────────────────────────────────────
    def program(self) -> list[str]:
        return [mlx_python(self.settings), "-m", "mlx_lm.server"]

    def portable_program(self) -> list[str]:
        return ["python", "-m", "mlx_lm.server"]

    def arguments(self) -> list[str]:
        s = self.settings
        return ["--model", str(self._served or self.artifact), "--host", "127.0.0.1", "--port", str(self.port),
                # greedy, as every request also says; the default max tokens of a request that
                # would carry none (every request here carries its own)
                "--temp", "0.0", "--top-p", "1.0", "--top-k", "0",
                "--max-tokens", str(s.get("max_tokens", 512)),
                "--decode-concurrency", str(s.get("decode_concurrency", 32)),
                "--prompt-concurrency", str(s.get("prompt_concurrency", 8)),
                "--prompt-cache-size", str(s.get("prompt_cache_size", 0)),
                *[str(a) for a in s.get("extra_args", [])]]

    def own_environment(self, ambient: Mapping[str, str]) -> dict[str, str]:
        env = dict(ambient)
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("TRANSFORMERS_OFFLINE", "1")
        # /v1/models scans the HF cache and sends an empty 200 body when there is none
        if self._hf_cache is None:
            self._hf_cache = tempfile.mkdtemp(prefix="qpipe-mlx-hf-")
        env["HF_HUB_CACHE"] = self._hf_cache
        return {k: v for k, v in env.items() if ambient.get(k) != v}

    # ── start, readiness, death ──────────────────────────────────────────────────────────
    def prepare(self) -> None:
        if not (self.artifact / "config.json").is_file():
            raise EngineError(f"{self.artifact} is not an MLX checkpoint (no config.json) — fix: "
                              "`dvc repro quantize@<variant>` for a variant of backend mlx")
        self._load_tokenizers()
        if self.weights() == "dequantized":
            self._served = self._dequantized_copy()

    def served_name(self) -> str:
        # any other `model` makes mlx_lm.server look for (and try to load) another model
        return "default_model"

    def portable_command(self, model_dir: Path, *, as_name: str = "model", port: int = 8000) -> str:
        saved, self._served = self._served, None  # a deployment serves the artifact itself
        try:
            return super().portable_command(model_dir, as_name=as_name, port=port)
        finally:
            self._served = saved

    def _wait_ready(self, timeout: float) -> None:
        super()._wait_ready(timeout)  # /health 200: the generation thread lives
        # …and the model loaded in it answers: one max_tokens=1 request.
        probe = self._probe_text()
        try:
            r = self._client.post("/v1/completions", json={
                "prompt": probe, "max_tokens": 1, "temperature": 0.0}, timeout=timeout)
        except httpx.HTTPError as err:
            self.check_alive("while starting")
            raise EngineError(f"mlx: the readiness request failed: {err!r}; log tail:\n"
                              f"{self.log_tail()}") from err
        if r.status_code != 200:
            self.check_alive("while starting")
            raise EngineError(f"mlx: the readiness request got HTTP {r.status_code}: {r.text[:300]}; "
                              f"log tail:\n{self.log_tail()}")
        self.fingerprint = r.json().get("system_fingerprint")

    def check_alive(self, when: str) -> None:
        super().check_alive(when)  # the process exited
        if self._client is None:
            return
        try:
            status = self._client.get(self.health_path, timeout=5).status_code
        except httpx.HTTPError:
            return  # not listening yet (starting), or busy: the caller's own error stands
        if status == 503:
            raise EngineError(f"mlx_lm.server's {DEAD} {when} (/health 503; the process lives on "
                              f"but serves nothing); log tail ({self.log_path}):\n{self.log_tail()}")

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            if self._hf_cache:
                shutil.rmtree(self._hf_cache, ignore_errors=True)
                self._hf_cache = None
            if self._dq_dir:
                shutil.rmtree(self._dq_dir, ignore_errors=True)
                self._dq_dir = None
            self._served = None

    # ── prompts: token ids → the text the server tokenizes back to them ────────────────────
    def _load_tokenizers(self) -> None:
        from pipeline.models import load_tokenizer

        if self._art_tok is None:
            self._base_tok = load_tokenizer(self.tokenizer_dir or self.artifact)
            self._art_tok = load_tokenizer(self.artifact)

    def _probe_text(self) -> str:
        self._load_tokenizers()
        ids = self._base_tok.apply_chat_template([{"role": "user", "content": "Hello"}],
                                                 add_generation_prompt=True, tokenize=True,
                                                 return_dict=True)["input_ids"]
        return self.text_for(list(ids), label="readiness probe")

    def text_for(self, ids: list[int], *, label: str = "prompt") -> str:
        """The text sent for token ids `ids`: decoded with the base tokenizer, and checked to
        tokenize back to exactly `ids` with the artifact's tokenizer (as the server does)."""
        key = tuple(ids)
        with self._lock:
            if key in self._texts:
                return self._texts[key]
        if not ids or not all(isinstance(i, int) for i in ids):
            raise EngineError(f"mlx: {label} is not a non-empty list of token ids; an empty prompt "
                              "would kill mlx_lm.server's generation thread — nothing was sent")
        self._load_tokenizers()
        text = self._base_tok.decode(list(ids), skip_special_tokens=False)
        if not isinstance(text, str) or not text:
            raise EngineError(f"mlx: {label} decodes to an empty text — nothing was sent")
        back = list(self._art_tok.encode(text))  # mlx_lm.server: tokenizer.encode(prompt)
        if back != list(ids):
            at = next((k for k, (a, b) in enumerate(zip(ids, back)) if a != b), min(len(ids), len(back)))
            raise PromptMismatch(
                f"mlx: {label}: the artifact's tokenizer ({self.artifact}) turns the rendered prompt "
                f"text into other token ids than the harness's ({len(back)} vs {len(ids)} tokens, "
                f"first difference at position {at}: {back[at:at + 5]} vs {list(ids)[at:at + 5]}); "
                "mlx_lm.server takes text only, so it would answer another prompt — refused. Fix: "
                "make the artifact with the base model's tokenizer (the mlx backend copies it)")
        with self._lock:
            self._texts[key] = text
        return text

    def check_prompts(self, prompts: list[list[int]], labels: list[str] | None = None) -> None:
        """Before evaluation: every prompt's text tokenizes to exactly its ids (else refused,
        naming the first item that differs)."""
        for i, ids in enumerate(prompts):
            self.text_for(ids, label=f"item {labels[i] if labels else i}")

    # ── completions ──────────────────────────────────────────────────────────────────────
    def _eos_ids(self) -> list[int]:
        gen = self.artifact / "generation_config.json"
        eos = json.loads(gen.read_text()).get("eos_token_id") if gen.is_file() else None
        if eos is None:
            eos = self._art_tok.eos_token_id
        return sorted({eos} if isinstance(eos, int) else set(eos or []))

    def complete(self, prompt_ids: list[int], max_tokens: int, *,
                 ignore_eos: bool = False) -> Completion:
        text = self.text_for(list(prompt_ids))
        body: dict[str, Any] = {"prompt": text, "max_tokens": int(max_tokens), "temperature": 0.0,
                                "top_p": 1.0, "stream": True,
                                "stream_options": {"include_usage": True}}
        if ignore_eos:  # no ignore_eos field: the EOS tokens are made unreachable instead
            body["logit_bias"] = {str(t): -1e9 for t in self._eos_ids()}
        try:
            c = stream_completion(self, body)
        except EngineError as err:
            if DEAD in str(err):
                self.check_alive("mid-run")
            raise
        if c.prompt_tokens != len(prompt_ids):
            raise PromptMismatch(f"mlx: the server counted {c.prompt_tokens} prompt tokens for a "
                                 f"prompt of {len(prompt_ids)} token ids — refused; log tail:\n"
                                 f"{self.log_tail()}")
        if not c.text and c.output_tokens == 0:
            self.check_alive("mid-run")  # a stream cut short by a dying thread
        return c

    def info(self) -> EngineInfo:
        q = self.quantization()
        version = None
        if self.fingerprint:  # "<mlx-lm>-<mlx>-<platform>"
            version = self.fingerprint.split("-")[0]
        scheme = f"{q.get('mode', 'affine')}, {q.get('bits')} bit, group {q.get('group_size')}"
        weights = self.weights()
        kernel = {"quantized": f"mlx quantized matmul ({scheme})",
                  "dequantized": f"mlx matmul over the artifact's weights dequantized by "
                                 f"mlx_lm.convert --dequantize ({scheme}); not MLX's quantized "
                                 "kernel (a scalar reference loop off Apple silicon)",
                  "unquantized": "mlx matmul (unquantized)"}[weights]
        return EngineInfo(self.name, version, kernel, serving=False,
                          details={"speed_note": SPEED_NOTE, "system_fingerprint": self.fingerprint,
                                   "weights": weights, "host": f"{platform.system()} {platform.machine()}",
                                   "settings": {k: v for k, v in self.settings.items()}})
