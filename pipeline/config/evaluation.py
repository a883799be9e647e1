"""The measuring sections: ``evaluate`` (with its lm-eval tasks), ``divergence``,
``gate_calibration`` and ``bench``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from pipeline.config.fields import OpenShare, PositiveFloat, PositiveInt, Share, Section
from pipeline.config.problems import fail


class LmEvalConfig(Section):
    """lm-evaluation-harness tasks run against the served engine during `evaluate`."""

    tasks: list[str] = Field(default_factory=list)  # `business_exact` is built from the eval set
    include_path: Path | None = None   # a folder of your own task YAMLs
    limit: PositiveInt | None = None   # samples per task


class SequentialConfig(Section):
    """A quantized variant's evaluation served in looks and stopped at the first look where its
    gate is settled (pipeline.compare.stopping); the baseline and the other unquantized variants serve
    every item, but an engine's own reference (compare.engine_baselines) serves its opening look and
    its variants the rest they use (pipeline.evaluate.reference_serving)."""

    enabled: bool = False
    look: PositiveInt = 250            # items served between two looks at the gate
    seed: int = 0                      # the order the items are served in (a seeded permutation)
    # how the looks spend α (pipeline.stats.sequential.Spending): obrien_fleming, pocock, or
    # hwang_shih_decani with its gamma (−4 ≈ O'Brien–Fleming, 1 ≈ Pocock)
    spending: Literal["obrien_fleming", "pocock", "hwang_shih_decani"] = "obrien_fleming"
    gamma: float | None = None
    # non-binding futility: stop, inconclusive, once the chance that the whole set settles the
    # gate (predictive power, pipeline.compare.stopping) is below this; 0 never stops for futility
    futility: float = Field(0.0, ge=0.0, lt=0.5)

    @model_validator(mode="after")
    def _gamma(self) -> "SequentialConfig":
        if (self.spending == "hwang_shih_decani") != (self.gamma is not None):
            raise ValueError("evaluate.sequential.gamma goes with spending: hwang_shih_decani, and that "
                             "spending needs one — fix: gamma: -4 (close to O'Brien–Fleming) … 1 (close to "
                             "Pocock), or leave gamma out with another spending")
        return self


class EvaluateConfig(Section):
    evalset: Path = Path("data/evalset")
    out_dir: Path = Path("results")
    max_tokens: PositiveInt = 128      # fixed for every variant
    concurrency: PositiveInt = 4       # requests in flight (serving engines), per replica
    # engine replicas serving one evaluation (data parallel), each on its share of the node's
    # GPUs (or CPU cores): pipeline/evaluate/replicas.py
    replicas: PositiveInt = 1
    warmup: int = Field(8, ge=0)       # requests sent and discarded before measuring
    limit: PositiveInt | None = None   # first N samples only (quick runs; recorded)
    repetition_ngram: PositiveInt = 4  # detector: an output repeating an n-gram 3+ times
    lm_eval: LmEvalConfig = Field(default_factory=LmEvalConfig)
    sequential: SequentialConfig = Field(default_factory=SequentialConfig)


class DivergenceConfig(Section):
    """divergence@<variant>: teacher-forced signals against the baseline, and the
    long-generation probe (a few prompts generated to the context limit, EOS ignored)."""

    # The variant every other is measured against: its weights and its greedy outputs (an
    # unquantized baseline; named here so dvc.yaml can name its files and params).
    reference: str = "baseline"
    long_prompts: int = Field(2, ge=0)      # 0: no long-generation probe
    long_max_len: PositiveInt | None = None  # default: the model's context length
    # The same signals from the serving engine where it returns prompt log-probabilities (vLLM),
    # top-k (≤ 20, vLLM's default max_logprobs) per position; null: the exact transformers
    # measure only. Starts the baseline's and the variant's engines once each per variant.
    engine_top_k: Annotated[int, Field(ge=1, le=20)] | None = None
    # Where the transformers reference (and each variant's dequantized weights) run the
    # teacher-forced passes: cpu, cuda, or auto (cuda where torch sees a GPU). Float32 either
    # way; the log-probabilities come back to the host, so every signal is computed alike.
    device: Literal["cpu", "cuda", "auto"] = "cpu"


class GateCalibrationConfig(Section):
    """gate_calibration: a ladder of noise perturbations of the reference weights, each step's
    business accuracy drop and distribution signals on the same items, from which `compare`
    derives this model's signal limits (pipeline/evaluate/gate_calibration.py)."""

    items: PositiveInt | None = 400    # a seeded sample of the evaluation items (null: all)
    start: PositiveFloat = 0.02        # the first step's noise, × each weight tensor's std
    factor: Annotated[float, Field(gt=1.0)] = 2.0   # each step's noise over the last's
    max_steps: Annotated[int, Field(ge=2, le=20)] = 8
    target_drop: Share = 0.10          # stop once a step loses this much accuracy
    batch: PositiveInt = 32            # prompts per generate call (left padded)
    device: Literal["cpu", "cuda", "auto"] = "cpu"   # as divergence.device, for the ladder
    seed: int = 0


