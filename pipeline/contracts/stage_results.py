"""The results files that had no class of their own: divergence@<variant>'s summary, the gate
calibration, bench's measurements, a quantize run's and an evaluation run's records, the handoff
index and a bundle's evaluation. Their typed fields are what the
stages after them read; the open-ended parts (an engine's extras, tool and host facts) stay as
their writer put them."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict

from pipeline.contracts.contract import Contract, Num
from pipeline.contracts.files import (BENCH, BENCH_SCHEMA, BUNDLE_EVALUATION_SCHEMA, BUNDLE_INDEX, DIVERGENCE_SCHEMA,
                                      EVAL_RUN_SCHEMA, EVALUATION, GATE_CALIBRATION, GATE_CALIBRATION_SCHEMA,
                                      HANDOFF_INDEX_SCHEMA, METRICS, QUANTIZE_RUN_SCHEMA, RUN, RUN_RECORD,
                                      UPGRADE, UPGRADE_SCHEMA)


class OpenContract(Contract):
    model_config = ConfigDict(extra="allow")


class DivergenceResult(OpenContract):
    """`results/divergence/<variant>/metrics.json`: the variant's distribution against the
    reference's, teacher-forced (overall and per slice), or why it was not measured."""

    SCHEMA: ClassVar[str] = DIVERGENCE_SCHEMA
    FILE: ClassVar[str] = METRICS
    WRITER: ClassVar[str] = "divergence@{name}"

    variant: str
    reference: str | None = None
    measured: bool
    method: str | None = None
    overall: dict[str, Any] | None = None
    slices: dict[str, dict[str, Any]] | None = None
    evalset_sha256: str | None = None
    artifact_sha256: str | None = None
    seconds: Num | None = None


class GateCalibration(Contract):
    """`results/gate-calibration/calibration.json`: the noise ladder of this base model on this
    evaluation set (accuracy and signals per step), from which compare derives its limits."""

    SCHEMA: ClassVar[str] = GATE_CALIBRATION_SCHEMA
    FILE: ClassVar[str] = GATE_CALIBRATION
    WRITER: ClassVar[str] = "gate_calibration"

    reference: str
    artifact_sha256: str
    evalset_sha256: str
    method: str
    items: list[str]
    base_accuracy: Num
    base_correct: list[int]
    steps: list[dict[str, Any]]
    note: str | None = None  # why margins beyond the ladder's largest drop cannot be calibrated


class BenchResults(OpenContract):
    """`results/bench/bench.json`: every variant's measured speed and memory on this node, and
    the ratios against each one's engine-matched reference."""

    SCHEMA: ClassVar[str] = BENCH_SCHEMA
    FILE: ClassVar[str] = BENCH
    WRITER: ClassVar[str] = "bench"

    baseline: str
    measurements: list[dict[str, Any]]
    ratios: dict[str, Any]


class QuantizeRun(OpenContract):
    """`runs/quantize/<variant>.json`: how one artifact was made (status, times, peak memory,
    host, git, backend facts)."""

    SCHEMA: ClassVar[str] = QUANTIZE_RUN_SCHEMA
    FILE: ClassVar[str] = RUN_RECORD
    WRITER: ClassVar[str] = "quantize@{name}"

    variant: str
    status: str
    started_at: str | None = None
    finished_at: str | None = None
    wall_seconds: Num | None = None


class EvalRun(OpenContract):
    """`results/<variant>/run.json`: how the evaluation ran (engine, hardware, settings, start-up,
    the artifact served) — run facts, beside the results in metrics.json."""

    SCHEMA: ClassVar[str] = EVAL_RUN_SCHEMA
    FILE: ClassVar[str] = RUN
    WRITER: ClassVar[str] = "evaluate@{name}"

    variant: str
    served: bool = True
    reason: str | None = None
    engine: dict[str, Any] | None = None
    evalset_sha256: str | None = None
    harness_version: str | None = None


class HandoffIndex(Contract):
    """`handoff/index.json`: the bundles made (their content hash and folder) and every variant
    left out with why."""

    SCHEMA: ClassVar[str] = HANDOFF_INDEX_SCHEMA
    FILE: ClassVar[str] = BUNDLE_INDEX
    WRITER: ClassVar[str] = "handoff"

    gate_profile: str | None
    bundles: dict[str, dict[str, str]]
    left_out: dict[str, str]


class BundleEvaluation(Contract):
    """`handoff/<variant>/evaluation.json`: the variant's metrics and its comparison entry, as
    the bundle's model card states them."""

    SCHEMA: ClassVar[str] = BUNDLE_EVALUATION_SCHEMA
    FILE: ClassVar[str] = EVALUATION
    WRITER: ClassVar[str] = "handoff"

    metrics: dict[str, Any]
    comparison: dict[str, Any]


class UpgradeReport(OpenContract):
    """`<serving.out_dir>/<upgrade>/upgrade.json`: two serving configurations on one artifact — the
    bytes served (their hash), each configuration's engine and settings, the paired accuracy
    verdict, each traffic mix's figures and P99 verdicts, the synthetic figure, the verdict."""

    SCHEMA: ClassVar[str] = UPGRADE_SCHEMA
    FILE: ClassVar[str] = UPGRADE
    WRITER: ClassVar[str] = "upgrade@{name}"

    upgrade: str
    artifact: str
    artifact_sha256: str
    evalset_sha256: str
    configurations: dict[str, dict[str, Any]]
    accuracy: dict[str, Any]
    traffic: dict[str, dict[str, Any]]
    synthetic: dict[str, Any]
    verdict: str
    arrivals: Literal["poisson", "constant"] = "poisson"  # how the replays' requests arrived
