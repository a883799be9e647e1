"""Register an approved handoff bundle in the MLflow Model Registry under the alias `approved`.

A bundle is a plain folder of model files, not an MLflow "logged model", so
`mlflow.register_model` refuses it; the client's `create_model_version(name, source, run_id)`
takes any logged location. The bundle is logged to the variant's run first, so the version's
source is a copy MLflow owns, not a path on one machine.

>>> register(params, root, "gptq_w4a16_business", Path("handoff/gptq_w4a16_business"),
...          {"approved_by": "ana"})                        # doctest: +SKIP
{'name': 'qpipe-demo-llama', 'version': '3', 'alias': 'approved', 'source': 'runs:/…/handoff/…', …}
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode

from pipeline.tracking import project
from pipeline.tracking.store import (TrackingError, client, experiment_name, redact,
                                     registered_model_name, resolve_uri, unreachable)
from pipeline.stage_params import StageView

log = logging.getLogger(__name__)
ALIAS = "approved"


def register(params: StageView, root: Path, variant: str, bundle_dir: Path, tags: dict[str, Any], *,
             tracking_uri: str | None = None) -> dict[str, Any]:
    """Log `bundle_dir` to the variant's latest run, make a registry version from it, point the
    alias `approved` at it and tag it. Registering the same bundle again reuses its version.

    Returns {name, version, alias, source, run_id, bundle_sha256}.
    """
    root = Path(root).resolve()
    bundle_dir = Path(bundle_dir)
    uri = resolve_uri(params, root, tracking_uri)
    why = unreachable(uri)
    if why is not None:
        raise TrackingError(f"cannot register {variant!r}: {why}; start the tracking server or set "
                            "MLFLOW_TRACKING_URI, then approve again (nothing was registered)")
    files = _bundle_files(bundle_dir)
    bundle_sha = project.files_sha256(files, bundle_dir)
    mlflow = client(uri)
    name = registered_model_name(params)
    run_id = variant_run(mlflow, experiment_name(params), variant, uri)
    version = _existing_version(mlflow, name, run_id, bundle_sha)
    if version is None:
        version = _new_version(mlflow, name, run_id, variant, bundle_dir, bundle_sha)
    mlflow.set_registered_model_alias(name, ALIAS, version.version)
    for key, value in (tags | {"variant": variant, "bundle_sha256": bundle_sha}).items():
        mlflow.set_model_version_tag(name, version.version, str(key), _text(value))
    log.info("MLflow registry: %s version %s is now @%s (%s)", name, version.version, ALIAS, variant)
    return {"name": name, "version": version.version, "alias": ALIAS, "source": version.source,
            "run_id": run_id, "bundle_sha256": bundle_sha}


def _bundle_files(bundle_dir: Path) -> list[Path]:
    files = sorted(p for p in bundle_dir.rglob("*") if p.is_file()) if bundle_dir.is_dir() else []
    if not files:
        raise TrackingError(f"{bundle_dir}: no bundle files there; run the handoff stage first "
                            "(`dvc repro handoff`)")
    return files


def variant_run(mlflow: MlflowClient, experiment: str, variant: str, uri: str) -> str:
    """The variant's most recent finished, served run."""
    exp = mlflow.get_experiment_by_name(experiment)
    runs = [] if exp is None else mlflow.search_runs(
        [exp.experiment_id],
        f"tags.variant = '{variant}' and tags.`qpipe.role` = 'variant' "
        "and tags.served = 'true' and attributes.status = 'FINISHED'",
        order_by=["attributes.start_time DESC"], max_results=1)
    if not runs:
        raise TrackingError(f"no finished MLflow run of a served {variant!r} in experiment "
                            f"{experiment!r} at {redact(uri)}; log the results first (`qpipe track`)")
    return runs[0].info.run_id


def _existing_version(mlflow: MlflowClient, name: str, run_id: str, bundle_sha: str):
    try:
        versions = mlflow.search_model_versions(f"name = '{name}' and run_id = '{run_id}'")
    except MlflowException:
        return None  # no such registered model yet
    same = [v for v in versions if v.tags.get("bundle_sha256") == bundle_sha]
    return max(same, key=lambda v: int(v.version)) if same else None


def _new_version(mlflow: MlflowClient, name: str, run_id: str, variant: str, bundle_dir: Path,
                 bundle_sha: str):
    # One folder per bundle content: approving a rebuilt bundle never rewrites what an earlier
    # version's source points at.
    artifact_path = f"handoff/{bundle_sha[:16]}"
    mlflow.log_artifacts(run_id, str(bundle_dir), artifact_path)
    _ensure_model(mlflow, name)
    source = f"runs:/{run_id}/{artifact_path}"
    return mlflow.create_model_version(name, source=source, run_id=run_id,
                                       tags={"bundle_sha256": bundle_sha, "variant": variant},
                                       description=f"qpipe handoff bundle of {variant}")


def _ensure_model(mlflow: MlflowClient, name: str) -> None:
    try:
        mlflow.create_registered_model(name, description="quantized variants approved by qpipe")
    except MlflowException as err:
        if err.error_code != ErrorCode.Name(RESOURCE_ALREADY_EXISTS):
            raise


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text[:5000]
