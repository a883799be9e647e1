"""`reports/comparison.json`: every variant paired against its reference (accuracy, slices, JSON
validity, disagreement, detectors, speed, divergence), with the custody hashes, then — from the
report step — gates, utility, Pareto front, calibration effect and the plan.

The statistics blocks are typed where consumers read them by name; the rest keeps the shape the
statistics code gives it."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from pipeline.contracts.contract import Contract, Num, Part
from pipeline.contracts.files import COMPARISON, COMPARISON_SCHEMA


class Custody(Part):
    """The hashes a later step checks before approving or shipping the variant."""

    artifact_sha256: str | None = None
    reference_artifact_sha256: str | None = None
    metrics_sha256: str | None = None
    samples_sha256: str | None = None
    # the reference's records this variant was paired with, where its reference served only its
    # opening look and the variant's evaluation served the rest (REFERENCE_SAMPLES)
    reference_samples_sha256: str | None = None


class Utility(Part):
    """U = α·(−accuracy loss) + β·(throughput gain) − γ·instability, with its parts."""

    score: Num
    accuracy_loss_pts: Num | None = None
    throughput_gain_pct: Num | None = None
    instability_pct: Num | None = None
    weights: dict[str, Num] = {}


class VariantEntry(Part):
    variant: str
    served: bool
    reason: str | None = None  # not served: why
    engine: dict[str, Any] | None = None
    reference: str | None = None
    reference_role: str | None = None
    size_bytes: int | None = None
    compression: Num | None = None
    accuracy: dict[str, Any] | None = None  # the paired change: base, variant, delta, ci, p
    slices: dict[str, dict[str, Any]] | None = None
    significant_drops: list[str] | None = None
    underpowered_slices: list[str] | None = None
    json_validity: dict[str, Any] | None = Field(None, alias="json")
    disagreement: dict[str, Any] | None = None
    detectors: dict[str, Any] | None = None
    speed: dict[str, Any] | None = None
    memory: dict[str, Any] | None = None
    custody: Custody | None = None
    against_baseline: dict[str, Any] | None = None
    divergence: dict[str, Any] | None = None
    within_noise_floor: bool | None = None
    flips: dict[str, Any] | None = None          # items correct ↔ incorrect, both ways, per slice
    output_length: dict[str, Any] | None = None  # output tokens against the reference's, per slice
    # a sequential evaluation: its design (results/<variant>/metrics.json) and the repeated level
    # every interval of this entry is read at
    sequential: dict[str, Any] | None = None
    gate: dict[str, Any] | None = None
    utility: Utility | None = None


class Comparison(Contract):
    SCHEMA: ClassVar[str] = COMPARISON_SCHEMA
    FILE: ClassVar[str] = COMPARISON  # its name in its stage's folder
    WRITER: ClassVar[str] = "compare"

    baseline: str
    configured_baseline: str | None = None
    baseline_artifact_sha256: str | None = None
    evalset_sha256: str
    harness_version: str
    alpha: Num | None = None
    min_effect: Num | None = None
    interval: str | None = None
    baseline_metrics: dict[str, Any] | None = None
    references: dict[str, str] | None = None
    engine_baselines: dict[str, str] | None = None
    variants: dict[str, VariantEntry]
    noise_floor: dict[str, dict[str, Any]] | None = None
    bench: dict[str, dict[str, Any]] | None = None
    bench_node: dict[str, Any] | None = None   # the one node every speed ratio was measured on
    pareto_optimal: list[str] | None = None
    gate_profile: str | None = None
    calibration_effect: list[dict[str, Any]] | None = None
    calibration_effect_skipped: list[dict[str, Any]] | None = None
    plots: dict[str, str] | None = None
    plan: dict[str, Any] | None = None
    # this model's signal limits for the profile's margin, from the gate calibration (or why none)
    gate_limits: dict[str, Any] | None = None
