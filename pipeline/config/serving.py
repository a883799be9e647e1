"""The ``engines`` section: which engine serves which artifact format, and each engine's
settings."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from pipeline.config.fields import Device, PositiveFloat, PositiveInt, Section
from pipeline.config.problems import fail, known
from pipeline.config.scheme_tables import engine_names


class _EngineSettings(Section):
    # the engine loads the model's own Python code in-process: its settings get
    # model.trust_remote_code, the one remote-code switch (never an engine option)
    runs_model_code: ClassVar[bool] = False
    # what a variant served by this engine must say or be (checked in pipeline/config/variants.py)
    reference_only: ClassVar[bool] = False     # not a serving engine: a non-baseline needs a reason
    takes_url: ClassVar[bool] = False          # serves from a `url:` the variant gives
    schemes_prefix: ClassVar[str | None] = None  # serves only the schemes with this prefix …
    schemes_fix: ClassVar[str] = ""              # … and what to do instead
    exclusive_to: ClassVar[str | None] = None  # those schemes' checkpoints (what they are) need it
    startup_timeout: PositiveFloat = 600.0   # seconds until /health answers
    request_timeout: PositiveFloat = 600.0
    extra_args: list[str] = Field(default_factory=list)  # appended to the engine's command line


class VllmSettings(_EngineSettings):
    python: str | None = None          # the engine environment's python (default: set-up's)
    dtype: str = "auto"
    max_model_len: PositiveInt | None = None  # default: the model's own context
    max_num_seqs: PositiveInt = 32
    kv_cache_dtype: str = "auto"       # the same for every variant (docs/rationale.md#same-settings)
    enforce_eager: bool = True         # CPU: loads in ~20 s instead of 90–200 s of compiling
    cpu_kvcache_gb: PositiveInt = 1    # VLLM_CPU_KVCACHE_SPACE
    # false: the model runs inside the engine-core process (VLLM_ENABLE_V1_MULTIPROCESSING=0)
    # instead of a worker process of its own — on CPU one process (an import of vLLM) less to
    # start: ready in 24 s instead of 40 on a 2-core host, the same outputs (docs/engines.md)
    worker_process: bool = False
    env: dict[str, str] = Field(default_factory=dict)
    # the vllm-cpu release that serves, in an environment of its own (null: the set-up's pinned
    # release); a serving configuration's `release` (params `serving`) sets it
    release: str | None = Field(None, pattern=r"^\d+(\.\d+)+(\.post\d+)?$")


class LlamaCppSettings(_EngineSettings):
    schemes_prefix: ClassVar[str | None] = "gguf_"
    schemes_fix: ClassVar[str] = "llama.cpp serves gguf_* schemes; use vllm"
    startup_timeout: PositiveFloat = 120.0
    threads: PositiveInt = 1
    ctx: PositiveInt = 4096
    slots: PositiveInt = 1
    kv_cache_dtype: str = "f16"        # -ctk/-ctv: stated, never left to the engine's default
    # the llama-cpp-python release whose llama.cpp serves (null: the set-up's pinned build);
    # a serving configuration's `release` (params `serving`) sets it
    release: str | None = Field(None, pattern=r"^\d+\.\d+\.\d+$")


class MlxSettings(_EngineSettings):
    schemes_prefix: ClassVar[str | None] = "mlx_"
    schemes_fix: ClassVar[str] = "mlx_lm.server serves the mlx backend's checkpoints (mlx_* schemes)"
    exclusive_to: ClassVar[str | None] = "an MLX checkpoint"
    """mlx_lm.server (engine mlx, docs/mlx.md §3): greedy, no per-request seed (a seed takes a
    request out of continuous batching)."""

    startup_timeout: PositiveFloat = 300.0
    python: str | None = None          # the mlx environment's python (default: the set-up's)
    max_tokens: PositiveInt = 512      # the server's default for a request without max_tokens
    decode_concurrency: PositiveInt = 32
    prompt_concurrency: PositiveInt = 8
    # KV caches of earlier prompts kept for reuse (its default: 10): 0, so that no answer depends
    # on which requests came before it (as vLLM's prefix caching is off)
    prompt_cache_size: int = Field(0, ge=0)
    # auto: the artifact's quantized kernels on Apple silicon; elsewhere (where they are a scalar
    # reference loop, ~16x slower) a copy dequantized by mlx_lm.convert (engines/mlx.py)
    weights: Literal["auto", "quantized", "dequantized"] = "auto"


class TransformersSettings(_EngineSettings):
    runs_model_code: ClassVar[bool] = True
    reference_only: ClassVar[bool] = True
    device: Device = "cpu"


class OpenAISettings(_EngineSettings):
    takes_url: ClassVar[bool] = True
    model: str = "model"               # the served model name the endpoint expects
    kernel: str | None = None          # what the operator knows of the remote kernel


class EnginesConfig(Section):
    """Which engine serves which artifact format (a variant's `engine:` overrides it), and each
    engine's settings (a variant's `engine_options:` overrides those)."""

    formats: dict[str, str] = Field(default_factory=lambda: {
        "hf": "vllm", "compressed-tensors": "vllm", "gptq": "vllm", "awq": "vllm",
        "modelopt": "vllm", "gguf": "llamacpp", "mlx": "mlx"})
    vllm: VllmSettings = Field(default_factory=VllmSettings)
    llamacpp: LlamaCppSettings = Field(default_factory=LlamaCppSettings)
    transformers: TransformersSettings = Field(default_factory=TransformersSettings)
    mlx: MlxSettings = Field(default_factory=MlxSettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)

    @field_validator("formats")
    @classmethod
    def _known_engines(cls, formats: dict[str, str]) -> dict[str, str]:
        bad = {f: e for f, e in formats.items() if e not in engine_names()}
        if bad:
            f, e = next(iter(bad.items()))
            fail([((f,), f"unknown engine '{e}' for format '{f}'", known(e, engine_names()))])
        return formats


def engine_settings_class(engine: str) -> type[_EngineSettings] | None:
    """The settings section class of `engine` (None: no engine, `none`)."""
    field = EnginesConfig.model_fields.get(engine)
    return field.annotation if field is not None and engine != "formats" else None
