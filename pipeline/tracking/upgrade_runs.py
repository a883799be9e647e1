"""An upgrade (`qpipe upgrade <name>`) in MLflow: a parent run with the verdicts, the report and
the plot, and one child run per serving configuration whose metrics are logged per arrival rate
(step = the rate's index), so the MLflow UI charts latency against rate for both side by side.
Logged once per report (its hash is the run's key)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from mlflow.entities import RunStatus

from pipeline.contracts.files import UPGRADE, UPGRADE_MD, UPGRADE_PLOT
from pipeline.layout import Layout
from pipeline.stage_params import StageView
from pipeline.tracking import project
from pipeline.tracking.log import STORE_ERRORS, find_run, log_batch, upload
from pipeline.tracking.store import client, experiment, experiment_name, redact, resolve_uri, unreachable

log = logging.getLogger(__name__)
FILES = (UPGRADE, UPGRADE_MD, UPGRADE_PLOT)


def log_upgrade(params: StageView, layout: Layout, name: str, report: dict[str, Any]) -> dict[str, Any]:
    root = Path(layout.root).resolve()
    uri = resolve_uri(params, root)
    folder = layout.upgrade(name)
    why = unreachable(uri)
    if why is None:
        try:
            return _log(params, client(uri), uri, root, name, report, folder)
        except STORE_ERRORS as err:
            why = f"{type(err).__name__}: {err}"
    log.warning("MLflow: upgrade %s not logged (%s); its results are in %s", name, why[:300], folder)
    return {"logged": False, "tracking_uri": redact(uri), "reason": why[:500],
            "fix": f"once the store answers: `qpipe upgrade {name} --track-only`"}


def _log(params: StageView, mlflow, uri: str, root: Path, name: str, report: dict[str, Any],
         folder: Path) -> dict[str, Any]:
    exp = experiment(mlflow, experiment_name(params), uri, root)
    digest = project.sha256_bytes((folder / UPGRADE).read_bytes())
    key = project.sha256_bytes(f"upgrade:{name}:{digest}".encode())
    found = find_run(mlflow, exp.experiment_id, key)
    if found is not None:
        return {"logged": True, "run_id": found.info.run_id, "made": False, "tracking_uri": redact(uri)}
    conf = report["configurations"]
    tags = {"qpipe.key": key, "qpipe.role": "upgrade", "upgrade": name, "artifact": report["artifact"],
            "artifact_sha256": report["artifact_sha256"], "evalset_sha256": report["evalset_sha256"],
            "current": conf["current"]["name"], "candidate": conf["candidate"]["name"],
            "verdict": report["verdict"], "verdict.accuracy": report["accuracy"]["verdict"],
            "loadgen": report["loadgen"],
            **{f"verdict.traffic.{mix}": m["verdict"] for mix, m in report["traffic"].items()}}
    parent = mlflow.create_run(exp.experiment_id, run_name=f"upgrade {name}", tags=tags).info.run_id
    log_batch(mlflow, parent, params={"profile": report["profile"], "alpha": report["alpha"],
                                       "max_p99_increase": report["max_p99_increase"],
                                       "arrivals": report.get("arrivals", "poisson"),
                                       "slo": json.dumps(report["slo"])})
    for f in FILES:
        if (folder / f).is_file():
            upload(mlflow, parent, folder / f, None)
    children = {}
    for side, c in conf.items():
        run = mlflow.create_run(exp.experiment_id, run_name=f"{name}: {c['name']} ({side})",
                                tags={"mlflow.parentRunId": parent, "qpipe.role": "serving_configuration",
                                      "qpipe.key": f"{key}:{side}", "upgrade": name, "side": side,
                                      "engine": c["engine"], "engine_version": str(c["engine_info"].get("version")),
                                      "artifact_sha256": report["artifact_sha256"]})
        rid = run.info.run_id
        log_batch(mlflow, rid, params={"configuration": c["name"], "release": str(c["release"]),
                                        **{f"settings.{k}": str(v)[:250] for k, v in sorted(c["settings"].items())}})
        _metrics(mlflow, rid, report, side)
        mlflow.set_terminated(rid, RunStatus.to_string(RunStatus.FINISHED))
        children[side] = rid
    mlflow.set_terminated(parent, RunStatus.to_string(RunStatus.FINISHED))
    log.info("MLflow: logged upgrade %s as run %s", name, parent)
    return {"logged": True, "run_id": parent, "runs": children, "made": True, "tracking_uri": redact(uri)}


def _metrics(mlflow, run_id: str, report: dict[str, Any], side: str) -> None:
    acc = report["accuracy"]["accuracy"][side]
    if acc is not None:
        mlflow.log_metric(run_id, "accuracy", acc)
    syn = report["synthetic"][side]
    mlflow.log_metric(run_id, "synthetic.output_tokens_per_s", syn["output_tokens_per_s"])
    for mix, m in report["traffic"].items():
        sat = (m.get("saturation_rps") or {}).get(side)
        if sat is not None:
            mlflow.log_metric(run_id, f"{mix}.saturation_rps", sat)
        for step, (rate, res) in enumerate(m["rates"].items()):
            f = res["figures"][side]
            values = {"rate_rps": float(rate), "ttft_p50_s": f["ttft_s"]["p50"], "ttft_p99_s": f["ttft_s"]["p99"],
                      "tpot_p50_s": f["tpot_s"]["p50"], "e2e_p50_s": f["e2e_s"]["p50"],
                      "e2e_p99_s": f["e2e_s"]["p99"], "output_tokens_per_s": f["output_tokens_per_s"],
                      "slo_attainment": f["goodput"]["attainment"], "goodput_per_s": f["goodput"]["goodput_per_s"]}
            for k, v in values.items():
                if v is not None:
                    mlflow.log_metric(run_id, f"{mix}.{k}", float(v), step=step)
