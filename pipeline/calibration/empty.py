"""The empty calibration set, `none`: what schemes that use no calibration data name.

It has its own DVC stage that depends on nothing but this file, so a variant such as FP8 dynamic
or the baseline is never connected to the business logs in the pipeline graph.
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.config import NO_CALIBRATION
from pipeline.contracts import CalibrationCard
from pipeline.stage_params import Declared, StageView
from pipeline.io import atomic_dirs
from pipeline.layout import Layout
from pipeline.contracts.files import CARD

PARAMS = Declared("calibration_none")  # its path comes from the layout; it reads no params


def write_empty_set(parent: Path) -> Path:
    with atomic_dirs(parent, [NO_CALIBRATION]) as staged:
        card = CalibrationCard(name=NO_CALIBRATION, samples=0, content_sha256=None,
                               note="no calibration data: the scheme does not use any").dump()
        (staged[NO_CALIBRATION] / CARD).write_text(json.dumps(card, indent=2) + "\n")
    return parent / NO_CALIBRATION


def run(params: StageView, layout: Layout) -> Path:
    """The `calibration_none` stage: the empty set beside the built ones, under
    <split.out_dir>/calibration/ (`params`: its own, none)."""
    return write_empty_set(layout.calibration_sets)
