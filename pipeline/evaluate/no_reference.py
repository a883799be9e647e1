"""The reference `none`: what the baseline is judged against — nothing — as records.

Every `evaluate@<variant>` depends on its reference's results folder (`variants.<name>.reference`),
so that a sequential evaluation runs after the records it stops against; the baseline names
`none`, and this stage writes `<evaluate.out_dir>/none/` with no records. It depends on nothing
but this file, like the empty calibration set `none`.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.config import NO_REFERENCE
from pipeline.contracts.files import SAMPLES
from pipeline.io import atomic_dirs
from pipeline.layout import Layout
from pipeline.stage_params import Declared, StageView

PARAMS = Declared("evaluate_none")  # its path comes from the layout; it reads no params


def run(params: StageView, layout: Layout) -> Path:
    """The `evaluate_none` stage: an empty reference beside the evaluated variants."""
    with atomic_dirs(layout.results, [NO_REFERENCE]) as staged:
        (staged[NO_REFERENCE] / SAMPLES).write_text("")
    return layout.results / NO_REFERENCE
