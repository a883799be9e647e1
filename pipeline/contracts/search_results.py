"""`<search.out_dir>/sensitivity.json`: each part's KL under each candidate weight format on a
business calibration set, each uniform variant's, and the mixes proposed under the size budgets
(pipeline/search)."""

from __future__ import annotations

from typing import ClassVar

from pipeline.contracts.contract import Contract, Part
from pipeline.contracts.files import SENSITIVITY, SENSITIVITY_SCHEMA


class PartSensitivity(Part):
    part: str
    format: str
    kl: float                 # mean per-token KL(unquantized ‖ this part alone quantized)
    weights: int              # the part's weight count
    bits_per_weight: float    # stored bits per weight in this format, scales included


class UnfitPart(Part):
    part: str
    format: str
    why: str                  # e.g. its columns and the group size


class UniformPoint(Part):
    format: str
    bits_per_weight: float
    predicted_kl: float       # the sum of every part's own KL
    measured_kl: float        # every part quantized at once


class MixCandidate(Part):
    label: str                   # mix_<budget>
    budget_bits: float
    bits_per_weight: float
    predicted_kl: float
    assignment: dict[str, str]   # part → format
    formats: dict[str, int]      # parts per format
    recipes: dict[str, str | None]  # tool → its recipe, relative to the report (None: see notes)
    notes: list[str]


class SensitivityReport(Contract):
    SCHEMA: ClassVar[str] = SENSITIVITY_SCHEMA
    FILE: ClassVar[str] = SENSITIVITY
    WRITER: ClassVar[str] = "sensitivity"

    model: str
    model_sha256: str            # the base model's weights, as hashed here
    calibration: str             # the calibration set's name
    calibration_sha256: str      # its data file's hash
    method: str
    formats: list[str]
    group_size: int | None       # the group-wise formats' (None: each preset's own)
    tokens: int
    parts: dict[str, list[str]]  # part → its linear layers
    rows: list[PartSensitivity]
    unfit: list[UnfitPart]       # parts that cannot take a format: never assigned it
    weights: dict[str, int]      # part → its weight count
    uniform: list[UniformPoint]
    candidates: list[MixCandidate]
