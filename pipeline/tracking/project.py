"""What one pipeline execution left on disk, read into plain records — no MLflow here.

`log.py` turns these records into runs; keeping the reading apart lets the names and values
that reach MLflow be checked without a tracking store, and keeps the mlflow import in one place.

>>> ex = load_execution(params, layout)                     # doctest: +SKIP
>>> [(v.name, v.status) for v in ex.variants]               # doctest: +SKIP
[('baseline', 'served'), ('fp8_dynamic', 'served'), ('nvfp4_business', 'failed')]
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pipeline.artifacts.runrecord import read_run_record
from pipeline.contracts import ArtifactManifest, CalibrationCard, Comparison, EvalRun, EvalsetCard, Metrics
from pipeline.layout import Layout
from pipeline.contracts.files import (CARD, ENGINE_LOG, MANIFEST, METRICS, REFERENCE_ENGINE_LOG, REFERENCE_SAMPLES,
                                      RUN, SAMPLES, SHA256SUMS, TRACKING_PENDING)
from pipeline.stage_params import StageView

Status = Literal["served", "not_served", "failed", "missing"]
RESULT_FILES = (METRICS, SAMPLES, RUN, ENGINE_LOG, REFERENCE_SAMPLES, REFERENCE_ENGINE_LOG)  # logged when present
ARTIFACT_FILES = (MANIFEST, SHA256SUMS)


@dataclass
class Dataset:
    """A calibration or evaluation set as MLflow will see it: where, which content, its card."""

    name: str
    context: Literal["calibration", "evaluation"]
    path: Path
    content_sha256: str
    card: dict[str, Any]
    card_sha256: str | None  # the card's own hash, when it disagrees with what was used


@dataclass
class VariantRecord:
    name: str
    status: Status
    content_sha256: str          # of the files logged for it: a change means a new run
    metrics: Metrics | None = None  # its evaluation's, when it was evaluated
    comparison: dict[str, Any] = field(default_factory=dict)  # its entry in comparison.json
    bench: dict[str, Any] = field(default_factory=dict)       # its entry in comparison["bench"]
    manifest: ArtifactManifest | None = None  # its artifact's, when it was made
    manifest_sha256: str | None = None
    run: dict[str, Any] = field(default_factory=dict)  # the quantization's run record
    evaluation: dict[str, Any] = field(default_factory=dict)  # its evaluation's run.json
    files: dict[str, list[Path]] = field(default_factory=dict)  # artifact folder → files
    datasets: list[Dataset] = field(default_factory=list)
    reason: str | None = None    # not served / failed: why


@dataclass
class Execution:
    """One pipeline execution: its identity, its reports and every variant's record."""

    id: str                      # the parent run's key: same files → same id → nothing re-logged
    comparison: dict[str, Any]
    comparison_sha256: str | None
    reports: list[Path]
    variants: list[VariantRecord]
    git_commit: str | None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def files_sha256(files: list[Path], base: Path) -> str:
    """One hash over several files' relative paths and bytes (order-independent)."""
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.relative_to(base).as_posix().encode() + b"\0")
        h.update(sha256_bytes(f.read_bytes()).encode() + b"\n")
    return h.hexdigest()


def read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err}); re-run the stage that writes it "
                         "(`dvc repro`)") from err


# ── reading the project ───────────────────────────────────────────────────────────────────


def load_execution(params: StageView, layout: Layout) -> Execution:
    """`params`: the track stage's own (pipeline.tracking.log.PARAMS)."""
    reports_dir = layout.reports
    comparison_path = layout.comparison
    comparison = Comparison.load(comparison_path).dump() if comparison_path.is_file() else {}
    comparison_sha = sha256_bytes(comparison_path.read_bytes()) if comparison else None
    records = [load_variant(params, layout, name, comparison) for name in params.variants]
    return Execution(id=execution_id(comparison_sha, records), comparison=comparison,
                     comparison_sha256=comparison_sha, reports=report_files(reports_dir),
                     variants=records, git_commit=_git_commit(records))


def execution_id(comparison_sha: str | None, records: list[VariantRecord]) -> str:
    """The comparison's hash, and every variant's own: a stale comparison.json next to a newer
    failed evaluation still makes a new execution."""
    parts = [f"comparison:{comparison_sha}"]
    parts += [f"{r.name}:{r.status}:{r.content_sha256}" for r in records if r.status != "missing"]
    return sha256_bytes("\n".join(parts).encode())


def report_files(reports_dir: Path) -> list[Path]:
    if not reports_dir.is_dir():
        return []
    return sorted(p for p in reports_dir.iterdir()
                  if p.is_file() and p.name != TRACKING_PENDING and not p.name.startswith("."))


