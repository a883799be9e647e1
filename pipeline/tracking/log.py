"""Log one pipeline execution to MLflow: a parent run for the execution, a child run per variant.

Idempotent: every run carries a key (`qpipe.key`) derived from the files it was logged from, so
logging the same results again finds the runs and adds nothing; a run left RUNNING by an
interrupted call is deleted and logged again. A failed evaluation (`logs/failed/<variant>/`)
becomes a FAILED run. When the tracking server does not answer, nothing is lost: the call
writes `<compare.out_dir>/tracking-pending.json` and returns; the next successful call logs
everything and removes the marker.

>>> summary = run(params.for_stage(PARAMS), Layout(Path("."), params))  # doctest: +SKIP
>>> summary["logged"], summary["pending"]                   # doctest: +SKIP
(['baseline', 'gptq_w4a16_business', …], False)
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
import sqlalchemy.exc
from mlflow import MlflowClient
from mlflow.entities import Dataset as DatasetEntity
from mlflow.entities import DatasetInput, InputTag, Metric, Param, RunStatus, RunTag
from mlflow.exceptions import MlflowException

from pipeline.layout import Layout
from pipeline.stage_params import Declared, StageView
from pipeline.tracking import project
from pipeline.tracking.project import Execution, VariantRecord
from pipeline.tracking.store import (client, experiment, experiment_name, redact, resolve_uri,
                                     unreachable)
from pipeline.contracts.files import BENCH, CARD, COMPARISON, TRACKING_PENDING, TRACKING_PENDING_SCHEMA

log = logging.getLogger(__name__)
# Beside the paths: the experiment is named after model.name (unless tracking names one); every
# variant's run records its engine (engines.formats), the baseline and the PII switch.
PARAMS = Declared("track", "tracking", "quantize.out_dir", "quantize.runs_dir", "evaluate.out_dir",
                  "compare.out_dir", "model.name", "variants", "engines.formats", "split.pii.enabled")
# Errors that mean "the store is not there or not usable now", as opposed to a bug: these make
# the call pending instead of failing the stage.
STORE_ERRORS = (MlflowException, requests.RequestException, sqlalchemy.exc.SQLAlchemyError, OSError)
DIGEST_CHARS = 36  # MLflow stores at most 36 characters of a dataset digest


def run(params: StageView, layout: Layout, *, tracking_uri: str | None = None) -> dict[str, Any]:
    """Log what `dvc repro` left in results/, artifacts/, logs/failed/ and reports/; `params`:
    the `track` stage's own (PARAMS).

    Returns {experiment, parent_run_id, runs: {variant: run_id}, logged, skipped, failed,
    pending, tracking_uri}: each variant is either `logged` (a run made now) or `skipped`
    (already logged, or not evaluated yet); `failed` names the variants whose evaluation failed.
    """
    layout = layout.rooted(Path(layout.root).resolve())
    root = layout.root
    uri = resolve_uri(params, root, tracking_uri)
    execution = project.load_execution(params, layout)
    summary: dict[str, Any] = {"experiment": experiment_name(params), "parent_run_id": None,
                               "runs": {}, "logged": [], "skipped": [],
                               "failed": [v.name for v in execution.variants if v.status == "failed"],
                               "pending": False, "tracking_uri": redact(uri)}
    why = unreachable(uri)
    if why is None:
        try:
            _log_execution(params, layout, client(uri), uri, execution, summary)
        except STORE_ERRORS as err:
            why = f"{type(err).__name__}: {err}"
    if why is not None:
        return _pending(layout, uri, execution, why, summary)
    (marker_path(layout)).unlink(missing_ok=True)
    return summary


# ── pending marker ────────────────────────────────────────────────────────────────────────


def marker_path(layout: Layout) -> Path:
    return layout.reports / TRACKING_PENDING


def _pending(layout: Layout, uri: str, execution: Execution, why: str,
             summary: dict) -> dict[str, Any]:
    path = marker_path(layout)
    since = _read_since(path)
    marker = {"schema": TRACKING_PENDING_SCHEMA, "since": since, "last_attempt": _now(),
              "tracking_uri": redact(uri), "reason": why[:2000], "execution": execution.id,
              "variants": [v.name for v in execution.variants if v.status != "missing"],
              "fix": "start the tracking server (or point MLFLOW_TRACKING_URI at one that "
                     "answers), then run `qpipe track`: it logs everything listed here once"}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    log.warning("MLflow tracking pending (%s); wrote %s — run `qpipe track` once the server "
                "answers", why[:300], path)
    return summary | {"pending": True, "marker": str(path), "reason": why,
                      "logged": [], "skipped": [], "runs": {}, "parent_run_id": None}


def _read_since(path: Path) -> str:
    try:
        return json.loads(path.read_text(encoding="utf-8"))["since"]
    except (OSError, ValueError, KeyError):
        return _now()


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


# ── runs ──────────────────────────────────────────────────────────────────────────────────


def _log_execution(params: StageView, layout: Layout, mlflow: MlflowClient, uri: str, execution: Execution,
                   summary: dict) -> None:
    exp = experiment(mlflow, experiment_name(params), uri, layout.root)
    parent = _parent_run(params, layout, mlflow, exp.experiment_id, execution)
    summary["parent_run_id"] = parent
    for record in execution.variants:
        if record.status == "missing":
            log.info("MLflow: %s skipped — %s", record.name, record.reason)
            summary["skipped"].append(record.name)
            continue
        run_id, made = _variant_run(params, mlflow, exp.experiment_id, parent, execution, record)
        summary["runs"][record.name] = run_id
        summary["logged" if made else "skipped"].append(record.name)
    failed = any(v.status == "failed" for v in execution.variants)
    mlflow.set_terminated(parent, RunStatus.to_string(RunStatus.FAILED if failed else RunStatus.FINISHED))


def find_run(mlflow: MlflowClient, experiment_id: str, key: str):
    """The live run logged under `key`, after deleting any that an interrupted call left RUNNING."""
    runs = mlflow.search_runs([experiment_id], f"tags.`qpipe.key` = '{key}'", max_results=10)
    done = [r for r in runs if r.info.status != "RUNNING"]
    for stale in (r for r in runs if r.info.status == "RUNNING"):
        log.info("MLflow: deleting run %s left RUNNING by an interrupted call", stale.info.run_id)
        mlflow.delete_run(stale.info.run_id)
    return done[0] if done else None


def _parent_run(params: StageView, layout: Layout, mlflow: MlflowClient, experiment_id: str,
                execution: Execution) -> str:
    key = project.sha256_bytes(f"execution:{execution.id}".encode())
    found = mlflow.search_runs([experiment_id], f"tags.`qpipe.key` = '{key}'", max_results=1)
    if found:
        return found[0].info.run_id  # reopened by set_terminated at the end: children may change
    tags = {"qpipe.key": key, "qpipe.role": "execution", "qpipe.execution": execution.id,
            "qpipe.comparison_sha256": execution.comparison_sha256,
            "git_commit": execution.git_commit, "mlflow.source.git.commit": execution.git_commit,
            "dvc.stage": "compare", "baseline": execution.comparison.get("baseline", params.baseline)}
    run = mlflow.create_run(experiment_id, run_name=f"pipeline {execution.id[:10]}",
                            tags={k: v for k, v in tags.items() if v})
    run_id = run.info.run_id
    log_batch(mlflow, run_id, params={"base_model": params.model.name,
                                       "baseline": params.baseline,
                                       "variants": ",".join(params.variants)},
               metrics=calibration_effect_metrics(execution.comparison))
    for f in execution.reports:
        upload(mlflow, run_id, f, "reports")
    for f in (layout.params_file, layout.bench / BENCH):
        if f.is_file():
            upload(mlflow, run_id, f, None)
    return run_id


def upload(mlflow: MlflowClient, run_id: str, path: Path, folder: str | None) -> None:
    """Log a file as a run artifact — a text file with its secrets masked (pipeline.secrets):
    URI passwords, secret query values and flags, every engine env value, secret-named keys."""
    from pipeline import secrets

    suffix = path.suffix.lower()
    if suffix not in (".json", ".jsonl", ".yaml", ".yml", ".log", ".md", ".txt"):
        mlflow.log_artifact(run_id, str(path), folder)
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    if suffix == ".json":
        try:
            text = json.dumps(secrets.mask_tree(json.loads(text)), indent=2, ensure_ascii=False,
                              sort_keys=True) + "\n"
        except ValueError:
            text = secrets.mask_text(text)
    elif suffix == ".jsonl":
        lines = []
        for line in text.split("\n"):
            try:
                lines.append(json.dumps(secrets.mask_tree(json.loads(line)), ensure_ascii=False,
                                        sort_keys=True) if line.strip() else line)
            except ValueError:
                lines.append(secrets.mask_text(line))
        text = "\n".join(lines)
    elif suffix in (".yaml", ".yml"):
        try:
            text = secrets.mask_yaml(text)
        except Exception:  # noqa: BLE001 — not YAML after all: mask it as text
            text = secrets.mask_text(text)
    else:
        text = secrets.mask_text(text)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        copy.write_text(text, encoding="utf-8")
        mlflow.log_artifact(run_id, str(copy), folder)


def calibration_effect_metrics(comparison: dict) -> dict[str, float]:
    """Same recipe, other calibration set: the paired difference, overall and per slice, as
    `calibration_effect/<other>-minus-<reference>/…` on the execution's parent run."""
    out: dict[str, float] = {}
    for e in comparison.get("calibration_effect") or []:
        prefix = f"calibration_effect/{e['other']}-minus-{e['reference']}"
        d = e["delta_other_minus_reference"]
        out.update(project.numbers({k: d[k] for k in ("delta", "ci_low", "ci_high", "p_value")
                                    if d.get(k) is not None}, prefix))
        for name, s in e["slices"].items():
            out.update(project.numbers({k: s[k] for k in ("delta", "ci_low", "ci_high", "p_value")
                                        if s.get(k) is not None},
                                       project.metric_name(prefix, "slice", *name.split("=", 1))))
    return out


