"""Pydantic models of params.yaml, and a loader that reports every problem with file:line.

Each stage reads its own section (``params.model``, ``params.variants[...]``, …). Unknown keys
are errors (``extra="forbid"``), so a typo fails here and not three hours into calibration.
Cross-field rules (a scheme that needs calibration, a backend that cannot do a scheme, …) are
validators; every broken rule becomes one :class:`Problem`, and :func:`load_params` raises
:class:`ConfigError` carrying all of them at once:

>>> params = load_params("params.yaml")                     # doctest: +SKIP
>>> params.variants["fp8_dynamic"].needs_calibration        # doctest: +SKIP
False
"""

from __future__ import annotations

import copy
import logging
import re
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from pipeline.names import Registry, did_you_mean

logger = logging.getLogger(__name__)

Loc = tuple[str | int, ...]
Issue = tuple[Loc, str, str]  # (location relative to the failing model, message, fix)


# ── problems ──────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the project: where it is, what is wrong, how to fix it."""

    file: str
    line: int | None
    key: str
    message: str
    fix: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = ": ".join(part for part in (where, self.key, self.message) if part)
        return f"{text} — fix: {self.fix}" if self.fix else text


def render_problems(problems: Iterable[Problem]) -> str:
    """One line per problem and a count, ready for the CLI to print."""
    problems = list(problems)
    if not problems:
        return "no problems found"
    noun = "problem" if len(problems) == 1 else "problems"
    return "\n".join([*(str(p) for p in problems), f"{len(problems)} {noun} found"])