class BenchTraffic(Section):
    """The business's own traffic against every benched variant (docs/engines.md#business-traffic):
    requests drawn from the evaluation set (pipeline/loadgen/traffic.py), each with its logged
    answer's output length, replayed by GuideLLM at fixed concurrency levels after each fixed-shape
    measurement — the same requests, in the same order, for every variant. The comparison's speed
    columns and the gain criterion read it; the fixed-shape figures stay beside it."""

    enabled: bool = True
    requests: PositiveInt = 48         # per concurrency level and measurement
    # 1: per-request latency, paired request by request; the highest: throughput under load
    concurrency: list[PositiveInt] = Field(default_factory=lambda: [1, 8], min_length=1)
    long_share: Share | None = None    # null: drawn as the logs are; else this share from the long tail
    long_quantile: OpenShare = 0.8
    max_output_tokens: PositiveInt = 256
    seed: int = 0

    @model_validator(mode="after")
    def _levels(self) -> BenchTraffic:
        if sorted(set(self.concurrency)) != self.concurrency:
            fail([(("concurrency",), f"{self.concurrency} is not increasing without repeats",
                   "list each level once, lowest first (e.g. [1, 8])")])
        return self


class BenchConfig(Section):
    """The offline protocol (docs/rationale.md#throughput-protocol) plus streaming latency, every
    variant alternately."""

    out_dir: Path = Path("results/bench")  # bench.json + each engine's log
    rounds: PositiveInt = 2            # every variant once per round, alternating direction
    baseline_every: PositiveInt = 4    # a baseline measurement after every N variants
    # engines kept started between measurements (least recently used stopped first; also when
    # under 30% of the host's memory is free): each distinct artifact starts about once instead
    # of once per measurement; an idle engine uses ~2% of a core here. 1: a fresh start for
    # every measurement. Memory: ~3 GB per vLLM on CPU.
    live_engines: PositiveInt = 6
    # engines started at once before the first measurement (up to live_engines), their start-ups
    # waited for side by side; auto: live_engines on a host without a GPU, 1 with one (engines
    # sharing a GPU size their memory at start-up and must not start together)
    start_together: Literal["auto"] | PositiveInt = "auto"
    repeats: PositiveInt = 3           # measured offline runs per round (after a warm-up run)
    num_prompts: PositiveInt = 16
    input_len: PositiveInt = 256
    output_len: PositiveInt = 64       # forced (ignore EOS) where the engine allows
    concurrency: list[PositiveInt] = Field(default_factory=lambda: [1, 4])
    stream_requests: PositiveInt = 16  # streamed requests per concurrency level
    memory_bandwidth_gbps: PositiveFloat | None = None  # default: measured (a large copy)
    variants: list[str] | None = None  # default: every served variant
    traffic: BenchTraffic = Field(default_factory=BenchTraffic)
