"""Typed contracts between stages: each file one stage writes and later ones read, as a pydantic
model with its schema id (pipeline.contracts.contract). A kernel: imports only errors and io."""

from pipeline.contracts.artifact_manifest import ArtifactManifest, FileEntry
from pipeline.contracts.bundle_index import BundleIndex
from pipeline.contracts.calibration_card import CalibrationCard
from pipeline.contracts.comparison import Comparison, VariantEntry
from pipeline.contracts.contract import Contract, ContractError
from pipeline.contracts.eval_metrics import Metrics
from pipeline.contracts.evalset_card import ITEM_SCHEMA, EvalItem, EvalsetCard
from pipeline.contracts.divergence_reference import ReferencePasses
from pipeline.contracts.records import DivergenceRecord, SampleRecord, read_lines
from pipeline.contracts.search_results import SensitivityReport
from pipeline.contracts.stage_results import (BenchResults, BundleEvaluation, DivergenceResult, EvalRun,
                                              GateCalibration, HandoffIndex, QuantizeRun,
                                              UpgradeReport)

__all__ = ["ArtifactManifest", "BenchResults", "BundleIndex", "DivergenceRecord", "DivergenceResult",
           "GateCalibration", "UpgradeReport", "QuantizeRun", "EvalRun", "HandoffIndex", "BundleEvaluation",
           "SampleRecord", "SensitivityReport",
           "read_lines", "CalibrationCard", "Comparison", "Contract",
           "ContractError", "EvalItem", "EvalsetCard", "FileEntry", "ITEM_SCHEMA", "Metrics",
           "ReferencePasses", "VariantEntry"]