class ConfigError(ValueError):
    """params.yaml is not valid; ``problems`` lists every reason, ``str()`` renders them."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(render_problems(self.problems))


def known(word: str, choices: Iterable[str], label: str = "Known") -> str:
    """Fix text: ``"did you mean 'y'? Known: a, b, c"``."""
    choices = list(choices)
    hint = did_you_mean(word, choices)
    listing = f"{label}: {', '.join(choices)}"
    return f"{hint} {listing}" if hint else listing


def _fail(issues: list[Issue]) -> None:
    """Raise all ``issues`` as one pydantic error; :func:`_translate` splits them again."""
    summary = "; ".join(message for _, message, _ in issues)
    raise PydanticCustomError("qpipe_issues", "{summary}", {"summary": summary, "issues": issues})


# ── the scheme / backend / engine tables ─────────────────────────────────────────────────


@dataclass(frozen=True)
class SchemeInfo:
    """What a scheme is: which family, whether it needs calibration data, its shape rules."""

    name: str
    family: Literal["baseline", "compressed", "gguf"]
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
):
    SCHEMES.add(_info.name, _info)


def _family(family: str) -> frozenset[str]:
    return frozenset(n for n in SCHEMES if SCHEMES.get(n).family == family)


BASELINE_SCHEMES = _family("baseline")
BACKENDS: dict[str, frozenset[str]] = {
    "none": BASELINE_SCHEMES,
    "llmcompressor": _family("compressed"),
    "llamacpp": _family("gguf"),
    "gptqmodel": frozenset({"w4a16_gptq"}),
    "modelopt": frozenset({"fp8", "nvfp4", "w4a16_awq"}),
    "autoawq": frozenset({"w4a16_awq"}),
}
ENGINES = ("vllm", "llamacpp", "transformers", "openai", "none")
BACKEND_FORMATS = {"none": "hf", "llmcompressor": "compressed-tensors", "llamacpp": "gguf",
                   "gptqmodel": "gptq", "modelopt": "modelopt", "autoawq": "awq"}
RECIPE_REQUIRED = frozenset({"llmcompressor"})  # recipes in llm-compressor's own format
NO_CALIBRATION = "none"  # the empty calibration set of schemes that need no data


# ── models ────────────────────────────────────────────────────────────────────────────────


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


Share = Annotated[float, Field(ge=0.0, le=1.0)]
OpenShare = Annotated[float, Field(gt=0.0, lt=1.0)]  # strictly between 0 and 1
MAX_WORKERS = 256  # worker processes: more is a typo, not a machine
PositiveInt = Annotated[int, Field(gt=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
# Variant and set names become directories and DVC stage names (quantize@<name>).
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]


class ModelConfig(_Section):
    name: str
    path: Path
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "bfloat16"
    trust_remote_code: bool = False
    # llama.cpp's converter recognises a tokenizer's pre-tokenizer by a hash of its output; a
    # tokenizer trained in-house is unknown to it and must be declared (e.g. qwen2, llama-bpe).
    gguf_pre_tokenizer: str | None = None


class DataConfig(_Section):
    sources: Annotated[list[Path], Field(min_length=1)]
    general_corpus: Path | None = None
    # the CSV reader's field limit is set to it: within what a C long and memory allow
    max_line_bytes: Annotated[int, Field(ge=1, le=1 << 30)] = 65536


class PiiConfig(_Section):
    enabled: bool = True
    dictionary: Path | None = None
    # Record and conversation ids leave the split as keyed-hash pseudonyms (a conversation id is
    # often a phone number): HMAC-SHA256 with the key in this environment variable; unset, the
    # split's public salt is the key (stable, but not secret: the split report says so).
    pseudonymize_ids: bool = True
    id_key_env: str = "QPIPE_PII_KEY"


class DedupConfig(_Section):
    near_threshold: Share = 0.8
    num_perm: PositiveInt = 128


class SplitConfig(_Section):
    by: Literal["conversation_id", "date"] = "conversation_id"
    eval_share: OpenShare = 0.2   # 0 leaves nothing to evaluate, 1 nothing to calibrate on
    eval_recent_days: PositiveInt | None = None
    salt: str = "qpipe-split-v1"
    # worker processes of split and calibration builds (default: one per core)
    workers: Annotated[int, Field(ge=1, le=MAX_WORKERS)] | None = None
    pii: PiiConfig = Field(default_factory=PiiConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    out_dir: Path = Path("data")

    @model_validator(mode="after")
    def _date_split_needs_days(self) -> SplitConfig:
        if self.by == "date" and self.eval_recent_days is None:
            _fail([(("eval_recent_days",), "split by date needs eval_recent_days",
                    "set eval_recent_days: N (the last N days go to the evaluation pool)")])
        return self


class Rotation(_Section):
    """Keep (1 - refresh) of a previous set (its frozen id list) and draw the rest anew."""

    previous: Path  # written by `qpipe calib freeze <set>`; committed, since a stage cannot read its own output
    refresh: Share = 0.25


class CalibrationSet(_Section):
    source: Literal["business", "general"]
    num_samples: PositiveInt
    max_seq_len: PositiveInt
    overlength: Literal["drop", "truncate"] = "drop"
    hard_share_min: Share = 0.0
    quota_policy: Literal["fail", "fill"] = "fill"
    general_ratio: Share = 0.0
    scenario_weights: dict[str, Annotated[float, Field(ge=0)]] | None = None  # default: uniform
    rotation: Rotation | None = None
    seed: int = 0


class CalibrationConfig(_Section):
    length_buckets: Annotated[list[PositiveInt], Field(min_length=1)] = [128, 256, 512]
    sets: dict[Name, CalibrationSet] = Field(default_factory=dict)

    @field_validator("length_buckets")
    @classmethod
    def _buckets_increase(cls, edges: list[int]) -> list[int]:
        bad = [i for i in range(1, len(edges)) if edges[i] <= edges[i - 1]]
        if bad:
            i = bad[0]
            _fail([((i,), f"length bucket edges must be strictly increasing: {edges[i - 1]} "
                    f"then {edges[i]}", f"sort them, without repeats: {sorted(set(edges))}")])
        return edges


class Variant(_Section):
    """One quantized (or baseline) model: how it is made and which engine serves it."""

    backend: str
    scheme: str
    recipe: Path | None = None
    calibration: str | None = None
    engine: str | None = None  # default: engines.formats[<the artifact's format>]
    url: str | None = None  # engine openai: the endpoint already serving this variant
    reason: str | None = None  # engine none / transformers: why it is not on a serving engine
    options: dict[str, Any] = Field(default_factory=dict)  # backend extras
    engine_options: dict[str, Any] = Field(default_factory=dict)  # over engines.<engine>

    @property
    def format(self) -> str:
        """The artifact format its backend writes (the key of the engines.formats table)."""
        return BACKEND_FORMATS.get(self.backend, self.backend)

    @property
    def info(self) -> SchemeInfo:
        return SCHEMES.get(self.scheme)

    @property
    def needs_calibration(self) -> bool:
        return self.info.needs_calibration

    @property
    def is_baseline(self) -> bool:
        return self.scheme in BASELINE_SCHEMES

    @model_validator(mode="after")
    def _check(self) -> Variant:
        issues = self._scheme_issues()
        if not any(loc == ("backend",) for loc, _, _ in issues):
            issues += self._recipe_issues()  # which recipe fits depends on a valid backend
        issues += self._engine_issues()
        if issues:
            _fail(issues)
        return self

    def _scheme_issues(self) -> list[Issue]:
        issues: list[Issue] = []
        if self.scheme not in SCHEMES:
            issues.append((("scheme",), f"unknown scheme '{self.scheme}'",
                           known(self.scheme, SCHEMES)))
        if self.backend not in BACKENDS:
            issues.append((("backend",), f"unknown backend '{self.backend}'",
                           known(self.backend, BACKENDS)))
        if self.scheme not in SCHEMES:
            return issues
        if self.backend in BACKENDS and self.scheme not in BACKENDS[self.backend]:
            doers = [b for b, schemes in BACKENDS.items() if self.scheme in schemes]
            what = ("is an unquantized baseline and needs" if self.is_baseline
                    else "is done by")
            issues.append((("backend",),
                           f"backend '{self.backend}' does not do scheme '{self.scheme}'",
                           f"scheme '{self.scheme}' {what} backend {' or '.join(doers)}"))
        if self.needs_calibration and self.calibration in (None, NO_CALIBRATION):
            issues.append((("calibration",),
                           f"scheme '{self.scheme}' needs a calibration set",
                           "add `calibration: <name>` naming one of calibration.sets"))
        if not self.needs_calibration and self.calibration != NO_CALIBRATION:
            issues.append((("calibration",),
                           f"scheme '{self.scheme}' uses no calibration data",
                           f"write `calibration: {NO_CALIBRATION}` (the empty set: DVC then never "
                           "requantizes this variant when calibration data changes)"))
        return issues

    def _recipe_issues(self) -> list[Issue]:
        if self.recipe is None:
            kind = {"llmcompressor": "an llm-compressor recipe", "llamacpp": "a GGUF preset file",
                    "none": "recipes/baseline.yaml"}.get(self.backend, "the backend's recipe")
            return [(("recipe",), f"variant has no recipe (backend '{self.backend}')",
                     f"add `recipe: recipes/<file>.yaml` ({kind}); every variant names one, "
                     "so DVC tracks exactly what made it")]
        return []

    def _engine_issues(self) -> list[Issue]:
        if self.engine is None:
            return []  # resolved from engines.formats (checked across sections)
        if self.engine not in ENGINES:
            return [(("engine",), f"unknown engine '{self.engine}'", known(self.engine, ENGINES))]
        issues: list[Issue] = []
        if self.engine == "none" and not self.reason:
            issues.append((("reason",), "engine 'none' needs a reason",
                           "add `reason: <why this variant is not served>`"))
        if self.engine == "transformers" and not self.is_baseline and not self.reason:
            issues.append((("reason",), "engine 'transformers' (the in-process reference) needs "
                           "a reason", "add `reason: <why no serving engine runs it here>`; its "
                           "speed is kept out of comparisons, so say why"))
        if self.engine == "openai" and not self.url:
            issues.append((("url",), "engine 'openai' needs a url",
                           "add `url: http://host:port/v1` (the endpoint serving it)"))
        if self.engine != "openai" and self.url:
            issues.append((("url",), f"url is only used by engine 'openai', not "
                           f"'{self.engine}'", "remove `url:` or set `engine: openai`"))
        if self.engine == "llamacpp" and not self.scheme.startswith("gguf_"):
            issues.append((("engine",), f"engine 'llamacpp' cannot serve scheme "
                           f"'{self.scheme}'", "llama.cpp serves gguf_* schemes; use vllm"))
        return issues


Device = Annotated[str, Field(pattern=r"^(cpu|cuda|cuda:\d+|auto)$")]


class LoadCheckConfig(_Section):
    """The prompt every artifact's load check answers with a few greedy tokens (recorded in its
    manifest): a question in the model's own domain shows at a glance that the weights still work."""

    system: str | None = None
    prompt: str = "Reply with one short sentence."
    new_tokens: PositiveInt = 16

    def messages(self) -> list[dict[str, str]]:
        return ([{"role": "system", "content": self.system}] if self.system else []) + \
            [{"role": "user", "content": self.prompt}]


