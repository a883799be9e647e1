"""Which contract each hand-off file on disk is read through, by where the layout puts it: the
check that every file a stage hands another has a contract (tests/test_dvc_pipeline.py reads a
whole demo run through this map, and lists what it cannot place).

    >>> # for path, reader in contract_files(layout): reader(path)   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from pipeline.contracts import (ArtifactManifest, BenchResults, BundleEvaluation, BundleIndex, CalibrationCard,
                                Comparison, DivergenceRecord, DivergenceResult, EvalItem, EvalRun, EvalsetCard,
                                GateCalibration, HandoffIndex, Metrics, QuantizeRun, ReferencePasses, SampleRecord,
                                SensitivityReport, read_lines)
from pipeline.contracts.business_record import Record
from pipeline.contracts.files import (BENCH, BUNDLE_INDEX, CALIBRATION_POOL, CARD, COMPARISON, DIVERGENCE_REFERENCE,
                                      DUPLICATES, EVALSET_ITEMS, EVALUATION, GATE_CALIBRATION, MANIFEST, METRICS,
                                      QUANTIZE_RUN, REJECTS, REPORT, RUN, RUN_RECORD, SAMPLES, SENSITIVITY)
from pipeline.contracts.split_outputs import CalibrationSample, DuplicateLine, Reject, SplitReport
from pipeline.layout import Layout

Reader = Callable[[Path], Any]


def _lines(cls) -> Reader:
    return partial(read_lines, cls)


def contract_files(layout: Layout) -> Iterator[tuple[Path, Reader]]:
    """Every hand-off file present under the layout, with the reader that validates it."""
    special = {layout.divergence, layout.divergence_reference, layout.gate_calibration, layout.bench}
    patterns: list[tuple[Path, str, Reader]] = [
        (layout.evalset, CARD, EvalsetCard.load),
        (layout.evalset, EVALSET_ITEMS, _lines(EvalItem)),
        (layout.split_accounts, REPORT, SplitReport.load),
        (layout.split_accounts, REJECTS, _lines(Reject)),
        (layout.split_accounts, DUPLICATES, _lines(DuplicateLine)),
        (layout.pools, CALIBRATION_POOL, _lines(Record)),
        (layout.calibration_sets, f"*/{CARD}", CalibrationCard.load),
        (layout.calibration_sets, f"*/{SAMPLES}", _lines(CalibrationSample)),
        (layout.artifacts, f"*/{MANIFEST}", ArtifactManifest.load),
        (layout.quantize_runs, RUN_RECORD.format(name="*"), QuantizeRun.load),
        (layout.divergence, f"*/{METRICS}", DivergenceResult.load),
        (layout.divergence, f"*/{SAMPLES}", _lines(DivergenceRecord)),
        (layout.divergence_reference, DIVERGENCE_REFERENCE, ReferencePasses.load),
        (layout.gate_calibration, GATE_CALIBRATION, GateCalibration.load),
        (layout.bench, BENCH, BenchResults.load),
        (layout.reports, COMPARISON, Comparison.load),
        (layout.search, SENSITIVITY, SensitivityReport.load),
        (layout.handoff, BUNDLE_INDEX, HandoffIndex.load),
        (layout.handoff, f"*/{MANIFEST}", BundleIndex.load),
        (layout.handoff, f"*/{EVALUATION}", BundleEvaluation.load),
        # a bundle's verbatim copies
        (layout.handoff, f"*/{METRICS}", Metrics.load),
        (layout.handoff, f"*/model/{MANIFEST}", ArtifactManifest.load),
        (layout.handoff, f"*/{QUANTIZE_RUN}", QuantizeRun.load),
        (layout.handoff, f"*/calibration_{CARD}", CalibrationCard.load),  # as bundle.py names it
    ]
    for folder, pattern, reader in patterns:
        for path in sorted(folder.glob(pattern)):
            yield path, reader
    for d in sorted(p for p in layout.results.iterdir() if p.is_dir() and p not in special) \
            if layout.results.is_dir() else []:
        for name, reader in ((METRICS, Metrics.load), (SAMPLES, _lines(SampleRecord)), (RUN, EvalRun.load)):
            if (d / name).is_file():
                yield d / name, reader