def _variant_run(params: StageView, mlflow: MlflowClient, experiment_id: str, parent: str,
                 execution: Execution, record: VariantRecord) -> tuple[str, bool]:
    """(run id, whether it was made now)."""
    key = project.sha256_bytes(f"{execution.id}:{record.name}:{record.content_sha256}".encode())
    existing = find_run(mlflow, experiment_id, key)
    if existing is not None:
        return existing.info.run_id, False
    tags = project.variant_tags(params, record, execution)
    run = mlflow.create_run(experiment_id, run_name=record.name,
                            tags={"mlflow.parentRunId": parent, "qpipe.key": key,
                                  "qpipe.role": "variant", "variant": record.name})
    run_id = run.info.run_id
    log_batch(mlflow, run_id, params=project.variant_params(params, record), tags=tags,
               metrics=project.variant_metrics(record))
    _log_datasets(mlflow, run_id, record)
    _log_files(mlflow, run_id, record)
    status = RunStatus.FAILED if record.status == "failed" else RunStatus.FINISHED
    mlflow.set_terminated(run_id, RunStatus.to_string(status))
    log.info("MLflow: logged %s (%s) as run %s", record.name, record.status, run_id)
    return run_id, True


def log_batch(mlflow: MlflowClient, run_id: str, *, params: dict | None = None,
               tags: dict | None = None, metrics: dict | None = None) -> None:
    # MLflow takes at most 100 params + tags and 1000 entities per batch.
    stamp = int(time.time() * 1000)
    p = [Param(k, v) for k, v in (params or {}).items()]
    t = [RunTag(k, v) for k, v in (tags or {}).items()]
    m = [Metric(k, v, stamp, 0) for k, v in (metrics or {}).items()]
    for i in range(0, max(len(p), len(t), 1), 100):
        mlflow.log_batch(run_id, params=p[i:i + 100], tags=t[i:i + 100])
    for i in range(0, len(m), 900):
        mlflow.log_batch(run_id, metrics=m[i:i + 900])


