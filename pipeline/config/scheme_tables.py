"""The scheme / backend / engine tables: what each scheme is, which backend makes it, the
artifact format each backend writes, and the engines that serve them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipeline.names import Registry


@dataclass(frozen=True)
class SchemeInfo:
    """What a scheme is: which family, whether it needs calibration data, its shape rules."""

    name: str
    family: Literal["baseline", "compressed", "gguf", "mlx"]
    needs_calibration: bool
    group_size: int | None = None  # in-features must divide by it; None: per-channel / none
    recipe_schemes: frozenset[str] = frozenset()  # llm-compressor presets a recipe may name
    bits: int | None = None  # weight bits recorded in the manifest (GGUF mixes types per tensor)


SCHEMES: Registry[SchemeInfo] = Registry("scheme")
for _info in (
    SchemeInfo("bf16", "baseline", False, bits=16),
    SchemeInfo("fp16", "baseline", False, bits=16),
    SchemeInfo("w4a16_gptq", "compressed", True, 128, frozenset({"W4A16", "W4A16_ASYM"}), bits=4),
    SchemeInfo("w4a16_awq", "compressed", True, 128, frozenset({"W4A16", "W4A16_ASYM"}), bits=4),
    SchemeInfo("w8a8_int8", "compressed", True, None, frozenset({"W8A8"}), bits=8),
    SchemeInfo("fp8_dynamic", "compressed", False, None, frozenset({"FP8_DYNAMIC"}), bits=8),
    SchemeInfo("fp8", "compressed", True, None, frozenset({"FP8"}), bits=8),  # static activation scales
    SchemeInfo("nvfp4", "compressed", True, 16, frozenset({"NVFP4"}), bits=4),
    # GGUF: k-quants pack 256-value super-blocks, legacy quants 32-value blocks; every
    # preset but f16 is built with an importance matrix computed on the calibration set.
    *(SchemeInfo(f"gguf_{p}", "gguf", True, 256) for p in ("q2_k", "q3_k_m", "q4_k_m")),
    *(SchemeInfo(f"gguf_{p}", "gguf", True, 256) for p in ("q5_k_m", "q6_k")),
    SchemeInfo("gguf_q4_0", "gguf", True, 32),
    SchemeInfo("gguf_q8_0", "gguf", True, 32),
    SchemeInfo("gguf_f16", "gguf", False),
    # MLX-LM's own checkpoints (backend mlx, engine mlx): calibration-free. Affine 4/8-bit take
    # the group size from the recipe (32, 64 or 128; 64 by default); the microscaling formats
    # have theirs fixed. MLX quantizes the embedding and lm_head too.
    SchemeInfo("mlx_q4", "mlx", False, 64, bits=4),
    SchemeInfo("mlx_q8", "mlx", False, 64, bits=8),
    SchemeInfo("mlx_mxfp4", "mlx", False, 32, bits=4),
    SchemeInfo("mlx_nvfp4", "mlx", False, 16, bits=4),
    SchemeInfo("mlx_mxfp8", "mlx", False, 32, bits=8),
):
    SCHEMES.add(_info.name, _info)


def family(name: str) -> frozenset[str]:
    """The schemes of one family (baseline, compressed, gguf, mlx)."""
    return frozenset(n for n in SCHEMES if SCHEMES.get(n).family == name)


BASELINE_SCHEMES = family("baseline")
# the model's own weights in a format (the baseline's, llama.cpp's f16): references, never candidates
UNQUANTIZED_SCHEMES = BASELINE_SCHEMES | frozenset({"gguf_f16"})


def backend_schemes() -> dict[str, frozenset[str]]:
    """Backend -> the schemes it makes, as each backend class declares (pipeline.plugins)."""
    from pipeline.plugins import backends

    return {name: facts.schemes for name, facts in backends().items()}


def backend_format(backend: str) -> str:
    """The artifact format a backend writes (its own declaration); an unknown backend is
    named by validation, so its name stands in."""
    from pipeline.plugins import backends

    facts = backends().get(backend)
    return facts.format if facts else backend


def recipe_format(backend: str) -> str | None:
    """What a backend's recipe file holds (llm-compressor, tool, preset, dtype)."""
    from pipeline.plugins import backends

    facts = backends().get(backend)
    return facts.recipe_format if facts else None


NO_ENGINE = "none"  # a variant quantized but served nowhere here (with its reason)


def engine_names() -> tuple[str, ...]:
    """The engines a variant or the format table may name: each engine class in
    pipeline/engines/ declares its own name, plus `none`."""
    from pipeline.engines.base import engine_names as declared

    return (*declared(), NO_ENGINE)
NO_CALIBRATION = "none"  # the empty calibration set of schemes that need no data
NO_REFERENCE = "none"  # what the baseline is judged against: nothing (it serves every item)