class QuantizeConfig(_Section):
    """Where quantization runs. On a GPU the model stays in host memory and llm-compressor's
    sequential pipeline onloads one layer at a time, so a model larger than the GPU fits."""

    device: Device = "cpu"  # cpu | cuda | cuda:N | auto (cuda when one is present)
    # GPUs one llm-compressor run is spread over (torchrun, one process per GPU): each process
    # calibrates on its share of the samples, GPTQ's layer solves are divided among them.
    gpus: PositiveInt = 1
    load_check: LoadCheckConfig = Field(default_factory=LoadCheckConfig)
    out_dir: Path = Path("artifacts")  # one folder per variant: model files + manifest.json

    @model_validator(mode="after")
    def _gpus_need_cuda(self) -> QuantizeConfig:
        if self.gpus > 1 and (self.device == "cpu" or self.device.startswith("cuda:")):
            _fail([(("gpus",), f"gpus: {self.gpus} spreads quantization over the first {self.gpus} "
                    f"visible GPUs, which device {self.device!r} does not allow",
                    "set device: cuda (or auto), and choose the GPUs with CUDA_VISIBLE_DEVICES; "
                    "or set gpus: 1")])
        return self


# ── serving and evaluation ─────────────────────────────────────────────────────────────────


class _EngineSettings(_Section):
    startup_timeout: PositiveFloat = 600.0   # seconds until /health answers
    request_timeout: PositiveFloat = 600.0
    extra_args: list[str] = Field(default_factory=list)  # appended to the engine's command line


class VllmSettings(_EngineSettings):
    python: str | None = None          # the engine environment's python (default: set-up's)
    dtype: str = "auto"
    max_model_len: PositiveInt | None = None  # default: the model's own context
    max_num_seqs: PositiveInt = 32
    kv_cache_dtype: str = "auto"       # the same for every variant (seed 000 §7.1)
    enforce_eager: bool = True         # CPU: loads in ~20 s instead of 90–200 s of compiling
    cpu_kvcache_gb: PositiveInt = 1    # VLLM_CPU_KVCACHE_SPACE
    env: dict[str, str] = Field(default_factory=dict)