def _log_datasets(mlflow: MlflowClient, run_id: str, record: VariantRecord) -> None:
    if not record.datasets:
        return
    mlflow.log_inputs(run_id, [dataset_input(d) for d in record.datasets])


def dataset_input(d: project.Dataset) -> DatasetInput:
    """A calibration or evaluation set as a dataset input: its digest is the content hash the
    variant was made or scored with (cut to MLflow's 36 characters; the input tag and the
    profile hold all 64)."""
    profile = {"content_sha256": d.content_sha256, "samples": d.card.get("samples"),
               "card": str(d.path / CARD)}
    if d.card_sha256:
        profile["card_content_sha256_now"] = d.card_sha256
    entity = DatasetEntity(name=d.name, digest=d.content_sha256[:DIGEST_CHARS], source_type="local",
                           source=json.dumps({"uri": d.path.resolve().as_uri()}),
                           profile=json.dumps(profile))
    tags = [InputTag("mlflow.data.context", d.context), InputTag("content_sha256", d.content_sha256)]
    return DatasetInput(entity, tags=tags)


def _log_files(mlflow: MlflowClient, run_id: str, record: VariantRecord) -> None:
    for folder, files in record.files.items():
        for f in files:
            upload(mlflow, run_id, f, folder)
    for d in record.datasets:
        card = d.path / CARD
        if card.is_file():
            upload(mlflow, run_id, card, f"datasets/{d.context}")
    if record.comparison:
        with tempfile.TemporaryDirectory() as tmp:
            entry = Path(tmp) / COMPARISON
            entry.write_text(json.dumps(record.comparison, indent=2, sort_keys=True) + "\n")
            mlflow.log_artifact(run_id, str(entry), "report")


def summary_line(r: dict[str, Any]) -> str:
    """What `run` did, in one line: counts logged, or why results were kept for later."""
    if r.get("pending"):
        return ("tracking server unavailable: results kept, marked for `qpipe track` "
                f"({r.get('reason', '')})")
    return (f"experiment {r.get('experiment')}: logged {len(r.get('logged', []))}, "
            f"already there {len(r.get('skipped', []))}, failed runs {len(r.get('failed', []))}")


def log_failed(params: StageView, layout: Layout, variant: str) -> tuple[str, bool]:
    """Log a failed evaluation (kept under logs/failed/) at once, before the pipeline's `track`
    stage would (`params`: that stage's own, PARAMS). Never raises — the evaluation's own error
    is what the user needs — and returns the line that says where the run went (a run, or marked
    for `qpipe track` when the server does not answer) or why it was not logged, and whether it
    was."""
    try:
        r = run(params, layout)
    except Exception as err:  # noqa: BLE001 - reported in the returned line
        return (f"the failed run of {variant} was not logged to MLflow ({err}); `qpipe track` "
                "logs it from logs/failed/", False)
    where = "marked for `qpipe track`" if r.get("pending") else f"run {r['runs'].get(variant)}"
    return f"{variant}: logged to MLflow as FAILED ({where})", True
