"""The whole of params.yaml: :class:`Params`, every section together, the engine each variant
is served by, and the cross-section rules run on it once its sections are valid."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from pipeline.config.cross_checks import cross_section_issues
from pipeline.config.delivery import HandoffConfig, TrackingConfig
from pipeline.config.evaluation import BenchConfig, DivergenceConfig, EvaluateConfig
from pipeline.config.fields import Name, _Section
from pipeline.config.gating import CompareConfig, GatesConfig, UtilityConfig
from pipeline.config.model_data import CalibrationConfig, DataConfig, ModelConfig, SplitConfig
from pipeline.config.problems import _fail
from pipeline.config.serving import EnginesConfig
from pipeline.config.variants import QuantizeConfig, Variant


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
