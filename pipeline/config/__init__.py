"""Pydantic models of params.yaml, and a loader that reports every problem with file:line.

Each stage reads its own section (``params.model``, ``params.variants[...]``, …). Unknown keys
are errors (``extra="forbid"``), so a typo fails here and not three hours into calibration.
Cross-field rules (a scheme that needs calibration, a backend that cannot do a scheme, …) are
validators; every broken rule becomes one :class:`Problem`, and :func:`load_params` raises
:class:`ConfigError` carrying all of them at once:

>>> params = load_params("params.yaml")                     # doctest: +SKIP
>>> params.variants["fp8_dynamic"].needs_calibration        # doctest: +SKIP
False

The package, by concern: ``problems`` (Problem, ConfigError, Issue), ``fields`` (the section
base and shared field types), ``scheme_tables`` (schemes, backends, engines, formats), the
sections in pipeline order (``model_data``, ``variants``, ``serving``, ``evaluation``,
``gating``, ``delivery``), ``params_model`` (Params) with ``cross_checks`` (rules between
sections), ``yaml_lines`` (YAML with line numbers) and ``loading`` (check_params, load_params).
"""

from __future__ import annotations

from pipeline.config.cross_checks import cross_section_issues
from pipeline.config.search import SearchConfig
from pipeline.config.delivery import HandoffConfig, TrackingConfig
from pipeline.config.evaluation import (BenchConfig, DivergenceConfig, EvaluateConfig,
                                        GateCalibrationConfig, LmEvalConfig, SequentialConfig)
from pipeline.config.fields import (
    MAX_WORKERS,
    Device,
    Name,
    OpenShare,
    PositiveFloat,
    PositiveInt,
    Share,
    Section,
)
from pipeline.config.gating import (
    GATE_PROFILES,
    CompareConfig,
    GatesConfig,
    GateThresholds,
    UtilityConfig,
)
from pipeline.config.loading import check_params, load_params
from pipeline.config.model_data import (
    CalibrationConfig,
    CalibrationSet,
    DataConfig,
    DedupConfig,
    ModelConfig,
    PiiConfig,
    Rotation,
    SplitConfig,
)
from pipeline.config.params_model import Params
from pipeline.config.problems import ConfigError, Issue, Loc, Problem, known, render_problems
from pipeline.config.scheme_tables import (
    backend_format,
    backend_schemes,
    family,
    recipe_format,
    BASELINE_SCHEMES,
    engine_names,
    NO_CALIBRATION,
    NO_REFERENCE,
    SCHEMES,
    SchemeInfo,
    UNQUANTIZED_SCHEMES,
)
from pipeline.config.serving import (
    EnginesConfig,
    LlamaCppSettings,
    OpenAISettings,
    TransformersSettings,
    VllmSettings,
)
from pipeline.config.variants import LoadCheckConfig, QuantizeConfig, Variant
from pipeline.config.yaml_lines import YamlDoc, dotted, read_yaml

__all__ = [
    "SearchConfig",
    "BASELINE_SCHEMES", "GATE_PROFILES", "MAX_WORKERS", "NO_CALIBRATION", "NO_REFERENCE", "SCHEMES",
    "UNQUANTIZED_SCHEMES",
    "backend_format", "backend_schemes", "engine_names", "family", "recipe_format",
    "BenchConfig", "CalibrationConfig", "CalibrationSet", "CompareConfig", "ConfigError",
    "DataConfig", "DedupConfig", "Device", "DivergenceConfig", "EnginesConfig", "EvaluateConfig",
    "GateCalibrationConfig",
    "GateThresholds", "GatesConfig", "HandoffConfig", "Issue", "LlamaCppSettings", "LmEvalConfig",
    "SequentialConfig",
    "LoadCheckConfig", "Loc", "ModelConfig", "Name", "OpenAISettings", "OpenShare", "Params",
    "PiiConfig", "PositiveFloat", "PositiveInt", "Problem", "QuantizeConfig", "Rotation",
    "SchemeInfo", "Share", "SplitConfig", "TrackingConfig", "TransformersSettings",
    "UtilityConfig", "Variant", "VllmSettings", "YamlDoc", "Section",
    "check_params", "cross_section_issues", "dotted", "known", "load_params", "read_yaml",
    "render_problems",
]