def load_variant(params: StageView, layout: Layout, name: str, comparison: dict) -> VariantRecord:
    results = layout.result(name)
    failed = layout.failed(name)
    if (results / METRICS).is_file():
        record = _evaluated(layout, name, results, comparison)
    elif failed.is_dir() and any(failed.iterdir()):
        record = _failed(name, failed)
    else:
        return VariantRecord(name, "missing", content_sha256="",
                             reason=f"no {results / METRICS} and no {failed}: "
                                    f"not evaluated yet (`dvc repro evaluate@{name}`)")
    _add_artifact(layout, record)
    return record


def _evaluated(layout: Layout, name: str, results: Path, comparison: dict) -> VariantRecord:
    metrics = Metrics.load(results / METRICS)
    files = [results / f for f in RESULT_FILES if (results / f).is_file()]
    served = metrics.served
    record = VariantRecord(name, "served" if served else "not_served",
                           content_sha256=files_sha256(files, results), metrics=metrics,
                           comparison=comparison.get("variants", {}).get(name, {}),
                           bench=(comparison.get("bench") or {}).get(name, {}),
                           files={"results": files}, reason=None if served else metrics.reason or "not served",
                           evaluation=EvalRun.load(results / RUN).dump() if (results / RUN).is_file() else {})
    if served:
        record.datasets.append(_evalset(layout, metrics))
    return record


def _failed(name: str, failed: Path) -> VariantRecord:
    files = sorted(p for p in failed.rglob("*") if p.is_file())
    return VariantRecord(name, "failed", content_sha256=files_sha256(files, failed),
                         files={"failed": files}, reason=failure_reason(failed))


def failure_reason(failed: Path, limit: int = 480) -> str:
    """The error text the stage left, else the engine log's last lines (what a person reads
    first); cut to fit an MLflow tag."""
    texts = [p for p in sorted(failed.iterdir()) if p.is_file() and p.name != ENGINE_LOG]
    source = texts[0] if texts else failed / ENGINE_LOG
    text = source.read_text(encoding="utf-8", errors="replace").strip() if source.is_file() else ""
    text = text[-limit:] if text else "no error text was left"
    return f"evaluation failed ({source.name}): {text}"


def _add_artifact(layout: Layout, record: VariantRecord) -> None:
    art = layout.artifact(record.name)
    manifest_path = art / MANIFEST
    if not manifest_path.is_file():
        return
    record.manifest = ArtifactManifest.load(manifest_path)
    record.manifest_sha256 = sha256_bytes(manifest_path.read_bytes())
    run_path = layout.quantize_run(record.name)
    run = read_run_record(run_path)
    # a record from another run of other bytes says nothing about this artifact
    if run.get("artifact_content_sha256") == record.manifest.content_sha256:
        record.run = run
        record.files["quantize_run"] = [run_path]
    record.files["artifact"] = [art / f for f in ARTIFACT_FILES if (art / f).is_file()]
    calib = _calibration(layout, record.manifest)
    if calib is not None:
        record.datasets.insert(0, calib)


def _calibration(layout: Layout, manifest: ArtifactManifest) -> Dataset | None:
    used = manifest.calibration
    if used is None or not used.content_sha256:
        return None  # a scheme that uses no data
    folder = layout.calibration_set(used.name)
    card_path = folder / CARD
    card = CalibrationCard.load(card_path).dump() if card_path.is_file() else {}  # logged as it is
    return _dataset(f"calibration/{used.name}", "calibration", folder, used.content_sha256, card)


def _evalset(layout: Layout, metrics: Metrics) -> Dataset:
    folder = layout.evalset
    card_path = folder / CARD
    card = EvalsetCard.load(card_path).dump() if card_path.is_file() else {}  # logged as it is
    used = metrics.evalset_sha256 or card.get("content_sha256")
    if not used:
        raise ValueError(f"{card_path}: no content_sha256 and the metrics name none either; "
                         "re-run `dvc repro split` to rewrite the evaluation set's card")
    return _dataset("evalset", "evaluation", folder, used, card)


def _dataset(name: str, context, folder: Path, used: str, card: dict) -> Dataset:
    # The digest is what the variant was actually made or scored with; a card that has moved on
    # since (the set rebuilt, this variant not yet redone) is recorded beside it, not instead.
    card_sha = card.get("content_sha256")
    return Dataset(name, context, folder, used, card,
                   card_sha256=card_sha if card_sha and card_sha != used else None)


def _git_commit(records: list[VariantRecord]) -> str | None:
    commits = {r.run["git"]["commit"] for r in records if (r.run.get("git") or {}).get("commit")}
    return commits.pop() if len(commits) == 1 else None


# ── what MLflow gets: params, tags, metrics ───────────────────────────────────────────────

_OPERATORS = (("<=", "le"), (">=", "ge"), ("<", "lt"), (">", "gt"), ("=", "/"))
_BAD = re.compile(r"[^\w./\- :]")


