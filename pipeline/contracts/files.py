"""The one place where the files that stages hand each other are named, and where every schema id
is spelled. A producer and its consumers import the name from here (a contract class carries it
as `FILE` / `SCHEMA`); a string equal to one of these anywhere else in the pipeline fails
tests/test_architecture.py, so a file can never be renamed on one side only.

Which stage writes what (the folders are `Layout`'s):
- split: data/evalset/EVALSET_ITEMS + CARD, data/calibration/CALIBRATION_POOL + REPORT,
  DUPLICATES, REJECTS;
- calibration@<set>: SAMPLES, CALIBRATION_DATA, CARD, CARD_MD, IMATRIX;
- quantize@<variant>: the artifact with MANIFEST and SHA256SUMS, its run record;
- evaluate@<variant>: METRICS, SAMPLES (one record per item), RUN, ENGINE_LOG, or ERROR; and where
  its reference served only its opening look, REFERENCE_SAMPLES and REFERENCE_ENGINE_LOG;
- divergence@<variant>: METRICS and SAMPLES of the teacher-forced passes; the reference's
  DIVERGENCE_REFERENCE; gate_calibration: GATE_CALIBRATION;
- bench: BENCH; compare: COMPARISON, COMPARISON_MD and the PLOTS;
- handoff: BUNDLE_INDEX, and per bundle EVALUATION, QUANTIZE_RUN, MODEL_CARD;
- track: TRACKING_PENDING while MLflow is out of reach;
- sensitivity: SENSITIVITY, SENSITIVITY_MD, SENSITIVITY_PLOT.
"""

from __future__ import annotations

# ---- file names
METRICS = "metrics.json"
SAMPLES = "samples.jsonl"
RUN = "run.json"
ERROR = "error.json"
ENGINE_LOG = "engine.log"
REFERENCE_SAMPLES = "reference-samples.jsonl"  # the reference's records for the items a variant used
REFERENCE_ENGINE_LOG = "reference-engine.log"  # its engine, where the variant served it
CARD = "card.json"
CARD_MD = "card.md"
EVALSET_ITEMS = "evalset.jsonl"
CALIBRATION_POOL = "calibration.jsonl"
REPORT = "report.json"
DUPLICATES = "duplicates.jsonl"
CALIBRATION_DATA = "data.parquet"  # a calibration set's samples as the quantizers read them
REJECTS = "rejects.jsonl"
IMATRIX = "imatrix.txt"
MANIFEST = "manifest.json"
SHA256SUMS = "SHA256SUMS"
BENCH = "bench.json"
COMPARISON = "comparison.json"
COMPARISON_MD = "comparison.md"
PLOTS = {"tradeoff": "tradeoff.png", "slices": "slices.png", "gate_limits": "gate_limits.png"}
GATE_CALIBRATION = "calibration.json"
DIVERGENCE_REFERENCE = "reference.json"
BUNDLE_INDEX = "index.json"
EVALUATION = "evaluation.json"
QUANTIZE_RUN = "quantize_run.json"
RUN_RECORD = "{name}.json"  # runs/quantize/<variant>.json, the run record a bundle copies as QUANTIZE_RUN
MODEL_CARD = "MODEL_CARD.md"
TRACKING_PENDING = "tracking-pending.json"
UPGRADE = "upgrade.json"
UPGRADE_MD = "upgrade.md"
UPGRADE_PLOT = "latency_vs_rate.png"
SENSITIVITY = "sensitivity.json"
SENSITIVITY_MD = "sensitivity.md"
SENSITIVITY_PLOT = "sensitivity.png"

# ---- schema ids (the `schema` key of each file)
ARTIFACT_SCHEMA = "qpipe.artifact/v1"
BENCH_SCHEMA = "qpipe.bench/v4"  # v4: measurements carry `traffic` (business traffic); ratios `speed_source`
CALIBRATION_CARD_SCHEMA = "qpipe.calibration-card/v1"
COMPARISON_SCHEMA = "qpipe.comparison/v1"
CUSTODY_SCHEMA = "qpipe.custody/v1"
DIVERGENCE_REFERENCE_SCHEMA = "qpipe.divergence-reference/v1"
DIVERGENCE_SCHEMA = "qpipe.divergence/v1"
EVAL_RUN_SCHEMA = "qpipe.eval-run/v1"
BUNDLE_EVALUATION_SCHEMA = "qpipe.bundle-evaluation/v1"
EVAL_ITEM_SCHEMA = "qpipe.eval-item/v1"
EVALSET_SCHEMA = "qpipe.evalset/v1"
FAILED_SCHEMA = "qpipe.failed/v1"
GATE_CALIBRATION_SCHEMA = "qpipe.gate-calibration/v1"
HANDOFF_SCHEMA = "qpipe.handoff/v1"
HANDOFF_INDEX_SCHEMA = "qpipe.handoff-index/v1"
PLAN_SCHEMA = "qpipe.plan/v1"
QUANTIZE_RUN_SCHEMA = "qpipe.quantize-run/v1"
RESULTS_SCHEMA = "qpipe.results/v1"
SPLIT_REPORT_SCHEMA = "qpipe.split-report/v1"
TRACKING_PENDING_SCHEMA = "qpipe.tracking-pending/v1"
UPGRADE_SCHEMA = "qpipe.upgrade/v1"
SENSITIVITY_SCHEMA = "qpipe.sensitivity/v1"