class LlamaCppSettings(_EngineSettings):
    startup_timeout: PositiveFloat = 120.0
    threads: PositiveInt = 1
    ctx: PositiveInt = 4096
    slots: PositiveInt = 1
    kv_cache_dtype: str = "f16"        # -ctk/-ctv: stated, never left to the engine's default


class TransformersSettings(_EngineSettings):
    device: Device = "cpu"


class OpenAISettings(_EngineSettings):
    model: str = "model"               # the served model name the endpoint expects
    kernel: str | None = None          # what the operator knows of the remote kernel


class EnginesConfig(_Section):
    """Which engine serves which artifact format (a variant's `engine:` overrides it), and each
    engine's settings (a variant's `engine_options:` overrides those)."""

    formats: dict[str, str] = Field(default_factory=lambda: {
        "hf": "vllm", "compressed-tensors": "vllm", "gptq": "vllm", "awq": "vllm",
        "modelopt": "vllm", "gguf": "llamacpp"})
    vllm: VllmSettings = Field(default_factory=VllmSettings)
    llamacpp: LlamaCppSettings = Field(default_factory=LlamaCppSettings)
    transformers: TransformersSettings = Field(default_factory=TransformersSettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)

    @field_validator("formats")
    @classmethod
    def _known_engines(cls, formats: dict[str, str]) -> dict[str, str]:
        bad = {f: e for f, e in formats.items() if e not in ENGINES}
        if bad:
            f, e = next(iter(bad.items()))
            _fail([((f,), f"unknown engine '{e}' for format '{f}'", known(e, ENGINES))])
        return formats


class LmEvalConfig(_Section):
    """lm-evaluation-harness tasks run against the served engine during `evaluate`."""

    tasks: list[str] = Field(default_factory=list)  # `business_exact` is built from the eval set
    include_path: Path | None = None   # a folder of your own task YAMLs
    limit: PositiveInt | None = None   # samples per task


class EvaluateConfig(_Section):
    evalset: Path = Path("data/evalset")
    out_dir: Path = Path("results")
    max_tokens: PositiveInt = 128      # fixed for every variant
    concurrency: PositiveInt = 4       # requests in flight (serving engines)
    warmup: int = Field(8, ge=0)       # requests sent and discarded before measuring
    limit: PositiveInt | None = None   # first N samples only (quick runs; recorded)
    repetition_ngram: PositiveInt = 4  # detector: an output repeating an n-gram 3+ times
    lm_eval: LmEvalConfig = Field(default_factory=LmEvalConfig)


class DivergenceConfig(_Section):
    """divergence@<variant>: teacher-forced signals against the baseline, and the
    long-generation probe (a few prompts generated to the context limit, EOS ignored)."""

    long_prompts: int = Field(2, ge=0)      # 0: no long-generation probe
    long_max_len: PositiveInt | None = None  # default: the model's context length
    # The same signals from the serving engine where it returns prompt log-probabilities (vLLM),
    # top-k (≤ 20, vLLM's default max_logprobs) per position; null: the exact transformers
    # measure only. Starts the baseline's and the variant's engines once each per variant.
    engine_top_k: Annotated[int, Field(ge=1, le=20)] | None = None


class BenchConfig(_Section):
    """The offline protocol of seed 002 §4 plus streaming latency, every variant alternately."""

    out_dir: Path = Path("results/bench")  # bench.json + each engine's log
    rounds: PositiveInt = 2            # every variant once per round, alternating direction
    baseline_every: PositiveInt = 4    # a baseline measurement after every N variants
    repeats: PositiveInt = 3           # measured offline runs per round (after a warm-up run)
    num_prompts: PositiveInt = 16
    input_len: PositiveInt = 256
    output_len: PositiveInt = 64       # forced (ignore EOS) where the engine allows
    concurrency: list[PositiveInt] = Field(default_factory=lambda: [1, 4])
    stream_requests: PositiveInt = 16  # streamed requests per concurrency level
    memory_bandwidth_gbps: PositiveFloat | None = None  # default: measured (a large copy)
    variants: list[str] | None = None  # default: every served variant


class CompareConfig(_Section):
    out_dir: Path = Path("reports")
    alpha: OpenShare = 0.05            # every interval is a (1 − alpha) interval
    bootstrap: Annotated[int, Field(ge=100, le=100_000)] = 2000  # resamples, continuous metrics only
    min_effect: Share = 0.05           # a slice whose exact McNemar test cannot see this drop says so
    power: Share = 0.8                 # … at this power; also the power of "items needed"
    seed: int = 0
    # The unquantized model on each engine other than the baseline's (engine -> variant): every
    # variant that engine serves is judged against it (the quantization effect), and it against
    # the baseline (the engine effect).
    engine_baselines: dict[str, str] = Field(default_factory=dict)
    # engine -> a variant serving that engine's reference weights again: its disagreement with
    # them is the engine's noise floor, reported with every comparison and used by `qpipe plan`.
    noise_floor: dict[str, str] = Field(default_factory=dict)
    # `qpipe plan`: the share of items a variant of equal quality flips (both ways together)
    # when no noise floor has been measured, and how often such a variant must pass.
    plan_discordance: Share = 0.02
    plan_null_pass: Share = 0.95