def metric_name(*parts: str) -> str:
    """An MLflow-safe name: `scenario=faq` → `scenario/faq`, `length_bucket=<=128` →
    `length_bucket/le128` (MLflow names allow only letters, digits, `_ - . : /` and spaces)."""
    name = "/".join(str(p) for p in parts if p != "")
    for op, word in _OPERATORS:
        name = name.replace(op, word)
    name = _BAD.sub("_", name)
    return re.sub(r"/+", "/", name).strip("/")


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts → `a.b.c` keys; leaves kept as they are."""
    if not isinstance(obj, dict):
        return {prefix: obj}
    out: dict[str, Any] = {}
    for k, v in obj.items():
        out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def numbers(obj: Any, prefix: str) -> dict[str, float]:
    """The numeric leaves of a nested dict, as metrics under `prefix/…` (bools → 1/0)."""
    out = {}
    for key, value in flatten(obj).items():
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, (int, float)):
            out[metric_name(prefix, *key.split("."))] = float(value)
    return out


def variant_params(params: StageView, record: VariantRecord) -> dict[str, str]:
    """What the variant is: scheme, bits, group size, backend, engine, recipe (flattened)."""
    v = params.variants[record.name]
    m = record.manifest  # None: not made yet, what params say it will be
    recipe, calibration = (m.recipe, m.calibration) if m else (None, None)
    out: dict[str, Any] = {
        "variant": record.name, "scheme": m.scheme if m else v.scheme, "bits": m and m.bits,
        "group_size": m and m.group_size, "backend": m.backend if m else v.backend,
        "format": m.format if m else v.format, "engine": params.engine_for(record.name),
        "recipe.path": recipe.path if recipe else (str(v.recipe) if v.recipe else None),
        "recipe.sha256": recipe and recipe.sha256,
        "calibration": calibration.name if calibration and calibration.name is not None else v.calibration,
        "calibration.samples": calibration and calibration.samples,
        "base_model": m.base_model.name if m else params.model.name,
        "quantize.device": getattr(m and m.quantization, "device", None),
    }
    out.update({f"recipe.{k}": val for k, val in flatten((recipe.resolved if recipe else None) or {}).items()})
    return {k: _param_value(val) for k, val in out.items() if val is not None}


def _param_value(value: Any) -> str:  # cut to MLflow's limit for a param value
    return (value if isinstance(value, str) else json.dumps(value, sort_keys=True))[:6000]


def variant_tags(params: StageView, record: VariantRecord, execution: Execution) -> dict[str, str]:
    m, metrics = record.manifest, record.metrics
    engine = metrics.engine if metrics else None
    git = (record.run.get("git") or {}).get("commit")
    tags: dict[str, Any] = {
        "variant": record.name, "qpipe.status": record.status,
        "qpipe.execution": execution.id, "qpipe.comparison_sha256": execution.comparison_sha256,
        "qpipe.content_sha256": record.content_sha256,
        "dvc.stage": f"evaluate@{record.name}",
        "engine.name": engine.name if engine else params.engine_for(record.name),
        "engine.version": engine and engine.version, "engine.kernel": engine and engine.kernel,
        "engine.serving": engine and engine.serving, "git_commit": git, "mlflow.source.git.commit": git,
        "evaluate.stopped_for": metrics and metrics.sequential and metrics.sequential.stopped_for,
        "artifact.content_sha256": m and m.content_sha256,
        "artifact.manifest_sha256": record.manifest_sha256,
        "calibration.content_sha256": m and m.calibration and m.calibration.content_sha256,
        "evalset.sha256": metrics and metrics.evalset_sha256,
        "pii.scrubbing": "on" if params.split.pii.enabled else "OFF",
        "trust_remote_code": str(bool(m and m.trust_remote_code)).lower(),
        "harness.version": metrics and metrics.harness_version,
        "served": {"served": "true", "not_served": "false"}.get(record.status),
        "reason": record.reason or params.variants[record.name].reason,
    }
    gate = record.comparison.get("gate")
    if gate:
        tags |= {"gate.profile": gate.get("profile"), "gate.passed": gate.get("passed"),
                 "gate.verdict": gate.get("verdict"),
                 "gate.failed": ", ".join(f["criterion"] for f in gate.get("failed", [])) or None,
                 "gate.inconclusive": ", ".join(f["criterion"] for f in gate.get("inconclusive") or [])
                 or None}
    if record.comparison.get("reference"):
        tags["compare.reference"] = record.comparison["reference"]
    tags |= {f"dataset.{d.name}.card_differs": d.card_sha256 for d in record.datasets}
    return {k: _tag_value(v) for k, v in tags.items() if v is not None}


def _tag_value(value: Any) -> str:
    return (value if isinstance(value, str) else json.dumps(value))[:5000]


def variant_metrics(record: VariantRecord) -> dict[str, float]:
    """Everything numeric about the variant, under names that group well in the UI."""
    m, c = record.metrics, record.comparison
    out: dict[str, float] = {}
    if m is not None:
        out |= numbers({"accuracy": m.accuracy, "n": m.n, "size_bytes": m.size_bytes}, "")
        for name, s in (m.slices or {}).items():
            out |= numbers({"accuracy": s.accuracy, "n": s.n}, metric_name("slice", name))
        parts = {"detectors": m.detectors, "speed": m.speed, "memory": m.memory, "sequential": m.sequential}
        for key, part in parts.items():
            out |= numbers(part.as_json() if part else {}, key)
        out |= numbers(m.lm_eval or {}, "lm_eval")  # the harness's own keys
    out |= numbers(record.evaluation.get("record_cache") or {}, "evaluate/record_cache")  # served / cached
    out |= _comparison_metrics(c)
    out |= numbers(record.bench, "bench")
    out |= numbers({k: record.run.get(k) for k in ("wall_seconds", "peak_rss_bytes", "peak_gpu_bytes")},
                   "quantize")
    return out


def _comparison_metrics(c: dict) -> dict[str, float]:
    if not c:
        return {}
    out = numbers({"compression": c.get("compression"), "utility": c.get("utility")}, "")
    out |= _delta_metrics(c.get("accuracy") or {}, "")
    for name, s in (c.get("slices") or {}).items():
        out |= _delta_metrics(s, metric_name("slice", name))
    out["significant_drops"] = float(len(c.get("significant_drops") or []))
    detectors = c.get("detectors") or {}
    out |= numbers(detectors.get("consistency") or {}, "consistency")
    speed = (c.get("speed") or {}).get("latency_vs_baseline") or {}
    out |= numbers({"median_ratio": speed.get("median_ratio"), "p_value": speed.get("p_value")},
                   "speed/latency_vs_baseline")
    gate = c.get("gate") or {}
    if "passed" in gate:
        out["gate/passed"] = float(bool(gate["passed"]))
        out["gate/failed_criteria"] = float(len(gate.get("failed") or []))
        out["gate/inconclusive_criteria"] = float(len(gate.get("inconclusive") or []))
    d = c.get("disagreement") or {}
    out |= numbers({"outputs_changed_share": d.get("outputs_changed_share"),
                    "results_changed_share": d.get("results_changed_share")}, "disagreement")
    if c.get("json"):
        out |= numbers({k: c["json"].get(k) for k in ("delta", "ci_low", "ci_high")}, "json_validity_delta")
    out |= numbers({k: v for k, v in ((c.get("flips") or {}).get("overall") or {}).items() if k != "n"}, "flips")
    out |= numbers({"ratio": ((c.get("output_length") or {}).get("overall") or {}).get("ratio")}, "output_length")
    out |= divergence_metrics(c.get("divergence") or {})
    return out


def divergence_metrics(d: dict) -> dict[str, float]:
    """`divergence/kld_mean`, `…/kld_p99`, `…/top1_agreement`, `…/ref_loglik_delta`, overall and
    per slice (`divergence/slice/<key>/<value>/…`)."""
    if not d.get("measured"):
        return {}
    keys = ("kld_mean", "kld_p99", "top1_agreement", "ref_loglik_delta")
    out = numbers({k: d["overall"].get(k) for k in keys}, "divergence")
    for name, s in (d.get("slices") or {}).items():
        out |= numbers({k: s.get(k) for k in keys}, metric_name("divergence", "slice", *name.split("=", 1)))
    engine = d.get("engine") or {}
    if engine.get("measured"):  # the serving engine's own figures (top-k approximation)
        ekeys = ("kld_mean", "kld_p99", "top1_agreement", "baseline_tail_mass")
        out |= numbers({k: engine["overall"].get(k) for k in ekeys}, "divergence_engine")
        for name, s in (engine.get("slices") or {}).items():
            out |= numbers({k: s.get(k) for k in ekeys},
                           metric_name("divergence_engine", "slice", *name.split("=", 1)))
    return out


def _delta_metrics(s: dict, prefix: str) -> dict[str, float]:
    # `accuracy_delta…`, not `accuracy/delta…`: a metric may not be a folder of metrics too.
    keep = {"accuracy_delta": s.get("delta"), "accuracy_delta_ci_low": s.get("ci_low"),
            "accuracy_delta_ci_high": s.get("ci_high"), "accuracy_delta_p_value": s.get("p_value"),
            "accuracy_delta_significant": s.get("significant"),
            "accuracy_drop_p_adjusted": s.get("p_drop_adjusted"),
            "underpowered": s.get("underpowered"),
            "min_detectable_drop": s.get("min_detectable_drop")}
    return numbers(keep, prefix)
