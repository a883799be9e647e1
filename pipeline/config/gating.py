"""The judging sections: ``compare`` (its statistics and reference variants), ``gates`` (the
business-strictness profiles and their thresholds) and ``utility``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from pipeline.config.fields import OpenShare, PositiveFloat, Share, Section
from pipeline.config.problems import fail, known


class CompareConfig(Section):
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


# MLPerf Inference's output-length rule for quantized submissions: tokens per sample within
# 90–110% of the reference's. The built-in profiles judge it; compare reports each slice against it.
MLPERF_LENGTH_BAND = (0.9, 1.1)


class GateThresholds(Section):
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
    # A constant floor on the share of items with the reference's task result, and a constant
    # limit on the mean token KL (nats per token along the reference's outputs; its item-bootstrap
    # interval against it). Built-in profiles set neither: both signals' scale belongs to the
    # model, so they gate through limits derived for it (the gate_calibration stage) or are
    # reported as diagnostics. Set them only for a model you have measured.
    min_task_agreement: Share | None = None
    max_kld_mean: PositiveFloat | None = None
    # Output tokens per item over the reference's (ratio of sums): MLPerf Inference's rule for
    # quantized submissions (90–110%). Passes when its paired bootstrap interval lies inside the
    # band, fails when it lies outside: a variant that answers much shorter (or longer) changed
    # its behaviour, whatever its accuracy on a set the model mostly fails. null: not judged.
    output_length_band: tuple[PositiveFloat, PositiveFloat] | None = MLPERF_LENGTH_BAND
    min_speedup: PositiveFloat | None = None      # output tok/s ratio (serving engines only) …
    min_compression: PositiveFloat | None = None  # … or size ratio: one of the two must hold

    @model_validator(mode="after")
    def _band_around_one(self) -> GateThresholds:
        band = self.output_length_band
        if band is not None and not band[0] < 1.0 < band[1]:
            fail([(("output_length_band",), f"output_length_band {list(band)} does not hold 1.0",
                    "give [low, high] with low < 1 < high, e.g. [0.9, 1.1] (MLPerf's), or null")])
        return self


GATE_PROFILES = ("compliance_audit", "finance_medical", "general_saas", "research", "custom")


class GatesConfig(Section):
    profile: str = "general_saas"       # one of GATE_PROFILES (numbers: pipeline/compare/gates.py)
    critical_slices: list[str] = Field(default_factory=list)  # e.g. scenario=tool_call
    custom: GateThresholds | None = None

    @model_validator(mode="after")
    def _known_profile(self) -> GatesConfig:
        if self.profile not in GATE_PROFILES:
            fail([(("profile",), f"unknown gate profile '{self.profile}'",
                    known(self.profile, GATE_PROFILES))])
        if self.profile == "custom" and self.custom is None:
            fail([(("custom",), "gates.profile is custom but gates.custom is empty",
                    "give max_drop_overall, max_drop_slice (and optionally max_drop_any_slice, "
                    "max_drop_json_validity, output_length_band, min_task_agreement, "
                    "max_kld_mean, min_speedup, min_compression)")])
        bad = [s for s in self.critical_slices if "=" not in s]
        if bad:
            fail([(("critical_slices",), f"critical slice '{bad[0]}' is not <key>=<value>",
                    "e.g. scenario=tool_call, difficulty=hard, segment=enterprise")])
        return self


class UtilityConfig(Section):
    """U = alpha·(−accuracy loss %) + beta·(throughput gain %) − gamma·instability (docs/rationale.md#utility)."""

    alpha: float = 1.0   # accuracy sensitivity (compliance/medical 5, general support 1)
    beta: float = 1.0    # cost pressure (peak-cost sensitive 2, offline jobs 0.5)
    gamma: float = 3.0   # incident intolerance (consumer-facing 3, internal tools 0.5)