class GateThresholds(_Section):
    """One business-strictness profile: non-inferiority margins, the largest TRUE loss the
    business accepts (0.01 = 1 accuracy point). A criterion passes when the lower bound of the
    paired (1 − alpha) interval is above −margin, fails when its upper bound is below it, and is
    inconclusive in between — never judged on the point estimate."""

    max_drop_overall: Share
    max_drop_slice: Share               # on each critical slice (all must pass)
    # Any slice, critical or not: a drop beyond this that is significant after Benjamini–Hochberg
    # across the variant's slices fails the gate.
    max_drop_any_slice: Share | None = None
    max_drop_json_validity: Share | None = None  # paired change in valid JSON answers
    min_task_agreement: Share           # share of items with the baseline's task result (its
                                        # Wilson bound), for churn the accuracy change hides
    # Mean token KL divergence from the baseline along its greedy outputs (nats per token; the
    # item-bootstrap interval against it), where divergence@<variant> measured it.
    max_kld_mean: PositiveFloat | None = None
    min_speedup: PositiveFloat | None = None      # output tok/s ratio (serving engines only) …
    min_compression: PositiveFloat | None = None  # … or size ratio: one of the two must hold


GATE_PROFILES = ("compliance_audit", "finance_medical", "general_saas", "research", "custom")


class GatesConfig(_Section):
    profile: str = "general_saas"       # one of GATE_PROFILES (numbers: pipeline/compare/gates.py)
    critical_slices: list[str] = Field(default_factory=list)  # e.g. scenario=tool_call
    custom: GateThresholds | None = None

    @model_validator(mode="after")
    def _known_profile(self) -> GatesConfig:
        if self.profile not in GATE_PROFILES:
            _fail([(("profile",), f"unknown gate profile '{self.profile}'",
                    known(self.profile, GATE_PROFILES))])
        if self.profile == "custom" and self.custom is None:
            _fail([(("custom",), "gates.profile is custom but gates.custom is empty",
                    "give max_drop_overall, max_drop_slice, min_task_agreement (and optionally "
                    "max_drop_any_slice, max_drop_json_validity, min_speedup, min_compression)")])
        bad = [s for s in self.critical_slices if "=" not in s]
        if bad:
            _fail([(("critical_slices",), f"critical slice '{bad[0]}' is not <key>=<value>",
                    "e.g. scenario=tool_call, difficulty=hard, segment=enterprise")])
        return self


class UtilityConfig(_Section):
    """U = alpha·(−accuracy loss %) + beta·(throughput gain %) − gamma·instability (seed 000 §8.4)."""

    alpha: float = 1.0   # accuracy sensitivity (compliance/medical 5, general support 1)
    beta: float = 1.0    # cost pressure (peak-cost sensitive 2, offline jobs 0.5)
    gamma: float = 3.0   # incident intolerance (consumer-facing 3, internal tools 0.5)


class TrackingConfig(_Section):
    tracking_uri: str = "sqlite:///mlflow.db"  # MLFLOW_TRACKING_URI overrides it
    experiment: str | None = None  # default: the model's name
    registered_model: str | None = None  # Model Registry name (default: the model's name)
    log_failures: bool = True      # `qpipe eval` logs a failed evaluation as FAILED at once


class HandoffConfig(_Section):
    out_dir: Path = Path("handoff")
    tarball: bool = False


class Params(_Section):
    """The whole of params.yaml."""

    model: ModelConfig
    # The embedded demo's own section: validated by demo/config.py, never read by the pipeline.
    demo: dict[str, Any] | None = None
    data: DataConfig
    split: SplitConfig = Field(default_factory=SplitConfig)
    calibration: CalibrationConfig = Field(default_factory=CalibrationConfig)
    quantize: QuantizeConfig = Field(default_factory=QuantizeConfig)
    variants: Annotated[dict[Name, Variant], Field(min_length=1)]
    engines: EnginesConfig = Field(default_factory=EnginesConfig)
    evaluate: EvaluateConfig = Field(default_factory=EvaluateConfig)
    divergence: DivergenceConfig = Field(default_factory=DivergenceConfig)
    bench: BenchConfig = Field(default_factory=BenchConfig)
    compare: CompareConfig = Field(default_factory=CompareConfig)
    gates: GatesConfig = Field(default_factory=GatesConfig)
    utility: UtilityConfig = Field(default_factory=UtilityConfig)
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    handoff: HandoffConfig = Field(default_factory=HandoffConfig)

    def engine_for(self, name: str) -> str:
        """The engine serving a variant: its own `engine:`, else the format table's."""
        v = self.variants[name]
        return v.engine or self.engines.formats.get(v.format, "none")

    def engine_settings(self, name: str) -> dict[str, Any]:
        engine = self.engine_for(name)
        section = getattr(self.engines, engine, None)
        base = section.model_dump() if section is not None else {}
        merged = base | dict(self.variants[name].engine_options)
        if engine == "transformers":  # one switch: model.trust_remote_code, never an option
            merged["trust_remote_code"] = self.model.trust_remote_code
        return merged

    @property
    def baseline(self) -> str:
        """Name of the first baseline variant (the one every other is compared with)."""
        return next(name for name, v in self.variants.items() if v.is_baseline)

    @model_validator(mode="after")
    def _cross_sections(self) -> Params:
        issues = cross_section_issues(self.model_dump())
        if issues:
            _fail(issues)
        return self


