"""`results/<variant>/metrics.json`: one variant's evaluation — accuracy overall and per slice,
detectors, speed, memory, the engine — with the identities compare pairs on (evaluation set,
harness version, protocol, artifact). A variant not served here has only why."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import model_validator

from pipeline.contracts.contract import Contract, Num, OpenPart, Part
from pipeline.contracts.files import METRICS, RESULTS_SCHEMA


class EngineInfo(Part):
    name: str
    version: str | None = None
    kernel: str | None = None
    serving: bool | None = None
    reason: str | None = None  # why this engine serves the variant (params)


class SliceAccuracy(Part):
    n: int
    accuracy: Num


class Detectors(Part):
    output_tokens: dict[str, Num] = {}  # n, mean, p50, p90, p99, max (only n when empty)
    hit_max_tokens_share: Num | None = None
    empty_output_share: Num | None = None
    repetition_rate: Num | None = None
    json_validity: Num | None = None
    json_samples: int = 0


class Speed(Part):
    serving_engine: bool
    note: str | None = None
    wall_seconds: Num | None = None
    output_tokens_per_second: Num | None = None
    ttft_p50: Num | None = None
    ttft_p99: Num | None = None
    tpot_p50: Num | None = None
    tpot_p99: Num | None = None
    burst_share: Num | None = None
    latency_p50: Num | None = None
    latency_p99: Num | None = None


class Memory(Part):
    engine_peak_rss_bytes: int | None = None
    gpu: OpenPart | None = None  # what the GPU probe reports


class Protocol(Part):
    """What a pairing needs equal: the prompts' token ids (hash), decoding and max tokens."""

    prompts_sha256: str
    decoding: str
    max_tokens: int


class Sequential(Part):
    """A sequential evaluation (evaluate.sequential): the items served in a seeded order, `look`
    at a time, the gate read after each look against `reference`'s records, stopped at the
    first settled look. `looks` are the cumulative items of the looks taken (the last: `items`),
    out of `total`; compare reads the verdict at the repeated level of these looks."""

    design: str
    reference: str
    look: int
    seed: int
    total: int
    looks: list[int]
    items: int
    planned_looks: int
    stopped: bool                 # settled before the whole set
    verdict_at_stop: str          # the gate's quality verdict at the last look (gain left out)
    unsettled_at_stop: list[str] = []  # criteria still unsettled there (at the whole set only)
    repeated_alpha: Num
    saving: Num                   # the share of the items not served
    spending: str = "obrien_fleming"  # the alpha-spending function (pipeline.stats.sequential.Spending)
    gamma: Num | None = None          # its parameter (hwang_shih_decani)
    futility: Num = 0.0               # the predictive-power bound below which it stops (0: never)
    stopped_for: str | None = None    # "settled" or "futility" (None: it ran the whole set)
    conditional_power: Num | None = None  # the chance, at the last look taken, that the whole set settles it
    # "variant": stopped by its own gate; "reference": an engine's unquantized reference that served
    # its opening look only (its variants serve the rest of what they use: REFERENCE_SAMPLES), so its
    # own comparison is read at α on a sample fixed in advance
    role: str = "variant"


# what an evaluated (served) variant's file must hold: what compare pairs on and reports
SERVED_REQUIRES = ("accuracy", "n", "evalset_sha256", "harness_version", "engine")


class Metrics(Contract):
    SCHEMA: ClassVar[str] = RESULTS_SCHEMA
    FILE: ClassVar[str] = METRICS  # its name in its stage's folder
    WRITER: ClassVar[str] = "evaluate@{name}"

    variant: str
    served: bool
    reason: str | None = None  # not served: why
    accuracy: Num | None = None
    n: int | None = None
    slices: dict[str, SliceAccuracy] | None = None
    detectors: Detectors | None = None
    speed: Speed | None = None
    memory: Memory | None = None
    engine: EngineInfo | None = None
    evalset_sha256: str | None = None
    harness_version: str | None = None
    protocol: Protocol | None = None
    artifact_sha256: str | None = None
    size_bytes: int | None = None
    lm_eval: dict[str, Any] | None = None  # lm-evaluation-harness results, in its own keys
    sequential: Sequential | None = None   # absent: every item was served

    @model_validator(mode="after")
    def _served_has_results(self) -> Self:
        if self.served:
            missing = [k for k in SERVED_REQUIRES if getattr(self, k) is None]
            if missing:
                raise ValueError(f"a served variant's metrics need {', '.join(missing)}")
        elif not self.reason:
            raise ValueError("a variant not served needs its reason")
        return self
