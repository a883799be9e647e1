"""The whole of params.yaml: :class:`Params`, every section together, the engine each variant
is served by, and the cross-section rules run on it once its sections are valid."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from pipeline.config.cross_checks import cross_section_issues
from pipeline.config.delivery import HandoffConfig, TrackingConfig
from pipeline.config.evaluation import (BenchConfig, DivergenceConfig, EvaluateConfig,
                                        GateCalibrationConfig)
from pipeline.config.execution import ExecutionConfig
from pipeline.config.fields import Name, Section
from pipeline.config.gating import CompareConfig, GatesConfig, UtilityConfig
from pipeline.config.model_data import CalibrationConfig, DataConfig, ModelConfig, SplitConfig
from pipeline.config.problems import fail
from pipeline.config.search import SearchConfig
from pipeline.config.serving import EnginesConfig
from pipeline.config.upgrades import ServingSection
from pipeline.config.variants import QuantizeConfig, Variant
from pipeline.stage_params import ParamsHelpers


class Params(Section, ParamsHelpers):
    """The whole of params.yaml; its helpers (engine_for, engine_settings, baseline) are the ones
    a stage's view (:meth:`for_stage`) has too."""

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
    gate_calibration: GateCalibrationConfig = Field(default_factory=GateCalibrationConfig)
    bench: BenchConfig = Field(default_factory=BenchConfig)
    compare: CompareConfig = Field(default_factory=CompareConfig)
    gates: GatesConfig = Field(default_factory=GatesConfig)
    utility: UtilityConfig = Field(default_factory=UtilityConfig)
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    handoff: HandoffConfig = Field(default_factory=HandoffConfig)
    serving: ServingSection = Field(default_factory=ServingSection)
    search: SearchConfig = Field(default_factory=SearchConfig)
    # how `qpipe repro` runs the stages (read by it alone; no stage declares it)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)

    def for_stage(self, declared, key: str | None = None):
        """A stage's view of these params: only the keys its dvc.yaml stage declares (`declared`,
        the stage module's PARAMS; `key`, a foreach stage's key) can be read through it."""
        from pipeline.stage_params import StageParams

        return StageParams(declared, self, key)

    @model_validator(mode="after")
    def _cross_sections(self) -> Params:
        issues = cross_section_issues(self.model_dump())
        if issues:
            fail(issues)
        return self