def cross_section_issues(data: Mapping[str, Any]) -> list[Issue]:
    """Rules between sections, on plain (possibly invalid) data, so they run even when some
    other part of the file is broken; locations are absolute."""
    issues: list[Issue] = []
    calibration = _mapping(data.get("calibration"))
    sets = _mapping(calibration.get("sets"))
    variants = _mapping(data.get("variants"))
    for name, variant in variants.items():
        wanted = _mapping(variant).get("calibration")
        if isinstance(wanted, str) and wanted != NO_CALIBRATION and wanted not in sets:
            issues.append((("variants", name, "calibration"),
                           f"calibration set '{wanted}' is not defined in calibration.sets",
                           known(wanted, sets, "Defined")))
    schemes = [_mapping(v).get("scheme") for v in variants.values()]
    if variants and not any(s in BASELINE_SCHEMES for s in schemes):
        issues.append((("variants",), "no baseline variant (scheme bf16 or fp16)",
                       "add one, e.g. `baseline: {backend: none, scheme: bf16, engine: vllm}`;"
                       " every variant is compared with it"))
    formats = _mapping(_mapping(data.get("engines")).get("formats")) or \
        EnginesConfig.model_fields["formats"].default_factory()
    for name, variant in variants.items():
        variant = _mapping(variant)
        fmt = BACKEND_FORMATS.get(variant.get("backend"), variant.get("backend"))
        if variant.get("engine") is None and isinstance(fmt, str) and fmt not in formats:
            issues.append((("variants", name, "engine"),
                           f"no engine for format '{fmt}' in engines.formats",
                           f"add `engine:` to the variant or `{fmt}: <engine>` to engines.formats"))
    if not _mapping(data.get("data")).get("general_corpus"):
        for name, spec in sets.items():
            spec = _mapping(spec)
            if spec.get("source") == "general" or (spec.get("general_ratio") or 0) > 0:
                issues.append((("calibration", "sets", name),
                               f"set '{name}' draws from the general corpus, but "
                               "data.general_corpus is not set",
                               "set data.general_corpus to a JSONL file of general text"))
    compare = _mapping(data.get("compare"))
    for key in ("engine_baselines", "noise_floor"):
        for engine, name in _mapping(compare.get(key)).items():
            if engine not in ENGINES:
                issues.append((("compare", key, engine), f"unknown engine '{engine}'",
                               known(engine, ENGINES)))
            if name not in variants:
                issues.append((("compare", key, engine), f"variant '{name}' is not defined",
                               known(str(name), variants, "Defined")))
            elif key == "engine_baselines" and \
                    _mapping(variants[name]).get("scheme") not in (*BASELINE_SCHEMES, "gguf_f16", "gguf_bf16"):
                issues.append((("compare", key, engine), f"'{name}' is quantized "
                               f"({_mapping(variants[name]).get('scheme')}), not an unquantized baseline",
                               "name a variant of the unquantized model in that engine's format "
                               "(bf16 / fp16; gguf_f16 for llama.cpp)"))
    issues += _handoff_dir_issues(data)
    issues += _remote_code_issues(data)
    issues += _variant_name_issues(data)
    for name, variant in variants.items():
        args = _mapping(_mapping(variant).get("engine_options")).get("extra_args")
        if args is not None and not (isinstance(args, list) and all(isinstance(a, (str, int, float))
                                                                     for a in args)):
            issues.append((("variants", name, "engine_options", "extra_args"),
                           f"extra_args must be a list of arguments, got {type(args).__name__}",
                           "write one list item per argument, e.g. `[--max-num-batched-tokens, '4096']`"))
    return issues


def _variant_name_issues(data: Mapping[str, Any]) -> list[Issue]:
    """A variant's results live in <evaluate.out_dir>/<name>: a name must not be a folder that
    another stage writes there (divergence@ writes `divergence/`, bench its out_dir)."""
    results = str(_mapping(data.get("evaluate")).get("out_dir", "results")).strip("/")
    taken = {"divergence"}
    bench = str(_mapping(data.get("bench")).get("out_dir", "results/bench")).strip("/")
    if bench.startswith(results + "/"):
        taken.add(bench[len(results) + 1:].split("/")[0])
    return [(("variants", name), f"variant name '{name}' is the folder {results}/{name}, which "
             "another stage writes", "rename the variant") for name in _mapping(data.get("variants"))
            if str(name) in taken]


_REMOTE_FLAGS = ("--trust-remote-code", "--trust_remote_code")


def _remote_code_issues(data: Mapping[str, Any]) -> list[Issue]:
    """Remote code runs only behind `model.trust_remote_code`: no engine option or engine flag
    turns it on by another route."""
    if _mapping(data.get("model")).get("trust_remote_code") is True:
        return []
    fix = ("remove it; to run a model's own Python code, set `model.trust_remote_code: true` "
           "(the one switch, recorded in every manifest)")
    out: list[Issue] = []
    places: list[tuple[tuple, Mapping[str, Any]]] = [
        (("engines", k), _mapping(v)) for k, v in _mapping(data.get("engines")).items()]
    places += [(("variants", k, "engine_options"), _mapping(_mapping(v).get("engine_options")))
               for k, v in _mapping(data.get("variants")).items()]
    for loc, section in places:
        for key, value in section.items():
            if key.replace("-", "_") == "trust_remote_code" and value:
                out.append(((*loc, key), "remote code is off (model.trust_remote_code: false)", fix))
        args = section.get("extra_args")
        for i, a in enumerate(args if isinstance(args, list) else []):
            if str(a).split("=", 1)[0] in _REMOTE_FLAGS:
                out.append(((*loc, "extra_args", i), f"'{a}': remote code is off "
                            "(model.trust_remote_code: false)", fix))
    return out


# Folders of the project that the handoff stage must never write into or delete from.
_PROJECT_DIRS = ("artifacts", "approvals", "logs", "models", "data", "calibration", "recipes",
                 "pipeline", "tests", "scripts", "mlruns", ".dvc", ".git")


def _handoff_dir_issues(data: Mapping[str, Any]) -> list[Issue]:
    """handoff.out_dir deletes stale bundles: it must be a folder of its own, inside the project,
    never the project itself nor any input or output of another stage."""
    raw = _mapping(data.get("handoff")).get("out_dir", "handoff")
    loc, fix = ("handoff", "out_dir"), "use a folder of its own inside the project, e.g. `handoff`"
    text = str(raw)
    parts = [p for p in text.replace("\\", "/").split("/") if p not in ("", ".")]
    if text.startswith(("/", "~")) or ".." in parts or not parts:
        return [(loc, f"handoff.out_dir '{text}' is not a folder of its own inside the project (absolute, "
                      "`..`, or the project root)", fix)]
    mine = tuple(parts)
    others: list[tuple[str, tuple[str, ...]]] = [(d, (d,)) for d in _PROJECT_DIRS]

    def collect(node: Any, where: tuple[str, ...]) -> None:
        if isinstance(node, Mapping):
            for k, v in node.items():
                if k in ("out_dir", "path", "evalset", "general_corpus", "recipe") and \
                        isinstance(v, (str, Path)) and where[:1] != ("handoff",):
                    others.append((".".join((*where, str(k))), tuple(
                        p for p in str(v).split("/") if p not in ("", "."))))
                else:
                    collect(v, (*where, str(k)))

    collect(data, ())
    for what, other in others:
        if other and (mine[:len(other)] == other or other[:len(mine)] == mine):
            return [(loc, f"handoff.out_dir '{text}' overlaps {what} ('{'/'.join(other)}'): stale bundles are "
                          "deleted from handoff.out_dir", fix)]
    return []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# ── YAML with line numbers ───────────────────────────────────────────────────────────────


@dataclass
class YamlDoc:
    """Parsed YAML plus the line of every key path (mapping keys and sequence items)."""

    file: str
    data: Any
    lines: dict[Loc, int]

    def line(self, loc: Loc) -> int | None:
        """Line of ``loc`` or of its nearest ancestor present in the file."""
        path = tuple(p for p in loc if p != "[key]")
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def problem(self, loc: Loc, message: str, fix: str = "") -> Problem:
        return Problem(self.file, self.line(loc), dotted(loc), message, fix)


def dotted(loc: Loc) -> str:
    """``("data", "sources", 0)`` -> ``"data.sources[0]"``."""
    out = ""
    for part in loc:
        if part == "[key]":
            continue
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def read_yaml(path: Path | str) -> tuple[YamlDoc | None, list[Problem]]:
    """Parse ``path``; syntax errors and duplicate keys come back as problems."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except OSError as err:
        return None, [Problem(file, None, "", f"cannot read file: {err.strerror or err}",
                              "check the path and its permissions")]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        reason = getattr(err, "problem", None) or str(err)
        return None, [Problem(file, mark.line + 1 if mark else None, "",
                              f"not valid YAML: {reason}",
                              "fix the syntax here (indentation, a missing ':', a quote)")]
    lines: dict[Loc, int] = {}
    duplicates: list[Problem] = []
    if node is not None:
        _walk(node, (), lines, duplicates, file)
    return YamlDoc(file, data, lines), duplicates


def _walk(node: yaml.Node, path: Loc, lines: dict[Loc, int], dups: list[Problem],
          file: str) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            here = (*path, key_node.value)
            line = key_node.start_mark.line + 1
            if here in lines:
                dups.append(Problem(file, line, dotted(here),
                                    f"duplicate key (first at line {lines[here]}); "
                                    "YAML keeps only the last one", "remove one of them"))
            lines[here] = line
            _walk(value_node, here, lines, dups, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*path, i)] = item.start_mark.line + 1
            _walk(item, (*path, i), lines, dups, file)


# ── loading ───────────────────────────────────────────────────────────────────────────────


def check_params(path: Path | str) -> tuple[Params | None, YamlDoc | None, list[Problem]]:
    """Parse and validate ``path`` without raising: the params (None when invalid), the
    parsed document (for callers that check more), and every problem found."""
    doc, problems = read_yaml(path)
    if doc is None:
        return None, None, problems
    if not isinstance(doc.data, Mapping):
        problems.append(doc.problem((), "expected a mapping of sections at the top level",
                                    "start the file with `model:`, `data:`, `variants:` …"))
        return None, doc, problems
    try:
        return Params.model_validate(doc.data), doc, problems
    except ValidationError as err:
        found, extra = _translate(err, doc), _err_locs(err, "extra_forbidden")
    # A model's own rules run only once its keys are valid, and the cross-section rules only
    # on a valid file. Report theirs in this same pass: validate again without the unknown
    # keys, and run the cross-section rules on the raw data.
    if extra:
        try:
            Params.model_validate(_without(doc.data, extra))
        except ValidationError as again:
            found += _translate(again, doc)
    found += [doc.problem(*issue) for issue in cross_section_issues(doc.data)]
    unique = list({(p.key, p.message): p for p in reversed(found)}.values())[::-1]
    problems += sorted(unique, key=lambda p: p.line or 0)
    return None, doc, problems


def _err_locs(err: ValidationError, kind: str) -> list[Loc]:
    """Locations of the errors of one pydantic error type."""
    return [tuple(e["loc"]) for e in err.errors(include_url=False) if e["type"] == kind]


def _without(data: Any, locs: list[Loc]) -> Any:
    """A copy of ``data`` with the keys at ``locs`` removed."""
    data = copy.deepcopy(data)
    for loc in locs:
        parent = data
        for part in loc[:-1]:
            parent = parent[part]
        parent.pop(loc[-1], None)
    return data


def load_params(path: Path | str) -> Params:
    """The validated params; :class:`ConfigError` listing every problem otherwise."""
    params, _, problems = check_params(path)
    if problems or params is None:
        raise ConfigError(problems)
    logger.debug("loaded %s: %d variants", path, len(params.variants))
    return params


def _translate(err: ValidationError, doc: YamlDoc) -> list[Problem]:
    problems: list[Problem] = []
    for e in err.errors(include_url=False):
        loc, kind, ctx = tuple(e["loc"]), e["type"], e.get("ctx") or {}
        if kind == "qpipe_issues":
            problems += [doc.problem((*loc, *sub), msg, fix) for sub, msg, fix in ctx["issues"]]
        elif kind == "extra_forbidden":
            allowed = _allowed_keys(loc[:-1])
            problems.append(doc.problem(loc, f"unknown key '{loc[-1]}'",
                                        known(str(loc[-1]), allowed, "Allowed keys")))
        elif kind == "missing":
            parent = dotted(loc[:-1]) or "the top level"
            problems.append(doc.problem(loc, f"missing required key '{loc[-1]}'",
                                        f"add `{loc[-1]}:` under {parent}"))
        elif kind == "literal_error":
            choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
            problems.append(doc.problem(loc, f"invalid value {e['input']!r}",
                                        known(str(e["input"]), choices, "Allowed")))
        elif loc and loc[-1] == "[key]":
            problems.append(doc.problem(loc, f"invalid name {e['input']!r}",
                                        "use letters, digits, '_' and '-' (the name becomes "
                                        "a directory and a DVC stage name)"))
        else:
            got = e["input"]
            shown = f" (got {got!r})" if isinstance(got, (str, int, float, bool)) else ""
            problems.append(doc.problem(loc, f"{e['msg']}{shown}"))
    return problems


def _allowed_keys(loc: Loc) -> list[str]:
    """Field names of the model found at ``loc`` inside :class:`Params`."""
    annotation: Any = Params
    for part in loc:
        annotation = _model_or_container(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return []
            annotation = field.annotation
        elif get_origin(annotation) in (dict, list):
            annotation = get_args(annotation)[-1]
        else:
            return []
    annotation = _model_or_container(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []


def _model_or_container(annotation: Any) -> Any:
    """Strip Annotated[...] and Optional[...] down to the model or container inside."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            annotation = next(a for a in get_args(annotation) if a is not type(None))
        else:
            return annotation
